"""Reading an agent export line by line: the header, then each row checked against its type's
fields (memories.portability.format) before anything is stored — types, lengths, ranges, times
with their offset, the clocks' order, ids unique, what the database keeps unique — so that a bad
file is refused naming its line. Pure: no database. References are checked by the importer,
which knows which rows it has stored."""

from __future__ import annotations

import json
import math
import re
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from datetime import datetime

from memories.errors import InvalidExportFile, UnsupportedExportVersion
from memories.portability.format import CLOCKS, FORMAT, REQUIRED, ROW_TYPES, VERSION, Field, RowType

ORDER = {name: index for index, name in enumerate(ROW_TYPES)}
_UNSTORABLE = re.compile(r"[\x00\ud800-\udfff]")
_CLOCK_WINDOWS = (("valid_from", "valid_to"), ("recorded_at", "invalidated_at"), ("learned_at", "unlearned_at"))
_VERSIONED = {"fact", "relationship"}
assert {c.name for c in CLOCKS} >= {name for pair in _CLOCK_WINDOWS for name in pair}


@dataclass(frozen=True)
class Header:
    version: int
    exported_at: datetime
    agent: dict  # id, slug, name, created_at (a datetime), its own LLM budgets (llm_budget_*_tokens)
    counts: dict[str, int] | None


@dataclass(frozen=True)
class Record:
    """One checked row: its type, the line it was on, its values by field name (times parsed)."""

    type: str
    line: int
    values: dict


class _Bad(Exception):
    """A field's value is wrong (the reader adds the line and the field)."""


def _no_constant(name: str):
    raise _Bad(f"{name} is not a number JSON allows")


def _time(value) -> datetime:
    if not isinstance(value, str):
        raise _Bad("must be an ISO-8601 time")
    try:
        moment = datetime.fromisoformat(value)
    except ValueError as exc:
        raise _Bad(f"is not an ISO-8601 time ({value[:40]!r})") from exc
    if moment.tzinfo is None:
        raise _Bad("must give its offset from UTC (e.g. +00:00)")
    return moment


def _unstorable(value, path: str = "") -> str | None:
    """Where a JSON value holds a character PostgreSQL cannot store (NUL, a lone surrogate)."""
    if isinstance(value, str):
        return path or "value" if _UNSTORABLE.search(value) else None
    items = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else ()
    for key, item in items:
        if isinstance(key, str) and _UNSTORABLE.search(key):
            return f"{path}.{key}" if path else key
        found = _unstorable(item, f"{path}.{key}" if path else str(key))
        if found:
            return found
    return None


def _string(f: Field, value) -> str:
    if not isinstance(value, str):
        raise _Bad("must be a string")
    if f.max_length is not None and len(value) > f.max_length:
        raise _Bad(f"is longer than {f.max_length} characters")
    if f.choices and value not in f.choices:
        raise _Bad(f"must be one of {', '.join(f.choices)}")
    return value


def _number(f: Field, value) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise _Bad("must be a finite number")
    if (f.low is not None and value < f.low) or (f.high is not None and value > f.high):
        raise _Bad(f"must be between {f.low} and {f.high}" if f.high is not None else f"must be at least {f.low}")
    return value


def _convert(f: Field, value):
    if value is None:
        if f.null:
            return None
        raise _Bad("must not be null")
    kind = f.kind
    if kind in ("id", "ref", "int"):
        if type(value) is not int or (kind != "int" and value < 1) or abs(value) >= 2**63:
            raise _Bad("must be a positive integer id" if kind != "int" else "must be an integer")
        return int(_number(f, value))
    if kind == "float":
        return float(_number(f, value))
    if kind == "bool":
        if not isinstance(value, bool):
            raise _Bad("must be true or false")
        return value
    if kind in ("str", "text"):
        return _string(f, value)
    if kind == "time":
        return _time(value)
    if kind == "dict":
        if not isinstance(value, dict):
            raise _Bad("must be an object")
        return value
    if kind == "strs":
        if not isinstance(value, list):
            raise _Bad("must be a list of strings")
        return [_string(f, item) for item in value]
    raise AssertionError(kind)


