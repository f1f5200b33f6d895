"""Writes of the background jobs: scores (confidence, importance) set in bulk, profiles
rewritten, duplicate facts consolidated, merge suggestions stored and decided."""

from __future__ import annotations

from collections.abc import Sequence

from django.db import connection, transaction
from django.db.models import F, Q
from django.utils import timezone

from memories.errors import DomainError, NotFound
from memories.models import (
    Agent,
    Entity,
    Fact,
    FactEntityLink,
    MergeSuggestion,
    MergeSuggestionStatus,
    Relationship,
)
from memories.services.changes import audited_change
from memories.services.entities import entity_merge
from memories.services.facts import facts_access_fold

JOB_ACTOR = "job:{name}"


def facts_column_set(*, agent: Agent, column: str, ids: Sequence[int], values: Sequence[float]) -> int:
    """Set `confidence` or `importance` of many facts of one agent in one statement."""
    if column not in {"confidence", "importance"}:
        raise DomainError(f"cannot bulk-set {column!r}")
    if not ids:
        return 0
    with connection.cursor() as cursor:
        cursor.execute(
            f"UPDATE {Fact._meta.db_table} AS f SET {column} = v.value "
            "FROM unnest(%s::bigint[], %s::float8[]) AS v(id, value) WHERE f.id = v.id AND f.agent_id = %s",
            [list(map(int, ids)), [float(x) for x in values], agent.id],
        )
        return cursor.rowcount


def entities_importance_set(*, agent: Agent, values: dict[int, float]) -> int:
    if not values:
        return 0
    with connection.cursor() as cursor:
        cursor.execute(
            f"UPDATE {Entity._meta.db_table} AS e SET importance = v.value "
            "FROM unnest(%s::bigint[], %s::float8[]) AS v(id, value) WHERE e.id = v.id AND e.agent_id = %s",
            [list(values), list(values.values()), agent.id],
        )
        return cursor.rowcount


@transaction.atomic
def facts_duplicates_consolidate(*, agent: Agent, kept_id: int, duplicate_ids: Sequence[int], reason: str,
                                 actor: str) -> int:
    """Keep one fact and close its duplicates: from now on the agent holds the statement once
    (`unlearned_at` and `invalidated_at` now, `valid_to` untouched, the reason stored); their links and the
    relationships they evidence move to the kept fact, whose confirmations add theirs plus one
    each. Version chains stay as they were. Returns how many were closed."""
    # the retrievals of these facts counted since the last fold: the duplicates' are added to the kept fact's
    facts_access_fold(agent=agent, fact_ids=[kept_id, *duplicate_ids])
    kept = Fact.objects.select_for_update().filter(agent=agent, pk=kept_id).current().first()
    if kept is None:
        return 0
    duplicates = list(Fact.objects.select_for_update().filter(agent=agent, pk__in=duplicate_ids).current()
                      .exclude(pk=kept_id).order_by("id"))
    if not duplicates:
        return 0
    now = timezone.now()
    dup_ids = [d.id for d in duplicates]
    for dup in duplicates:  # unlearned like a retraction, but its relationships move to the kept fact
        dup.invalidation_reason = f"duplicate of fact {kept.id}: {reason}"[:500]
        dup.save(update_fields=[*dup.mark_unlearned(at=now, now=now), "invalidation_reason"])
    FactEntityLink.objects.bulk_create(
        [FactEntityLink(fact_id=kept.id, entity_id=e, is_primary=False)
         for e in set(FactEntityLink.objects.filter(fact_id__in=dup_ids).values_list("entity_id", flat=True))],
        ignore_conflicts=True)
    Relationship.objects.current().filter(evidence_fact_id__in=dup_ids).update(evidence_fact=kept)
    Fact.objects.filter(pk=kept.pk).update(
        reinforcement_count=F("reinforcement_count") + sum(d.reinforcement_count + 1 for d in duplicates),
        access_count=F("access_count") + sum(d.access_count for d in duplicates), last_confirmed_at=now)
    audited_change(agent=agent, actor=actor, action="fact_dedupe", obj=kept, before={"duplicates": dup_ids},
                   after={"kept": kept.id}, reason=reason)
    return len(duplicates)


