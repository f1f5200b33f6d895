"""Reads the read pipeline needs, all scoped by agent."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from django.db import connection
from django.db.models import Max, Q

from memories.extraction.mentions import name_runs
from memories.models import Agent, Entity, EntityAlias, Event, Fact, Relationship
from memories.models.visibility import Moment, event_visible_sql, version_visible
from memories.naming import ngrams, normalize_alias
from memories.providers.embeddings import vector_literal
from memories.selectors import aliases_matching
from memories.selectors.entities import entity_for_other_name


def entities_in_query(*, agent: Agent, query: str) -> dict[int, str]:
    """Entities the query names, by word-boundary match of its n-grams against the agent's
    aliases (every entity's display name and key slug are registered as aliases)."""
    grams = ngrams(query, max_len=4)
    found: dict[int, str] = {}
    for alias, entity in aliases_matching(agent=agent, names=grams):
        entity = entity.survivor()
        found.setdefault(entity.id, alias)
    # a first name, short form or title the aliases do not hold ("Chloe" for Chloe Martin,
    # "Dr. Lee"): the one person it can denote
    covered = {w for alias in found.values() for w in alias.split()}
    for surface in name_runs(query):
        norm = normalize_alias(surface)
        if norm in covered or len(norm) < 3:
            continue
        entity = entity_for_other_name(agent=agent, name=surface)
        if entity is not None:
            found.setdefault(entity.id, norm)
    return found


def entities_for_hints(*, agent: Agent, hints: list[str]) -> list[int]:
    """entity_hints may be keys ("person:ana") or names/aliases."""
    keys = [h for h in hints if ":" in h]
    names = [normalize_alias(h) for h in hints if ":" not in h]
    ids = set(Entity.objects.filter(agent=agent, key__in=keys).values_list("id", flat=True))
    ids |= set(EntityAlias.objects.filter(agent=agent, alias__in=names).values_list("entity_id", flat=True))
    return sorted(ids)


def known_types(*, agent: Agent) -> set[str]:
    # without the model's ordering by name, which made DISTINCT read (type, name) pairs: every entity
    return set(Entity.objects.filter(agent=agent).order_by().values_list("type", flat=True).distinct())


def one_hop(*, agent: Agent, entity_ids: list[int], as_of: Moment | datetime | None, limit: int = 10) -> list[int]:
    """Neighbours of the entities through visible relationships (query expansion); among edges
    of equal strength the older first, so the answer does not depend on where the rows lie."""
    if not entity_ids:
        return []
    rels = Relationship.objects.filter(version_visible(as_of), agent=agent).filter(
        Q(source_id__in=entity_ids) | Q(target_id__in=entity_ids)
    ).order_by("-strength", "id").values_list("source_id", "target_id")[: limit * 2]
    out: list[int] = []
    for source, target in rels:
        for node in (source, target):
            if node not in entity_ids and node not in out:
                out.append(node)
    return out[:limit]


def reference_time(*, agent: Agent, as_of: datetime | None) -> datetime | None:
    """What "recent" is measured against: as_of, else the agent's latest event."""
    if as_of is not None:
        return as_of
    return Event.objects.filter(agent=agent).aggregate(latest=Max("occurred_at"))["latest"]


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
        WHERE f.agent_id = %s AND f.id = ANY(%s)
    """
    args = ([vector_literal(vector)] if vector is not None else []) + [agent.id, list(ids)]
    rows, sims = {}, {}
    with connection.cursor() as cursor:
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
           f"WHERE agent_id = %s AND id = ANY(%s)")
    args = ([vector_literal(vector)] if vector is not None else []) + [agent.id, list(ids)]
    rows, sims = {}, {}
    with connection.cursor() as cursor:
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
        WHERE s.id = ANY(%s) AND s.agent_id = %s
          AND abs(extract(epoch FROM n.occurred_at - s.occurred_at)) <= %s
    """
    params = [*visible_params, window, *visible_params, window, list(event_ids), agent.id, max_gap_minutes * 60]
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return cursor.fetchall()
