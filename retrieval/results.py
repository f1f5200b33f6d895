"""What a retrieval returns."""

from __future__ import annotations

from dataclasses import dataclass, field, fields

from retrieval.keys import CandidateKey


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
        """What `dataclasses.asdict` gives, built directly: asdict deep-copies every value it
        reaches, and a result's trace holds a few hundred (about a millisecond of a request's CPU).
        The lists and the dicts of its facts and events are new; the trace's steps are copies
        already (`Tracer` steps as dicts), copied one level more."""
        out = {name: getattr(self, name) for name in _RESULT_FIELDS}
        out["facts"] = [{**vars(f), "scores": dict(f.scores), "citations": [dict(vars(c)) for c in f.citations]}
                        for f in self.facts]
        out["events"] = [{**vars(e), "scores": dict(e.scores)} for e in self.events]
        out["ranking"], out["tokens_used"] = list(self.ranking), dict(self.tokens_used)
        out["trace"] = [dict(step) for step in self.trace]
        return out

    def ranked_items(self) -> list[tuple[CandidateKey, RetrievedFact | RetrievedEvent]]:
        """The returned facts and events in ranking order, each with its key."""
        items = self._by_key()
        return [(key, items[key]) for key in map(CandidateKey.parse, self.ranking) if key in items]

    def cited_external_ids(self, k: int | None = None) -> list[list[str]]:
        """Per ranked item (top k), the external ids of the events it cites."""
        items = self._by_key()
        out = []
        for key in map(CandidateKey.parse, self.ranking[:k]):
            item = items.get(key)
            if item is not None and key.is_fact:
                out.append([c.external_id for c in item.citations if c.external_id])
            elif item is not None and item.external_id:
                out.append([item.external_id])
            else:
                out.append([])
        return out

    def _by_key(self) -> dict[CandidateKey, RetrievedFact | RetrievedEvent]:
        return {**{CandidateKey.fact(f.id): f for f in self.facts},
                **{CandidateKey.event(e.id): e for e in self.events}}


_RESULT_FIELDS = tuple(f.name for f in fields(RetrieveResult))
