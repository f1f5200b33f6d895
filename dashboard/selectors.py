"""The UI's read models, beyond the domain apps' selectors: the overview's counts and latency,
search, an entity's page, a fact's chain with where each version came from, the difference
between two moments, a retrieval's ranked items, open merge suggestions. Agent first (the
overview reads every agent), keyword-only; plain data or querysets out."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

from django.db import connection
from django.db.models import Count, IntegerField, OuterRef, Q, QuerySet, Subquery
from django.db.models.functions import Coalesce
from django.utils import timezone

from memories import selectors
from memories.budgets import LLMBudget, agents_llm_budgets
from memories.errors import NotFound
from memories.models import (
    Agent,
    AuditEntry,
    Entity,
    EntityAlias,
    Event,
    Fact,
    MergeSuggestion,
    MergeSuggestionStatus,
    PipelineRun,
    Relationship,
    RunKind,
    RunStatus,
)
from memories.models.visibility import Moment
from memories.naming import normalize_alias
from memories.selectors.facts import fact_current_version, fact_history
from retrieval.keys import CandidateKey


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


@dataclass(frozen=True)
class LLMUse:
    """One agent's LLM tokens in the current UTC day and month against its budgets."""

    agent: Agent
    budget: LLMBudget


def llm_use_overview(*, now: datetime | None = None) -> list[LLMUse]:
    """Every agent's LLM use against budget, by slug. One statement."""
    return [LLMUse(agent, budget) for agent, budget in agents_llm_budgets(now=now)]


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

def search(*, agent: Agent, q: str, as_of: Moment | datetime | None = None, limit: int = 25) -> dict:
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


def _stop(moment: datetime) -> str:
    """A moment as the slider and the datetime-local field carry it (UTC, milliseconds), rounded
    up so the message said at that moment is included."""
    moment = moment.astimezone(UTC)
    if moment.microsecond % 1000:
        moment += timedelta(microseconds=1000 - moment.microsecond % 1000)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3]


def knowledge_moments(*, agent: Agent, limit: int = 1000) -> list[dict]:
    """The moments the agent learned something, oldest first: when each message was said
    (Event.occurred_at, the agent's clock, which `as_of` reads), with the message. The stops of the
    as_of slider; messages said at the same instant share a stop. An imported history answers
    as of its own dates, not as of the day it was stored."""
    events = (selectors.events_list(agent=agent).filter(redacted_at__isnull=True)
              .only("occurred_at", "speaker", "text").order_by("-occurred_at", "-id")[:limit])
    stops: dict[str, dict] = {}
    for e in reversed(list(events)):
        text = e.text if len(e.text) <= 70 else e.text[:69] + "…"
        stops[_stop(e.occurred_at)] = {"t": _stop(e.occurred_at),
                                       "label": f"after “{text}” ({e.speaker}, {e.occurred_at:%Y-%m-%d %H:%M})"}
    return list(stops.values())


# --- an entity, a fact's chain -------------------------------------------------------------------

def entity_page(*, agent: Agent, entity: Entity, as_of: Moment | datetime | None = None) -> dict:
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
    reinstated = {}  # new version id → the audit entry of the reinstatement that wrote it
    for entry in AuditEntry.objects.filter(agent=agent, action="fact_reinstate",
                                           object_id__in=[str(f.id) for f in chain]):
        if isinstance(entry.after, dict) and entry.after.get("id"):
            reinstated[entry.after["id"]] = entry
    versions, previous = [], None
    for fact in chain:
        run = runs.get(fact.source_event_id) if fact.source_context != "operator" else None
        if fact.id in reinstated:
            entry = reinstated[fact.id]
            decision, reason = "REINSTATED", f"version {entry.object_id} reinstated by {entry.actor}: {entry.reason}"
            run = None
        else:
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

