"""Agent-scoped reads for the API and the UI. Every function takes the agent first and filters
by it, so no query built here can return another agent's rows."""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime
from typing import NamedTuple

from django.db import connection
from django.db.models import Count, OuterRef, Prefetch, Q, QuerySet, Subquery

from memories.errors import NotFound
from memories.models import (
    Agent,
    Entity,
    EntityAlias,
    Event,
    Fact,
    FactEntityLink,
    KeywordCorpus,
    PipelineRun,
    PipelineStep,
    Relationship,
    RunKind,
)
from retrieval.timefilters import fact_visible

MAX_GRAPH_EDGES = 500
HEAVY_FACT_FIELDS = ("embedding", "search_vector")


def agents_visible(*, agent_id: int | None) -> QuerySet[Agent]:
    """Every agent, or only the one a bound credential may use."""
    query = Agent.objects.all()
    return query if agent_id is None else query.filter(pk=agent_id)


def agent_by_slug(*, slug: str) -> Agent | None:
    return Agent.objects.filter(slug=slug).first()


# --- events and jobs -----------------------------------------------------------------------------

def aliases_matching(*, agent: Agent, names) -> list[tuple[str, Entity]]:
    """(alias, entity) for each of the agent's aliases among `names` (normalized forms, e.g. a
    message's n-grams), entities without their name vectors. The names travel as one array
    parameter: an IN list of ~150 n-grams took Django longer to build than Postgres to run."""
    names = list(names)
    if not names:
        return []
    pairs = list(EntityAlias.objects.filter(agent=agent).extra(where=["alias = ANY(%s)"], params=[names])
                 .order_by("-alias").values_list("alias", "entity_id"))
    entities = Entity.objects.defer("name_embedding").in_bulk({entity_id for _, entity_id in pairs})
    return [(alias, entities[entity_id]) for alias, entity_id in pairs]


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


def facts_visible(*, agent: Agent, as_of: datetime | None = None) -> QuerySet[Fact]:
    """The versions visible as of `as_of` (None: the open ones)."""
    return facts_list(agent=agent).filter(fact_visible(as_of))


def facts_mentioning(*, agent: Agent, entity_id: int) -> Q:
    """Facts whose subject is the entity or that name it (a filter for facts_list)."""
    linked = FactEntityLink.objects.filter(entity_id=entity_id, fact__agent=agent).values("fact_id")
    return Q(entity_id=entity_id) | Q(id__in=linked)


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
    seen = set()
    while entity.merged_into_id and entity.id not in seen:
        seen.add(entity.id)
        entity = entities_list(agent=agent).get(pk=entity.merged_into_id)
    return entity


def entity_detail(*, agent: Agent, entity: Entity) -> dict:
    """The entity with its aliases, its active facts (as subject or mentioned) and its active
    relationships in both directions."""
    aliases = list(EntityAlias.objects.filter(agent=agent, entity=entity).values_list("alias", flat=True))
    facts = list(facts_visible(agent=agent).filter(facts_mentioning(agent=agent, entity_id=entity.id))
                 .order_by("-recorded_at", "-id")[:200])
    relationships = list(relationships_list(agent=agent).filter(fact_visible(None))
                         .filter(Q(source=entity) | Q(target=entity)).order_by("-strength", "id")[:200])
    return {"entity": entity, "aliases": aliases, "facts": facts, "relationships": relationships}


def relationships_list(*, agent: Agent) -> QuerySet[Relationship]:
    return Relationship.objects.filter(agent=agent).select_related("source", "target").defer(
        "source__name_embedding", "target__name_embedding")


