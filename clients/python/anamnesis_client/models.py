"""The API's JSON as typed, read-only dataclasses (field for field the server's serializers:
memories/api/serializers.py, retrieval/api/serializers.py and the operations' own), decoded by
`decode` from their type hints. Date-times become aware `datetime`s; free-form objects (a step's
trace, a receipt's counts) stay dicts. Fields the server adds later are ignored, so an older
client keeps working against a newer server.
"""

from __future__ import annotations

import dataclasses
import types
import typing
from dataclasses import dataclass, field
from datetime import datetime
from functools import cache
from typing import Any, Union

# --- writes ------------------------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True, slots=True)
class TokenUsage:
    input_tokens: int = 0
    output_tokens: int = 0
    total_tokens: int = 0


@dataclass(frozen=True, kw_only=True, slots=True)
class FactChange:
    """A fact a write added, updated (superseding `previous_fact_id`), found unchanged or closed."""

    fact_id: int | None
    text: str
    entity: str  # the entity's key
    previous_fact_id: int | None = None
    reason: str = ""


@dataclass(frozen=True, kw_only=True, slots=True)
class WriteResult:
    """What the write pipeline did with one message."""

    success: bool
    error: str | None = None
    event_id: int | None = None
    run_id: int | None = None  # the job (and trace) id
    dry_run: bool = False
    facts_added: list[FactChange] = field(default_factory=list)
    facts_updated: list[FactChange] = field(default_factory=list)
    facts_unchanged: list[FactChange] = field(default_factory=list)
    facts_deleted: list[FactChange] = field(default_factory=list)
    facts_skipped: list[dict[str, str]] = field(default_factory=list)
    entities_resolved: list[dict[str, Any]] = field(default_factory=list)
    relationships: list[dict[str, Any]] = field(default_factory=list)
    duration_ms: float = 0.0
    tokens_used: TokenUsage = field(default_factory=TokenUsage)
    extraction_path: str = ""  # informed / blind / offline; empty for an empty message
    trace: list[dict[str, Any]] = field(default_factory=list)


@dataclass(frozen=True, kw_only=True, slots=True)
class Job:
    """A write job, one per stored message: queued → running → succeeded | failed."""

    id: int
    status: str
    event: int | None
    attempts: int
    created_at: datetime
    started_at: datetime | None = None
    finished_at: datetime | None = None
    duration_ms: float | None = None
    tokens_in: int = 0
    tokens_out: int = 0
    error: str = ""
    result: WriteResult | None = None
    held_until: datetime | None = None
    url: str = ""
    trace_url: str = ""

    @property
    def finished(self) -> bool:
        return self.status in ("succeeded", "failed")


@dataclass(frozen=True, kw_only=True, slots=True)
class Remembered:
    """The answer to `remember`: the message is stored and its job queued (`status`), or done.
    `replayed` says the server recognised a repeat (same `Idempotency-Key` or `external_id`) and
    stored nothing new."""

    job_id: int | None  # None only for an empty text: nothing to store
    status: str
    result: WriteResult | None  # set once the job succeeded
    replayed: bool
    job_url: str | None = None


@dataclass(frozen=True, kw_only=True, slots=True)
class Written(Remembered):
    """A remembered message whose job succeeded (what `remember(..., wait=True)` returns)."""

    result: WriteResult


# --- agents, entities, facts -----------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True, slots=True)
class Agent:
    slug: str
    name: str
    created_at: datetime


@dataclass(frozen=True, kw_only=True, slots=True)
class EntityRef:
    id: int
    key: str
    display_name: str
    type: str


@dataclass(frozen=True, kw_only=True, slots=True)
class Entity:
    id: int
    key: str
    type: str
    display_name: str
    importance: float
    merged_into: int | None
    created_at: datetime
    updated_at: datetime


