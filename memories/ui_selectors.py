"""Reads the UI pages need beyond `selectors.py`: dashboards, search, a fact's chain with where
each version came from, and the difference between two moments. Agent first, like every
selector; plain data or querysets out."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

from django.db import connection
from django.db.models import Count, IntegerField, OuterRef, Q, QuerySet, Subquery
from django.db.models.functions import Coalesce
from django.utils import timezone

from memories import selectors
from memories.errors import NotFound
from memories.models import (
    Agent,
    AuditEntry,
    Entity,
    EntityAlias,
    Event,
    Fact,
    PipelineRun,
    Relationship,
    RunStatus,
)
from memories.naming import normalize_alias
from memories.services.operator import fact_history


def _count(model, *conditions: Q, **filters) -> Subquery:
    rows = model.objects.filter(*conditions, agent=OuterRef("pk"), **filters).order_by().values("agent")
    return Coalesce(Subquery(rows.annotate(n=Count("pk")).values("n")[:1], output_field=IntegerField()), 0)


def agents_overview() -> QuerySet[Agent]:
    """Every agent with its counts: events, entities (merged ones excluded), current and
    superseded facts, current relationships. One statement, a subquery per count."""
    return Agent.objects.annotate(
        n_events=_count(Event),
        n_entities=_count(Entity, merged_into__isnull=True),
        n_facts_current=_count(Fact, valid_to__isnull=True, invalidated_at__isnull=True),
        n_facts_superseded=_count(Fact, Q(valid_to__isnull=False) | Q(invalidated_at__isnull=False)),
        n_relationships=_count(Relationship, valid_to__isnull=True, invalidated_at__isnull=True),
    ).order_by("slug")


def runs_recent(*, agent: Agent | None = None, limit: int = 15) -> list[PipelineRun]:
    """The latest runs, failed ones first (the operator's to-do list), then by time."""
    runs = PipelineRun.objects.select_related("agent").defer("result", "params")
    if agent is not None:
        runs = runs.filter(agent=agent)
    failed = list(runs.filter(status=RunStatus.FAILED).order_by("-created_at")[:limit])
    others = list(runs.exclude(status=RunStatus.FAILED).order_by("-created_at")[: max(limit - len(failed), 5)])
    return failed + others


@dataclass
class LatencySeries:
    """p50 duration per hour over the last `hours`, per run kind (None where nothing ran)."""

    hours: list[datetime]
    p50: dict[str, list[float | None]]
    counts: dict[str, int] = field(default_factory=dict)


def latency_last_day(*, agent: Agent | None = None, hours: int = 24, now: datetime | None = None) -> LatencySeries:
    now = (now or timezone.now()).replace(minute=0, second=0, microsecond=0) + timedelta(hours=1)
    start = now - timedelta(hours=hours)
    sql = ("SELECT kind, date_trunc('hour', created_at) AS hour, "
           "percentile_cont(0.5) WITHIN GROUP (ORDER BY duration_ms), count(*) "
           "FROM memories_pipelinerun WHERE created_at >= %s AND duration_ms IS NOT NULL "
           "AND kind IN ('write', 'retrieve')" + (" AND agent_id = %s" if agent else "") + " GROUP BY 1, 2")
    with connection.cursor() as cursor:
        cursor.execute(sql, [start, agent.id] if agent else [start])
        rows = cursor.fetchall()
    slots = [start + timedelta(hours=i) for i in range(hours)]
    index = {slot: i for i, slot in enumerate(slots)}
    series = LatencySeries(hours=slots, p50={"write": [None] * hours, "retrieve": [None] * hours},
                           counts={"write": 0, "retrieve": 0})
    for kind, hour, p50, count in rows:
        if hour in index:
            series.p50[kind][index[hour]] = round(float(p50), 1)
            series.counts[kind] += count
    return series


# --- search and recent changes -------------------------------------------------------------------

def search(*, agent: Agent, q: str, as_of: datetime | None = None, limit: int = 25) -> dict:
    """Entities whose name or an alias contains the words, and visible facts that contain them."""
    q = (q or "").strip()
    if not q:
        return {"q": "", "entities": [], "facts": []}
    alias_ids = EntityAlias.objects.filter(agent=agent, alias__contains=normalize_alias(q)).values("entity_id")
    entities = selectors.entities_list(agent=agent).filter(merged_into__isnull=True).filter(
        Q(display_name__icontains=q) | Q(key__icontains=q) | Q(id__in=alias_ids)
    ).order_by("-importance", "display_name")
    facts = selectors.facts_list(agent=agent).visible(as_of).filter(text__icontains=q).order_by("-recorded_at")
    return {"q": q, "entities": list(entities[:limit]), "facts": list(facts[:limit])}


def facts_recent(*, agent: Agent, limit: int = 20) -> list[Fact]:
    """The latest fact versions recorded or closed, newest first."""
    return list(selectors.facts_list(agent=agent).select_related("supersedes").order_by("-recorded_at", "-id")[:limit])


def audit_recent(*, agent: Agent, limit: int = 20) -> list[AuditEntry]:
    return list(AuditEntry.objects.filter(agent=agent).order_by("-created_at", "-id")[:limit])


def knowledge_moments(*, agent: Agent, limit: int = 1000) -> list[dict]:
    """The moments the agent's knowledge changed, oldest first: when each message's write
    finished (its facts recorded then), with the message. The stops of the as_of slider: `as_of`
    reads both time axes, so a moment before a message was *recorded* shows nothing of it."""
    runs = (selectors.write_jobs(agent=agent).filter(status=RunStatus.SUCCEEDED, finished_at__isnull=False)
            .select_related("event").only("finished_at", "event__speaker", "event__text", "event__occurred_at")
            .order_by("-finished_at")[:limit])
    return [{"t": r.finished_at.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3],
             "label": f"after “{r.event.text[:70]}” ({r.event.speaker}, said {r.event.occurred_at:%Y-%m-%d})"
             if r.event else "after a write"}
            for r in reversed(list(runs))]


