"""Reads the read pipeline needs, all scoped by agent."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

from django.conf import settings
from django.db import connection
from django.db.models import Q

from memories.extraction.mentions import name_runs
from memories.fast_rows import fast_timestamps, id_array
from memories.lru import LRUCache
from memories.models import Agent, Entity, EntityAlias, Event, Fact, Relationship
from memories.models.visibility import Moment, event_visible_sql, version_visible, version_visible_sql
from memories.naming import ngrams, normalize_alias
from memories.providers.embeddings import vector_literal
from memories.selectors import aliases_matching
from memories.selectors.entities import entity_for_other_name
from retrieval.vector_indexes import SCOPE_COLUMNS, SCOPE_KINDS, VectorScope, scope_joins


@dataclass(frozen=True)
class AgentState:
    """What a retrieval reads of its agent first, in one statement: the graph version (which
    every change of the agent's entities, aliases, relationships or fact links moves, so it
    keys the per-agent caches), when its latest message was said (what recency is measured
    from) and, for facts and events, what the vector search strategy depends on."""

    graph_version: int
    latest_event: datetime | None
    scopes: dict[str, VectorScope]


def agent_state(*, agent: Agent) -> AgentState:
    joins, params = scope_joins(agent.id)
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT a.graph_version, m.latest, {SCOPE_COLUMNS} FROM {Agent._meta.db_table} a "
            f"CROSS JOIN LATERAL (SELECT max(e.occurred_at) AS latest FROM {Event._meta.db_table} e "
            f"WHERE e.agent_id = a.id) m {joins} WHERE a.id = %s",
            [*params, agent.id])
        rows = cursor.fetchall()
    if not rows:  # deleted meanwhile: an empty agent
        return AgentState(0, None, {kind: VectorScope(0, False) for kind in SCOPE_KINDS})
    version = int(rows[0][0])
    return AgentState(version, rows[0][1], {kind: VectorScope(int(n), bool(valid), version, int(corpus))
                                            for _, _, kind, n, valid, corpus in rows})


@dataclass
class _Names:
    """One agent's names as a retrieval found them at one graph version: the entity each n-gram
    is an alias of (merges followed; None: no alias), each other name's one person (None: no
    one, or several), and the entity types."""

    version: int
    grams: dict[str, int | None] = field(default_factory=dict)
    others: dict[str, int | None] = field(default_factory=dict)
    types: frozenset[str] | None = None


# agent id → its _Names at the graph version they were read at
_names: LRUCache[int, _Names] = LRUCache(settings.ANAMNESIS_GRAPH_CACHE_AGENTS)


def _names_at(agent: Agent, version: int | None) -> _Names:
    """The agent's name cache at `version` (a fresh one when it moved; None: never kept)."""
    if version is None:
        return _Names(-1)
    names = _names.get(agent.pk)
    if names is None or names.version != version or len(names.grams) + len(names.others) > _NAMES_MAX:
        names = _Names(version)
        _names.put(agent.pk, names)
    return names


_NAMES_MAX = 10_000  # n-grams and names kept per agent before the cache starts over (~40 a question)


def entities_in_query(*, agent: Agent, query: str, version: int | None = None) -> dict[int, str]:
    """Entities the query names, by word-boundary match of its n-grams against the agent's
    aliases (every entity's display name and key slug are registered as aliases). With the
    agent's graph `version`, what earlier queries found at that version is not read again."""
    names = _names_at(agent, version)
    grams = ngrams(query, max_len=4)
    unknown = [g for g in grams if g not in names.grams]
    if unknown:
        matched = {alias: entity.survivor().id for alias, entity in aliases_matching(agent=agent, names=unknown)}
        for gram in unknown:
            names.grams[gram] = matched.get(gram)
    found: dict[int, str] = {}
    # the aliases in reverse order, as they came from the database (in code-point order, which
    # is the embedded database's collation; another collation's order is not followed)
    for alias, entity_id in sorted(((g, names.grams[g]) for g in grams if names.grams[g] is not None), reverse=True):
        found.setdefault(entity_id, alias)
    # a first name, short form or title the aliases do not hold ("Chloe" for Chloe Martin,
    # "Dr. Lee"): the one person it can denote
    covered = {w for alias in found.values() for w in alias.split()}
    for surface in name_runs(query):
        norm = normalize_alias(surface)
        if norm in covered or len(norm) < 3:
            continue
        if surface not in names.others:
            entity = entity_for_other_name(agent=agent, name=surface)
            names.others[surface] = entity.id if entity is not None else None
        if names.others[surface] is not None:
            found.setdefault(names.others[surface], norm)
    return found