@dataclass(frozen=True, kw_only=True, slots=True)
class SourceEvent:
    id: int
    speaker: str
    text: str
    occurred_at: datetime
    recorded_at: datetime
    external_id: str | None = None
    redacted_at: datetime | None = None


@dataclass(frozen=True, kw_only=True, slots=True)
class _FactFields:
    """One version of a fact on its three clocks: true in the world from `valid_from` to
    `valid_to`, known to the agent from `learned_at` (until `unlearned_at`), held by the database
    from `recorded_at` (until `invalidated_at`)."""

    id: int
    text: str
    entity: EntityRef
    confidence: float
    importance: float
    importance_category: str
    source_context: str
    speaker: str
    supersedes: int | None
    valid_from: datetime
    valid_to: datetime | None
    learned_at: datetime
    valid_to_learned_at: datetime | None
    unlearned_at: datetime | None
    recorded_at: datetime
    invalidated_at: datetime | None
    invalidation_reason: str
    is_active: bool
    reinforcement_count: int = 0
    last_confirmed_at: datetime | None = None
    slot: str = ""
    slot_value: str = ""


@dataclass(frozen=True, kw_only=True, slots=True)
class Fact(_FactFields):
    source_event: int | None = None  # the event's id


@dataclass(frozen=True, kw_only=True, slots=True)
class FactDetail(Fact):
    """Any version by id, with the id of its chain's current version (None: none is current)."""

    is_current: bool = False
    current_version: int | None = None
    current_url: str | None = None


@dataclass(frozen=True, kw_only=True, slots=True)
class FactVersion(_FactFields):
    source_event: SourceEvent | None = None


@dataclass(frozen=True, kw_only=True, slots=True)
class FactHistory:
    """The version chain a fact belongs to, oldest first."""

    fact_id: int
    versions: list[FactVersion]


@dataclass(frozen=True, kw_only=True, slots=True)
class FactRetracted:
    fact: Fact
    relationships_closed: int
    reinstated: Fact | None = None


@dataclass(frozen=True, kw_only=True, slots=True)
class Relationship:
    id: int
    source: EntityRef
    rel_type: str
    target: EntityRef
    strength: float
    evidence_fact: int | None
    source_event: int | None
    valid_from: datetime
    valid_to: datetime | None
    learned_at: datetime
    valid_to_learned_at: datetime | None
    unlearned_at: datetime | None
    recorded_at: datetime
    invalidated_at: datetime | None
    is_active: bool


@dataclass(frozen=True, kw_only=True, slots=True)
class EntityDetail:
    """An entity with its aliases, and its facts and relationships current at the moment asked."""

    entity: Entity
    profile_text: str
    summary_text: str
    aliases: list[str]
    facts: list[Fact]
    relationships: list[Relationship]


# --- retrieval -------------------------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True, slots=True)
class Citation:
    event_id: int | None
    external_id: str | None
    occurred_at: datetime | None
    speaker: str | None


@dataclass(frozen=True, kw_only=True, slots=True)
class RetrievedFact:
    id: int
    text: str
    entity: str  # the entity's key
    entity_name: str
    score: float
    rank: int
    scores: dict[str, float]  # the score by signal
    citations: list[Citation]
    valid_from: datetime
    valid_to: datetime | None
    recorded_at: datetime
    invalidated_at: datetime | None
    source_context: str


@dataclass(frozen=True, kw_only=True, slots=True)
class RetrievedEvent:
    id: int
    text: str
    speaker: str
    occurred_at: datetime
    external_id: str | None
    score: float
    rank: int
    scores: dict[str, float]


