"""The deterministic query planner (no LLM): same query, same plan."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import datetime

from memories.temporal import TimeWindow, resolve_temporal

_TRIVIAL = re.compile(
    r"^(hi|hello|hey|yo|oi|ola|olá|bom dia|boa tarde|boa noite|good (morning|afternoon|evening|night)|thanks?|"
    r"thank you|thx|ty|ok(ay)?|k|yes|no|yep|nope|sure|bye|goodbye|cool|nice|great|lol|haha+|hmm+)[\s!.?,]*$",
    re.IGNORECASE,
)
_ONLY_SYMBOLS = re.compile(r"^[\W_]*$", re.UNICODE)
_BROAD = re.compile(r"\b(tell me (everything|all)|everything (you know|about)|what do (you|we) know about|"
                    r"summar(y|ize|ise)|overview of|all about)\b", re.IGNORECASE)
# aggregation keyword → entity type or relationship type it enumerates
AGGREGATIONS = {
    r"\bfriends?\b": ("rel", "friend_of"),
    r"\b(family|relatives|kids|children)\b": ("rel", "family"),
    r"\b(colleagues?|coworkers?|team ?mates?)\b": ("rel", "colleague_of"),
    r"\bprojects?\b": ("type", "project"),
    r"\b(pets?|dogs?|cats?)\b": ("type", "pet"),
    r"\b(people|persons|contacts)\b": ("type", "person"),
    r"\b(places|cities|countries)\b": ("type", "place"),
    r"\b(companies|organi[sz]ations|employers)\b": ("type", "organization"),
    r"\b(books|movies|films|songs|hobbies)\b": ("type", "concept"),
}
# Enumerations ask for several things at once — "What books has John read?", "What do Jon and
# Gina have in common?", "How many hikes ...": the answer is spread over many messages.
_ENUMERATION = re.compile(r"\b(both|in common|how many|list|all the|what (kinds?|types?|sorts?) of)\b", re.IGNORECASE)
_PLURAL_ASK = re.compile(r"^\s*(what|which)\s+(\w+s)\b", re.IGNORECASE)
_NOT_PLURAL = frozenset({"does", "is", "was", "has", "kinds", "types", "sorts", "this", "his", "its"})
_AGGREGATE_CUE = re.compile(r"\b(who are|what are|list|all (of )?my|which|how many|name (all|my))\b", re.IGNORECASE)


@dataclass
class RetrievalPlan:
    strategy: str  # multi_signal | skip
    reason: str
    similarity_query: str
    entity_ids: list[int] = field(default_factory=list)
    pattern_types: list[str] = field(default_factory=list)
    pattern_rel_types: list[str] = field(default_factory=list)
    broad_query: bool = False
    window: TimeWindow | None = None
    intent: str = "lookup"  # lookup | enumeration
    entity_names: list[str] = field(default_factory=list)  # how the query names its entities (matched aliases)

    def as_dict(self) -> dict:
        return {
            "strategy": self.strategy, "reason": self.reason, "entity_ids": self.entity_ids,
            "pattern_types": self.pattern_types, "pattern_rel_types": self.pattern_rel_types,
            "broad_query": self.broad_query, "window": self.window.as_dict() if self.window else None,
            "intent": self.intent, "entity_names": self.entity_names,
        }


def is_trivial(query: str, max_chars: int = 3) -> bool:
    text = query.strip()
    return len(text) <= max_chars or bool(_TRIVIAL.match(text)) or bool(_ONLY_SYMBOLS.match(text))


def is_enumeration(query: str) -> bool:
    """Does the question ask for several things ("what books", "both", "how many")?"""
    plural = _PLURAL_ASK.match(query)
    word = plural.group(2).lower() if plural else ""
    return bool(_ENUMERATION.search(query)) or (bool(word) and word not in _NOT_PLURAL and not word.endswith("ss"))


def plan_query(query: str, *, now: datetime, entity_ids: list[int], known_types: set[str],
               trivial_max_chars: int = 3) -> RetrievalPlan:
    """Greeting/trivial → skip; aggregation → pattern queries (only for types the agent has);
    broad → wider graph; temporal expression → a date window; entities as resolved."""
    if is_trivial(query, trivial_max_chars):
        return RetrievalPlan("skip", "greeting", query)
    plan = RetrievalPlan("multi_signal", "deterministic", query, entity_ids=list(entity_ids))
    if _AGGREGATE_CUE.search(query):
        for pattern, (kind, value) in AGGREGATIONS.items():
            if re.search(pattern, query, re.IGNORECASE):
                if kind == "type" and value in known_types:
                    plan.pattern_types.append(value)
                elif kind == "rel":
                    plan.pattern_rel_types.append(value)
        if plan.pattern_types or plan.pattern_rel_types:
            plan.reason = "aggregation"
    if _BROAD.search(query):
        plan.broad_query, plan.reason = True, "broad"
    plan.window = resolve_temporal(query, now)
    plan.intent = "enumeration" if is_enumeration(query) or plan.reason == "aggregation" else "lookup"
    return plan
