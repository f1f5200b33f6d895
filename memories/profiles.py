"""Pure formatting of an entity profile from its current facts (the offline form of the
`consolidate_profiles` job): deterministic, grouped by slot, the most important first."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

PROFILE_MAX_CHARS = 1500  # about 300 tokens, the reference's upper bound for a profile


@dataclass(frozen=True)
class ProfileFact:
    id: int
    text: str
    slot: str
    slot_value: str
    importance: float
    confidence: float


def profile_text(*, name: str, entity_type: str, facts: Sequence[ProfileFact], max_chars: int = PROFILE_MAX_CHARS
                 ) -> str:
    """"Name (type)." then one line per slot ("lives in: Austin; Dallas") in slot order, then the
    other facts by importance; cut at `max_chars` on a whole line."""
    lines = [f"{name} ({entity_type})."]
    slots: dict[str, list[str]] = {}
    for fact in sorted(facts, key=lambda f: (-f.importance, -f.confidence, f.id)):
        if fact.slot and fact.slot_value:
            values = slots.setdefault(fact.slot, [])
            if fact.slot_value not in values:
                values.append(fact.slot_value)
    for slot in sorted(slots):
        lines.append(f"{slot.replace('_', ' ')}: {'; '.join(slots[slot])}.")
    others = [f for f in facts if not (f.slot and f.slot_value)]
    seen: set[str] = set()
    for fact in sorted(others, key=lambda f: (-f.importance, -f.confidence, f.id)):
        text = fact.text.strip().rstrip(".")
        if text.lower() in seen:
            continue
        seen.add(text.lower())
        lines.append(f"- {text}.")
    out, size = [], 0
    for line in lines:
        if size + len(line) + 1 > max_chars and out:
            break
        out.append(line)
        size += len(line) + 1
    return "\n".join(out)
