"""What a write returns."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

# How the facts of a write were extracted (WriteResult.extraction_path).
EXTRACTION_PATHS = ("informed", "blind", "offline")


@dataclass
class FactChange:
    fact_id: int | None
    text: str
    entity: str
    previous_fact_id: int | None = None
    reason: str = ""


@dataclass
class WriteResult:
    success: bool = True
    error: str | None = None
    event_id: int | None = None
    run_id: int | None = None
    dry_run: bool = False
    facts_added: list[FactChange] = field(default_factory=list)
    facts_updated: list[FactChange] = field(default_factory=list)
    facts_unchanged: list[FactChange] = field(default_factory=list)
    facts_deleted: list[FactChange] = field(default_factory=list)
    # what the message said that could not be stored ({"text", "subject", "reason"}); the rest was
    facts_skipped: list[dict] = field(default_factory=list)
    entities_resolved: list[dict] = field(default_factory=list)
    relationships: list[dict] = field(default_factory=list)
    duration_ms: float = 0.0
    tokens_used: dict = field(default_factory=lambda: {"input_tokens": 0, "output_tokens": 0, "total_tokens": 0})
    extraction_path: str = ""
    trace: list[dict] = field(default_factory=list)

    def as_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict) -> WriteResult:
        data = dict(data)
        for key in ("facts_added", "facts_updated", "facts_unchanged", "facts_deleted"):
            data[key] = [FactChange(**item) for item in data.get(key, [])]
        known = set(cls.__dataclass_fields__)
        return cls(**{k: v for k, v in data.items() if k in known})
