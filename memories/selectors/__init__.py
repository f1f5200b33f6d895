"""Agent-scoped reads for the API and the UI. Every function takes the agent first and filters
by it, so no query built here can return another agent's rows. `facts.py` reads version chains
and what a new statement is reconciled against; `entities.py` the reads behind entity resolution."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from django.db import connection, transaction
from django.db.models import Count, IntegerField, OuterRef, Prefetch, Q, QuerySet, Subquery
from django.db.models.functions import Coalesce

from memories.errors import NotFound
from memories.models import (
    Agent,
    Entity,
    EntityAlias,
    ErasureReceipt,
    Event,
    Fact,
    FactEntityLink,
    PipelineRun,
    PipelineStep,
    Relationship,
    RunKind,
)
from memories.models.visibility import Moment
from memories.profiles import ProfileFact

HEAVY_FACT_FIELDS = ("embedding", "search_vector")


@contextmanager
def read_snapshot() -> Iterator[None]:
    """One consistent, read-only view of the database for the reads inside. Inside a transaction
    already (a caller's, a test's), that transaction's view is used."""
    if connection.in_atomic_block:
        yield
        return
    with transaction.atomic():
        with connection.cursor() as cursor:
            cursor.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")
        yield


def agents_visible(*, agent_id: int | None) -> QuerySet[Agent]:
    """Every agent, or only the one a bound credential may use."""
    query = Agent.objects.all()
    return query if agent_id is None else query.filter(pk=agent_id)


def agent_by_slug(*, slug: str) -> Agent | None:
    return Agent.objects.filter(slug=slug).first()


def _agent_count(model, **filters):
    rows = model.objects.filter(agent=OuterRef("pk"), **filters).order_by().values("agent")
    return Coalesce(Subquery(rows.annotate(n=Count("pk")).values("n")[:1], output_field=IntegerField()), 0)


def agents_with_counts() -> QuerySet[Agent]:
    """Every agent with what it holds: `n_events`, `n_entities` (merged ones excluded) and
    `n_facts_current`. One statement, a subquery per count over the agent's own rows."""
    return Agent.objects.annotate(
        n_events=_agent_count(Event),
        n_entities=_agent_count(Entity, merged_into__isnull=True),
        n_facts_current=_agent_count(Fact, valid_to__isnull=True, invalidated_at__isnull=True),
    )


# --- events and jobs -----------------------------------------------------------------------------

def aliases_matching(*, agent: Agent, names) -> list[tuple[str, Entity]]:
    """(alias, entity) for each of the agent's aliases among `names` (normalized forms, e.g. a
    message's n-grams), entities without their name vectors, in one statement, aliases in
    reverse code-point order. The names travel as one array parameter (an IN list of ~150
    n-grams took Django longer to build than Postgres to run), and the statement is written
    out: composing it with the ORM cost more than running it, on every write."""
    names = list(names)
    if not names:
        return []
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT a.alias, {_ENTITY_COLUMNS} FROM {EntityAlias._meta.db_table} a "
            f"JOIN {Entity._meta.db_table} e ON e.id = a.entity_id "
            f"WHERE a.agent_id = %s AND a.alias = ANY(%s) ORDER BY a.alias DESC",
            [agent.id, names])
        rows = cursor.fetchall()
    entities: dict[int, Entity] = {}
    out = []
    for alias, *values in rows:
        entity = entities.get(values[_ENTITY_PK])
        if entity is None:
            entity = entities[values[_ENTITY_PK]] = Entity.from_db(connection.alias, _ENTITY_ATTNAMES, values)
        out.append((alias, entity))
    return out


# in the model's order of fields, as Model.from_db reads them
_ENTITY_FIELDS = [f for f in Entity._meta.concrete_fields if f.name != "name_embedding"]
_ENTITY_PK = next(n for n, f in enumerate(_ENTITY_FIELDS) if f.primary_key)
_ENTITY_ATTNAMES = [f.attname for f in _ENTITY_FIELDS]
_ENTITY_COLUMNS = ", ".join(f"e.{f.column}" for f in _ENTITY_FIELDS)


def events_list(*, agent: Agent) -> QuerySet[Event]:
    """The agent's events with the id of each one's write job (`job_id`)."""
    job = PipelineRun.objects.filter(event=OuterRef("pk"), kind=RunKind.WRITE).values("id")[:1]
    return Event.objects.filter(agent=agent).defer("embedding", "search_vector").annotate(job_id=Subquery(job))


def write_jobs(*, agent: Agent) -> QuerySet[PipelineRun]:
    return PipelineRun.objects.filter(agent=agent, kind=RunKind.WRITE)


def write_job_get(*, agent: Agent, job_id: int) -> PipelineRun:
    job = write_jobs(agent=agent).filter(pk=job_id).first()
    if job is None:
        raise NotFound(f"job {job_id} not found")
    return job


def write_job_for_event(*, agent: Agent, event_id: int) -> PipelineRun | None:
    return write_jobs(agent=agent).filter(event_id=event_id).first()


