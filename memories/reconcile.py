"""Reconciliation decisions (ADD / UPDATE / NOOP / DELETE) as pure functions over plain data.

The services around them load the entity's active facts, call the LLM for the ambiguous cases
and apply the decisions; nothing here touches the database.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

from memories.naming import normalize_alias
from memories.roles import ROLE_RELATIONS, ROLE_SLOT_PREFIX, role_words
from memories.statements import statement_key

ADD, UPDATE, NOOP, DELETE = "ADD", "UPDATE", "NOOP", "DELETE"


@dataclass(frozen=True)
class ExistingFact:
    id: int
    text: str
    similarity: float  # cosine to the candidate
    slot: str = ""
    value: str = ""


@dataclass(frozen=True)
class Candidate:
    text: str
    embedding: np.ndarray
    slot: str = ""
    value: str = ""
    negated: bool = False


@dataclass
class Decision:
    action: str
    target_id: int | None
    reason: str
    method: str  # fast_path | rule | llm | fallback
    similarity: float = 0.0
    needs_llm: bool = False

    def as_dict(self) -> dict:
        return {
            "action": self.action,
            "target_id": self.target_id,
            "reason": self.reason,
            "method": self.method,
            "similarity": round(self.similarity, 4),
        }


_CONTENT_WORD = re.compile(r"[^\W\d_]{3,}")


def new_content_words(text: str, other: str) -> set[str]:
    """Content words of `text` that `other` lacks (crudely stemmed, function words ignored):
    "Zora loves hiking" says more than "Zora is a friend" however close their vectors are."""
    mine = {w for w in statement_key(text) if _CONTENT_WORD.fullmatch(w)}
    return mine - set(statement_key(other))


def _same_text(a: str, b: str) -> bool:
    return a == b or normalize_alias(a) == normalize_alias(b)


def decide(
    candidate: Candidate,
    existing: list[ExistingFact],
    *,
    fast_path_below: float = 0.50,
    noop_above: float = 0.92,
    llm_available: bool = False,
) -> Decision:
    """Decide what one new fact does to the entity's active facts.

    Order: exact repeat → NOOP; retraction → DELETE of the matching slot/value; a new value for
    a known slot → UPDATE (structural, needs no LLM); below the similarity floor → ADD (fast
    path); near-identical → NOOP; otherwise the LLM decides when there is one, else ADD.
    """
    sims = [fact.similarity for fact in existing]
    best_index = int(np.argmax(sims)) if sims else -1
    best_sim = sims[best_index] if sims else 0.0
    best = existing[best_index] if sims else None

    for fact, sim in zip(existing, sims, strict=True):
        if _same_text(candidate.text, fact.text):
            return Decision(NOOP, fact.id, "same statement already known", "rule", sim)

    if candidate.negated:
        match = _slot_match(candidate, existing, same_value=True) or (
            _slot_match(candidate, existing, same_value=False) if not candidate.value else None
        )
        if match is not None:
            return Decision(DELETE, match.id, f"retraction of {candidate.slot} {match.value}".strip(), "rule",
                            sims[existing.index(match)])

    if candidate.slot and not candidate.negated:
        same_slot = _slot_match(candidate, existing, same_value=False)
        if same_slot is not None:
            sim = sims[existing.index(same_slot)]
            if normalize_alias(same_slot.value) == normalize_alias(candidate.value):
                return Decision(NOOP, same_slot.id, f"{candidate.slot} {candidate.value} already known", "rule", sim)
            return Decision(
                UPDATE, same_slot.id,
                f"new value for {candidate.slot}: {same_slot.value} → {candidate.value}", "rule", sim,
            )

    if best is None or best_sim < fast_path_below:
        return Decision(ADD, None, f"no similar fact (best {best_sim:.2f} < {fast_path_below})", "fast_path", best_sim)
    if best_sim >= noop_above and not candidate.negated:
        extra = new_content_words(candidate.text, best.text)
        if not extra:
            return Decision(NOOP, best.id, f"near-identical to an active fact ({best_sim:.2f})", "rule", best_sim)
        if not llm_available:
            return Decision(ADD, None, f"close ({best_sim:.2f}) but says more ({', '.join(sorted(extra)[:5])}): "
                            "keep both", "rule", best_sim)
    if llm_available:
        return Decision(ADD, best.id, "ambiguous: ask the LLM", "llm", best_sim, needs_llm=True)
    return Decision(ADD, None, f"similar ({best_sim:.2f}) but no rule applies and no LLM: keep both", "rule", best_sim)


def _slot_match(candidate: Candidate, existing: list[ExistingFact], *, same_value: bool) -> ExistingFact | None:
    if not candidate.slot:
        return None
    for fact in existing:
        if fact.slot != candidate.slot:
            continue
        if not same_value or normalize_alias(fact.value) == normalize_alias(candidate.value):
            return fact
    return None


def decision_from_llm(item: dict, fallback_target: int | None, similarity: float) -> Decision:
    """Turn one LLM reconciliation verdict into a Decision; anything malformed means ADD."""
    action = str(item.get("action", "")).upper()
    reason = str(item.get("reason", ""))[:300] or "LLM decision"
    target = item.get("target_id", fallback_target)
    if action not in {ADD, UPDATE, NOOP, DELETE}:
        return Decision(ADD, None, f"unusable LLM verdict {action!r}: keep the fact", "fallback", similarity)
    if action != ADD and not isinstance(target, int):
        return Decision(ADD, None, "LLM named no fact to change: keep the fact", "fallback", similarity)
    return Decision(action, target if action != ADD else None, reason, "llm", similarity)


def semantic_dedup(
    embeddings: list[np.ndarray], threshold: float = 0.85, texts: list[str] | None = None
) -> list[int]:
    """Indices to keep: drop any item whose cosine with an earlier kept item exceeds threshold
    and (when `texts` are given) that says nothing the kept item does not already say."""
    kept: list[int] = []
    for i, vec in enumerate(embeddings):
        if all(
            float(np.dot(vec, embeddings[j])) <= threshold
            or (texts is not None and new_content_words(texts[i], texts[j]))
            for j in kept
        ):
            kept.append(i)
    return kept


# --- relations: one current value per single-valued slot, closings --------------------------------

# rel_type → (the slot it fills, which end holds the slot). A person has one current residence,
# employer, partner and manager: a new edge of the group ends the holder's other edges of it.
SINGLE_VALUED_RELATIONS: dict[str, tuple[str, str]] = {
    "lives_in": ("residence", "source"),
    "works_at": ("employer", "source"),
    "partner_of": ("partner", "both"),
    "engaged_to": ("partner", "both"),
    "spouse_of": ("partner", "both"),
    "reports_to": ("manager", "source"),
    "manager_of": ("manager", "target"),
    # a person's dentist, therapist, landlord…: one current holder each ("dentist_of": holder → person)
    **{rel: (role, "target") for role, rel in ROLE_RELATIONS.items() if rel not in ("manager_of",)},
}
# rel_type of a cessation → the relation whose group it ends between the same two entities. Such
# an edge is never stored as current: "left Acme" makes the works_at edge past, no link of today.
CLOSING_RELATIONS: dict[str, str] = {
    "former_employee_of": "works_at",
    "former_partner_of": "partner_of",
    "former_spouse_of": "spouse_of",
    "moved_away_from": "lives_in",
    # one of many edges, not a slot: a pet that died or was rehomed, a club left
    "former_owner_of": "has_pet",
    "former_member_of": "member_of",
    "former_roommate_of": "roommate_of",  # "Pelleas moved out": the shared home, whoever shared it
}
# a pet that died or was given up, said by someone who did not hold it: it ends every owner's edge
ENDED_FOR_EVERY_HOLDER = frozenset({"former_owner_of", "former_roommate_of"})
# relations said the same either way round: an ending of one names its two people in either order
SYMMETRIC_ENDINGS = frozenset({"roommate_of"})
# a cessation that does not say which state ended ("done with ⟨X⟩", "finished at ⟨X⟩"): it ends
# whichever of these states the subject holds toward the other end, and adds no edge of its own
STATE_ENDINGS: dict[str, tuple[str, ...]] = {"finished_with": ("works_at", "studies_at", "member_of")}
# a cessation read as a job's ("quit ⟨the club⟩", "left ⟨the college⟩") between two that hold no job
# edge: it ends the subject's other state toward that very entity instead
LEFT_INSTEAD: dict[str, tuple[str, ...]] = {"former_employee_of": ("member_of", "studies_at")}


def states_left_instead(relation: str) -> tuple[str, ...]:
    """The states a cessation of `relation` (the closing relation or the one it ends: "works_at")
    ends instead when the two hold no edge of it."""
    return LEFT_INSTEAD.get(relation) or next(
        (states for closing, states in LEFT_INSTEAD.items() if CLOSING_RELATIONS[closing] == relation), ())
ENDABLE_STATES = tuple(dict.fromkeys(r for rels in STATE_ENDINGS.values() for r in rels))


@dataclass(frozen=True)
class CurrentEdge:
    id: int
    source_id: int
    rel_type: str
    target_id: int


def _holdings(rel_type: str, source_id: int, target_id: int) -> list[tuple[str, int, int]]:
    """(group, holder, value) readings of an edge: "Ana works_at Acme" → (employer, Ana, Acme)."""
    group, side = SINGLE_VALUED_RELATIONS.get(rel_type, ("", ""))
    if side == "source":
        return [(group, source_id, target_id)]
    if side == "target":
        return [(group, target_id, source_id)]
    if side == "both":
        return [(group, source_id, target_id), (group, target_id, source_id)]
    return []


def edges_to_close(rel_type: str, source_id: int, target_id: int, current: list[CurrentEdge]) -> list[int]:
    """Ids of current edges that the new edge (source -[rel_type]-> target) ends.

    A closing relation ("former_employee_of") ends the same-group edges between the two
    entities (a pet's end said by one who did not own it: every owner's edge to it); a
    single-valued relation ends the holder's same-group edges to any other value (for partners,
    on both sides); a cessation of no named state ("finished_with") ends the
    subject's edges of `STATE_ENDINGS` to that very entity.
    """
    if rel_type in STATE_ENDINGS:
        return [e.id for e in current
                if (e.source_id, e.target_id) == (source_id, target_id) and e.rel_type in STATE_ENDINGS[rel_type]]
    closing = rel_type in CLOSING_RELATIONS
    ended = CLOSING_RELATIONS.get(rel_type, rel_type)
    if closing and ended not in SINGLE_VALUED_RELATIONS:  # one edge of many ends: that very edge
        pair = {source_id, target_id}
        exact = [e.id for e in current if e.rel_type == ended and (
            (e.source_id, e.target_id) == (source_id, target_id)
            or ended in SYMMETRIC_ENDINGS and {e.source_id, e.target_id} == pair)]
        if not exact and rel_type in ENDED_FOR_EVERY_HOLDER:
            # "Meg has been rehomed", said by one who never had her: no one keeps her; "Pelleas moved
            # out", said of someone the writer did not live with: no one lives with him
            return [e.id for e in current if e.rel_type == ended and (
                e.target_id == target_id or ended in SYMMETRIC_ENDINGS and e.source_id == target_id)]
        return exact
    new = _holdings(ended, source_id, target_id)
    out = []
    for edge in current:
        for group, holder, value in _holdings(edge.rel_type, edge.source_id, edge.target_id):
            if any(g == group and h == holder and (v == value) == closing for g, h, v in new):
                out.append(edge.id)
                break
    if not out and rel_type in LEFT_INSTEAD:
        return [e.id for e in current
                if (e.source_id, e.target_id) == (source_id, target_id) and e.rel_type in LEFT_INSTEAD[rel_type]]
    return out


def is_closing_relation(rel_type: str) -> bool:
    return rel_type in CLOSING_RELATIONS or rel_type in STATE_ENDINGS


def group_relations(group: str) -> tuple[str, ...]:
    """The relations that fill a single-valued group: "partner" → partner_of, engaged_to, spouse_of."""
    return tuple(r for r, (g, _) in SINGLE_VALUED_RELATIONS.items() if group and g == group)


def slot_group(rel_type: str) -> str:
    """The single-valued group an edge type fills or (a cessation) ends: "former_partner_of" → partner."""
    return SINGLE_VALUED_RELATIONS.get(CLOSING_RELATIONS.get(rel_type, rel_type), ("", ""))[0]


def slot_holders(rel_type: str, source_id: int, target_id: int) -> list[int]:
    """Whose slot an edge (or the cessation of one) fills: "Ana works_at Acme" → [Ana]; "Dr. Ito
    dentist_of Ana" → [Ana]; partners → both."""
    return [holder for _, holder, _ in _holdings(CLOSING_RELATIONS.get(rel_type, rel_type), source_id, target_id)]


