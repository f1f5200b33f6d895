"""The reads behind an agent export: every row of one agent, type by type in the file's order
(memories.portability.format), each type by id, as plain values — read in one snapshot, so the
counts in the header, the ids references are checked against and the rows agree even while the
agent is being written to. Nothing of another agent: every query is filtered by the agent (a fact
link and a step through their fact and run)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from datetime import datetime

from django.db.models import BooleanField, ExpressionWrapper, JSONField, OuterRef, Q, QuerySet, Subquery, Value
from django.db.models.functions import Coalesce
from django.utils import timezone

from memories.models import (
    Agent,
    AuditEntry,
    Entity,
    EntityAlias,
    EntityMerge,
    ErasureReceipt,
    Event,
    Fact,
    FactEntityLink,
    ForgetTombstone,
    JobCheckpoint,
    MergeSuggestion,
    PipelineRun,
    PipelineStep,
    Relationship,
    RunKind,
)
from memories.portability import format as fmt
from memories.portability.remap import AGENT
from memories.selectors import read_snapshot

CHUNK_ROWS = 2000


def _has(column: str) -> ExpressionWrapper:
    return ExpressionWrapper(Q(**{f"{column}__isnull": False}), output_field=BooleanField())


def _write_params() -> Coalesce:
    """The event's write request: its job's parameters ({} for an event without a job)."""
    params = PipelineRun.objects.filter(event=OuterRef("pk"), kind=RunKind.WRITE).order_by("id").values("params")
    return Coalesce(Subquery(params[:1]), Value({}, output_field=JSONField()), output_field=JSONField())


# Each row type's rows of one agent, in the order they are written (the annotations fill the
# fields that are no column of the row's model).
QUERIES: dict[str, Callable[[Agent], QuerySet]] = {
    "entity": lambda a: Entity.objects.filter(agent=a).annotate(embedded=_has("name_embedding")).order_by("id"),
    "alias": lambda a: EntityAlias.objects.filter(agent=a, entity__agent=a).order_by("id"),
    "event": lambda a: Event.objects.filter(agent=a).annotate(embedded=_has("embedding"), params=_write_params())
    .order_by("id"),
    "fact": lambda a: Fact.objects.filter(agent=a).annotate(embedded=_has("embedding")).order_by("id"),
    "fact_link": lambda a: FactEntityLink.objects.filter(fact__agent=a, entity__agent=a).order_by("id"),
    "relationship": lambda a: Relationship.objects.filter(agent=a).order_by("id"),
    "entity_merge": lambda a: EntityMerge.objects.filter(agent=a).order_by("id"),
    "merge_suggestion": lambda a: MergeSuggestion.objects.filter(agent=a).order_by("id"),
    "job": lambda a: PipelineRun.objects.filter(agent=a, kind=RunKind.WRITE, event__agent=a).order_by("id"),
    "step": lambda a: PipelineStep.objects.filter(run__agent=a, run__kind=RunKind.WRITE, run__event__agent=a)
    .order_by("run_id", "attempt", "order", "id"),
    "erasure_receipt": lambda a: ErasureReceipt.objects.filter(agent=a).order_by("id"),
    "forget_tombstone": lambda a: ForgetTombstone.objects.filter(agent=a).order_by("id"),
    "audit": lambda a: AuditEntry.objects.filter(agent=a).order_by("id"),
    "job_checkpoint": lambda a: JobCheckpoint.objects.filter(agent=a).order_by("job"),
}
assert list(QUERIES) == list(fmt.ROW_TYPES)


def export_counts(*, agent: Agent) -> dict[str, int]:
    return {row_type: query(agent).count() for row_type, query in QUERIES.items()}


def export_ids(*, agent: Agent) -> dict[str, set[int]]:
    """The ids of the agent's rows of every type a reference can name: a reference to anything
    else (a row deleted since, never another agent's) is written as null."""
    ids = {row_type: set(QUERIES[row_type](agent).values_list("id", flat=True))
           for row_type, spec in fmt.ROW_TYPES.items() if spec.has_id}
    ids[AGENT] = {agent.id}
    return ids


def export_rows(*, agent: Agent, row_type: str) -> Iterator[dict]:
    """The agent's rows of one type as values by model attribute, read in chunks."""
    spec = fmt.ROW_TYPES[row_type]
    return QUERIES[row_type](agent).values(*[f.attname for f in spec.fields]).iterator(chunk_size=CHUNK_ROWS)


def agent_export(*, agent: Agent, exported_at: datetime | None = None) -> Iterator[str]:
    """The agent's export, one line at a time (each with its newline): the header, then every row
    (memories.portability.format). A generator: the snapshot is held while it is read."""
    with read_snapshot():
        counts = export_counts(agent=agent)
        known = export_ids(agent=agent)

        def lookup(kind: str, value: int) -> int | None:
            return value if value in known[kind] else None

        head = fmt.header(agent={"id": agent.id, "slug": agent.slug, "name": agent.name,
                                 "created_at": agent.created_at, "llm_budget_day_tokens": agent.llm_budget_day_tokens,
                                 "llm_budget_month_tokens": agent.llm_budget_month_tokens},
                          exported_at=exported_at or timezone.now(), counts=counts)
        yield fmt.line(head) + "\n"
        for row_type in fmt.ROW_TYPES:
            for values in export_rows(agent=agent, row_type=row_type):
                yield fmt.line(fmt.row(row_type, values, lookup)) + "\n"
