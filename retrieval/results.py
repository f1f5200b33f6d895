"""What a retrieval returns."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field


@dataclass
class Citation:
    event_id: int | None
    external_id: str | None
    occurred_at: str | None
    speaker: str | None


@dataclass
class RetrievedFact:
    id: int
    text: str
    entity: str
    entity_name: str
    score: float
    rank: int
    scores: dict
    citations: list[Citation]
    valid_from: str
    valid_to: str | None
    recorded_at: str
    invalidated_at: str | None
    source_context: str


@dataclass
class RetrievedEvent:
    id: int
    text: str
    speaker: str
    occurred_at: str
    external_id: str | None
    score: float
    rank: int
    scores: dict


@dataclass
class RetrieveResult:
    query: str
    context: str = ""
    facts: list[RetrievedFact] = field(default_factory=list)
    events: list[RetrievedEvent] = field(default_factory=list)
    ranking: list[str] = field(default_factory=list)  # "f:<id>" / "e:<id>" in final order
    total_candidates: int = 0
    duration_ms: float = 0.0
    context_tokens: int = 0
    tokens_used: dict = field(default_factory=lambda: {"input_tokens": 0, "output_tokens": 0, "total_tokens": 0})
    strategy: str = "multi_signal"
    as_of: str | None = None
    valid_at: str | None = None
    recorded_as_of: str | None = None
    trace_id: int | None = None
    trace: list[dict] = field(default_factory=list)

    def as_dict(self) -> dict:
        return asdict(self)

    def cited_external_ids(self, k: int | None = None) -> list[list[str]]:
        """Per ranked item (top k), the external ids of the events it cites."""
        facts = {f"f:{f.id}": f for f in self.facts}
        events = {f"e:{e.id}": e for e in self.events}
        out = []
        for key in self.ranking[:k]:
            if key in facts:
                out.append([c.external_id for c in facts[key].citations if c.external_id])
            elif key in events and events[key].external_id:
                out.append([events[key].external_id])
            else:
                out.append([])
        return out
