"""What an extractor returns: plain data shared by the LLM and the offline extractor.

Both extractors produce an `Extraction`; everything downstream (normalization, dedup,
resolution, reconciliation, upsert) is the same code path whichever produced it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from memories.errors import DomainError

IMPORTANCE_CATEGORY_MAP: dict[str, float] = {
    "biographical_milestone": 0.9,
    "relationship_change": 0.85,
    "stable_preference": 0.6,
    "specific_event": 0.55,
    "routine_activity": 0.35,
    "conversational": 0.2,
}
DEFAULT_IMPORTANCE = 0.5


@dataclass
class ExtractedEntity:
    """A mention of a named thing. `name` is canonical (the most complete form)."""

    name: str
    type: str = "concept"
    aliases: list[str] = field(default_factory=list)


@dataclass
class ExtractedFact:
    """A self-contained statement about one subject; `text` always names the subject.

    `slot`/`value` say which attribute the fact fills ("lives_in"/"Austin") when known, so a
    new value for the same slot can supersede the old one without an LLM. `negated` marks a
    retraction ("no longer works at Acme"): it closes a matching fact instead of adding one.
    """

    subject: str
    text: str
    confidence: float = 0.95
    importance_category: str = ""
    action: str = "NEW"  # NEW | UPDATE, as the informed extractor saw it
    slot: str = ""
    value: str = ""
    negated: bool = False
    source_context: str = "extracted"
    # words of what the subject stopped ("quit coffee" → ["coffee"]): the subject's current facts
    # about it close when this fact is written
    ends: list[str] = field(default_factory=list)
    # whose facts `ends` closes when not the subject's ("Dr. Ito switched me from X to Y": mine)
    ends_subject: str = ""


@dataclass
class ExtractedRelation:
    source: str
    rel_type: str
    target: str
    # said of "we" ("we moved to Leeds"): the speaker's partner, who shares the home, is meant too
    household: bool = False
    # how the offline extractor found it, for the trace: "" (a rule), "frame", or "semantic 0.71"
    # (the back-off, with its cosine)
    method: str = ""


@dataclass
class ExtractedCorrection:
    """The speaker corrects a name they said ("Sorry, I meant Oak Lawn, not Elmhurst"): what the
    recent messages stored naming `wrong` is restated with `right` in its place."""

    wrong: str
    right: str


@dataclass
class Extraction:
    entities: list[ExtractedEntity] = field(default_factory=list)
    facts: list[ExtractedFact] = field(default_factory=list)
    relations: list[ExtractedRelation] = field(default_factory=list)
    profiles: dict[str, str] = field(default_factory=dict)
    corrections: list[ExtractedCorrection] = field(default_factory=list)

    def is_empty(self) -> bool:
        return not (self.entities or self.facts or self.relations or self.corrections)


class ExtractionSchemaError(DomainError):
    code = "extraction_schema"


# the strings extraction_from_json requires non-empty, stated in the schema a grammar is built from
_NON_EMPTY = {"type": "string", "minLength": 1}

# JSON schema of an extraction reply, without the list bounds extraction_json_schema adds per message.
EXTRACTION_JSON_SCHEMA: dict[str, Any] = {
    "type": "object",
    "additionalProperties": False,
    "required": ["entities", "facts", "relations", "updated_profiles"],
    "properties": {
        "entities": {
            "type": "array",
            "items": {
                "type": "object",
                "additionalProperties": False,
                "required": ["name", "type", "aliases"],
                "properties": {
                    "name": _NON_EMPTY,
                    "type": {"type": "string"},
                    "aliases": {"type": "array", "items": {"type": "string"}},
                },
            },
        },
        "facts": {
            "type": "array",
            "items": {
                "type": "object",
                "additionalProperties": False,
                "required": ["subject", "text", "confidence", "action", "importance_category"],
                "properties": {
                    "subject": _NON_EMPTY,
                    "text": _NON_EMPTY,
                    "confidence": {"type": "number"},
                    "action": {"type": "string", "enum": ["NEW", "UPDATE"]},
                    "importance_category": {"type": "string"},
                    "ends": {"type": "array", "items": {"type": "string"}},
                },
            },
        },
        "relations": {
            "type": "array",
            "items": {
                "type": "object",
                "additionalProperties": False,
                "required": ["source", "rel_type", "target"],
                "properties": {
                    "source": _NON_EMPTY,
                    "rel_type": _NON_EMPTY,
                    "target": _NON_EMPTY,
                },
            },
        },
        "corrections": {
            "type": "array",
            "items": {
                "type": "object",
                "additionalProperties": False,
                "required": ["wrong", "right"],
                "properties": {"wrong": {"type": "string"}, "right": {"type": "string"}},
            },
        },
        "updated_profiles": {
            "type": "array",
            "items": {
                "type": "object",
                "additionalProperties": False,
                "required": ["entity", "profile"],
                "properties": {"entity": {"type": "string"}, "profile": {"type": "string"}},
            },
        },
    },
}


def extraction_json_schema(message: str) -> dict[str, Any]:
    """The schema sent with the extraction calls of ``message`` (in every structured-output mode)
    and that their replies must match: ``EXTRACTION_JSON_SCHEMA`` with every list bounded by the
    message's word count plus two (the speaker, and room to spare). No message states more than
    that, and a server that builds a grammar from the schema (llama.cpp) then makes even a small
    model close its lists instead of repeating items until its context runs out."""
    bound = len(message.split()) + 2

    def bounded(node: Any) -> Any:
        if not isinstance(node, dict):
            return node
        out = {key: bounded(value) for key, value in node.items() if key != "properties"}
        if "properties" in node:
            out["properties"] = {key: bounded(value) for key, value in node["properties"].items()}
        if node.get("type") == "array":
            out["maxItems"] = bound
        return out

    return bounded(EXTRACTION_JSON_SCHEMA)


def _text(value: Any, where: str) -> str:
    if not isinstance(value, str) or not value.strip():
        raise ExtractionSchemaError(f"{where} must be a non-empty string")
    return value.strip()


def _items(data: dict, key: str) -> list:
    value = data.get(key, [])
    if value is None:
        return []
    if not isinstance(value, list):
        raise ExtractionSchemaError(f"'{key}' must be a list")
    return value


def extraction_from_json(data: Any) -> Extraction:
    """Validate an LLM reply (already parsed JSON) into an Extraction. Tolerates missing
    optional lists; rejects wrong shapes with ExtractionSchemaError."""
    if not isinstance(data, dict):
        raise ExtractionSchemaError("extraction reply must be a JSON object")
    out = Extraction()
    for i, item in enumerate(_items(data, "entities")):
        if not isinstance(item, dict):
            raise ExtractionSchemaError(f"entities[{i}] must be an object")
        aliases = [a.strip() for a in item.get("aliases") or [] if isinstance(a, str) and a.strip()]
        out.entities.append(
            ExtractedEntity(
                name=_text(item.get("name"), f"entities[{i}].name"),
                type=str(item.get("type") or "concept").strip().lower() or "concept",
                aliases=aliases,
            )
        )
    for i, item in enumerate(_items(data, "facts")):
        if not isinstance(item, dict):
            raise ExtractionSchemaError(f"facts[{i}] must be an object")
        try:
            confidence = float(item.get("confidence", 0.95))
        except (TypeError, ValueError) as exc:
            raise ExtractionSchemaError(f"facts[{i}].confidence must be a number") from exc
        action = str(item.get("action") or "NEW").upper()
        out.facts.append(
            ExtractedFact(
                subject=_text(item.get("subject"), f"facts[{i}].subject"),
                text=_text(item.get("text"), f"facts[{i}].text"),
                confidence=min(max(confidence, 0.0), 1.0),
                importance_category=str(item.get("importance_category") or ""),
                action=action if action in {"NEW", "UPDATE"} else "NEW",
                ends=[w.strip() for w in item.get("ends") or [] if isinstance(w, str) and w.strip()],
            )
        )
    for i, item in enumerate(_items(data, "relations")):
        if not isinstance(item, dict):
            raise ExtractionSchemaError(f"relations[{i}] must be an object")
        out.relations.append(
            ExtractedRelation(
                source=_text(item.get("source"), f"relations[{i}].source"),
                rel_type=normalize_rel_type(_text(item.get("rel_type"), f"relations[{i}].rel_type")),
                target=_text(item.get("target"), f"relations[{i}].target"),
            )
        )
    for item in _items(data, "corrections"):
        pair = [item.get(k) if isinstance(item, dict) else None for k in ("wrong", "right")]
        if all(isinstance(v, str) and v.strip() for v in pair):
            out.corrections.append(ExtractedCorrection(wrong=pair[0].strip(), right=pair[1].strip()))
    profiles = data.get("updated_profiles") or []
    if isinstance(profiles, dict):
        profiles = [{"entity": k, "profile": v} for k, v in profiles.items()]
    for item in profiles if isinstance(profiles, list) else []:
        if isinstance(item, dict) and isinstance(item.get("entity"), str) and isinstance(item.get("profile"), str):
            out.profiles[item["entity"].strip()] = item["profile"].strip()
    return out


def normalize_rel_type(value: str) -> str:
    """Free-form relation label → snake_case ("Works At" → "works_at")."""
    import re

    slug = re.sub(r"[^0-9a-zA-Z]+", "_", value.strip()).strip("_").lower()
    return slug or "related_to"
