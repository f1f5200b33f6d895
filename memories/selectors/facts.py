"""Reads of fact versions: a fact's whole chain, its latest and its current version."""

from __future__ import annotations

from memories.errors import NotFound
from memories.models import Agent, Fact


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
