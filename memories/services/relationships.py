"""Relationship versions: upsert (with strength reinforcement), close, unlearn and move. Every
end of an edge goes through `relationships_close` or `relationships_unlearn` here, under one
rule (`BiTemporal.mark_closed` / `mark_unlearned`); an edge whose ends change is never edited,
`relationship_move` closes the version and inserts one with the new ends."""

from __future__ import annotations

from datetime import datetime

from django.db import IntegrityError, transaction
from django.db.models import Q
from django.utils import timezone

from memories.models import Agent, Entity, Event, Fact, Relationship


def relationship_upsert(
    *, agent: Agent, source: Entity, target: Entity, rel_type: str, valid_from: datetime,
    evidence: Fact | None, source_event: Event | None, learned_at: datetime | None = None,
    initial_strength: float = 0.8, reinforcement: float = 0.1, _retry: bool = True,
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
    """Current edges of these types touching any of the entities, locked for the write that
    reads them."""
    return list(
        Relationship.objects.select_for_update().current()
        .filter(agent=agent, rel_type__in=rel_types)
        .filter(Q(source_id__in=entity_ids) | Q(target_id__in=entity_ids))
        .order_by("id")
    )


def relationships_close(*, agent: Agent, valid_to: datetime, learned_at: datetime | None = None,
                        ids: list[int] | None = None, evidence: Fact | None = None) -> int:
    """End the current edges with these `ids`, or those `evidence` supports, in world time at
    `valid_to` (never before each began), as the agent learned at `learned_at` (default now), on
    the database's clock now. Returns how many were closed."""
    if ids is None and evidence is None:
        raise ValueError("relationships_close needs ids or evidence")
    rows = Relationship.objects.select_for_update().current().filter(agent=agent)
    rows = rows.filter(id__in=ids) if ids is not None else rows.filter(evidence_fact=evidence)
    now = timezone.now()
    closed = 0
    for rel in rows.order_by("id"):
        rel.save(update_fields=rel.mark_closed(valid_to=valid_to, learned_at=learned_at or now, now=now))
        closed += 1
    return closed


def relationships_unlearn(*, agent: Agent, at: datetime | None = None, ids: list[int] | None = None,
                          evidence: Fact | None = None) -> int:
    """The agent stops believing these edges (by `ids`, or all that `evidence` supports, closed
    ones included) from `at` (default now). Returns how many current edges this closed."""
    if ids is None and evidence is None:
        raise ValueError("relationships_unlearn needs ids or evidence")
    rows = Relationship.objects.select_for_update().filter(agent=agent, unlearned_at__isnull=True)
    rows = rows.filter(id__in=ids) if ids is not None else rows.filter(evidence_fact=evidence)
    now = timezone.now()
    closed = 0
    for rel in rows.order_by("id"):
        closed += rel.invalidated_at is None
        rel.save(update_fields=rel.mark_unlearned(at=at or now, now=now))
    return closed


def relationship_move(*, rel: Relationship, source: Entity, target: Entity, at: datetime | None = None,
                      evidence: Fact | None = None) -> Relationship:
    """The same edge between other ends (a merge, an unmerge): this version stops being believed
    `at` (default now) and a new one joins `source` and `target`, true from when this one was,
    known from `at`, with its strength and (unless given) its evidence. The old version keeps
    its ends, so what the agent knew before `at` reads as it did."""
    now = timezone.now()
    at = at or now
    relationships_unlearn(agent=rel.agent_id, ids=[rel.id], at=at)
    return Relationship.objects.create(
        agent_id=rel.agent_id, source=source, target=target, rel_type=rel.rel_type, strength=rel.strength,
        valid_from=rel.valid_from, learned_at=max(at, rel.learned_at), recorded_at=now,
        evidence_fact=evidence or rel.evidence_fact, source_event=rel.source_event,
    )