def graph_around(*, agent: Agent, entity: Entity | None = None, depth: int = 1, rel_types: list[str] | None = None,
                 as_of: datetime | None = None, max_edges: int = MAX_GRAPH_EDGES) -> dict:
    """Nodes and edges a graph view can draw: the visible relationships within `depth` hops of
    `entity` (breadth-first), or the strongest visible ones of the agent when no entity is given."""
    rels = Relationship.objects.filter(fact_visible(as_of), agent=agent)
    if rel_types:
        rels = rels.filter(rel_type__in=rel_types)
    edges: dict[int, Relationship] = {}
    node_ids: set[int] = set()
    if entity is None:
        for rel in rels.order_by("-strength", "id")[:max_edges]:
            edges[rel.id] = rel
            node_ids |= {rel.source_id, rel.target_id}
    else:
        node_ids.add(entity.id)
        frontier = {entity.id}
        for _ in range(depth):
            found = rels.filter(Q(source_id__in=frontier) | Q(target_id__in=frontier)).exclude(id__in=list(edges))
            for rel in found.order_by("-strength", "id")[: max_edges - len(edges)]:
                edges[rel.id] = rel
            reached = {end for rel in edges.values() for end in (rel.source_id, rel.target_id)}
            frontier = reached - node_ids
            node_ids |= reached
            if not frontier or len(edges) >= max_edges:
                break
    nodes = entities_list(agent=agent).filter(id__in=node_ids).order_by("id")
    return {
        "nodes": [{"id": n.id, "key": n.key, "label": n.display_name, "type": n.type} for n in nodes],
        "edges": [{"id": r.id, "source": r.source_id, "target": r.target_id, "rel_type": r.rel_type,
                   "strength": r.strength, "valid_from": r.valid_from, "valid_to": r.valid_to}
                  for r in sorted(edges.values(), key=lambda r: r.id)],
    }


# --- traces --------------------------------------------------------------------------------------

def runs_list(*, agent: Agent) -> QuerySet[PipelineRun]:
    return PipelineRun.objects.filter(agent=agent).annotate(step_count=Count("steps"))


def runs_with_steps(*, agent: Agent) -> QuerySet[PipelineRun]:
    """Runs with their steps prefetched in order (attempt, then position)."""
    steps = Prefetch("steps", queryset=PipelineStep.objects.order_by("attempt", "order"))
    return PipelineRun.objects.filter(agent=agent).prefetch_related(steps)


# --- per-agent vector indexes (built by memories.services.vector_indexes) ---

_AGENT_INDEX = re.compile(r"^(fact|event)_ann_a(\d+)$")


def agent_index_name(kind: str, agent_id: int) -> str:
    return f"{kind}_ann_a{int(agent_id)}"


@dataclass(frozen=True)
class AgentIndex:
    name: str
    kind: str
    agent_id: int
    valid: bool  # false while a concurrent build runs, or after one failed


def agent_indexes() -> list[AgentIndex]:
    """Every per-agent vector index in the database."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT c.relname, i.indisvalid FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid "
                       "WHERE c.relname ~ '^(fact|event)_ann_a[0-9]+$'")
        rows = cursor.fetchall()
    out = []
    for name, valid in rows:
        kind, agent_id = _AGENT_INDEX.match(name).groups()
        out.append(AgentIndex(name, kind, int(agent_id), bool(valid)))
    return out


class VectorScope(NamedTuple):
    rows: int  # the agent's stored documents of the kind (the BM25 corpus count)
    own_index: bool  # a valid vector index of its own


def vector_scopes(*, agent_id: int) -> dict[str, VectorScope]:
    """For facts and events, in one round trip: what the semantic search strategy depends on."""
    kinds = ("fact", "event")
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT k.kind, coalesce(c.doc_count, 0), coalesce(i.indisvalid, false) "
            f"FROM unnest(%s::text[], %s::text[]) AS k(kind, index_name) "
            f"LEFT JOIN {KeywordCorpus._meta.db_table} c ON c.agent_id = %s AND c.kind = k.kind "
            f"LEFT JOIN pg_class ic ON ic.relname = k.index_name "
            f"LEFT JOIN pg_index i ON i.indexrelid = ic.oid",
            [list(kinds), [agent_index_name(kind, agent_id) for kind in kinds], agent_id])
        return {kind: VectorScope(int(rows), bool(valid)) for kind, rows, valid in cursor.fetchall()}


def vector_scope(*, agent_id: int, kind: str) -> VectorScope:
    return vector_scopes(agent_id=agent_id)[kind]
