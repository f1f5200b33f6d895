"""Context formatting within a token budget (pure; the token counter is injected)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from retrieval.keys import CandidateKey

SECTIONS = (("facts", "Known facts"), ("patterns", "Observed patterns"), ("events", "Relevant conversations"))


@dataclass(frozen=True)
class ContextLine:
    section: str  # facts | patterns | events
    key: CandidateKey
    text: str
    citation: str


def format_context(lines: Sequence[ContextLine], *, max_tokens: int, tiers: Sequence[float],
                   count: Callable[[str], int]) -> tuple[str, int, list[CandidateKey]]:
    """Fill each section up to its share of the budget (unused share rolls over to the next
    sections); lines stay in rank order. Returns (context, tokens, keys included)."""
    by_section = {name: [line for line in lines if line.section == name] for name, _ in SECTIONS}
    out: list[str] = []
    used, included, carry = 0, [], 0
    for (name, title), share in zip(SECTIONS, tiers, strict=False):
        allowance = int(max_tokens * share) + carry
        spent, body = 0, []
        header_cost = count(title + ":") + 1
        for line in by_section[name]:
            rendered = f"- {line.text} [{line.citation}]" if line.citation else f"- {line.text}"
            cost = count(rendered) + 1
            if spent + header_cost + cost > allowance or used + header_cost + cost > max_tokens:
                continue
            body.append(rendered)
            spent += cost
            included.append(line.key)
        if body:
            spent += header_cost
            out.append(f"{title}:\n" + "\n".join(body))
        used += spent
        carry = max(0, allowance - spent)
    context = "\n\n".join(out)
    return context, (count(context) if context else 0), included
