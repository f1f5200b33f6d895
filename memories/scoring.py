"""Pure decisions of the maintenance jobs over plain arrays: confidence decay with its floor and
reinforcement, and dynamic importance. No database here; `memories.jobs.builtin` does the I/O.

Decay follows the scoring reference's retention model: a memory fades exponentially with time
since it was last refreshed, more slowly the more stable it is, and every retrieval or
confirmation makes it more stable (the reference's `stability += 0.1` per direct retrieval).
Here the faded quantity is the fact's confidence, which never falls below a floor:

    stability  S = 1 + 0.1 · access_count + 0.3 · reinforcement_count
    confidence c ← floor + (c − floor) · 0.5 ^ (Δt / (half_life · S))      (only while c > floor)

with Δt the time since the later of the previous pass, the fact's recording, its last
confirmation and its last retrieval. A confirmation since the previous pass then restores half
of the gap to the ceiling (the confidence of an explicit statement, 0.95), a retrieval a tenth
of it — so a used, repeated fact stays near full confidence while an untouched one drifts to the
floor.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

SECONDS_PER_DAY = 86400.0


@dataclass(frozen=True)
class DecayPolicy:
    half_life_days: float = 90.0
    floor: float = 0.30
    ceiling: float = 0.95
    stability_per_access: float = 0.1
    stability_per_confirmation: float = 0.3
    confirmation_boost: float = 0.5
    retrieval_boost: float = 0.1


def decay_confidence(
    confidence: np.ndarray, elapsed_seconds: np.ndarray, access_count: np.ndarray, reinforcement_count: np.ndarray,
    confirmed: np.ndarray, accessed: np.ndarray, policy: DecayPolicy = DecayPolicy(),
) -> np.ndarray:
    """New confidences: decayed over `elapsed_seconds` toward the floor (never below it, and never
    raised to it), then reinforced where `confirmed` / `accessed` (booleans: since the last pass)."""
    c = np.asarray(confidence, dtype=np.float64)
    stability = (1.0 + policy.stability_per_access * access_count
                 + policy.stability_per_confirmation * reinforcement_count)
    half_life = policy.half_life_days * SECONDS_PER_DAY * stability
    factor = np.power(0.5, np.maximum(elapsed_seconds, 0.0) / half_life)
    decayed = np.where(c > policy.floor, policy.floor + (c - policy.floor) * factor, c)
    gap = np.maximum(policy.ceiling - decayed, 0.0)
    decayed = decayed + np.where(confirmed, policy.confirmation_boost * gap, 0.0)
    gap = np.maximum(policy.ceiling - decayed, 0.0)
    decayed = decayed + np.where(accessed, policy.retrieval_boost * gap, 0.0)
    return np.clip(decayed, 0.0, 1.0)


@dataclass(frozen=True)
class ImportancePolicy:
    """Weights of the read reference's dynamic importance: retrieval frequency, recency of use,
    operator corrections and pattern membership, each lifting a fact from its base importance
    (its category's, else 0.5) toward 1."""

    frequency: float = 0.35
    recency: float = 0.20
    correction: float = 0.25
    pattern: float = 0.20
    frequency_saturation: int = 20  # retrievals for the full frequency term
    recency_half_life_days: float = 30.0
    pattern_saturation: int = 5  # confirmations for the full pattern term


def dynamic_importance(
    base: np.ndarray, access_count: np.ndarray, days_since_access: np.ndarray, corrected: np.ndarray,
    reinforcement_count: np.ndarray, policy: ImportancePolicy = ImportancePolicy(),
) -> np.ndarray:
    """importance = base + (1 − base) · (w_f·frequency + w_r·recency + w_c·corrected + w_p·pattern),
    each term in [0, 1]: log-scaled retrievals, a 30-day half-life since the last retrieval (0 if
    never retrieved), 1 for a fact an operator wrote or corrected, and repeated confirmations."""
    base = np.clip(np.asarray(base, dtype=np.float64), 0.0, 1.0)
    frequency = np.minimum(1.0, np.log1p(access_count) / np.log1p(policy.frequency_saturation))
    recency = np.where(np.isfinite(days_since_access),
                       np.power(0.5, np.maximum(np.nan_to_num(days_since_access, posinf=0.0), 0.0)
                                / policy.recency_half_life_days), 0.0)
    pattern = np.minimum(1.0, reinforcement_count / policy.pattern_saturation)
    lift = (policy.frequency * frequency + policy.recency * recency
            + policy.correction * np.asarray(corrected, dtype=np.float64) + policy.pattern * pattern)
    return np.clip(base + (1.0 - base) * lift, 0.0, 1.0)


def entity_importance(fact_importances: list[float], degree: int) -> float:
    """An entity matters as much as its most important facts (mean of the top five) and, for a
    fifth, as much as it is connected (log-scaled relationship count, saturating at 20)."""
    top = sorted(fact_importances, reverse=True)[:5]
    facts = sum(top) / len(top) if top else 0.5
    connected = min(1.0, float(np.log1p(degree) / np.log1p(20)))
    return round(0.8 * facts + 0.2 * connected, 4)