@dataclass(frozen=True, kw_only=True, slots=True)
class RetrieveResult:
    """The token-budgeted `context` and the ranked facts and events behind it, answered on the
    clocks asked (`as_of`, `valid_at`, `recorded_as_of`; None: now)."""

    query: str
    context: str
    facts: list[RetrievedFact]
    events: list[RetrievedEvent]
    ranking: list[str]  # "f:<id>" / "e:<id>" in final order
    total_candidates: int
    duration_ms: float
    context_tokens: int
    tokens_used: TokenUsage
    strategy: str
    as_of: datetime | None
    valid_at: datetime | None
    recorded_as_of: datetime | None
    trace_id: int | None
    trace: list[dict[str, Any]] = field(default_factory=list)

    def ranked(self) -> list[RetrievedFact | RetrievedEvent]:
        """The facts and events in the final ranking's order."""
        by_key: dict[str, RetrievedFact | RetrievedEvent] = {f"f:{f.id}": f for f in self.facts}
        by_key.update({f"e:{e.id}": e for e in self.events})
        return [by_key[key] for key in self.ranking if key in by_key]


# --- forget ----------------------------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True, slots=True)
class ForgetPreview:
    """What a forget would remove or redact; nothing has changed."""

    entities: list[dict[str, Any]]  # {id, key, display_name, type, why}
    names: list[str]
    name_forms: list[dict[str, Any]]  # {kind, form, action: redacted | kept, reason, could_also_mean}
    facts: int
    relationships: int
    own_messages: int
    mentioning_messages: int
    request_keys: int
    profiles_scrubbed: int
    entities_only_from_her_messages: int


@dataclass(frozen=True, kw_only=True, slots=True)
class ErasureReceipt:
    id: int
    url: str
    created_at: datetime
    actor: str
    opaque_key: str
    opaque_keys: list[str]
    reason_given: bool
    totals: dict[str, int]
    tables: dict[str, dict[str, int]]
    name_forms: dict[str, str]
    vacuum: dict[str, Any]


@dataclass(frozen=True, kw_only=True, slots=True)
class ForgetReport:
    """What a forget removed or redacted, per table, and the erasure receipt it stored."""

    facts_deleted: int
    relationships_deleted: int
    aliases_deleted: int
    links_deleted: int
    events_redacted: int
    profiles_scrubbed: int
    entities_deleted: int
    request_keys_redacted: int
    opaque_key: str
    tables: dict[str, dict[str, int]]
    receipt: ErasureReceipt
    receipt_url: str


# --- decoding ----------------------------------------------------------------------------------------


def parse_datetime(value: str) -> datetime:
    """ISO-8601 as the API writes it (`…Z` or `…+00:00`)."""
    return datetime.fromisoformat(value[:-1] + "+00:00" if value.endswith("Z") else value)


@cache
def _hints(cls: Any) -> dict[str, Any]:
    return typing.get_type_hints(cls)


def decode(kind: Any, value: Any) -> Any:
    """`value` (decoded JSON) as `kind`: a model class, `X | None`, `list[X]`, `dict[str, X]`,
    `datetime` or a plain type. A model field the server left out takes its default (None when
    it has none)."""
    if value is None:
        return None
    origin = typing.get_origin(kind)
    if origin in (Union, types.UnionType):
        (inner,) = [arg for arg in typing.get_args(kind) if arg is not type(None)]
        return decode(inner, value)
    if origin is list:
        (item,) = typing.get_args(kind)
        return [decode(item, v) for v in value]
    if origin is dict:
        _, item = typing.get_args(kind)
        return {k: decode(item, v) for k, v in value.items()}
    if kind is datetime:
        return parse_datetime(value)
    if kind is float and isinstance(value, int):
        return float(value)
    if isinstance(kind, type) and dataclasses.is_dataclass(kind):
        return _decode_model(kind, value)
    return value


def _decode_model(cls: Any, data: dict[str, Any]) -> Any:
    hints = _hints(cls)
    values = {}
    for spec in dataclasses.fields(cls):
        if spec.name in data:
            values[spec.name] = decode(hints[spec.name], data[spec.name])
        elif spec.default is dataclasses.MISSING and spec.default_factory is dataclasses.MISSING:
            values[spec.name] = None
    return cls(**values)