@dataclass
class Change:
    """One row of the time-travel page: the version known then (None: added since), the version
    current now (None: ended or retracted since, with `ended` saying why)."""

    then: object | None
    now: object | None
    ended: str = ""

    @property
    def row(self):
        """The version to show when one is enough: now's, else then's."""
        return self.now if self.now is not None else self.then

    @property
    def kind(self) -> str:
        if self.then is None:
            return "added"
        if self.now is None:
            return "ended"
        return "unchanged" if self.then.id == self.now.id else "changed"


@dataclass
class MomentDiff:
    """Between a moment and now: rows known only now (added), known then and replaced by another
    version of the same chain (changed), known then and no longer (ended: superseded without a
    successor, closed or retracted), and known at both moments (unchanged)."""

    added: list[Change]
    changed: list[Change]
    ended: list[Change]
    unchanged: list[Change]

    @property
    def rows(self) -> list[Change]:
        return [*self.changed, *self.ended, *self.added, *self.unchanged]


def _ended_why(row) -> str:
    if getattr(row, "invalidation_reason", ""):
        return row.invalidation_reason
    if row.unlearned_at:
        return f"no longer believed from {row.unlearned_at:%Y-%m-%d}"
    if row.valid_to:
        return f"no longer true from {row.valid_to:%Y-%m-%d}"
    return "closed"


def _fact_diff(then_rows: list[Fact], now_rows: list[Fact]) -> MomentDiff:
    now_ids = {f.id for f in now_rows}
    then_ids = {f.id for f in then_rows}
    now_by_id = {f.id: f for f in now_rows}
    changed, ended, replaced = [], [], set()
    for fact in then_rows:
        if fact.id in now_ids:
            continue
        head = fact_current_version(fact)
        if head is not None and head.id in now_ids and head.id not in then_ids:
            changed.append(Change(then=fact, now=now_by_id[head.id]))
            replaced.add(head.id)
        else:
            ended.append(Change(then=fact, now=None, ended=_ended_why(fact)))
    return MomentDiff(
        added=[Change(then=None, now=f) for f in now_rows if f.id not in then_ids and f.id not in replaced],
        changed=changed, ended=ended,
        unchanged=[Change(then=f, now=f) for f in now_rows if f.id in then_ids])


def _rel_diff(then_rows: list[Relationship], now_rows: list[Relationship]) -> MomentDiff:
    def slot(r):
        return (r.source_id, r.rel_type, r.target_id)

    then_ids, now_ids = {r.id for r in then_rows}, {r.id for r in now_rows}
    then_slots = {slot(r) for r in then_rows}
    # a relationship re-opened as a new version (reinstated, unmerged) is the same edge
    return MomentDiff(
        added=[Change(then=None, now=r) for r in now_rows if r.id not in then_ids and slot(r) not in then_slots],
        changed=[],
        ended=[Change(then=r, now=None, ended=_ended_why(r)) for r in then_rows
               if r.id not in now_ids and slot(r) not in {slot(n) for n in now_rows}],
        unchanged=[Change(then=r, now=r) for r in now_rows if r.id in then_ids or slot(r) in then_slots])


def knowledge_diff(*, agent: Agent, then: Moment, limit: int = 500) -> dict:
    """What the agent knew at `then` (its clock: `Fact.objects.visible(then)`) beside what it
    knows now (the current versions)."""
    facts = (selectors.facts_list(agent=agent).select_related("entity", "source_event")
             .defer("embedding").order_by("entity__display_name", "id"))
    rels = selectors.relationships_list(agent=agent).order_by("source__display_name", "rel_type", "id")
    return {
        "facts": _fact_diff(list(facts.visible(then)[:limit]), list(facts.visible(None)[:limit])),
        "relationships": _rel_diff(list(rels.visible(then)[:limit]), list(rels.visible(None)[:limit])),
    }


# --- traces --------------------------------------------------------------------------------------