# Words that say, in a fact's text, that the holder has the value in a group's slot: when the
# value is replaced or ceases ("Sam and I split up"), the holder's facts naming it with one of these
# words stop being current ("Sam is Ana's girlfriend", "got an offer from Acme").
_GROUP_WORDS: dict[str, tuple[str, ...]] = {
    "partner": ("girlfriend", "boyfriend", "partner", "wife", "husband", "spouse", "fiance", "fiancé", "dating",
                "married", "engaged", "relationship", "together", "gf", "bf"),
    "employer": ("work", "works", "working", "job", "offer", "position", "role", "employ", "hired", "joined",
                 "joining", "started", "starting", "intern", "contract", "remote"),
}


_FACT_SLOT_GROUPS = {"works_at": "employer"}


def fact_slot_group(slot: str) -> str:
    """The group whose words a fact slot's value is said with ("role:dentist" → dentist,
    "works_at" → employer), or "" for slots whose old value needs no such closing."""
    if slot.startswith(ROLE_SLOT_PREFIX):
        return slot.removeprefix(ROLE_SLOT_PREFIX)
    return _FACT_SLOT_GROUPS.get(slot, "")


def group_words(group: str) -> tuple[str, ...]:
    return _GROUP_WORDS.get(group) or tuple(role_words(group))


