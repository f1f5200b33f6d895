"""The write pipeline as a list of named steps over a `WriteContext`.

Steps before `resolve_entities` only read (and may call the LLM); the rest run inside one
transaction opened by the caller, with a savepoint per fact, so a failure leaves the event
(already committed) and nothing half-written.
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass, field
from datetime import datetime, timedelta

import numpy as np
from django.db import DatabaseError, connection, transaction
from django.db.models import Q, Value
from pgvector.django import CosineDistance

from memories import selectors
from memories.config import WriteConfig
from memories.extraction import llm_extract
from memories.extraction.mentions import name_runs
from memories.extraction.offline import extract_offline
from memories.extraction.offline.lexicon import FIRST_NAMES, KIN_TITLES, KINSHIP, ORG_SUFFIXES, PARENT_NAMES, PLACES
from memories.extraction.offline.parse import is_common_word, without_ended_item
from memories.extraction.schema import ExtractedEntity, ExtractedFact, Extraction
from memories.models import Agent, Entity, Event, Fact, Relationship
from memories.models.visibility import version_visible_sql
from memories.naming import (
    is_speaker_reference,
    mentions,
    ngrams,
    normalize_alias,
    person_names_compatible,
)
from memories.pipeline.limits import extraction_within_limits
from memories.pipeline.results import FactChange, WriteResult
from memories.pipeline.trace import StepRecord, Tracer
from memories.profiles import profile_text
from memories.providers.embeddings import EmbedderClient, vector_literal
from memories.providers.llm import LLMClient
from memories.reconcile import (
    ADD,
    DELETE,
    NOOP,
    SINGLE_VALUED_RELATIONS,
    UPDATE,
    Candidate,
    CurrentEdge,
    Decision,
    ExistingFact,
    cessation_pattern,
    decide,
    edges_to_close,
    fact_slot_group,
    facts_ended_by,
    facts_naming_ended,
    is_closing_relation,
    plan_correction,
    semantic_dedup,
    slot_group,
    slot_holders,
)
from memories.roles import PARTNER_SLOT
from memories.selectors import aliases_matching
from memories.selectors import entities as entity_selectors
from memories.services import entities as entity_services
from memories.services import facts as fact_services
from memories.services.agents import agent_graph_bump
from memories.services.keyword import keyword_stats_apply
from memories.services.relationships import relationship_upsert, relationships_close, relationships_current_of
from memories.services.resolution import entity_resolve
from memories.temporal import statement_start
from memories.tokens import count_tokens

logger = logging.getLogger(__name__)


@dataclass
class WriteContext:
    agent: Agent
    event: Event
    speaker: str
    config: WriteConfig
    llm: LLMClient
    embedder: EmbedderClient
    tracer: Tracer
    recent_messages: tuple[str, ...] = ()
    known: dict[int, Entity] = field(default_factory=dict)
    known_names: set[str] = field(default_factory=set)
    known_aliases: dict[str, str] = field(default_factory=dict)  # surface in the message → canonical name
    known_types: dict[str, str] = field(default_factory=dict)  # canonical name → stored type
    kin_words: set[str] = field(default_factory=set)  # "Dad" said for the writer's father: no name of his
    companions: dict[int, list[Entity]] = field(default_factory=dict)  # "my parents" → the other parent
    knowledge: str = ""
    extraction: Extraction = field(default_factory=Extraction)
    extraction_path: str = ""
    fact_vectors: list[np.ndarray] = field(default_factory=list)
    resolved: dict[str, Entity] = field(default_factory=dict)  # normalized name → entity
    names_by_entity: dict[int, set[str]] = field(default_factory=dict)
    decisions: list[tuple[ExtractedFact, np.ndarray, Decision]] = field(default_factory=list)
    result: WriteResult = field(default_factory=WriteResult)

    @property
    def message(self) -> str:
        return self.event.text

    @property
    def occurred_at(self) -> datetime:
        return self.event.occurred_at

    def usage_sink(self, step: StepRecord):
        return lambda usage: self.tracer.add_usage(step, usage)


# --- read-only steps -------------------------------------------------------------------------

def alias_lookup(ctx: WriteContext, step: StepRecord) -> None:
    """Entities the message names already: word-boundary match of its n-grams against aliases,
    then the other names that can denote exactly one known entity — a short form or nickname
    ("Paddy" for Patrick Fitzgerald), a spelling without accents, a title with a surname
    ("Dr. Fisher"), an acronym ("BofA")."""
    if not ctx.recent_messages:
        ctx.recent_messages = _previous_messages(ctx)
    grams = ngrams(ctx.message)
    matched: set[str] = set()
    for alias, entity in aliases_matching(agent=ctx.agent, names=grams):
        matched.add(alias)
        _know(ctx, entity, alias.title())
    for surface in name_runs(ctx.message):
        norm = normalize_alias(surface)
        if norm in matched or len(norm) < 3:
            continue
        entity = entity_selectors.entity_for_other_name(agent=ctx.agent, name=surface)
        if entity is None and " " not in surface and not is_common_word(surface.lower()) and (
                surface.lower() not in PLACES):  # "Boston" is no short name of Boston University
            entity = entity_selectors.organization_opening_with(agent=ctx.agent, word=surface,
                                                               generic_tails=ORG_SUFFIXES)
        if entity is not None:
            _know(ctx, entity, surface)
    _unnamed_relatives(ctx)
    _named_relatives(ctx)
    if _lower_case_writing(ctx.message):  # "freya and i split up": first names without capitals
        words = {w for w in re.findall(r"[a-z]{3,}", ctx.message) if w not in matched and not is_common_word(w)}
        for word, entity in entity_selectors.people_by_first_name(agent=ctx.agent, words=words).items():
            _know(ctx, entity, word)
    _spelling_variants(ctx, grams)
    _speaker_introduced(ctx, step)
    step.candidates_in, step.candidates_out = len(grams), len(ctx.known)
    step.data["entities"] = sorted(e.key for e in ctx.known.values())
    if ctx.known_aliases:
        step.data["aliases"] = dict(sorted(ctx.known_aliases.items()))


def _spelling_variants(ctx: WriteContext, grams: set[str]) -> None:
    """"bridget oneill" for Bridget O'Neill: a known person's full name written without its
    capitals, apostrophe or hyphen is that person, and the variant one more of their names."""
    folded = {normalize_alias(e.display_name).replace(" ", ""): e for e in ctx.known.values()
              if e.type == "person" and " " in e.display_name.strip()}
    for gram in grams:
        entity = folded.get(gram.replace(" ", "")) if " " in gram else None
        if entity is not None and gram != normalize_alias(entity.display_name):
            _know(ctx, entity, gram)


_KIN_WORDS = "|".join(sorted((re.escape(k) for k in KINSHIP), key=len, reverse=True))
# "my brother" — followed by his name ("my brother Tom") or not ("my brother moved to Austin")
_MY_KIN = re.compile(rf"\b(?:my|our)\s+(?P<kin>{_KIN_WORDS})\b(?P<named>\s*,?\s*\(?(?-i:[A-ZÀ-Þ]))?(?!'s)", re.I)


_MY_PARENTS = re.compile(r"\b(?i:my|our)\s+parents\b(?![’']|\s*,?\s*\(?[A-ZÀ-Þ])")
# "Tess's husband" said without his name (no name follows)
_THEIR_KIN = re.compile(
    rf"(?P<owner>[A-ZÀ-Þ][\w-]+(?:\s+[A-ZÀ-Þ][\w-]+)?)['’]s\s+(?P<kin>(?i:{_KIN_WORDS}))\b"
    r"(?!\s*,?\s*\(?[A-ZÀ-Þ])(?!['’]s)")
# "Dad sold his hives", "mam moved into sheltered housing": the word for a parent used as a name
_PARENT_CALLED = re.compile(
    rf"(?<![\w'’])(?P<word>{'|'.join(sorted(PARENT_NAMES, key=len, reverse=True))})(?![\w'’])", re.I)
# … but not when something says whose parent it is ("my dad" is _MY_KIN's, "Tom's mum" is Tom's)
_OWNED_BEFORE = re.compile(r"(?:\b(?:my|our|your|his|her|their|the|a|an)|['’]s?)\s+$", re.I)


def _unnamed(alias: str) -> bool:
    """"my brother" as a whole: the words a message used for a relative it did not name."""
    match = _MY_KIN.fullmatch(alias.strip())
    return match is not None and not match.group("named")


def _unnamed_relatives(ctx: WriteContext) -> None:
    """"my brother" said without a name is the one brother the agent knows the writer has: it
    stands for him in this message, so what it says attaches to him ("my brother moved to
    Austin" → Daniel lives in Austin). So does "Dad" or "Mum" used as a name ("Dad sold his
    hives"). With none or several, nothing is assumed."""
    phrases = list(_MY_KIN.finditer(ctx.message))
    named = {m.group("kin").lower() for m in phrases if m.group("named")}
    said = {m.group(0).lower(): m.group("kin").lower() for m in phrases if not m.group("named")}
    for surface, kin in said.items():
        if kin in named:  # "my brother Tom ... my brother": the message names him itself
            continue
        relative = entity_selectors.relative_of(agent=ctx.agent, owner=ctx.speaker, term=kin)
        if relative is not None:
            _know(ctx, relative, surface)
    if (said := _MY_PARENTS.search(ctx.message)) and len(parents := entity_selectors.parents_of(
            agent=ctx.agent, child=ctx.speaker)) == 2:
        # "my parents relocated to Henderson": what the message says of one, it says of both
        _know(ctx, parents[0], said.group(0))
        ctx.kin_words.add(said.group(0).lower())
        ctx.companions[parents[0].id] = [parents[1]]
    for match in _THEIR_KIN.finditer(ctx.message):  # "Tess's husband landed a job": Tess's one husband
        owner = ctx.known_aliases.get(match.group("owner"), match.group("owner"))
        if owner not in {e.display_name for e in ctx.known.values() if e.type == "person"}:
            continue
        relative = entity_selectors.relative_of(agent=ctx.agent, owner=owner, term=match.group("kin").lower())
        if relative is not None:
            _know(ctx, relative, match.group(0))
            ctx.kin_words.add(match.group(0).lower())  # "Liesel's husband" is no name of his
    lower_case = _lower_case_writing(ctx.message)
    for match in _PARENT_CALLED.finditer(ctx.message):
        word = match.group("word")
        if not (word[0].isupper() or lower_case) or _OWNED_BEFORE.search(ctx.message[: match.start()]):
            continue
        relative = entity_selectors.relative_of(agent=ctx.agent, owner=ctx.speaker, term=word.lower())
        if relative is not None and word.lower() not in {normalize_alias(a) for a in ctx.known_aliases}:
            _know(ctx, relative, word)
            ctx.kin_words.add(word.lower())


_KIN_TITLE_WORDS = "|".join(sorted((re.escape(k) for k in KIN_TITLES), key=len, reverse=True))
# "my cousin Emeka", "Cousin Emeka", "Uncle Tunde": a first name said with the writer's kin word
_KIN_NAMED = re.compile(
    rf"(?:\b(?i:my|our)\s+(?P<kin>(?i:{_KIN_WORDS}))\s*,?\s+|(?<![\w'’])(?P<title>(?i:{_KIN_TITLE_WORDS}))\s+)"
    r"(?P<name>[A-ZÀ-Þ][\w'’-]+)(?!\s+[A-ZÀ-Þ])")


def _named_relatives(ctx: WriteContext) -> None:
    """"my cousin Emeka" when the agent knows two Emekas: the one who is the writer's cousin. The
    first name stands for that relative in this message (and "Cousin Emeka" too)."""
    for match in _KIN_NAMED.finditer(ctx.message):
        kin = (match.group("kin") or match.group("title")).lower()
        if match.group("title") and not match.group("title")[0].isupper():
            continue
        relative = entity_selectors.relative_of(agent=ctx.agent, owner=ctx.speaker, term=kin,
                                               name=match.group("name"))
        if relative is not None:
            _know(ctx, relative, match.group("name"))


_SENTENCE_OPENING = re.compile(r"(?:^|[.!?]\s+)[^\w]*(\w)")


def _lower_case_writing(message: str) -> bool:
    """The writer does not capitalize: no sentence opens with a capital letter."""
    openings = _SENTENCE_OPENING.findall(message)
    return bool(openings) and not any(c.isupper() for c in openings)


# "Hi, Julia here — …", "Jonas again.", "Hey, it's Ana here": someone else writes on the account.
_SELF_INTRODUCTION = re.compile(
    r"^\W*(?:(?i:hi|hey|hello|hiya)\b[\s,!.]*)?(?:(?i:it's|it\s+is|this\s+is)\s+)?"
    r"(?P<name>[A-ZÀ-Þ][\w'’-]+(?:\s+[A-ZÀ-Þ][\w'’-]+)?)\s+(?:here|again)\s*(?:[.!,;:—–-]|$)",
)


# "hi, this is Ren Mori, Haruka's son": someone writes on the account and says whose relative
_RELATIVE_WRITES = re.compile(
    r"^\W*(?:(?i:hi|hey|hello|hiya)\b[\s,!.]*)?(?i:it's|it\s+is|this\s+is)\s+"
    r"(?P<name>[A-ZÀ-Þ][\w'’-]+(?:\s+[A-ZÀ-Þ][\w'’-]+)?)\s*[,—–-]\s*(?P<owner>[A-ZÀ-Þ][\w'’-]+)['’]s\s+\w+",
)


def _speaker_introduced(ctx: WriteContext, step: StepRecord) -> None:
    """A message that opens by naming its writer ("Hi, Julia here") is in that person's first
    person, when the name is a person the agent knows (or an unambiguous new first name). So is
    one where someone says whose relative they are ("this is Ren Mori, Haruka's son")."""
    relative = _RELATIVE_WRITES.match(ctx.message)
    if relative and [normalize_alias(relative.group("owner"))] == normalize_alias(ctx.speaker).split()[:1]:
        name = relative.group("name")
        step.data["speaker"] = ctx.known_aliases.get(name) or name
        ctx.speaker = step.data["speaker"]
        return
    match = _SELF_INTRODUCTION.match(ctx.message)
    if not match:
        return
    name = match.group("name")
    if normalize_alias(name) in {normalize_alias(ctx.speaker), *normalize_alias(ctx.speaker).split()[:1]}:
        return
    canonical = ctx.known_aliases.get(name) or next(
        (e.display_name for e in ctx.known.values() if e.type == "person"
         and normalize_alias(e.display_name) == normalize_alias(name)), None)
    if canonical is None and normalize_alias(name) in FIRST_NAMES:
        canonical = name
    if canonical:
        step.data["speaker"] = canonical
        ctx.speaker = canonical


def _previous_messages(ctx: WriteContext, count: int = 3) -> tuple[str, ...]:
    """The agent's messages said just before this one, oldest first, when the caller sent none:
    what a pronoun at the start of a message ("He's engaged now") refers back to."""
    rows = (Event.objects.filter(agent=ctx.agent, redacted_at__isnull=True, occurred_at__lte=ctx.occurred_at)
            .exclude(pk=ctx.event.pk).order_by("-occurred_at", "-id").values_list("text", flat=True)[:count])
    return tuple(reversed([t for t in rows if t]))


def _know(ctx: WriteContext, entity: Entity, surface: str) -> None:
    ctx.known[entity.id] = entity
    ctx.known_names.add(surface)
    ctx.known_names.add(entity.display_name)
    ctx.known_types[entity.display_name] = entity.type
    if normalize_alias(surface) != normalize_alias(entity.display_name):
        ctx.known_aliases[surface] = entity.display_name


def pre_retrieval(ctx: WriteContext, step: StepRecord) -> None:
    """What we already know about those entities (profile, else top-K facts), within budget."""
    if not ctx.llm.enabled:
        step.status = "skipped"
        step.data["reason"] = "no LLM: the offline extractor needs no knowledge context"
        return
    budget, lines, used = ctx.config.informed_extraction_context_budget_tokens, [], 0
    for entity in ctx.known.values():
        if entity.profile_text:
            chunk = [f"[{entity.display_name} profile] {entity.profile_text}"]
        else:
            facts = (
                Fact.objects.current().filter(entity=entity)
                # "+ 0": sorted exactly, never by the shared HNSW index, which filters by entity
                # after its scan and would return too few of this entity's facts
                .order_by(CosineDistance("embedding", ctx.event.embedding) + Value(0.0))
                .values_list("text", "confidence")[: ctx.config.informed_extraction_topk]
            )
            chunk = [f"[{entity.display_name} fact] {text} ({conf:.2f})" for text, conf in facts]
        for line in chunk:
            cost = count_tokens(line)
            if used + cost > budget:
                break
            lines.append(line)
            used += cost
    ctx.knowledge = "\n".join(lines)
    step.candidates_out, step.data["context_tokens"] = len(lines), used


def extract(ctx: WriteContext, step: StepRecord) -> None:
    """Informed extraction (one LLM call); blind extraction when it fails; the offline
    extractor when there is no LLM or both LLM paths fail, so the event is never lost."""
    sink = ctx.usage_sink(step)
    known_names = sorted(ctx.known_names)
    if ctx.llm.enabled:
        if ctx.config.enable_informed_extraction:
            try:
                ctx.extraction = llm_extract.informed(ctx.llm, ctx, usage_sink=sink)
                ctx.extraction_path = "informed"
            except llm_extract.ExtractionFailed as exc:
                step.data["informed_error"] = str(exc)
        if not ctx.extraction_path:
            try:
                ctx.extraction, retried = llm_extract.blind(ctx.llm, ctx, usage_sink=sink)
                ctx.extraction_path = "blind"
                step.data["relation_retry_triggered"] = retried
            except llm_extract.ExtractionFailed as exc:
                step.data["blind_error"] = str(exc)
    if not ctx.extraction_path:
        ctx.extraction = extract_offline(
            ctx.message, speaker=ctx.speaker, recent_messages=ctx.recent_messages, known_names=known_names,
            occurred_at=ctx.occurred_at, known_aliases=ctx.known_aliases, known_types=ctx.known_types,
        )
        ctx.extraction_path = "offline"
    step.data["path"] = ctx.extraction_path
    step.candidates_out = len(ctx.extraction.facts)
    step.data["entities"] = [e.name for e in ctx.extraction.entities]
    step.data["relations"] = [f"{r.source} -[{r.rel_type}]-> {r.target}" for r in ctx.extraction.relations]


def normalize(ctx: WriteContext, step: StepRecord) -> None:
    """Drop what cannot be stored (reported in the result), rewrite aliases to canonical names,
    drop identity relations, dedup near-identical facts."""
    ex = ctx.extraction
    skipped = extraction_within_limits(ex)
    if skipped:
        ctx.result.facts_skipped.extend(skipped)
        step.data["skipped"] = skipped
    canonical = {}
    for entity in ex.entities:
        for alias in entity.aliases:
            canonical[normalize_alias(alias)] = entity.name
    for fact in ex.facts:
        fact.subject = canonical.get(normalize_alias(fact.subject), fact.subject)
    for rel in ex.relations:
        rel.source = canonical.get(normalize_alias(rel.source), rel.source)
        rel.target = canonical.get(normalize_alias(rel.target), rel.target)
    ex.relations = [r for r in ex.relations if normalize_alias(r.source) != normalize_alias(r.target)]
    seen, facts = set(), []
    for fact in ex.facts:
        key = (normalize_alias(fact.subject), normalize_alias(fact.text), fact.negated)
        if key not in seen:
            seen.add(key)
            facts.append(fact)
    vectors = ctx.embedder.embed([f.text for f in facts]) if facts else []
    kept = []
    for negated in (False, True):
        group = [i for i, f in enumerate(facts) if f.negated == negated]
        kept += [group[i] for i in semantic_dedup([vectors[i] for i in group], ctx.config.semantic_dedup_threshold,
                                                  [facts[i].text for i in group])]
    kept.sort()
    step.candidates_in, step.candidates_out = len(ex.facts), len(kept)
    ex.facts = [facts[i] for i in kept]
    ctx.fact_vectors = [vectors[i] for i in kept]


READ_STEPS = [
    ("alias_lookup", alias_lookup),
    ("pre_retrieval", pre_retrieval),
    ("extraction", extract),
    ("normalize_dedup", normalize),
]


# --- steps inside the write transaction -------------------------------------------------------

def _names_to_resolve(ex: Extraction) -> list[ExtractedEntity]:
    by_name: dict[str, ExtractedEntity] = {}
    for entity in ex.entities:
        by_name.setdefault(normalize_alias(entity.name), entity)
    named = [n for c in ex.corrections for n in (c.wrong, c.right)]
    for name in [f.subject for f in ex.facts] + [n for r in ex.relations for n in (r.source, r.target)] + named:
        by_name.setdefault(normalize_alias(name), ExtractedEntity(name=name, type="person" if is_speaker_reference(
            name) else "concept"))
    return sorted(by_name.values(), key=lambda e: normalize_alias(e.name))  # fixed order: no lock cycles


def resolve_entities(ctx: WriteContext, step: StepRecord) -> None:
    """Exact → fuzzy → LLM → create, for every name the extraction used."""
    todo = _names_to_resolve(ctx.extraction)
    vectors = ctx.embedder.embed([e.name for e in todo]) if todo else []
    resolutions = []
    for entity, vector in zip(todo, vectors, strict=True):
        # "my brother" stood for him in this message only: it is no name of his
        aliases = [a for a in entity.aliases if not _unnamed(a) and a.lower() not in ctx.kin_words]
        res = entity_resolve(
            agent=ctx.agent, name=entity.name, entity_type=entity.type, aliases=aliases,
            speaker=ctx.speaker, message=ctx.message, embed=ctx.embedder.embed, llm=ctx.llm,
            config=ctx.config, usage_sink=ctx.usage_sink(step), vector=vector,
        )
        resolutions.append(res)
        for name in [entity.name, *entity.aliases]:
            ctx.resolved[normalize_alias(name)] = res.entity
        ctx.names_by_entity.setdefault(res.entity.id, set()).update([entity.name, *entity.aliases])
    step.candidates_in, step.candidates_out = len(todo), len({r.entity.id for r in resolutions})
    step.data["resolutions"] = [r.as_dict() for r in resolutions]
    ctx.result.entities_resolved = [
        {"id": r.entity.id, "key": r.entity.key, "name": r.entity.display_name, "method": r.method}
        for r in resolutions
    ]


def _existing_facts(entity: Entity, vector: np.ndarray, slot: str, nearest: int) -> list[ExistingFact]:
    """The entity's active facts that can change a decision: the `nearest` by cosine (exact
    repeats and the best similarity are among them) plus every fact in the same relation slot.
    A speaker accumulates hundreds of facts; loading them all made every write O(history).
    The similarity is computed for each of the entity's active facts, never index-ordered, so
    the global HNSW index with its post-filtering cannot drop rows of this entity."""
    current, _ = version_visible_sql(None, "f")
    with connection.cursor() as cursor:
        cursor.execute(
            "WITH active AS (SELECT id, text, slot, slot_value, "
            "  coalesce(1 - (embedding <=> %s::vector), 0) AS similarity FROM memories_fact f "
            f"  WHERE entity_id = %s AND {current}) "
            "SELECT id, text, similarity, slot, slot_value FROM active "
            "WHERE id IN (SELECT id FROM active ORDER BY similarity DESC LIMIT %s) "
            "   OR (%s <> '' AND slot = %s)",
            [vector_literal(vector), entity.id, nearest, slot, slot],
        )
        rows = cursor.fetchall()
    return [ExistingFact(i, t, float(sim), s, v) for i, t, sim, s, v in rows]


def reconcile(ctx: WriteContext, step: StepRecord) -> None:
    """Decide ADD / UPDATE / NOOP / DELETE for every fact; ambiguous ones go to the LLM in one call."""
    pending = []
    for fact, vector in zip(ctx.extraction.facts, ctx.fact_vectors, strict=True):
        entity = ctx.resolved[normalize_alias(fact.subject)]
        existing = _existing_facts(entity, vector, fact.slot, ctx.config.reconcile_candidates)
        decision = decide(
            Candidate(fact.text, vector, fact.slot, fact.value, fact.negated), existing,
            fast_path_below=ctx.config.reconcile_fast_path_below, noop_above=ctx.config.reconcile_noop_above,
            llm_available=ctx.llm.enabled,
        )
        ctx.decisions.append((fact, vector, decision))
        if decision.needs_llm:
            pending.append((len(ctx.decisions) - 1, fact, [e for e in existing]))
    if pending:
        verdicts = llm_extract.reconcile_with_llm(ctx.llm, pending, ctx, usage_sink=ctx.usage_sink(step))
        for index, decision in verdicts.items():
            fact, vector, _ = ctx.decisions[index]
            ctx.decisions[index] = (fact, vector, decision)
    step.candidates_in = len(ctx.decisions)
    step.data["decisions"] = [{"fact": f.text, **d.as_dict()} for f, _, d in ctx.decisions]
    step.data["llm_reconciled"] = len(pending)


def upsert(ctx: WriteContext, step: StepRecord) -> None:
    """Apply each decision in its own savepoint; then relationships (with evidence or mirror
    facts) and seed profiles."""
    _apply_corrections(ctx, step)
    persisted: list[Fact] = []
    for fact, vector, decision in ctx.decisions:
        try:
            with transaction.atomic():
                stored = _apply(ctx, fact, vector, decision)
        except DatabaseError as exc:
            logger.warning("fact upsert failed: %s", exc)
            step.data.setdefault("failures", []).append({"fact": fact.text, "error": str(exc)[:200]})
            continue
        if stored is not None:
            persisted.append(stored)
    _close_ended(ctx, step)
    _close_unnamed(ctx, step)
    _relationships(ctx, step, persisted)
    _seed_profiles(ctx, persisted)
    _refresh_changed_profiles(ctx, step)
    new_ids = sorted(c.fact_id for c in ctx.result.facts_added + ctx.result.facts_updated)
    keyword_stats_apply(agent_id=ctx.agent.id, kind="fact", ids=new_ids)
    if new_ids or ctx.result.relationships or ctx.result.facts_deleted:
        agent_id = ctx.agent.id
        transaction.on_commit(lambda: agent_graph_bump(agent_id=agent_id))
    step.candidates_out = len(persisted)


def _apply(ctx: WriteContext, fact: ExtractedFact, vector: np.ndarray, decision: Decision) -> Fact | None:
    entity = ctx.resolved[normalize_alias(fact.subject)]
    change = FactChange(fact_id=None, text=fact.text, entity=entity.key, reason=decision.reason)
    if decision.action in {UPDATE, NOOP, DELETE}:
        target = Fact.objects.select_for_update().current().filter(pk=decision.target_id, agent=ctx.agent).first()
        if target is None:  # closed meanwhile by a concurrent write: treat as new information
            decision = Decision(ADD, None, "target fact no longer active", "fallback", decision.similarity)
    if decision.action == NOOP:
        fact_services.fact_reinforce(fact=target)
        change.fact_id, change.text = target.id, target.text
        ctx.result.facts_unchanged.append(change)
        return target
    if decision.action == DELETE:
        fact_services.fact_close(fact=target, valid_to=_world_start(ctx, fact), reason=f"retracted: {decision.reason}",
                                 learned_at=ctx.occurred_at)
        change.fact_id, change.text, change.previous_fact_id = target.id, target.text, target.id
        ctx.result.facts_deleted.append(change)
        return None
    fields = dict(
        entity=entity, confidence=fact.confidence,
        importance=ctx.config.importance_category_map.get(fact.importance_category, 0.5),
        importance_category=fact.importance_category if fact.importance_category in
        ctx.config.importance_category_map else "", source_context=fact.source_context,
        speaker=ctx.speaker, source_event=ctx.event, slot=fact.slot, slot_value=fact.value,
    )
    if decision.action == UPDATE:
        stored = fact_services.fact_supersede(
            old=target, new_text=fact.text, embedding=vector, valid_from=_world_start(ctx, fact),
            learned_at=ctx.occurred_at, reason=f"superseded: {decision.reason}", **fields,
        )
        change.previous_fact_id = target.id
        ctx.result.facts_updated.append(change)
        if target.slot and normalize_alias(target.slot_value) != normalize_alias(fact.value):
            _close_replaced_value_facts(ctx, holder=entity, slot=target.slot, old_value=target.slot_value)
    else:
        stored = fact_services.fact_add(agent=ctx.agent, text=fact.text, embedding=vector,
                                        valid_from=_world_start(ctx, fact), learned_at=ctx.occurred_at, **fields)
        ctx.result.facts_added.append(change)
    change.fact_id = stored.id
    fact_services.fact_links_create(
        fact=stored, entities=[(e, sorted(ctx.names_by_entity.get(e.id, ()))) for e in _entities(ctx)],
        min_length=ctx.config.min_link_name_length,
    )
    return stored


_SENTENCE_BREAK = re.compile(r"(?<=[.!?])\s+")
PARTNER_RELATIONS = tuple(r for r, (group, _) in SINGLE_VALUED_RELATIONS.items() if group == "partner")
UNNAMED_CLOSABLE = ("works_at", "studies_at", "lives_in")


def _world_start(ctx: WriteContext, fact: ExtractedFact | None) -> datetime:
    """When the stated fact (or the message) began in the world: its own temporal expression
    ("moved to Toronto in September"), else that of a one-sentence message (an extractor may
    drop the words), else the time the message was said."""
    start = statement_start(fact.text, ctx.occurred_at) if fact is not None else None
    if start is None and len(_SENTENCE_BREAK.split(ctx.message.strip())) == 1:
        start = statement_start(ctx.message, ctx.occurred_at)
    return start or ctx.occurred_at


def _close_ended(ctx: WriteContext, step: StepRecord) -> None:
    """A cessation ("quit coffee", "no longer teaches", "gave up running") ends the subject's
    current facts about it, learned before this message; the cessation itself stays stored."""
    for fact, _, decision in ctx.decisions:
        if not fact.ends or decision.action == DELETE:
            continue
        entity = ctx.resolved.get(normalize_alias(fact.ends_subject or fact.subject))
        pattern = cessation_pattern(fact.ends)
        if not pattern or entity is None:
            continue
        # the subject's facts and those naming it ("Dr. Ito has Wren on X" ends with Wren's X)
        rows = list(Fact.objects.select_for_update().current()
                    .filter(agent=ctx.agent, text__iregex=pattern).about(entity.id)
                    .exclude(source_event=ctx.event))
        ended = set(facts_ended_by(fact.ends, [(f.id, f.text) for f in rows]))
        for old in (f for f in rows if f.id in ended):
            reason = f"ended: {fact.text}"[:500]
            if rest := without_ended_item(old.text, fact.ends):
                # "took up hurling and the whistle", then "dropped the whistle": hurling goes on
                new = fact_services.fact_restate(
                    old=old, text=rest, embedding=ctx.embedder.embed([rest])[0], valid_from=_world_start(ctx, fact),
                    learned_at=ctx.occurred_at, reason=reason)
                ctx.result.facts_updated.append(FactChange(fact_id=new.id, text=rest, entity=entity.key,
                                                           reason="one item ended by a cessation",
                                                           previous_fact_id=old.id))
                step.data.setdefault("narrowed", []).append(old.id)
                continue
            fact_services.fact_close(fact=old, valid_to=_world_start(ctx, fact), reason=reason,
                                     learned_at=ctx.occurred_at)
            ctx.result.facts_deleted.append(FactChange(fact_id=old.id, text=old.text, entity=entity.key,
                                                       reason="ended by a cessation", previous_fact_id=old.id))
            step.data.setdefault("ended", []).append(old.id)


CORRECTION_LOOKBACK_EVENTS = 3
CORRECTION_LOOKBACK = timedelta(days=2)


def _apply_corrections(ctx: WriteContext, step: StepRecord) -> None:
    """"Sorry, I meant Oak Lawn, not Elmhurst": what the speaker's last few messages stored naming
    the wrong entity is restated with the right one. Facts get a new version (true from where the
    corrected one started: the wrong one never was), edges move to the right entity; nothing
    older than those messages changes."""
    recent = list(Event.objects.filter(agent=ctx.agent, occurred_at__lte=ctx.occurred_at,
                                       occurred_at__gte=ctx.occurred_at - CORRECTION_LOOKBACK)
                  .exclude(pk=ctx.event.pk).order_by("-occurred_at", "-id")
                  .values_list("id", flat=True)[:CORRECTION_LOOKBACK_EVENTS])
    for correction in ctx.extraction.corrections:
        wrong = ctx.resolved.get(normalize_alias(correction.wrong))
        right = ctx.resolved.get(normalize_alias(correction.right))
        if wrong is None or right is None or wrong.id == right.id or not recent:
            continue
        facts = list(Fact.objects.select_for_update().current().filter(agent=ctx.agent, source_event_id__in=recent)
                     .about(wrong.id).order_by("id"))
        edges = list(Relationship.objects.select_for_update().current()
                     .filter(agent=ctx.agent, source_event_id__in=recent)
                     .filter(Q(source=wrong) | Q(target=wrong)).order_by("id"))
        names = [wrong.display_name, *wrong.aliases.values_list("alias", flat=True)]
        plan = plan_correction(
            wrong_id=wrong.id, right_id=right.id, wrong_names=names, right_name=right.display_name,
            facts=[(f.id, f.text, f.slot_value) for f in facts],
            edges=[CurrentEdge(e.id, e.source_id, e.rel_type, e.target_id) for e in edges],
        )
        if not plan.facts and not plan.edges:
            continue
        if right.type != wrong.type and any(r["id"] == right.id and r["method"] == "created"
                                            for r in ctx.result.entities_resolved):
            # it names the same kind of thing as the name it corrects
            entity_services.entity_retype(agent=ctx.agent, entity=right, entity_type=wrong.type)
        reason = f"corrected: {right.display_name}, not {wrong.display_name}"
        restated = _restate_facts(ctx, facts, plan, wrong, right, reason)
        for edge in (e for e in edges if e.id in plan.edges):
            # the corrected edge was never true: it ends where it began
            relationships_close(agent=ctx.agent, ids=[edge.id], valid_to=edge.valid_from, learned_at=ctx.occurred_at)
            source_id, target_id = plan.edges[edge.id]
            relationship_upsert(
                agent=ctx.agent, source=right if source_id == right.id else edge.source,
                target=right if target_id == right.id else edge.target, rel_type=edge.rel_type,
                valid_from=edge.valid_from, evidence=restated.get(edge.evidence_fact_id), source_event=ctx.event,
                learned_at=ctx.occurred_at, initial_strength=edge.strength,
            )
        _merge_misnamed(ctx, wrong, right, reason)
        step.data.setdefault("corrections", []).append(
            {"wrong": wrong.key, "right": right.key, "facts": sorted(plan.facts), "edges": sorted(plan.edges)})


def _merge_misnamed(ctx: WriteContext, wrong: Entity, right: Entity, reason: str) -> None:
    """"Her surname is Akhtar, not Ahmed": a person first stored under a wrong name and now named
    right for the first time is one person; the wrong entity merges into the right one (an
    operator can unmerge it), so her first name alone ("Zara") leads to her and no one else."""
    created = any(r["id"] == right.id and r["method"] == "created" for r in ctx.result.entities_resolved)
    if (wrong.type == right.type == "person" and created and wrong.merged_into_id is None
            and person_names_compatible(right.display_name.split()[0], wrong.display_name, either_way=False)):
        entity_services.entity_merge(agent=ctx.agent, survivor_id=right.id, merged_id=wrong.id,
                              actor="pipeline:correction", reason=reason)


def _restate_facts(ctx: WriteContext, facts: list[Fact], plan, wrong: Entity, right: Entity,
                   reason: str) -> dict[int, Fact]:
    """New versions of the corrected facts (same subject unless it was the wrong entity); old id → new."""
    todo = [f for f in facts if f.id in plan.facts]
    vectors = ctx.embedder.embed([plan.facts[f.id][0] for f in todo]) if todo else []
    out = {}
    for old, vector in zip(todo, vectors, strict=True):
        text, value = plan.facts[old.id]
        new = fact_services.fact_restate(
            old=old, text=text, embedding=vector, valid_from=old.valid_from, learned_at=ctx.occurred_at,
            reason=reason, drop=wrong, link_candidates=[right], source_event=ctx.event, slot_value=value,
            entity=right if old.entity_id == wrong.id else old.entity,
        )
        ctx.result.facts_updated.append(FactChange(fact_id=new.id, text=new.text, entity=new.entity.key,
                                                   reason=reason, previous_fact_id=old.id))
        out[old.id] = new
    return out


def _entities(ctx: WriteContext) -> list[Entity]:
    unique = {e.id: e for e in ctx.resolved.values()}
    unique.update(ctx.known)
    return list(unique.values())


def _evidence(ctx: WriteContext, persisted: list[Fact], source: Entity, target: Entity,
              rel_type: str = "") -> Fact | None:
    def names(e: Entity) -> list[str]:
        return [e.display_name, *ctx.names_by_entity.get(e.id, ())]

    matches = [
        f for f in persisted
        if any(mentions(f.text, n) for n in names(source)) and any(mentions(f.text, n) for n in names(target))
    ]
    # the fact that fills this relation's slot first: a sentence that says two things ("a nurse at
    # ⟨org⟩ in ⟨city⟩") must not end the residence when the job is superseded
    return max(matches, key=lambda f: (f.slot == rel_type, f.confidence), default=None)


# what "my parents" do together: one home
_SHARED_BY_COMPANIONS = frozenset({"lives_in"})


def _relationships(ctx: WriteContext, step: StepRecord, persisted: list[Fact]) -> None:
    household = []
    for rel in ctx.extraction.relations:
        source = ctx.resolved.get(normalize_alias(rel.source))
        target = ctx.resolved.get(normalize_alias(rel.target))
        if source is None or target is None or source.id == target.id:
            continue
        edge = _relationship(ctx, step, persisted, source, rel.rel_type, target)
        if rel.household and edge is not None:
            household.append((source, rel.rel_type, target, edge))
        if edge is not None and rel.rel_type in _SHARED_BY_COMPANIONS:
            evidence = Fact.objects.filter(pk=edge.evidence_fact_id).first()
            for companion in ctx.companions.get(source.id, []):
                _relationship(ctx, step, [], companion, rel.rel_type, target, evidence=evidence,
                              valid_from=edge.valid_from)
    for source, rel_type, target, edge in household:
        _household(ctx, step, source, rel_type, target, edge)
    step.data["relationships"] = ctx.result.relationships


def _relationship(ctx: WriteContext, step: StepRecord, persisted: list[Fact], source: Entity, rel_type: str,
                  target: Entity, *, evidence: Fact | None = None, valid_from: datetime | None = None):
    """Store one edge: end what it replaces (from when its evidence says it began), then upsert it."""
    if evidence is None and not is_closing_relation(rel_type):
        evidence = _evidence(ctx, persisted, source, target, rel_type)
    began = valid_from or (evidence.valid_from if evidence is not None else None)
    closed = _close_replaced_edges(ctx, source, rel_type, target, ended_at=began)
    if closed:
        step.data.setdefault("relationships_closed", []).extend(closed)
    if is_closing_relation(rel_type):
        # a cessation ends the slot's facts that name the other end, with or without an edge
        ends = {source.id: (source, target), target.id: (target, source)}
        for holder, ended in (ends[h] for h in dict.fromkeys(slot_holders(rel_type, source.id, target.id))):
            _close_facts_naming(ctx, step, holder=holder, ended=ended, group=slot_group(rel_type), why=rel_type)
        return None  # a cessation ends the edge; it is no link of today
    if evidence is None:
        evidence = _mirror_fact(ctx, source, rel_type, target)
    edge, outcome = relationship_upsert(
        agent=ctx.agent, source=source, target=target, rel_type=rel_type,
        valid_from=began or (evidence.valid_from if evidence is not None else ctx.occurred_at),
        evidence=evidence, source_event=ctx.event, learned_at=ctx.occurred_at,
        initial_strength=ctx.config.relationship_initial_strength,
        reinforcement=ctx.config.relationship_reinforcement,
    )
    if edge is not None:
        ctx.result.relationships.append(
            {"id": edge.id, "source": source.key, "rel_type": rel_type, "target": target.key,
             "strength": edge.strength, "outcome": outcome, "evidence_fact_id": edge.evidence_fact_id}
        )
    return edge


def _household(ctx: WriteContext, step: StepRecord, source: Entity, rel_type: str, target: Entity, edge) -> None:
    """"We moved to ⟨city⟩" said by someone with a current partner: the partner moved too, from
    the same moment (unless the message gave the partner a home of their own)."""
    said = (ctx.resolved.get(normalize_alias(r.source)) for r in ctx.extraction.relations if r.rel_type == rel_type)
    said_ids = {e.id for e in said if e is not None}
    links = relationships_current_of(agent=ctx.agent, entity_ids=[source.id], rel_types=list(PARTNER_RELATIONS))
    evidence = Fact.objects.filter(pk=edge.evidence_fact_id).first() if edge.evidence_fact_id else None
    for link in links:
        partner = link.target if link.source_id == source.id else link.source
        if partner.id in said_ids or partner.id == target.id or partner.type != "person":
            continue
        said_ids.add(partner.id)
        _relationship(ctx, step, [], partner, rel_type, target, evidence=evidence, valid_from=edge.valid_from)


def _close_replaced_edges(ctx: WriteContext, source: Entity, rel_type: str, target: Entity,
                          ended_at: datetime | None = None) -> list[int]:
    """Single-valued slots keep one current edge: a new residence, employer, partner or manager
    ends the previous one (when the new one began, else when the message says), and a cessation
    ("left Acme", "broke up with Sam") ends the edge it names."""
    edges = relationships_current_of(agent=ctx.agent, entity_ids=[source.id, target.id],
                                     rel_types=list(SINGLE_VALUED_RELATIONS))
    ids = edges_to_close(rel_type, source.id, target.id,
                         [CurrentEdge(e.id, e.source_id, e.rel_type, e.target_id) for e in edges])
    _close_edges(ctx, source, [e for e in edges if e.id in ids], ended_at or _world_start(ctx, None),
                 f"{rel_type} {target.display_name} replaced it")
    holders = set(slot_holders(rel_type, source.id, target.id))
    entities = {source.id: source, target.id: target}
    for edge in (e for e in edges if e.id in ids):
        holder_id = next((h for h in (edge.source_id, edge.target_id) if h in holders), None)
        if holder_id is None or holder_id not in entities:
            continue
        old_id = edge.target_id if holder_id == edge.source_id else edge.source_id
        old = Entity.objects.filter(pk=old_id, agent=ctx.agent).first()
        if old is not None:
            _close_facts_naming(ctx, None, holder=entities[holder_id], ended=old, group=slot_group(edge.rel_type),
                                why=f"{rel_type} {target.display_name}")
    return ids


def _close_edges(ctx: WriteContext, holder: Entity, edges: list, ended_at: datetime, reason: str) -> None:
    """End these edges; the fact that evidenced an ended edge closes with it, unless it supports another."""
    ids = [e.id for e in edges]
    if not ids:
        return
    relationships_close(agent=ctx.agent, ids=ids, valid_to=ended_at, learned_at=ctx.occurred_at)
    for edge in (e for e in edges if e.evidence_fact_id):
        evidence = Fact.objects.select_for_update().current().filter(pk=edge.evidence_fact_id).first()
        if evidence is None or evidence.source_event_id == ctx.event.id:
            continue
        if not evidence.evidenced_relationships.current().exclude(id__in=ids).exists():
            fact_services.fact_close(fact=evidence, valid_to=ended_at, learned_at=ctx.occurred_at, reason=reason)
            ctx.result.facts_deleted.append(FactChange(fact_id=evidence.id, text=evidence.text,
                                                       entity=holder.key, reason="slot replaced",
                                                       previous_fact_id=evidence.id))


def _close_unnamed(ctx: WriteContext, step: StepRecord) -> None:
    """"I left the clinic": a retraction of a slot without a value ends the subject's current edge
    of that slot when there is exactly one (of two employers, which one is unknown). A death
    ("Bob passed away", "my husband died") retracts the partner slot: every current partner
    edge of the subject ends, with the facts that evidenced it ("has been married to Bob")."""
    for fact in ctx.extraction.facts:
        if not (fact.negated and fact.slot in (*UNNAMED_CLOSABLE, PARTNER_SLOT) and not fact.value):
            continue
        entity = ctx.resolved.get(normalize_alias(fact.subject))
        if entity is None:
            continue
        if fact.slot == PARTNER_SLOT:
            edges = relationships_current_of(agent=ctx.agent, entity_ids=[entity.id],
                                             rel_types=list(PARTNER_RELATIONS))
            _close_edges(ctx, entity, edges, _world_start(ctx, fact), f"ended: {fact.text}"[:500])
            step.data.setdefault("relationships_closed", []).extend(e.id for e in edges)
            for edge in edges:  # "Judith is married to Bob", "Bob is Judith's husband"
                other = edge.target if edge.source_id == entity.id else edge.source
                for holder, ended in ((entity, other), (other, entity)):
                    _close_facts_naming(ctx, step, holder=holder, ended=ended, group="partner", why=fact.text)
            continue
        edges = [e for e in relationships_current_of(agent=ctx.agent, entity_ids=[entity.id], rel_types=[fact.slot])
                 if e.source_id == entity.id]
        if len(edges) == 1:
            _close_edges(ctx, entity, edges, _world_start(ctx, fact), f"ended: {fact.text}"[:500])
            step.data.setdefault("relationships_closed", []).append(edges[0].id)


def _close_replaced_value_facts(ctx: WriteContext, *, holder: Entity, slot: str, old_value: str) -> None:
    """A slot fact superseded by a new value ("my new dentist is Dr. Ito") takes along the holder's
    other facts that state the old value ("my dentist Dr. Moss is great")."""
    group = fact_slot_group(slot)
    ended = entity_selectors.resolve_exact(agent=ctx.agent, name=old_value, entity_type="")[0] if group else None
    if ended is not None and ended.id != holder.id:
        _close_facts_naming(ctx, None, holder=holder, ended=ended, group=group, why=f"new value for {slot}")


def _close_facts_naming(ctx: WriteContext, step: StepRecord | None, *, holder: Entity, ended: Entity, group: str,
                        why: str) -> None:
    """The holder's current facts that state the ended slot value ("Sam is Wren's girlfriend",
    "Wren got an offer from Acme", "Dr. Ito is Wren's dentist") close with it; facts of this
    message stay (they say what ended)."""
    names = [ended.display_name, *ended.aliases.values_list("alias", flat=True)]
    rows = list(Fact.objects.select_for_update().current().filter(agent=ctx.agent).about(holder.id)
                .about(ended.id).exclude(source_event=ctx.event))
    ended_ids = set(facts_naming_ended(group, names, [(f.id, f.text) for f in rows]))
    for old in (f for f in rows if f.id in ended_ids):
        # the ended slot's own edge is closed by the caller; what else the sentence evidences
        # ("my girlfriend Sol just got a job at Kestrel": Sol works at Kestrel) stays
        fact_services.fact_close(fact=old, valid_to=_world_start(ctx, None), learned_at=ctx.occurred_at,
                                 reason=f"slot value ended: {why}"[:500], with_relationships=False)
        ctx.result.facts_deleted.append(FactChange(fact_id=old.id, text=old.text, entity=holder.key,
                                                   reason=f"{group} {ended.display_name} ended",
                                                   previous_fact_id=old.id))
        if step is not None:
            step.data.setdefault("ended", []).append(old.id)


def _mirror_fact(ctx: WriteContext, source: Entity, rel_type: str, target: Entity) -> Fact | None:
    """No stored fact states the relation: create one through the same reconcile/apply path."""
    text = f"{source.display_name} {rel_type.replace('_', ' ')} {target.display_name}"
    vector = ctx.embedder.embed([text])[0]
    fact = ExtractedFact(subject=source.display_name, text=text, confidence=ctx.config.mirror_fact_confidence,
                         source_context="inferred_from_relation")
    ctx.resolved.setdefault(normalize_alias(source.display_name), source)
    decision = decide(Candidate(text, vector), _existing_facts(source, vector, "", ctx.config.reconcile_candidates),
                      fast_path_below=ctx.config.reconcile_fast_path_below,
                      noop_above=ctx.config.reconcile_noop_above, llm_available=False)
    if decision.action not in {ADD, NOOP}:
        decision = Decision(ADD, None, "mirror fact", "rule", decision.similarity)
    ctx.decisions.append((fact, vector, decision))
    try:
        with transaction.atomic():
            return _apply(ctx, fact, vector, decision)
    except DatabaseError:
        return None


def _seed_profiles(ctx: WriteContext, persisted: list[Fact]) -> None:
    profiles = {normalize_alias(k): v for k, v in ctx.extraction.profiles.items()}
    for entity in {e.id: e for e in ctx.resolved.values()}.values():
        if entity.profile_text:
            continue
        text = profiles.get(normalize_alias(entity.display_name)) or " ".join(
            f.text.rstrip(".") + "." for f in persisted if f.entity_id == entity.id
        )[:1200]
        entity_services.entity_profile_seed(entity=entity, text=text)


def _refresh_changed_profiles(ctx: WriteContext, step: StepRecord) -> None:
    """A profile that states what this write superseded or closed is rewritten at once from the
    entity's current facts (the deterministic summary; `consolidate_profiles` rewrites it again,
    with the LLM when there is one, since its facts changed)."""
    keys = {c.entity for c in ctx.result.facts_updated + ctx.result.facts_deleted if c.entity}
    if not keys:
        return
    entities = list(Entity.objects.filter(agent=ctx.agent, key__in=keys, merged_into__isnull=True)
                    .exclude(profile_text="").defer("name_embedding"))
    rows = selectors.profile_facts(agent=ctx.agent, entity_ids=[e.id for e in entities])
    for entity in entities:
        text = profile_text(name=entity.display_name, entity_type=entity.type, facts=rows.get(entity.id, []))
        if text and text != entity.profile_text:
            entity_services.entity_profile_set(entity=entity, text=text)
            step.data.setdefault("profiles_refreshed", []).append(entity.id)


WRITE_STEPS = [
    ("resolve_entities", resolve_entities),
    ("reconcile", reconcile),
    ("upsert", upsert),
]
