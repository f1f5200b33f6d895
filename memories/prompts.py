"""Every LLM prompt of the product, as plain text constants.

The callers — `memories.extraction.llm_extract` (extraction and reconciliation),
`memories.services.entities` (entity resolution), the background jobs and `retrieval.rerank`
(the reranker) — make the call, pick the JSON schema of the
reply and fill the `{placeholders}` below with `str.format`. Wording changes here are behaviour
changes; the fake LLM of the tests (`tests/support/scripts.py`) also splits user messages on
"Message:" and "Existing knowledge:".
"""

from __future__ import annotations

# --- Extraction (memories.extraction.llm_extract: informed and blind) ---------------------------

EXTRACTION_RULES = """Rules:
- Extract ALL factual information; keep specific details (proper nouns, titles, places, dates, numbers).
- Each fact is about ONE subject and its text always names the subject (never "is an engineer").
- First-person statements are about the speaker: write the speaker's name, never "I" or "user".
- Resolve relative dates ("yesterday", "last week") against the message time and state the date.
- Use one canonical (most complete) name per entity and list other names as aliases.
- Relation types are snake_case (works_at, lives_in, spouse_of, friend_of, former_employee_of, hired).
- Every relation also has a fact stating it.
- Roles someone holds for a person have one current holder: "X is my manager/boss" → X manager_of speaker,
  "I report to X" → speaker reports_to X, "my dentist/therapist/landlord/<specialist> is X" → X <role>_of
  speaker (dentist_of, endocrinologist_of); a new holder ("my new dentist is Y") is just the new relation.
- An ending is never a positive fact or relation: "left Acme", "was laid off by Acme" → former_employee_of;
  "we broke up" → former_partner_of; "quit coffee", "switched from A to B", "haven't climbed since May" →
  list what stopped in the fact's "ends" (["coffee"], ["A"], ["climbing"]).
- A correction of a name just said ("sorry, I meant X, not Y") goes in "corrections" as {wrong: Y, right: X}.
- Fact confidence: 0.95 explicit, 0.80 strong inference, 0.60 weak inference, 0.40 speculation.
- importance_category: biographical_milestone, relationship_change, stable_preference, specific_event,
  routine_activity or conversational.
- action: UPDATE when the fact changes something in the existing knowledge, else NEW.
- Profiles are concise English summaries of the entity after this message."""
"""What a good extraction is; part of the system prompt of every extraction call."""

EXTRACTION_SYSTEM = "You extract long-term memories from one chat message as JSON.\n" + EXTRACTION_RULES
"""System prompt of every extraction call (informed, and the three calls of the blind flow)."""

MESSAGE_BLOCK = (
    "Speaker: {speaker}\nMessage time: {occurred_at}\n"
    "Recent messages (for pronouns only):\n{recent}\n\nMessage:\n{message}"
)
"""The message being extracted, opening every extraction user message. `occurred_at` is ISO 8601;
`recent` is RECENT_MESSAGE lines (the last five messages, oldest first) or NO_RECENT_MESSAGES."""

RECENT_MESSAGE = "- {message}"
"""One line of MESSAGE_BLOCK's `recent` (lines joined by a newline)."""

NO_RECENT_MESSAGES = "(none)"
"""MESSAGE_BLOCK's `recent` when there are no recent messages."""

INFORMED_USER = "{message_block}\n\nExisting knowledge:\n{knowledge}"
"""User message of the informed call: the message and what the agent already knows (profiles or
top facts of the entities pre-retrieval found), or NO_KNOWLEDGE."""

NO_KNOWLEDGE = "(nothing known yet)"
"""INFORMED_USER's `knowledge` when nothing is known."""

ENTITY_SCAN_USER = "{message_block}\n\nList the entities only."
"""Blind flow, first call: the entities of the message."""

FACTS_USER = "{message_block}\n\nEntities: {entities}\nExtract the facts."
"""Blind flow, second call (concurrent with RELATIONS_USER): `entities` is the entity scan's reply
as JSON."""

RELATIONS_USER = "{message_block}\n\nEntities: {entities}\nExtract the relations."
"""Blind flow, third call (asked again once when ≥ 2 entities came back with no relation)."""

# --- Reconciliation (memories.extraction.llm_extract.reconcile_with_llm) --------------------------

RECONCILE_SYSTEM = (
    "For each new fact decide against the existing facts of the same entity: ADD (new "
    "information), UPDATE (replaces the existing fact target_id), NOOP (already known as "
    "target_id) or DELETE (retracts target_id). Reply as JSON."
)
"""System prompt of the one reconciliation call of a write (all its ambiguous facts at once)."""

RECONCILE_USER = "Message time: {occurred_at}\n\n{facts}"
"""User message of the reconciliation call: `occurred_at` is ISO 8601, `facts` the
RECONCILE_FACT blocks joined by a blank line."""

RECONCILE_FACT = "#{index} new fact: {text}\n  existing facts:\n{existing}"
"""One ambiguous fact and the existing facts it may update, repeat or retract (`existing`: up to
ten RECONCILE_EXISTING_FACT lines joined by a newline)."""

RECONCILE_EXISTING_FACT = "  [{id}] {text}"
"""One existing fact, by its id (the `target_id` of the reply)."""

# --- Entity resolution (memories.services.entities.llm_disambiguate) -----------------------------

ENTITY_MATCH_SYSTEM = (
    "You decide whether a name mentioned in a message refers to an already known entity. "
    "Reply with JSON {\"match\": <entity key or null>, \"reason\": <short reason>}."
)
"""System prompt of the entity-resolution call (the ambiguous band of fuzzy name matches).
Not a format template: its braces are literal."""

ENTITY_MATCH_USER = "Message: {context}\nName: {name}\nKnown candidates:\n{candidates}"
"""User message of the entity-resolution call: `candidates` is ENTITY_MATCH_CANDIDATE lines joined
by a newline."""

ENTITY_MATCH_CANDIDATE = "- {key}: {display_name} ({type})"
"""One known entity the name may refer to (`key` is what the reply's `match` names)."""


# --- Background jobs (memories.jobs.builtin) ----------------------------------------------------

PROFILE_SYSTEM = (
    "You write the profile of one entity of a long-term memory: a concise English summary "
    "(100-300 tokens) covering every major aspect the facts state, without inventing anything. "
    'Reply as JSON {"profile": "..."}.'
)
"""System prompt of the consolidate_profiles job (one call per entity)."""

PROFILE_USER = "Entity: {name} ({entity_type})\nCurrent facts:\n{facts}"
"""`facts` is one "- text" line per current fact, the most important first."""

SAME_ENTITY_SYSTEM = (
    "You decide whether two entity records of one memory are the same real-world entity. "
    'Answer only when the evidence is clear. Reply as JSON {"same": true|false, "reason": "..."}.'
)
"""System prompt of the merge_suggestions job's confirmation call (only with auto-merge on)."""

SAME_ENTITY_USER = "Record A: {a}\nFacts of A:\n{a_facts}\n\nRecord B: {b}\nFacts of B:\n{b_facts}"


# --- Retrieval (retrieval.rerank) -----------------------------------------------------------------

RERANK_PROMPT = (
    "Score how relevant each memory is to the query, from 0 (irrelevant) to 1 (exactly what is "
    "asked). Reply as JSON {\"scores\": [{\"index\": i, \"score\": s}, ...]}."
)
"""System prompt of the LLM reranker (one call per retrieval, when the preset asks for it)."""

RERANK_USER = "Query: {query}\n\nMemories:\n{listing}"
"""`listing` is one "[i] text" line per candidate."""
