"""The agent export format, version 1: JSON Lines. The first line is the header
(`{"format": "anamnesis-agent-export", "version": 1, "exported_at", "agent", "counts"}`), then one
row per line, each an object with its `type`, the types in the order of ROW_TYPES (what a row
refers to comes before it). Ids are the exporting database's: a row's `id` names it within the
file, and a reference (`"entity": 12`) names a row of the file by that id. Times are ISO-8601
with their offset. Vectors are not in the file: `embedded` says the row had one (an import
computes it again from the text).

This module declares every row type's fields (how each is checked, which model column holds it)
and writes rows; memories.portability.records reads and checks them. Pure: no database.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import datetime

from memories.portability import remap

FORMAT = "anamnesis-agent-export"
VERSION = 1
MEDIA_TYPE = "application/x-ndjson"
IMPORT_ACTION = "agent_import"  # the audit entry an import leaves (not part of what it imported)

REQUIRED = object()
# Fields of a row that are not columns of its model: whether it had a vector, and an event's
# write request (its job's parameters: the recent messages its vector may embed, overrides).
EMBEDDED, PARAMS = "embedded", "params"


@dataclass(frozen=True)
class Field:
    """One field of a row type. `kind`: id (the row's own), ref (another row's id, of row type
    `ref`), str (at most `max_length`), text, int, float (within `low`–`high`), bool, time,
    dict, strs (a list of strings)."""

    name: str
    kind: str
    ref: str = ""
    null: bool = False
    default: object = REQUIRED
    max_length: int | None = None
    low: float | None = None
    high: float | None = None
    choices: tuple[str, ...] = ()
    column: str = ""

    @property
    def attname(self) -> str:
        """The model attribute that holds it."""
        return self.column or (f"{self.name}_id" if self.kind == "ref" else self.name)


def _f(name: str, kind: str, **options) -> Field:
    return Field(name, kind, **options)


def _opt_time(name: str) -> Field:
    return Field(name, "time", null=True, default=None)


def _text(name: str, default: object = "") -> Field:
    return Field(name, "text", default=default)


def _str(name: str, max_length: int, default: object = REQUIRED, **options) -> Field:
    return Field(name, "str", max_length=max_length, default=default, **options)


INT32 = 2**31 - 1  # the columns' integer range


def _count(name: str, default: object = 0) -> Field:
    return Field(name, "int", low=0, high=INT32, default=default)


def _ref(name: str, ref: str, null: bool = False, **options) -> Field:
    return Field(name, "ref", ref=ref, null=null, default=None if null else REQUIRED, **options)


ID = Field("id", "id")
CLOCKS = (
    _f("valid_from", "time"), _opt_time("valid_to"), _f("learned_at", "time"), _opt_time("valid_to_learned_at"),
    _opt_time("unlearned_at"), _f("recorded_at", "time"), _opt_time("invalidated_at"),
)
RUN_STATUSES = ("queued", "running", "succeeded", "failed")


@dataclass(frozen=True)
class RowType:
    """What a row of one type holds (`fields`), what must be unique among the file's rows of the
    type (`unique`: field names; a key with a null part is not checked, as in the database), and
    whether its model keeps a vector (`has_vector`: the import computes it again)."""

    name: str
    fields: tuple[Field, ...]
    unique: tuple[tuple[str, ...], ...] = ()
    has_vector: bool = False
    by_name: dict[str, Field] = field(init=False, repr=False, compare=False)

    def __post_init__(self):
        object.__setattr__(self, "by_name", {f.name: f for f in self.fields})

    @property
    def has_id(self) -> bool:
        return "id" in self.by_name


ROW_TYPES: dict[str, RowType] = {t.name: t for t in (
    RowType("entity", (
        ID, _str("key", 255), _str("entity_type", 64, column="type"), _str("display_name", 255), _text("profile_text"),
        _opt_time("profile_refreshed_at"), _text("summary_text"), _f("importance", "float", default=0.5),
        _ref("merged_into", "entity", null=True), _f("created_at", "time"), _f("updated_at", "time"),
        _f(EMBEDDED, "bool", default=True),
    ), unique=(("key",),), has_vector=True),
    RowType("alias", (_str("alias", 255), _ref("entity", "entity"), _f("created_at", "time")), unique=(("alias",),)),
    RowType("event", (
        ID, _str("speaker", 200), _text("text", REQUIRED), _f("occurred_at", "time"), _f("recorded_at", "time"),
        _str("external_id", 200, null=True, default=None), _str("idempotency_key", 200, null=True, default=None),
        _f("metadata", "dict", default={}), _opt_time("redacted_at"), _f(PARAMS, "dict", default={}),
        _f(EMBEDDED, "bool", default=True),
    ), unique=(("external_id",), ("idempotency_key",)), has_vector=True),
    RowType("fact", (
        ID, _ref("entity", "entity"), _text("text", REQUIRED), *CLOCKS,
        _f("confidence", "float", low=0, high=1, default=0.95), _f("importance", "float", default=0.5),
        _str("importance_category", 40, default=""), _str("source_context", 32, default="extracted"),
        _str("speaker", 200, default=""), _ref("source_event", "event", null=True), _count("reinforcement_count"),
        _opt_time("last_confirmed_at"), _count("access_count"), _opt_time("last_accessed_at"),
        _ref("supersedes", "fact", null=True), _str("invalidation_reason", 500, default=""),
        _str("slot", 64, default=""), _str("slot_value", 255, default=""), _f(EMBEDDED, "bool", default=True),
    ), unique=(("supersedes",),), has_vector=True),
    RowType("fact_link", (ID, _ref("fact", "fact"), _ref("entity", "entity"), _f("is_primary", "bool", default=False)),
            unique=(("fact", "entity"),)),
    RowType("relationship", (
        ID, _ref("source", "entity"), _ref("target", "entity"), _str("rel_type", 100),
        _f("strength", "float", low=0, high=1, default=0.8), _ref("evidence_fact", "fact", null=True),
        _ref("source_event", "event", null=True), *CLOCKS,
    )),
    RowType("entity_merge", (
        ID, _ref("survivor", "entity"), _ref("merged", "entity"), _f("moved", "dict", default={}),
        _str("actor", 200), _text("reason"), _f("created_at", "time"), _opt_time("undone_at"),
    )),
    RowType("merge_suggestion", (
        ID, _ref("entity_a", "entity"), _ref("entity_b", "entity"), _f("score", "float"),
        _f("reasons", "dict", default={}), _str("status", 16, choices=("open", "dismissed", "merged")),
        _f("created_at", "time"), _f("updated_at", "time"), _opt_time("decided_at"),
        _str("decided_by", 200, default=""),
    ), unique=(("entity_a", "entity_b"),)),
    RowType("job", (
        ID, _ref("event", "event"), _str("name", 100, default="write"), _str("status", 16, choices=RUN_STATUSES),
        _str("input_ref", 500, default=""), _f("created_at", "time"), _opt_time("started_at"),
        _opt_time("finished_at"), _f("duration_ms", "float", null=True, default=None), _count("tokens_in"),
        _count("tokens_out"), _count("attempts"), _text("error"), _f("result", "dict", default={}),
    ), unique=(("event",),)),
    RowType("step", (
        _ref("job", "job", column="run_id"), _count("attempt", default=1), _count("order", default=REQUIRED),
        _str("name", 64), _str("status", 16, default="ok"), _f("duration_ms", "float", default=0.0),
        *(_f(name, "int", low=-INT32 - 1, high=INT32, null=True, default=None)
          for name in ("candidates_in", "candidates_out")),
        _count("tokens_in"), _count("tokens_out"), _f("data", "dict", default={}),
    )),
    RowType("erasure_receipt", (
        ID, _f("created_at", "time"), _str("actor", 200), _str("opaque_key", 255),
        _f("opaque_keys", "strs", max_length=255, default=[]), _f("reason_given", "bool", default=False),
        _f("totals", "dict", default={}), _f("tables", "dict", default={}), _f("name_forms", "dict", default={}),
        _f("vacuum_tables", "strs", max_length=100, default=[]), _opt_time("vacuumed_at"),
        _f("vacuum_seconds", "float", null=True, default=None), _text("vacuum_error"),
    )),
    RowType("forget_tombstone", (
        _f("digests", "strs", max_length=64, default=[]), _f("capitalized_digests", "strs", max_length=64, default=[]),
        _f("part_digests", "strs", max_length=64, default=[]), _f("max_words", "int", low=0, high=32767, default=1),
        _f("created_at", "time"),
    )),
    RowType("audit", (
        _str("actor", 200), _str("action", 64), _str("object_type", 64),
        _f("object_id", "int", null=True, default=None), _f("before", "dict", default={}),
        _f("after", "dict", default={}), _text("reason"), _f("created_at", "time"),
    )),
    RowType("job_checkpoint", (
        _str("job", 64), _f("watermark", "time"), _f("finished_at", "time"), _f("data", "dict", default={}),
    ), unique=(("job",),)),
)}


def header(*, agent: dict, exported_at: datetime, counts: dict[str, int]) -> dict:
    """The first line: what the file is, whose memory, when, and how many rows of each type."""
    return {"format": FORMAT, "version": VERSION, "exported_at": exported_at.isoformat(),
            "agent": {**agent, "created_at": agent["created_at"].isoformat()}, "counts": counts}


def row(row_type: str, values: dict, lookup: remap.Lookup) -> dict:
    """A row as written: `values` by model attribute (as a queryset's .values() gives them), the
    references (in columns and in stored JSON) through `lookup` — which answers None for a row
    that is not in the file."""
    spec = ROW_TYPES[row_type]
    out: dict = {"type": row_type}
    for f in spec.fields:
        value = values[f.attname]
        if value is None:
            out[f.name] = None
        elif f.kind == "time":
            out[f.name] = value.isoformat()
        elif f.kind == "ref":
            out[f.name] = lookup(f.ref, value)
        else:
            out[f.name] = value
    return remap.remap_stored_json(row_type, out, lookup)


def line(value: dict) -> str:
    """One line of the file (no newline): compact, UTF-8 as is."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))
