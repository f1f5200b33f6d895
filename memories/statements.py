"""Pure decisions of the `dedupe_facts` job: when two current facts of one entity say the same
statement. Close vectors are not enough ("Ana likes tea" / "Ana dislikes tea" are close): two
facts are the same statement when their content words are the same after normalization, or when
they fill the same slot with the same value and their vectors agree."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

_WORD = re.compile(r"[a-z0-9]+(?:'[a-z]+)?")
_STOP_WORDS = (
    "a an the is are was were be been being to of in on at for with and or that this these those "
    "his her their its my our your has have had do does did very really also just"
)
_STOP = frozenset(_STOP_WORDS.split(" "))
SLOT_MIN_COSINE = 0.80


def _stem(word: str) -> str:
    for suffix in ("'s", "ies", "es", "s"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            return word[: -len(suffix)] + ("y" if suffix == "ies" else "")
    return word


def statement_key(text: str) -> tuple[str, ...]:
    """The statement's content words, lower-cased, crudely stemmed, without function words,
    in order: equal keys mean the same statement (numbers and negations are kept)."""
    return tuple(_stem(w) for w in _WORD.findall(text.lower()) if w not in _STOP)


@dataclass(frozen=True)
class FactRow:
    id: int
    text: str
    slot: str
    slot_value: str
    confidence: float
    reinforcement_count: int
    recorded_at_ts: float


def duplicate_groups(facts: Sequence[FactRow], vectors: np.ndarray | None) -> list[tuple[FactRow, list[FactRow], str]]:
    """Groups of facts (of one entity) saying the same statement, as (kept, duplicates, why).
    The kept fact is the most confirmed, then the most confident, then the oldest."""
    parent = list(range(len(facts)))
    why: dict[int, str] = {}

    def find(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    def union(i: int, j: int, reason: str) -> None:
        ri, rj = find(i), find(j)
        if ri != rj:
            parent[rj] = ri
            why.setdefault(ri, reason)

    by_key: dict[tuple, int] = {}
    by_slot: dict[tuple, list[int]] = {}
    for i, fact in enumerate(facts):
        key = statement_key(fact.text)
        if key and key in by_key:
            union(by_key[key], i, "same statement")
        else:
            by_key.setdefault(key, i)
        if fact.slot and fact.slot_value:
            by_slot.setdefault((fact.slot, fact.slot_value.strip().lower()), []).append(i)
    if vectors is not None:
        for members in by_slot.values():
            for a, b in zip(members, members[1:], strict=False):
                if float(np.dot(vectors[a], vectors[b])) >= SLOT_MIN_COSINE:
                    union(a, b, f"same {facts[a].slot}: {facts[a].slot_value}")
    groups: dict[int, list[int]] = {}
    for i in range(len(facts)):
        groups.setdefault(find(i), []).append(i)
    result = []
    for root, members in groups.items():
        if len(members) < 2:
            continue
        rows = sorted((facts[i] for i in members),
                      key=lambda f: (-f.reinforcement_count, -f.confidence, f.recorded_at_ts, f.id))
        result.append((rows[0], rows[1:], why.get(root, "same statement")))
    return sorted(result, key=lambda g: g[0].id)