def facts_naming_ended(group: str, names: list[str], existing: list[tuple[int, str]]) -> list[int]:
    """Ids of facts that state a slot value which just ended: they name the ended value (one of
    `names`, as whole words) and say the slot (a word of the group, as a word start: "manager"
    finds managers). "Linda is Marcus's manager" ends with Linda's manager role; "Linda got
    promoted" does not."""
    words = group_words(group)
    name_re = _name_pattern(names)
    if not words or name_re is None:
        return []
    word_re = re.compile(r"(?<!\w)(?:" + "|".join(re.escape(w) for w in words) + r")", re.I)
    return [fact_id for fact_id, text in existing if name_re.search(text) and word_re.search(text)]


# --- cessations: "I quit coffee" ends the current facts about coffee ---------------------------

def word_stem(term: str) -> str:
    """What a cessation's word begins its matches with: lower case, a final e dropped ("smoke"
    finds "smoking")."""
    term = term.lower().strip()
    return term[:-1] if len(term) > 4 and term.endswith("e") else term


def cessation_pattern(terms: list[str]) -> str:
    """A word-start regex (PostgreSQL `\\m`) for the words a cessation ends ("teach" finds
    teaches, teacher, teaching)."""

    stems = sorted({re.escape(word_stem(w)) for t in terms for w in t.split()[:1] if len(word_stem(w)) >= 3})
    return rf"\m({'|'.join(stems)})" if stems else ""


