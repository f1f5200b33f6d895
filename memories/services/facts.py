"""Fact versions: add, supersede, reinforce, close (with cascade to relationships), links."""

from __future__ import annotations

from datetime import datetime

import numpy as np
from django.db.models import F
from django.utils import timezone

from memories.models import Agent, Entity, Event, Fact, FactEntityLink, Relationship
from memories.naming import mentions


def fact_add(
    *, agent: Agent, entity: Entity, text: str, embedding: np.ndarray, valid_from: datetime,
    learned_at: datetime | None = None, confidence: float = 0.95, importance: float = 0.5,
    importance_category: str = "", source_context: str = "extracted", speaker: str = "",
    source_event: Event | None = None, slot: str = "", slot_value: str = "", supersedes: Fact | None = None,
) -> Fact:
    """Insert one fact version: true from `valid_from`, known to the agent from `learned_at`
    (the message's time; default now), stored now."""
    now = timezone.now()
    return Fact.objects.create(
        agent=agent, entity=entity, text=text, embedding=embedding, valid_from=valid_from,
        learned_at=learned_at or now, recorded_at=now, confidence=confidence, importance=importance,
        importance_category=importance_category, source_context=source_context, speaker=speaker,
        source_event=source_event, slot=slot, slot_value=slot_value[:255], supersedes=supersedes,
        last_confirmed_at=now,
    )


def fact_close(*, fact: Fact, valid_to: datetime, reason: str, learned_at: datetime | None = None,
               with_relationships: bool = True) -> int:
    """The statement stopped being true at `valid_to`, as the agent learned at `learned_at`
    (default now). Relationships it evidences end with it (unless `with_relationships` is off:
    the caller ends the one it means). Returns how many closed."""
    now = timezone.now()
    fact.valid_to = max(valid_to, fact.valid_from)
    fact.valid_to_learned_at = learned_at or now
    fact.invalidated_at = max(now, fact.recorded_at)
    fact.invalidation_reason = reason[:500]
    fact.save(update_fields=["valid_to", "valid_to_learned_at", "invalidated_at", "invalidation_reason"])
    if not with_relationships:
        return 0
    return relationships_close_for_fact(fact=fact, valid_to=fact.valid_to, learned_at=fact.valid_to_learned_at)


def fact_unlearn(*, fact: Fact, reason: str, at: datetime | None = None) -> int:
    """The agent stops believing the statement at all from `at` (default now): a retraction,
    also of a version already closed. Relationships it evidences are unlearned with it. Returns
    how many relationships were closed."""
    now = timezone.now()
    fact.unlearned_at = max(at or now, fact.learned_at)
    fact.invalidated_at = fact.invalidated_at or max(now, fact.recorded_at)
    fact.invalidation_reason = reason[:500]
    fact.save(update_fields=["unlearned_at", "invalidated_at", "invalidation_reason"])
    closed = 0
    for rel in Relationship.objects.filter(evidence_fact=fact, unlearned_at__isnull=True):
        rel.unlearned_at = max(fact.unlearned_at, rel.learned_at)
        closed += rel.invalidated_at is None
        rel.invalidated_at = rel.invalidated_at or max(now, rel.recorded_at)
        rel.save(update_fields=["unlearned_at", "invalidated_at"])
    return closed


def relationships_close_for_fact(*, fact: Fact, valid_to: datetime, learned_at: datetime) -> int:
    now = timezone.now()
    closed = 0
    for rel in Relationship.objects.current().filter(evidence_fact=fact):
        rel.valid_to = max(valid_to, rel.valid_from)
        rel.valid_to_learned_at = learned_at
        rel.invalidated_at = max(now, rel.recorded_at)
        rel.save(update_fields=["valid_to", "valid_to_learned_at", "invalidated_at"])
        closed += 1
    return closed


def fact_supersede(*, old: Fact, new_text: str, embedding: np.ndarray, valid_from: datetime, reason: str,
                   learned_at: datetime | None = None, **fields) -> Fact:
    """Close `old` at `valid_from` and insert the new version pointing back at it, both known
    from `learned_at`. A chain only moves forward on both clocks: a new version starts no earlier
    than the old one (starting with it leaves the old a window of zero length: never true), and
    is learned no earlier than the old one (a backfilled message that supersedes a later
    correction is known from the correction on), so no two versions of a chain ever overlap."""
    valid_from = max(valid_from, old.valid_from)
    learned_at = max(learned_at or timezone.now(), old.learned_at)
    fact_close(fact=old, valid_to=valid_from, reason=reason, learned_at=learned_at)
    return fact_add(agent=old.agent, entity=fields.pop("entity", old.entity), text=new_text, embedding=embedding,
                    valid_from=valid_from, learned_at=learned_at, supersedes=old, **fields)


def fact_reinforce(*, fact: Fact) -> None:
    """The same statement was heard again: count it and note when."""
    Fact.objects.filter(pk=fact.pk).update(
        reinforcement_count=F("reinforcement_count") + 1, last_confirmed_at=timezone.now()
    )


def fact_links_create(*, fact: Fact, entities: list[tuple[Entity, list[str]]], min_length: int = 3) -> int:
    """Link a fact to its primary entity and to every other entity whose name or alias it
    mentions (names shorter than `min_length` are skipped)."""
    linked = {fact.entity_id}
    rows = [FactEntityLink(fact=fact, entity_id=fact.entity_id, is_primary=True)]
    for entity, names in entities:
        if entity.id in linked:
            continue
        if any(mentions(fact.text, n, min_length) for n in [entity.display_name, *names]):
            linked.add(entity.id)
            rows.append(FactEntityLink(fact=fact, entity=entity, is_primary=False))
    FactEntityLink.objects.bulk_create(rows, ignore_conflicts=True)
    return len(rows)


def facts_mark_accessed(*, agent: Agent, fact_ids: list[int]) -> int:
    """A retrieval returned these facts: count the access (the importance job reads it)."""
    if not fact_ids:
        return 0
    return Fact.objects.filter(agent=agent, id__in=fact_ids).update(
        access_count=F("access_count") + 1, last_accessed_at=timezone.now())