# --- an entity, a fact's chain -------------------------------------------------------------------

def entity_page(*, agent: Agent, entity: Entity, as_of: datetime | None = None) -> dict:
    """The entity with its aliases, facts visible as of (current by default) and past ones,
    relationships, the messages its facts came from, entities merged into it, audit entries."""
    aliases = list(EntityAlias.objects.filter(agent=agent, entity=entity).order_by("alias"))
    facts = selectors.facts_list(agent=agent).about(entity.id).select_related("source_event")
    visible = list(facts.visible(as_of).order_by("-valid_from", "-id")[:200])
    shown = {f.id for f in visible}
    past = [f for f in facts.exclude(Q(valid_to__isnull=True, invalidated_at__isnull=True)).order_by(
        "-recorded_at", "-id")[:200] if f.id not in shown]
    relationships = list(selectors.relationships_list(agent=agent).visible(as_of).filter(
        Q(source=entity) | Q(target=entity)).order_by("rel_type", "id")[:200])
    event_ids = {f.source_event_id for f in [*visible, *past] if f.source_event_id}
    events = list(selectors.events_list(agent=agent).filter(id__in=event_ids).order_by("occurred_at"))
    merged = list(selectors.entities_list(agent=agent).filter(merged_into=entity))
    audit = list(AuditEntry.objects.filter(agent=agent, object_type="entity", object_id=str(entity.id)))
    return {"entity": entity, "aliases": aliases, "facts": visible, "past_facts": past,
            "relationships": relationships, "events": events, "merged": merged, "audit": audit}


def entity_find(*, agent: Agent, text: str) -> Entity | None:
    """The entity a search box means: an id or key, an alias, else the most important whose name
    contains the text. Merged entities resolve to their survivor."""
    text = (text or "").strip()
    if not text:
        return None
    try:
        return selectors.entity_by_ref(agent=agent, ref=text)
    except NotFound:
        pass
    alias = EntityAlias.objects.filter(agent=agent, alias=normalize_alias(text)).select_related("entity").first()
    if alias is not None:
        return alias.entity.survivor()
    entity = selectors.entities_list(agent=agent).filter(display_name__icontains=text).order_by("-importance").first()
    return entity.survivor() if entity else None


def entity_choices(*, agent: Agent, exclude: Entity | None = None) -> QuerySet[Entity]:
    query = selectors.entities_list(agent=agent).filter(merged_into__isnull=True).order_by("display_name")
    return query.exclude(pk=exclude.pk) if exclude else query