# --- facts ---------------------------------------------------------------------------------------

def facts_list(*, agent: Agent) -> QuerySet[Fact]:
    """All versions of the agent's facts (visibility is the caller's filter: see FactFilterSet)."""
    return Fact.objects.filter(agent=agent).select_related("entity").defer(
        *HEAVY_FACT_FIELDS, "entity__name_embedding")


def fact_get(*, agent: Agent, fact_id: int) -> Fact:
    fact = facts_list(agent=agent).select_related("source_event").filter(pk=fact_id).first()
    if fact is None:
        raise NotFound(f"fact {fact_id} not found")
    return fact


# --- entities and relationships ------------------------------------------------------------------

def entities_list(*, agent: Agent) -> QuerySet[Entity]:
    return Entity.objects.filter(agent=agent).defer("name_embedding")


def entity_get(*, agent: Agent, entity_id: int) -> Entity:
    entity = entities_list(agent=agent).filter(pk=entity_id).first()
    if entity is None:
        raise NotFound(f"entity {entity_id} not found")
    return entity


def entity_by_ref(*, agent: Agent, ref: str) -> Entity:
    """An entity by id or by key ("person:ana"); a merged entity resolves to its survivor."""
    query = entities_list(agent=agent)
    entity = None
    if ref.isascii() and ref.isdigit() and len(ref) <= 18:
        entity = query.filter(pk=int(ref)).first()
    if entity is None:
        entity = query.filter(key=ref).first()
    if entity is None:
        raise NotFound(f"entity {ref!r} not found", {"entity": "no such entity id or key"})
    return entity.survivor()


def entity_detail(*, agent: Agent, entity: Entity, moment: Moment | None = None) -> dict:
    """The entity with its aliases, its facts (as subject or mentioned) and its relationships in
    both directions, as visible at `moment` (None: the current ones)."""
    aliases = list(EntityAlias.objects.filter(agent=agent, entity=entity).values_list("alias", flat=True))
    facts = list(facts_list(agent=agent).visible(moment).about(entity.id).order_by("-recorded_at", "-id")[:200])
    relationships = list(relationships_list(agent=agent).visible(moment)
                         .filter(Q(source=entity) | Q(target=entity)).order_by("-strength", "id")[:200])
    return {"entity": entity, "aliases": aliases, "facts": facts, "relationships": relationships}


def relationships_list(*, agent: Agent) -> QuerySet[Relationship]:
    return Relationship.objects.filter(agent=agent).select_related("source", "target").defer(
        "source__name_embedding", "target__name_embedding")


# --- traces --------------------------------------------------------------------------------------

def runs_list(*, agent: Agent) -> QuerySet[PipelineRun]:
    return PipelineRun.objects.filter(agent=agent).annotate(step_count=Count("steps"))


def runs_with_steps(*, agent: Agent) -> QuerySet[PipelineRun]:
    """Runs with their steps prefetched in order (attempt, then position)."""
    steps = Prefetch("steps", queryset=PipelineStep.objects.order_by("attempt", "order"))
    return PipelineRun.objects.filter(agent=agent).prefetch_related(steps)


# --- merge suggestions (the merge_suggestions job) -----------------------------------------------

def merge_suggestions_list(*, agent: Agent) -> QuerySet:
    from memories.models import MergeSuggestion

    return MergeSuggestion.objects.filter(agent=agent).select_related("entity_a", "entity_b").defer(
        "entity_a__name_embedding", "entity_b__name_embedding")


# --- erasure receipts (forget) --------------------------------------------------------------------

def erasure_receipts(*, agent: Agent) -> QuerySet[ErasureReceipt]:
    """The agent's erasure receipts, newest first."""
    return ErasureReceipt.objects.filter(agent=agent)


def erasure_receipt_get(*, agent: Agent, receipt_id: int) -> ErasureReceipt:
    receipt = ErasureReceipt.objects.filter(agent=agent, pk=receipt_id).first()
    if receipt is None:
        raise NotFound(f"erasure receipt {receipt_id} not found")
    return receipt


def profile_facts(*, agent: Agent, entity_ids: list[int]) -> dict[int, list[ProfileFact]]:
    """Each entity's current facts for its profile: its own, and the ones that mention it (without
    the slot: a mention is not the entity's slot)."""
    fields = ("id", "text", "slot", "slot_value", "importance", "confidence")
    out: dict[int, list[ProfileFact]] = {}
    current = Fact.objects.filter(agent=agent).current()
    for row in current.filter(entity_id__in=entity_ids).values_list("entity_id", *fields):
        out.setdefault(row[0], []).append(ProfileFact(*row[1:]))
    mentions = FactEntityLink.objects.filter(entity_id__in=entity_ids, is_primary=False, fact__in=current)
    for entity_id, *row in mentions.values_list("entity_id", *(f"fact__{f}" for f in fields)):
        out.setdefault(entity_id, []).append(ProfileFact(row[0], row[1], "", "", row[4], row[5]))
    return out
