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
                   count: Callable[[list[str]], list[int]]) -> tuple[str, int, list[CandidateKey]]:
    """Fill each section up to its share of the budget (unused share rolls over to the next
    sections); lines stay in rank order. Returns (context, tokens, keys included). `count`
    gives the token count of each of a list of texts, in one call; the context's count is the
    sum of its parts' (a tokenizer that splits at whitespace first, as WordPiece does)."""
    rendered = [f"- {line.text} [{line.citation}]" if line.citation else f"- {line.text}" for line in lines]
    titles = [title + ":" for _, title in SECTIONS]
    costs = count([*titles, *rendered])
    title_costs, line_costs = costs[:len(titles)], costs[len(titles):]
    by_section = {name: [i for i, line in enumerate(lines) if line.section == name] for name, _ in SECTIONS}
    out: list[str] = []
    used, tokens, included, carry = 0, 0, [], 0
    for (name, title), title_cost, share in zip(SECTIONS, title_costs, tiers, strict=False):
        allowance = int(max_tokens * share) + carry
        spent, body = 0, []
        header_cost = title_cost + 1
        for i in by_section[name]:
            cost = line_costs[i] + 1
            if spent + header_cost + cost > allowance or used + header_cost + cost > max_tokens:
                continue
            body.append(rendered[i])
            spent += cost
            tokens += line_costs[i]
            included.append(lines[i].key)
        if body:
            spent += header_cost
            tokens += title_cost
            out.append(f"{title}:\n" + "\n".join(body))
        used += spent
        carry = max(0, allowance - spent)
    return "\n\n".join(out), tokens, included