def entities_for_hints(*, agent: Agent, hints: list[str]) -> list[int]:
    """entity_hints may be keys ("person:ana") or names/aliases."""
    keys = [h for h in hints if ":" in h]
    names = [normalize_alias(h) for h in hints if ":" not in h]
    ids = set(Entity.objects.filter(agent=agent, key__in=keys).values_list("id", flat=True))
    ids |= set(EntityAlias.objects.filter(agent=agent, alias__in=names).values_list("entity_id", flat=True))
    return sorted(ids)


def known_types(*, agent: Agent, version: int | None = None) -> set[str]:
    """The agent's entity types (kept per graph `version` when one is given)."""
    names = _names_at(agent, version)
    if names.types is None:
        # without the model's ordering by name, which made DISTINCT read (type, name) pairs: every entity
        names.types = frozenset(Entity.objects.filter(agent=agent).order_by().values_list("type", flat=True)
                                .distinct())
    return set(names.types)


def one_hop(*, agent: Agent, entity_ids: list[int], as_of: Moment | datetime | None, limit: int = 10) -> list[int]:
    """Neighbours of the entities through visible relationships (query expansion); among edges
    of equal strength the older first, so the answer does not depend on where the rows lie."""
    if not entity_ids:
        return []
    visible, params = version_visible_sql(as_of, "r")
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT r.source_id, r.target_id FROM {Relationship._meta.db_table} r "
                       f"WHERE r.agent_id = %s AND (r.source_id = ANY(%s::bigint[]) "
                       f"OR r.target_id = ANY(%s::bigint[])) AND {visible} "
                       f"ORDER BY r.strength DESC, r.id LIMIT %s",
                       [agent.id, id_array(entity_ids), id_array(entity_ids), *params, limit * 2])
        rels = cursor.fetchall()
    out: list[int] = []
    for source, target in rels:
        for node in (source, target):
            if node not in entity_ids and node not in out:
                out.append(node)
    return out[:limit]


@dataclass(frozen=True, slots=True)
class EventRow:
    id: int
    text: str
    speaker: str
    occurred_at: datetime
    external_id: str | None


@dataclass(frozen=True, slots=True)
class EntityRef:
    id: int
    key: str
    display_name: str


@dataclass(frozen=True, slots=True)
class FactRow:
    id: int
    text: str
    entity: EntityRef
    valid_from: datetime
    valid_to: datetime | None
    recorded_at: datetime
    invalidated_at: datetime | None
    importance: float
    confidence: float
    reinforcement_count: int
    source_context: str
    source_event: EventRow | None

    @property
    def entity_id(self) -> int:
        return self.entity.id

    @property
    def source_event_id(self) -> int | None:
        return self.source_event.id if self.source_event else None


def facts_for_rows(*, agent: Agent, ids: list[int], vector=None) -> tuple[dict[int, FactRow], dict[int, float]]:
    """The candidates' display and scoring columns in one query, as plain rows (building ORM
    instances for a few hundred candidates cost more than the whole search), with their
    cosine to `vector` when one is given."""
    if not ids:
        return {}, {}
    cosine = "1 - (f.embedding <=> %s::vector)" if vector is not None else "NULL"
    sql = f"""
        SELECT f.id, f.text, en.id, en.key, en.display_name, f.valid_from, f.valid_to, f.recorded_at,
               f.invalidated_at, f.importance, f.confidence, f.reinforcement_count, f.source_context,
               ev.id, ev.text, ev.speaker, ev.occurred_at, ev.external_id, {cosine}
        FROM {Fact._meta.db_table} f
        JOIN {Entity._meta.db_table} en ON en.id = f.entity_id
        LEFT JOIN {Event._meta.db_table} ev ON ev.id = f.source_event_id
        WHERE f.agent_id = %s AND f.id = ANY(%s::bigint[])
    """
    args = ([vector_literal(vector)] if vector is not None else []) + [agent.id, id_array(ids)]
    rows, sims = {}, {}
    with connection.cursor() as cursor:
        fast_timestamps(cursor)
        cursor.execute(sql, args)
        for r in cursor.fetchall():
            event = EventRow(r[13], r[14], r[15], r[16], r[17]) if r[13] is not None else None
            rows[r[0]] = FactRow(r[0], r[1], EntityRef(r[2], r[3], r[4]), r[5], r[6], r[7], r[8], r[9], r[10],
                                 r[11], r[12], event)
            if r[18] is not None:
                sims[r[0]] = float(r[18])
    return rows, sims