@dataclass
class FactVersion:
    """One version of a chain with where it came from: the run that wrote it, the decision
    (ADD / UPDATE / operator) and its reason, and why it was closed if it was."""

    fact: Fact
    run: PipelineRun | None
    decision: str
    reason: str
    closed_reason: str


def fact_chain(*, agent: Agent, fact_id: int) -> list[FactVersion]:
    chain = fact_history(agent=agent, fact_id=fact_id)
    runs = {r.event_id: r for r in selectors.write_jobs(agent=agent).filter(
        event_id__in=[f.source_event_id for f in chain if f.source_event_id])}
    versions, previous = [], None
    for fact in chain:
        run = runs.get(fact.source_event_id) if fact.source_context != "operator" else None
        decision, reason = _decision(fact, run, previous)
        versions.append(FactVersion(fact=fact, run=run, decision=decision, reason=reason,
                                    closed_reason=fact.invalidation_reason))
        previous = fact
    return versions


def _decision(fact: Fact, run: PipelineRun | None, previous: Fact | None) -> tuple[str, str]:
    if fact.source_context == "operator":
        return "OPERATOR", (previous.invalidation_reason if previous else "") or f"written by {fact.speaker}"
    for entry in (run.result or {}).get("facts_updated", []) if run else []:
        if entry.get("fact_id") == fact.id:
            return "UPDATE", entry.get("reason", "")
    if previous is not None:
        return "UPDATE", previous.invalidation_reason
    return "ADD", "a new statement from the message"


# --- time travel ---------------------------------------------------------------------------------

def known_at(moment: datetime | None) -> Q:
    """Rows the agent held as true at `moment` on the database clock: recorded by then and not yet
    superseded or retracted (None: now). Unlike `visible(as_of)` this ignores the world window, so a
    move learned later still shows the old address as what the agent believed before."""
    if moment is None:
        return Q(invalidated_at__isnull=True)
    return Q(recorded_at__lte=moment) & (Q(invalidated_at__isnull=True) | Q(invalidated_at__gt=moment))


@dataclass
class MomentDiff:
    """Between `then` and now: what is known only now (added), only then (superseded or retracted
    since), and at both moments (unchanged)."""

    added: list
    superseded: list
    unchanged: list


def _diff(then_rows: list, now_rows: list) -> MomentDiff:
    then_ids, now_ids = {r.id for r in then_rows}, {r.id for r in now_rows}
    return MomentDiff(added=[r for r in now_rows if r.id not in then_ids],
                      superseded=[r for r in then_rows if r.id not in now_ids],
                      unchanged=[r for r in now_rows if r.id in then_ids])


def knowledge_diff(*, agent: Agent, then: datetime, limit: int = 500) -> dict:
    facts = selectors.facts_list(agent=agent).select_related("superseded_by").order_by("entity__display_name", "id")
    rels = selectors.relationships_list(agent=agent).order_by("source__display_name", "rel_type", "id")
    return {
        "facts": _diff(list(facts.filter(known_at(then))[:limit]), list(facts.filter(known_at(None))[:limit])),
        "relationships": _diff(list(rels.filter(known_at(then))[:limit]), list(rels.filter(known_at(None))[:limit])),
    }


# --- traces --------------------------------------------------------------------------------------

@dataclass
class RetrievedItem:
    """One item a retrieval returned, in rank order, with its score per signal."""

    rank: int
    key: str
    kind: str
    obj: object | None
    scores: dict


def retrieval_items(*, agent: Agent, run: PipelineRun) -> list[RetrievedItem]:
    if run.kind != "retrieve":
        return []
    ranking = (run.result or {}).get("ranking", [])
    scores = (run.result or {}).get("scores", {})
    fact_ids = [int(k[2:]) for k in ranking if k.startswith("f:")]
    event_ids = [int(k[2:]) for k in ranking if k.startswith("e:")]
    facts = selectors.facts_list(agent=agent).in_bulk(fact_ids)
    events = selectors.events_list(agent=agent).in_bulk(event_ids)
    items = []
    for rank, key in enumerate(ranking, start=1):
        kind, _, ident = key.partition(":")
        obj = (facts if kind == "f" else events).get(int(ident)) if ident.isdigit() else None
        items.append(RetrievedItem(rank=rank, key=key, kind="fact" if kind == "f" else "event", obj=obj,
                                   scores=scores.get(key, {})))
    return items
