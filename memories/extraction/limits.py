"""Field sizes checked before the database sees them: an extraction's one oversized name, slot or
relation type is dropped with a reason (WriteResult.facts_skipped) and the rest of the message is
stored. Pure functions over the extraction."""

from __future__ import annotations

from memories.extraction.schema import Extraction
from memories.naming import entity_key, normalize_alias

MAX_NAME = 200  # display names and aliases (varchar 255, with room for the key's type prefix)
MAX_KEY = 255
MAX_TYPE = 64
MAX_SLOT = 64
MAX_SLOT_VALUE = 255
MAX_REL_TYPE = 100


def _name_problem(name: str, entity_type: str = "concept") -> str:
    if len(name.strip()) > MAX_NAME or len(normalize_alias(name)) > MAX_NAME:
        return f"name is {len(name.strip())} characters; at most {MAX_NAME}"
    if len(entity_key(entity_type, name)) > MAX_KEY:
        return f"entity key is longer than {MAX_KEY} characters"
    return ""


def extraction_within_limits(ex: Extraction) -> list[dict]:
    """Drop what cannot be stored from `ex` (in place); returns what was skipped and why."""
    skipped: list[dict] = []
    for entity in ex.entities:
        if len(entity.type or "") > MAX_TYPE:
            entity.type = "concept"
        entity.aliases = [a for a in entity.aliases if not _name_problem(a)]
    bad_names = {normalize_alias(e.name) for e in ex.entities if _name_problem(e.name, e.type)}
    ex.entities = [e for e in ex.entities if normalize_alias(e.name) not in bad_names]
    kept = []
    for fact in ex.facts:
        problem = _name_problem(fact.subject) if normalize_alias(fact.subject) not in bad_names else (
            f"subject name is longer than {MAX_NAME} characters")
        if problem:
            skipped.append({"text": fact.text[:300], "subject": fact.subject[:80], "reason": f"skipped: {problem}"})
            continue
        if len(fact.slot) > MAX_SLOT or len(fact.value) > MAX_SLOT_VALUE:
            fact.slot, fact.value = "", ""
        kept.append(fact)
    ex.facts = kept
    relations = []
    for rel in ex.relations:
        problem = (_name_problem(rel.source) or _name_problem(rel.target)
                   or (f"relation type is longer than {MAX_REL_TYPE} characters" if len(rel.rel_type) > MAX_REL_TYPE
                       else ""))
        if problem:
            skipped.append({"text": f"{rel.source[:80]} {rel.rel_type[:40]} {rel.target[:80]}",
                            "subject": rel.source[:80], "reason": f"skipped: {problem}"})
            continue
        relations.append(rel)
    ex.relations = relations
    return skipped
