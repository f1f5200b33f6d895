"""Reconciliation decisions (ADD / UPDATE / NOOP / DELETE) as pure functions over plain data.

The services around them load the entity's active facts, call the LLM for the ambiguous cases
and apply the decisions; nothing here touches the database.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from memories.naming import normalize_alias

ADD, UPDATE, NOOP, DELETE = "ADD", "UPDATE", "NOOP", "DELETE"


@dataclass(frozen=True)
class ExistingFact:
    id: int
    text: str
    similarity: float  # cosine to the candidate
    slot: str = ""
    value: str = ""


@dataclass(frozen=True)
class Candidate:
    text: str
    embedding: np.ndarray
    slot: str = ""
    value: str = ""
    negated: bool = False


@dataclass
class Decision:
    action: str
    target_id: int | None
    reason: str
    method: str  # fast_path | rule | llm | fallback
    similarity: float = 0.0
    needs_llm: bool = False

    def as_dict(self) -> dict:
        return {
            "action": self.action,
            "target_id": self.target_id,
            "reason": self.reason,
            "method": self.method,
            "similarity": round(self.similarity, 4),
        }


def _same_text(a: str, b: str) -> bool:
    return a == b or normalize_alias(a) == normalize_alias(b)


def decide(
    candidate: Candidate,
    existing: list[ExistingFact],
    *,
    fast_path_below: float = 0.50,
    noop_above: float = 0.92,
    llm_available: bool = False,
) -> Decision:
    """Decide what one new fact does to the entity's active facts.

    Order: exact repeat → NOOP; retraction → DELETE of the matching slot/value; a new value for
    a known slot → UPDATE (structural, needs no LLM); below the similarity floor → ADD (fast
    path); near-identical → NOOP; otherwise the LLM decides when there is one, else ADD.
    """
    sims = [fact.similarity for fact in existing]
    best_index = int(np.argmax(sims)) if sims else -1
    best_sim = sims[best_index] if sims else 0.0
    best = existing[best_index] if sims else None

    for fact, sim in zip(existing, sims, strict=True):
        if _same_text(candidate.text, fact.text):
            return Decision(NOOP, fact.id, "same statement already known", "rule", sim)

    if candidate.negated:
        match = _slot_match(candidate, existing, same_value=True) or (
            _slot_match(candidate, existing, same_value=False) if not candidate.value else None
        )
        if match is not None:
            return Decision(DELETE, match.id, f"retraction of {candidate.slot} {match.value}".strip(), "rule",
                            sims[existing.index(match)])

    if candidate.slot and not candidate.negated:
        same_slot = _slot_match(candidate, existing, same_value=False)
        if same_slot is not None:
            sim = sims[existing.index(same_slot)]
            if normalize_alias(same_slot.value) == normalize_alias(candidate.value):
                return Decision(NOOP, same_slot.id, f"{candidate.slot} {candidate.value} already known", "rule", sim)
            return Decision(
                UPDATE, same_slot.id,
                f"new value for {candidate.slot}: {same_slot.value} → {candidate.value}", "rule", sim,
            )

    if best is None or best_sim < fast_path_below:
        return Decision(ADD, None, f"no similar fact (best {best_sim:.2f} < {fast_path_below})", "fast_path", best_sim)
    if best_sim >= noop_above and not candidate.negated:
        return Decision(NOOP, best.id, f"near-identical to an active fact ({best_sim:.2f})", "rule", best_sim)
    if llm_available:
        return Decision(ADD, best.id, "ambiguous: ask the LLM", "llm", best_sim, needs_llm=True)
    return Decision(ADD, None, f"similar ({best_sim:.2f}) but no rule applies and no LLM: keep both", "rule", best_sim)


def _slot_match(candidate: Candidate, existing: list[ExistingFact], *, same_value: bool) -> ExistingFact | None:
    if not candidate.slot:
        return None
    for fact in existing:
        if fact.slot != candidate.slot:
            continue
        if not same_value or normalize_alias(fact.value) == normalize_alias(candidate.value):
            return fact
    return None


def decision_from_llm(item: dict, fallback_target: int | None, similarity: float) -> Decision:
    """Turn one LLM reconciliation verdict into a Decision; anything malformed means ADD."""
    action = str(item.get("action", "")).upper()
    reason = str(item.get("reason", ""))[:300] or "LLM decision"
    target = item.get("target_id", fallback_target)
    if action not in {ADD, UPDATE, NOOP, DELETE}:
        return Decision(ADD, None, f"unusable LLM verdict {action!r}: keep the fact", "fallback", similarity)
    if action != ADD and not isinstance(target, int):
        return Decision(ADD, None, "LLM named no fact to change: keep the fact", "fallback", similarity)
    return Decision(action, target if action != ADD else None, reason, "llm", similarity)


def semantic_dedup(embeddings: list[np.ndarray], threshold: float = 0.85) -> list[int]:
    """Indices to keep: drop any item whose cosine with an earlier kept item exceeds threshold."""
    kept: list[int] = []
    for i, vec in enumerate(embeddings):
        if all(float(np.dot(vec, embeddings[j])) <= threshold for j in kept):
            kept.append(i)
    return kept