def _values(fields: Iterable[Field], value: dict) -> dict:
    """The fields' values of one row, converted and checked; a missing one takes its default. A
    problem raises _Bad("<field>' <what is wrong>")."""
    values = {}
    for f in fields:
        if f.name not in value:
            if f.default is REQUIRED:
                raise _Bad(f"{f.name}' is missing")
            values[f.name] = type(f.default)() if isinstance(f.default, dict | list) else f.default
            continue
        try:
            values[f.name] = _convert(f, value[f.name])
        except _Bad as exc:
            raise _Bad(f"{f.name}' {exc}") from exc
    return values


_HEADER_AGENT = (Field("id", "id"), Field("slug", "str", max_length=100), Field("name", "str", max_length=200),
                 Field("created_at", "time"),
                 *(Field(f"llm_budget_{window}_tokens", "int", low=0, high=2**63 - 1, null=True, default=None)
                   for window in ("day", "month")))


def _checks(row_type: str, v: dict) -> tuple[str, str] | None:
    """(field, problem) of a row whose fields are each fine but that the database would refuse."""
    if row_type in _VERSIONED:
        for start, end in _CLOCK_WINDOWS:
            if v[end] is not None and v[end] < v[start]:
                return end, f"must not be before {start}"
    if row_type == "entity" and v["entity_type"] != v["entity_type"].lower():
        return "entity_type", "must be lower-case"
    if row_type == "entity" and v["merged_into"] == v["id"]:
        return "merged_into", "must not be the entity itself"
    if row_type == "fact" and v["supersedes"] == v["id"]:
        return "supersedes", "must not be the fact itself"
    if row_type == "relationship" and v["source"] == v["target"]:
        return "target", "must not be the source"
    if row_type == "entity_merge" and v["survivor"] == v["merged"]:
        return "merged", "must not be the survivor"
    if row_type == "merge_suggestion" and v["entity_a"] == v["entity_b"]:
        return "entity_b", "must not be entity_a"
    return None


def _unique_keys(spec: RowType, v: dict) -> Iterator[tuple[str, tuple]]:
    for fields in spec.unique:
        key = tuple(v[name] for name in fields)
        if spec.name == "merge_suggestion":
            key = tuple(sorted(key))
        if None not in key:
            yield ", ".join(fields), key
    if spec.name == "relationship" and v["valid_to"] is None and v["invalidated_at"] is None:
        yield "current source, rel_type, target", (v["source"], v["rel_type"], v["target"])