def events_for_rows(*, agent: Agent, ids: list[int], vector=None) -> tuple[dict[int, EventRow], dict[int, float]]:
    if not ids:
        return {}, {}
    cosine = "1 - (embedding <=> %s::vector)" if vector is not None else "NULL"
    sql = (f"SELECT id, text, speaker, occurred_at, external_id, {cosine} FROM {Event._meta.db_table} "
           f"WHERE agent_id = %s AND id = ANY(%s::bigint[])")
    args = ([vector_literal(vector)] if vector is not None else []) + [agent.id, id_array(ids)]
    rows, sims = {}, {}
    with connection.cursor() as cursor:
        fast_timestamps(cursor)
        cursor.execute(sql, args)
        for r in cursor.fetchall():
            rows[r[0]] = EventRow(r[0], r[1], r[2], r[3], r[4])
            if r[5] is not None:
                sims[r[0]] = float(r[5])
    return rows, sims


def pattern_facts(*, agent: Agent, entity_types: list[str], rel_types: list[str], speaker_entity_ids: list[int],
                  as_of: Moment | datetime | None, limit: int) -> list[int]:
    """Aggregation queries: facts about entities of the asked types, or related to the asking
    entities by the asked relationship types; most reinforced and important first."""
    query = Fact.objects.filter(version_visible(as_of), agent=agent)
    cond = Q()
    if entity_types:
        cond |= Q(entity__type__in=entity_types)
    if rel_types:
        rels = Relationship.objects.filter(version_visible(as_of), agent=agent)
        if "family" in rel_types:
            rels = rels.filter(Q(rel_type__in=rel_types) | Q(rel_type__in=FAMILY_RELATIONS))
        else:
            rels = rels.filter(rel_type__in=rel_types)
        if speaker_entity_ids:
            rels = rels.filter(Q(source_id__in=speaker_entity_ids) | Q(target_id__in=speaker_entity_ids))
        cond |= Q(id__in=rels.exclude(evidence_fact__isnull=True).values("evidence_fact_id"))
    if not cond:
        return []
    return list(query.filter(cond).order_by("-reinforcement_count", "-importance", "-id").values_list(
        "id", flat=True)[:limit])


FAMILY_RELATIONS = ("spouse_of", "parent_of", "child_of", "sibling_of", "partner_of", "family_of")



def neighbour_events(*, agent: Agent, event_ids: list[int], window: int, max_gap_minutes: float,
                     as_of: Moment | datetime | None) -> list[tuple[int, int]]:
    """(seed, neighbour) pairs: the `window` messages said just before and after each seed event
    in the agent's timeline, at most `max_gap_minutes` apart."""
    if not event_ids or window <= 0:
        return []
    table = Event._meta.db_table
    visible, visible_params = event_visible_sql(as_of, "e")
    sql = f"""
        SELECT s.id, n.id FROM {table} s
        CROSS JOIN LATERAL (
            (SELECT e.id, e.occurred_at FROM {table} e WHERE e.agent_id = s.agent_id
               AND e.occurred_at < s.occurred_at AND {visible} ORDER BY e.occurred_at DESC LIMIT %s)
            UNION ALL
            (SELECT e.id, e.occurred_at FROM {table} e WHERE e.agent_id = s.agent_id
               AND e.occurred_at > s.occurred_at AND {visible} ORDER BY e.occurred_at ASC LIMIT %s)
        ) n
        WHERE s.id = ANY(%s::bigint[]) AND s.agent_id = %s
          AND abs(extract(epoch FROM n.occurred_at - s.occurred_at)) <= %s
    """
    params = [*visible_params, window, *visible_params, window, id_array(event_ids), agent.id, max_gap_minutes * 60]
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return cursor.fetchall()
