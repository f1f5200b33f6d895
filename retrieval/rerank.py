"""The LLM reranker: the top candidates' texts in, a relevance score per text out."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from memories.prompts import RERANK_PROMPT, RERANK_USER
from memories.providers.llm import LLMClient, LLMError, TokenUsage

RERANK_SCHEMA = {
    "type": "object",
    "required": ["scores"],
    "properties": {"scores": {"type": "array", "items": {
        "type": "object", "required": ["index", "score"],
        "properties": {"index": {"type": "integer"}, "score": {"type": "number"}}}}},
}


@dataclass
class Relevance:
    """The model's scores by position in the listing, clamped to [0, 1]; positions it did not
    score (or named out of range) are absent. On failure: no scores and the error."""

    scores: dict[int, float] = field(default_factory=dict)
    usage: TokenUsage = field(default_factory=TokenUsage)
    error: str | None = None


def relevance(llm: LLMClient, query: str, texts: Sequence[str], *, timeout: float) -> Relevance:
    """Ask the model how relevant each text is to the query."""
    listing = "\n".join(f"[{i}] {text}" for i, text in enumerate(texts))
    try:
        reply = llm.complete_json(system=RERANK_PROMPT, user=RERANK_USER.format(query=query, listing=listing),
                                  schema=RERANK_SCHEMA, schema_name="rerank", timeout=timeout)
    except LLMError as exc:
        return Relevance(usage=exc.usage, error=str(exc))
    given = {item["index"]: float(item["score"]) for item in reply.data.get("scores", [])
             if isinstance(item.get("index"), int) and 0 <= item["index"] < len(texts)}
    return Relevance({i: min(1.0, max(0.0, score)) for i, score in given.items()}, reply.usage)
