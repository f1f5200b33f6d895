"""Relationship edges: upsert with strength reinforcement."""

from __future__ import annotations

from datetime import datetime

from django.db import IntegrityError, transaction
from django.utils import timezone

from memories.models import Agent, Entity, Event, Fact, Relationship


def relationship_upsert(
    *, agent: Agent, source: Entity, target: Entity, rel_type: str, valid_from: datetime,
    evidence: Fact | None, source_event: Event | None, learned_at: datetime | None = None,
    initial_strength: float = 0.8,
    reinforcement: float = 0.1, _retry: bool = True,
) -> tuple[Relationship | None, str]:
    """Create the active edge, or reinforce it (strength + `reinforcement`, capped at 1.0).
    Self-references are dropped. Returns (edge, "created" | "reinforced" | "self_reference")."""
    if source.id == target.id:
        return None, "self_reference"
    existing = (
        Relationship.objects.select_for_update().current()
        .filter(agent=agent, source=source, target=target, rel_type=rel_type)
        .first()
    )
    if existing:
        existing.strength = min(1.0, existing.strength + reinforcement)
        fields = ["strength"]
        if evidence is not None and existing.evidence_fact_id != evidence.id:
            existing.evidence_fact = evidence
            fields.append("evidence_fact")
        existing.save(update_fields=fields)
        return existing, "reinforced"
    try:
        with transaction.atomic():
            now = timezone.now()
            rel = Relationship.objects.create(
                agent=agent, source=source, target=target, rel_type=rel_type, strength=initial_strength,
                valid_from=valid_from, learned_at=learned_at or now, recorded_at=now, evidence_fact=evidence,
                source_event=source_event,
            )
    except IntegrityError as exc:
        # A concurrent writer created the same active edge first: reinforce that one (once).
        if not _retry or getattr(exc.__cause__, "sqlstate", None) != "23505":
            raise
        return relationship_upsert(
            agent=agent, source=source, target=target, rel_type=rel_type, valid_from=valid_from,
            evidence=evidence, source_event=source_event, learned_at=learned_at, initial_strength=initial_strength,
            reinforcement=reinforcement, _retry=False,
        )
    return rel, "created"


def relationships_current_of(*, agent: Agent, entity_ids: list[int], rel_types: list[str]) -> list[Relationship]:
    """Current edges of these types touching any of the entities (locked for the write)."""
    from django.db.models import Q

    return list(
        Relationship.objects.select_for_update().current()
        .filter(agent=agent, rel_type__in=rel_types)
        .filter(Q(source_id__in=entity_ids) | Q(target_id__in=entity_ids))
        .order_by("id")
    )


def relationships_close(*, agent: Agent, ids: list[int], valid_to: datetime, learned_at: datetime | None = None) -> int:
    """End these current edges in world time at `valid_to` (never before they began), as the
    agent learned at `learned_at` (default now), and on the database's clock now. Returns how
    many were closed."""
    now = timezone.now()
    closed = 0
    for rel in Relationship.objects.select_for_update().current().filter(agent=agent, id__in=ids):
        rel.valid_to = max(valid_to, rel.valid_from)
        rel.valid_to_learned_at = max(learned_at or now, rel.learned_at)
        rel.invalidated_at = max(now, rel.recorded_at)
        rel.save(update_fields=["valid_to", "valid_to_learned_at", "invalidated_at"])
        closed += 1
    return closed
