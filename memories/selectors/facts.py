"""Reads of fact versions: a fact's whole chain, its latest and its current version; the facts a
new statement is reconciled against."""

from __future__ import annotations

import numpy as np
from django.db import connection

from memories.errors import NotFound
from memories.models import Agent, Entity, Fact
from memories.models.visibility import version_visible_sql
from memories.providers.embeddings import vector_literal
from memories.reconcile import ExistingFact


def fact_head(fact: Fact) -> Fact:
    """The latest version of the fact's chain (itself when nothing superseded it)."""
    return fact_history(agent=fact.agent_id, fact_id=fact.id)[-1]


def fact_current_version(fact: Fact) -> Fact | None:
    """The chain's current version, or None when its latest version is closed too."""
    head = fact_head(fact)
    return head if head.is_active else None


def fact_history(*, agent: Agent, fact_id: int) -> list[Fact]:
    """The whole version chain the fact belongs to, oldest first."""
    fact = Fact.objects.filter(agent=agent, pk=fact_id).first()
    if fact is None:
        raise NotFound(f"fact {fact_id} not found")
    seen = {fact.id}
    while fact.supersedes_id and fact.supersedes_id not in seen:
        seen.add(fact.supersedes_id)
        fact = Fact.objects.get(pk=fact.supersedes_id)
    chain = [fact]
    while True:
        nxt = Fact.objects.filter(supersedes=chain[-1]).select_related("source_event").first()
        if nxt is None or nxt in chain:
            return chain
        chain.append(nxt)


def facts_to_reconcile(*, entity: Entity, vector: np.ndarray, slot: str, nearest: int) -> list[ExistingFact]:
    """The entity's current facts that can change a reconcile decision about a new one: the
    `nearest` by cosine (exact repeats and the best similarity are among them) plus every fact
    in the same slot. A speaker accumulates hundreds of facts; loading them all made every write
    O(history). The similarity is computed for each of the entity's current facts, never
    index-ordered, so the shared HNSW index with its post-filtering cannot drop this entity's rows."""
    current, _ = version_visible_sql(None, "f")
    with connection.cursor() as cursor:
        cursor.execute(
            "WITH active AS (SELECT id, text, slot, slot_value, "
            "  coalesce(1 - (embedding <=> %s::vector), 0) AS similarity FROM memories_fact f "
            f"  WHERE entity_id = %s AND {current}) "
            "SELECT id, text, similarity, slot, slot_value FROM active "
            "WHERE id IN (SELECT id FROM active ORDER BY similarity DESC LIMIT %s) "
            "   OR (%s <> '' AND slot = %s)",
            [vector_literal(vector), entity.id, nearest, slot, slot],
        )
        rows = cursor.fetchall()
    return [ExistingFact(i, t, float(sim), s, v) for i, t, sim, s, v in rows]