class ExportReader:
    """The lines of an export (bytes or str, with or without their newline): `header` is read at
    once, `records()` yields the checked rows, `finish()` checks the file against the counts its
    header announced. Every problem raises InvalidExportFile naming the line."""

    def __init__(self, lines: Iterable[bytes | str]):
        self._lines = iter(lines)
        self.line = 0
        self.counts: Counter[str] = Counter()
        self._type = next(iter(ROW_TYPES))
        self._ids: dict[str, dict[int, int]] = {name: {} for name, spec in ROW_TYPES.items() if spec.has_id}
        self._unique: dict[tuple[str, str], dict[tuple, int]] = {}
        first = self._next()
        if first is None:
            raise InvalidExportFile("the file is empty: an agent export starts with its header line")
        self.header = self._header(first)

    def _next(self) -> dict | list | str | None:
        """The next non-blank line, parsed; None at the end."""
        for raw in self._lines:
            self.line += 1
            if isinstance(raw, bytes):
                try:
                    raw = raw.decode("utf-8")
                except UnicodeDecodeError as exc:
                    raise InvalidExportFile(f"not UTF-8 text ({exc.reason} at byte {exc.start})",
                                            line=self.line) from exc
            if not raw.strip():
                continue
            try:
                value = json.loads(raw, parse_constant=_no_constant)
            except json.JSONDecodeError as exc:
                where = f"{exc.msg}{'' if exc.msg.endswith(' at') else ' at'} column {exc.colno}"
                raise InvalidExportFile(f"not a complete JSON object ({where}): "
                                        "the file may be truncated or damaged", line=self.line) from exc
            except RecursionError as exc:
                raise InvalidExportFile("nested too deeply", line=self.line) from exc
            except _Bad as exc:
                raise InvalidExportFile(str(exc), line=self.line) from exc
            if "\\u" in raw and (where := _unstorable(value)):
                raise InvalidExportFile(f"'{where}' holds a character that cannot be stored (NUL or a lone "
                                        "surrogate)", line=self.line, field=where.split(".")[0])
            return value
        return None

    def _header(self, value) -> Header:
        if not isinstance(value, dict) or value.get("format") != FORMAT:
            raise InvalidExportFile(f"not the header of an agent export (an object with \"format\": \"{FORMAT}\")",
                                    line=self.line)
        version = value.get("version")
        if version != VERSION:
            raise UnsupportedExportVersion(f"the file is in version {version!r} of the export format; this server "
                                           f"reads version {VERSION}", line=self.line, field="version")
        try:
            exported_at = _time(value.get("exported_at"))
        except _Bad as exc:
            raise InvalidExportFile(f"'exported_at' {exc}", line=self.line, field="exported_at") from exc
        agent = value.get("agent")
        if not isinstance(agent, dict):
            raise InvalidExportFile("'agent' must be an object with the agent's id, slug, name and created_at",
                                    line=self.line, field="agent")
        try:
            agent = _values(_HEADER_AGENT, agent)
        except _Bad as exc:
            raise InvalidExportFile(f"'agent.{exc}", line=self.line, field="agent") from exc
        counts = value.get("counts")
        if counts is not None and (not isinstance(counts, dict) or any(
                name not in ROW_TYPES or type(n) is not int or n < 0 for name, n in counts.items())):
            raise InvalidExportFile("'counts' must map row types to how many rows of each the file holds",
                                    line=self.line, field="counts")
        return Header(version=version, exported_at=exported_at, agent=agent, counts=counts)

    def records(self) -> Iterator[Record]:
        while (value := self._next()) is not None:
            yield self._record(value)

    def _record(self, value) -> Record:
        row_type = value.get("type") if isinstance(value, dict) else None
        if row_type not in ROW_TYPES:
            raise InvalidExportFile(f"a row must be an object whose 'type' is one of {', '.join(ROW_TYPES)}",
                                    line=self.line, field="type")
        if ORDER[row_type] < ORDER[self._type]:
            raise InvalidExportFile(f"{row_type} row after the {self._type} rows: the rows of an export come in "
                                    f"the order {', '.join(ROW_TYPES)}", line=self.line, field="type")
        self._type = row_type
        spec = ROW_TYPES[row_type]
        unknown = sorted(set(value) - set(spec.by_name) - {"type"})
        if unknown:
            raise InvalidExportFile(f"a {row_type} has no field '{unknown[0]}' (its fields: "
                                    f"{', '.join(spec.by_name)})", line=self.line, field=unknown[0])
        try:
            values = _values(spec.fields, value)
        except _Bad as exc:
            raise InvalidExportFile(f"{row_type} '{exc}", line=self.line, field=str(exc).split("'")[0]) from exc
        problem = _checks(row_type, values)
        if problem:
            raise InvalidExportFile(f"{row_type} '{problem[0]}' {problem[1]}", line=self.line, field=problem[0])
        self._remember(spec, values)
        self.counts[row_type] += 1
        return Record(row_type, self.line, values)

    def _remember(self, spec: RowType, values: dict) -> None:
        if spec.has_id:
            seen = self._ids[spec.name]
            if values["id"] in seen:
                raise InvalidExportFile(f"a second {spec.name} with id {values['id']} (the first is on line "
                                        f"{seen[values['id']]})", line=self.line, field="id")
            seen[values["id"]] = self.line
        for fields, key in _unique_keys(spec, values):
            taken = self._unique.setdefault((spec.name, fields), {})
            if key in taken:
                raise InvalidExportFile(f"{spec.name} {fields} repeats the one on line {taken[key]} (they must be "
                                        "unique)", line=self.line, field=fields.split(", ")[0])
            taken[key] = self.line

    def batches(self, size: int) -> Iterator[list[Record]]:
        """The records in runs of one type, at most `size` each."""
        batch: list[Record] = []
        for record in self.records():
            if batch and (record.type != batch[0].type or len(batch) >= size):
                yield batch
                batch = []
            batch.append(record)
        if batch:
            yield batch

    def finish(self) -> None:
        """At the end of the file: every type holds as many rows as the header announced."""
        announced = self.header.counts
        if announced is None:
            return
        for row_type in ROW_TYPES:
            expected, found = announced.get(row_type, 0), self.counts[row_type]
            if expected != found:
                raise InvalidExportFile(
                    f"the file ends at line {self.line} with {found} {row_type} rows where its header announces "
                    f"{expected}: " + ("it is truncated, or rows were removed" if found < expected
                                       else "rows were added after the export"), field=row_type)
