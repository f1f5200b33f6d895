"""Score fusion and decay: pure functions over plain data.

A signal's list is `[(key, score), ...]`, best first; the fusions turn the lists into one score
per key: `convex` (the default), `rrf` (over `merged_lists` or the lists' keys) and, per
candidate, `weighted`. A key is any hashable (the pipeline's are `retrieval.keys.CandidateKey`)."""

from __future__ import annotations

import math
import re
from collections.abc import Collection, Hashable, Mapping, Sequence
from datetime import datetime
from typing import TypeVar

Key = TypeVar("Key", bound=Hashable)


def convex(lists: Mapping[str, Sequence[tuple[Key, float]]], weights: Mapping[str, float], *, floor: float,
           floored: Collection[str]) -> dict[Key, float]:
    """Σ_list weight × the item's share of the list's score range, max-normalized: one strong
    signal can win on its own. Lists named in `floored` (cosines) range from `floor` (or their
    best score, if lower) to their best; the others (BM25, graph, pattern: unbounded) from 0."""
    out: dict[Key, float] = {}
    for name, hits in lists.items():
        weight = weights.get(name, 0.0)
        if not hits or weight <= 0:
            continue
        hi = max(score for _, score in hits)
        lo = min(floor, hi) if name in floored else 0.0
        for key, score in hits:
            share = (score - lo) / (hi - lo) if hi > lo else 1.0
            out[key] = out.get(key, 0.0) + weight * share
    return normalize_max(out)


def merged_lists(lists: Mapping[str, Sequence[tuple[Key, float]]], labels: Mapping[str, str], *,
                 by_best: Collection[str]) -> dict[str, list[Key]]:
    """One ranking per label: the lists sharing a label (a signal's facts and events) merged by
    score — lists named in `by_best` (BM25) divided by their best score first — so correlated
    lists don't each get a full RRF vote. A list without a label is its own."""
    merged: dict[str, list[tuple[float, Key]]] = {}
    for name, hits in lists.items():
        top = max((score for _, score in hits), default=0.0) or 1.0
        scale = top if name in by_best else 1.0
        merged.setdefault(labels.get(name, name), []).extend((score / scale, key) for key, score in hits)
    return {label: [key for _, key in sorted(items, key=lambda x: -x[0])] for label, items in merged.items()}


def rrf(rankings: Mapping[str, Sequence[Key]], *, k: int = 60, weights: Mapping[str, float] | None = None
        ) -> dict[Key, float]:
    """Reciprocal Rank Fusion: Σ_signal weight / (k + rank), ranks starting at 1."""
    fused: dict[Key, float] = {}
    for signal, ranked in rankings.items():
        weight = 1.0 if weights is None else weights.get(signal, 0.0)
        if weight <= 0:
            continue
        for rank, item in enumerate(ranked, start=1):
            fused[item] = fused.get(item, 0.0) + weight / (k + rank)
    return fused


def recency(moment: datetime, reference: datetime, half_life_days: float) -> float:
    """2^(-age / half_life), age measured against the query's reference time (not the wall
    clock), so imported history is not scored as ancient; future items count as fresh."""
    age_days = max(0.0, (reference - moment).total_seconds() / 86400)
    return math.pow(0.5, age_days / half_life_days) if half_life_days > 0 else 1.0


def decayed_confidence(confidence: float, moment: datetime, reference: datetime, half_life_days: float) -> float:
    """Confidence fades slowly with age (a year's half-life by default) but never below half."""
    return confidence * (0.5 + 0.5 * recency(moment, reference, half_life_days))


def weighted(semantic: float, recency_score: float, importance: float, weights: Mapping[str, float]) -> float:
    """The reference's formula: 0.70 semantic + 0.20 recency + 0.10 importance by default."""
    return (weights.get("semantic", 0.0) * semantic + weights.get("recency", 0.0) * recency_score
            + weights.get("importance", 0.0) * importance)


def normalize_max(scores: Mapping[Key, float]) -> dict[Key, float]:
    top = max(scores.values(), default=0.0)
    return {key: (value / top if top > 0 else 0.0) for key, value in scores.items()}


def pattern_boost(reinforcement_count: int, max_boost: float = 0.10) -> float:
    """Facts heard again and again get up to +max_boost (saturating: 1 → 0.05, 3 → 0.075 …)."""
    if reinforcement_count <= 0:
        return 0.0
    return max_boost * (1 - 1 / (1 + reinforcement_count))


def rerank_blend(formula: float, reranker: float, *, weight: float = 0.70, veto: float = 0.10) -> float:
    """Multiplicative blend: the reranker can dampen or boost, never zero a fact out — unless it
    scores it below the veto threshold."""
    if reranker < veto:
        return 0.0
    return formula * ((1 - weight) + weight * reranker)


def speaker_focus(speakers: Mapping[Key, str | None], query: str, *, factor: float) -> dict[Key, float]:
    """Per item key (→ the speaker of the message it cites), its score's multiplier: when the
    query names exactly one of the speakers ("What are Ana's hobbies?"), what the others said
    is scored × `factor` — what a person does, likes or plans is mostly told by that person —
    and everything else × 1. A speaker is named by their name or its first word, in any case."""
    names = {s for s in speakers.values() if s}

    def named(speaker: str) -> bool:
        forms = {speaker, *speaker.split()[:1]}
        return any(re.search(rf"(?<!\w){re.escape(f)}(?!\w)", query, re.IGNORECASE) for f in forms if len(f) > 1)

    focus = [s for s in names if named(s)]
    if len(focus) != 1 or factor >= 1:
        return {key: 1.0 for key in speakers}
    return {key: (factor if s and s != focus[0] else 1.0) for key, s in speakers.items()}


def fold_by_source(items: Sequence[tuple[Key, Hashable, float]], *, support: float, penalty: float
                   ) -> dict[Key, float]:
    """Scores after grouping `(key, source, score)` items (best first) by the message they cite:
    the first item of a message gains `support` × each later one's score — a message matched
    through its own text and through the facts drawn from it is better evidence than either
    alone — and the later ones are scored × `penalty`, so one message doesn't fill the list."""
    first: dict[Hashable, Key] = {}
    out: dict[Key, float] = {}
    for key, source, score in items:
        if source in first:
            out[first[source]] += support * score
            out[key] = score * penalty
        else:
            first[source] = key
            out[key] = score
    return out