def merge_suggestion_upsert(*, agent: Agent, a_id: int, b_id: int, score: float, reasons: dict) -> tuple[
        MergeSuggestion, bool]:
    """Store (or refresh the score of) an open suggestion for the pair; a decided pair
    (dismissed or merged) is left as it is. Returns (suggestion, created)."""
    low, high = sorted((a_id, b_id))
    suggestion, created = MergeSuggestion.objects.get_or_create(
        agent=agent, entity_a_id=low, entity_b_id=high, defaults={"score": score, "reasons": reasons})
    if not created and suggestion.status == MergeSuggestionStatus.OPEN and (
            abs(suggestion.score - score) > 1e-6 or suggestion.reasons != reasons):
        suggestion.score, suggestion.reasons = score, reasons
        suggestion.save(update_fields=["score", "reasons", "updated_at"])
    return suggestion, created


def merge_suggestions_prune(*, agent: Agent) -> int:
    """Open suggestions whose entities no longer both stand (merged or forgotten) are moot."""
    stale = MergeSuggestion.objects.filter(agent=agent, status=MergeSuggestionStatus.OPEN).filter(
        Q(entity_a__merged_into__isnull=False) | Q(entity_b__merged_into__isnull=False))
    return stale.delete()[0]


def _open_suggestion(agent: Agent, suggestion_id: int) -> MergeSuggestion:
    suggestion = MergeSuggestion.objects.select_for_update().filter(agent=agent, pk=suggestion_id).first()
    if suggestion is None:
        raise NotFound(f"merge suggestion {suggestion_id} not found")
    if suggestion.status != MergeSuggestionStatus.OPEN:
        raise DomainError(f"merge suggestion {suggestion_id} is already {suggestion.status}",
                          {"status": suggestion.status})
    return suggestion


@transaction.atomic
def merge_suggestion_dismiss(*, agent: Agent, suggestion_id: int, actor: str, reason: str = "") -> MergeSuggestion:
    """The operator says the two are different: never suggested again."""
    suggestion = _open_suggestion(agent, suggestion_id)
    suggestion.status, suggestion.decided_at, suggestion.decided_by = (
        MergeSuggestionStatus.DISMISSED, timezone.now(), actor[:200])
    suggestion.save(update_fields=["status", "decided_at", "decided_by", "updated_at"])
    audited_change(agent=agent, actor=actor, action="merge_suggestion_dismiss", obj=suggestion,
                   after={"entity_a": suggestion.entity_a_id, "entity_b": suggestion.entity_b_id}, reason=reason,
                   graph_changed=False)
    return suggestion


@transaction.atomic
def merge_suggestion_accept(*, agent: Agent, suggestion_id: int, actor: str, survivor_id: int | None = None,
                            reason: str = "") -> MergeSuggestion:
    """Merge the pair (into `survivor_id`, else the entity with more facts) and close the suggestion."""
    suggestion = _open_suggestion(agent, suggestion_id)
    pair = {suggestion.entity_a_id, suggestion.entity_b_id}
    if survivor_id is None:
        counts = {e: Fact.objects.filter(entity_id=e).count() for e in pair}
        survivor_id = max(sorted(pair), key=lambda e: counts[e])
    if survivor_id not in pair:
        raise DomainError("survivor must be one of the two entities", {"survivor": sorted(pair)})
    (merged_id,) = pair - {survivor_id}
    entity_merge(agent=agent, survivor_id=survivor_id, merged_id=merged_id, actor=actor,
                 reason=reason or f"merge suggestion {suggestion.id}")
    suggestion.status, suggestion.decided_at, suggestion.decided_by = (
        MergeSuggestionStatus.MERGED, timezone.now(), actor[:200])
    suggestion.save(update_fields=["status", "decided_at", "decided_by", "updated_at"])
    return suggestion