def facts_ended_by(terms: list[str], existing: list[tuple[int, str]]) -> list[int]:
    """Ids of the subject's current facts that a cessation of `terms` ends: those with a word
    beginning like one of the terms."""

    # a term of several words ("oat milk") ends the facts that have every one of them
    phrases = [stems for t in terms if (stems := [word_stem(w) for w in t.split() if len(word_stem(w)) >= 3])]
    out = []
    for fact_id, text in existing:
        words = re.findall(r"[^\W_]+", text.lower())
        if any(all(any(w.startswith(s) for w in words) for s in phrase) for phrase in phrases):
            out.append(fact_id)
    return out


# --- corrections: "Sorry, I meant Oak Lawn, not Elmhurst" --------------------------------------

@dataclass(frozen=True)
class CorrectionPlan:
    """What a correction of `wrong` by `right` does to what the recent messages stored: facts
    restated with the right name (id → new text, new slot value) and edges moved to the right
    entity (id → new source id, new target id)."""

    facts: dict[int, tuple[str, str]]
    edges: dict[int, tuple[int, int]]


def _name_pattern(names: list[str]) -> re.Pattern | None:
    """Any of the names as whole words (longest first), or None when none is usable."""
    usable = sorted({n.strip() for n in names if n and len(n.strip()) >= 2}, key=len, reverse=True)
    if not usable:
        return None
    return re.compile(r"(?<!\w)(?:" + "|".join(re.escape(n) for n in usable) + r")(?!\w)", re.I)


def plan_correction(
    *, wrong_id: int, right_id: int, wrong_names: list[str], right_name: str,
    facts: list[tuple[int, str, str]], edges: list[CurrentEdge],
) -> CorrectionPlan:
    """Restate the recent facts (id, text, slot value) that name the wrong entity with the right
    name in its place, and move the recent edges that touch it. A fact that does not name it is
    left alone; an edge between the two is dropped rather than turned into a self-loop."""
    pattern = _name_pattern(wrong_names)
    planned: dict[int, tuple[str, str]] = {}
    if pattern is not None:
        for fact_id, text, value in facts:
            if not pattern.search(text):
                continue
            new_value = right_name if value and pattern.fullmatch(value.strip()) else value
            planned[fact_id] = (pattern.sub(right_name, text), new_value)
    moved: dict[int, tuple[int, int]] = {}
    for edge in edges:
        if wrong_id not in (edge.source_id, edge.target_id):
            continue
        source = right_id if edge.source_id == wrong_id else edge.source_id
        target = right_id if edge.target_id == wrong_id else edge.target_id
        if source != target:
            moved[edge.id] = (source, target)
    return CorrectionPlan(planned, moved)