@dataclass
class RetrievedItem:
    """One item a retrieval returned, in rank order, with its score per signal. `key` is None when
    the stored ranking holds something that is no candidate key; `obj` is None when the row is
    gone (or the key is not one)."""

    rank: int
    stored: str  # the key as the run's result holds it ("f:12")
    key: CandidateKey | None
    obj: object | None
    scores: dict

    @property
    def kind(self) -> str:
        return self.key.kind if self.key else ""


def _candidate_key(text: str) -> CandidateKey | None:
    try:
        return CandidateKey.parse(text)
    except ValueError:
        return None


def retrieval_items(*, agent: Agent, run: PipelineRun) -> list[RetrievedItem]:
    if run.kind != RunKind.RETRIEVE:
        return []
    ranking = [str(k) for k in (run.result or {}).get("ranking", [])]
    scores = (run.result or {}).get("scores", {})
    keys = [_candidate_key(text) for text in ranking]
    facts = selectors.facts_list(agent=agent).in_bulk([k.id for k in keys if k and k.is_fact])
    events = selectors.events_list(agent=agent).in_bulk([k.id for k in keys if k and not k.is_fact])
    return [RetrievedItem(rank=rank, stored=text, key=key, scores=scores.get(text, {}),
                          obj=(facts if key.is_fact else events).get(key.id) if key else None)
            for rank, (text, key) in enumerate(zip(ranking, keys, strict=True), start=1)]


# --- merge suggestions ---------------------------------------------------------------------------

@dataclass
class SuggestedEntity:
    entity: Entity
    facts: int  # current facts
    aliases: list[str]


@dataclass
class SuggestionRow:
    """One open merge suggestion as the page shows it: both entities with their current facts
    and aliases, the score and its evidence, and the entity kept by default (more current
    facts; on a tie the older one)."""

    suggestion: MergeSuggestion
    a: SuggestedEntity
    b: SuggestedEntity
    shared: list[Entity]
    survivor_id: int


def merge_suggestions_open(*, agent: Agent, limit: int = 200) -> list[SuggestionRow]:
    """Open suggestions, best score first, whose entities both still stand (a pair left moot by
    a merge since is pruned by the next job run; it is not offered meanwhile)."""
    suggestions = list(selectors.merge_suggestions_list(agent=agent).filter(
        status=MergeSuggestionStatus.OPEN, entity_a__merged_into__isnull=True,
        entity_b__merged_into__isnull=True).order_by("-score", "id")[:limit])
    ids = {e for s in suggestions for e in (s.entity_a_id, s.entity_b_id)}
    facts = dict(Fact.objects.current().filter(agent=agent, entity_id__in=ids).order_by().values("entity_id")
                 .annotate(n=Count("pk")).values_list("entity_id", "n"))
    aliases: dict[int, list[str]] = {}
    names = {s.entity_a_id: s.entity_a.display_name for s in suggestions} | {
        s.entity_b_id: s.entity_b.display_name for s in suggestions}
    for entity_id, alias in EntityAlias.objects.filter(agent=agent, entity_id__in=ids).order_by("alias").values_list(
            "entity_id", "alias"):
        if alias != normalize_alias(names[entity_id]):  # its own name is no news
            aliases.setdefault(entity_id, []).append(alias)
    shared_ids = {n for s in suggestions for n in (s.reasons or {}).get("shared_neighbours", [])}
    neighbours = selectors.entities_list(agent=agent).in_bulk(shared_ids)
    rows = []
    for s in suggestions:
        a = SuggestedEntity(s.entity_a, facts.get(s.entity_a_id, 0), aliases.get(s.entity_a_id, []))
        b = SuggestedEntity(s.entity_b, facts.get(s.entity_b_id, 0), aliases.get(s.entity_b_id, []))
        shared = [neighbours[n] for n in (s.reasons or {}).get("shared_neighbours", []) if n in neighbours]
        survivor = b.entity.id if b.facts > a.facts else a.entity.id  # entity_a is the older (lower id)
        rows.append(SuggestionRow(s, a, b, shared, survivor))
    return rows
