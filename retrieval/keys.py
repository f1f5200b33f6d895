"""`CandidateKey`: which stored row a retrieval candidate stands for — a fact version or a
message (event) — and its id. Written "f:<id>" / "e:<id>" where it leaves the pipeline (the
API's `ranking`, trace data); everything inside the read path and the pages that show a trace
use the type, never the string."""

from __future__ import annotations

from enum import StrEnum
from typing import NamedTuple


class CandidateKind(StrEnum):
    FACT = "fact"
    EVENT = "event"


_PREFIX = {CandidateKind.FACT: "f", CandidateKind.EVENT: "e"}
_KIND = {prefix: kind for kind, prefix in _PREFIX.items()}


class CandidateKey(NamedTuple):
    kind: CandidateKind
    id: int

    @classmethod
    def fact(cls, fact_id: int) -> CandidateKey:
        return cls(CandidateKind.FACT, int(fact_id))

    @classmethod
    def event(cls, event_id: int) -> CandidateKey:
        return cls(CandidateKind.EVENT, int(event_id))

    @classmethod
    def parse(cls, text: str) -> CandidateKey:
        """"f:12" → a fact key, "e:7" → an event key; anything else is a ValueError."""
        prefix, sep, number = str(text).partition(":")
        if not sep or prefix not in _KIND or not number.isdigit():
            raise ValueError(f"not a candidate key: {text!r} (expected 'f:<id>' or 'e:<id>')")
        return cls(_KIND[prefix], int(number))

    @property
    def is_fact(self) -> bool:
        return self.kind is CandidateKind.FACT

    def __str__(self) -> str:
        return f"{_PREFIX[self.kind]}:{self.id}"
