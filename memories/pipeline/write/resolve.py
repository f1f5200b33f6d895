"""Steps `resolve_entities` and `reconcile`, inside the write's transaction: every name the
extraction used becomes an entity (found or created), and every fact gets its decision."""

from __future__ import annotations

from memories.extraction import llm_extract
from memories.extraction.mentions import is_unnamed_relative
from memories.extraction.offline.lexicon import GRANDPARENT_NAMES, PARENT_NAMES
from memories.extraction.schema import ExtractedEntity, Extraction
from memories.naming import RELATIONSHIP_TERMS, is_speaker_reference, normalize_alias, titled_surname
from memories.pipeline.results import WriteResult
from memories.pipeline.trace import StepRecord, Tracer
from memories.pipeline.write.values import Decided, Extracted, Known, Message, Resolved
from memories.providers.embeddings import EmbedderClient
from memories.providers.llm import LLMClient
from memories.reconcile import Candidate, decide
from memories.selectors import entities as entity_selectors
from memories.selectors.facts import facts_to_reconcile
from memories.services.resolution import entity_resolve


def _names_to_resolve(ex: Extraction) -> list[ExtractedEntity]:
    by_name: dict[str, ExtractedEntity] = {}
    for entity in ex.entities:
        by_name.setdefault(normalize_alias(entity.name), entity)
    named = [n for c in ex.corrections for n in (c.wrong, c.right)]
    for name in [f.subject for f in ex.facts] + [n for r in ex.relations for n in (r.source, r.target)] + named:
        by_name.setdefault(normalize_alias(name), ExtractedEntity(name=name, type="person" if is_speaker_reference(
            name) else "concept"))
    # a fixed order (no lock cycles), titles with a family name last: they may not be anyone they relate to
    return sorted(by_name.values(), key=lambda e: (bool(titled_surname(e.name)), normalize_alias(e.name)))


_GENERIC_WRITERS = frozenset({"user", "assistant", "system", "agent", "bot", "ai", "me", "human", "unknown"})


def _named_writer(speaker: str) -> bool:
    """A writer with a name of their own: not "User" or "assistant", a phone number ("+44 7700 900123") or a
    kin word ("Mum", who is whoever the agent knows as the writer's mother)."""
    name = normalize_alias(speaker or "")
    return (bool(name) and name not in _GENERIC_WRITERS and not is_speaker_reference(speaker)
            and not any(c.isdigit() for c in speaker) and any(c.isalpha() for c in speaker)
            and name not in RELATIONSHIP_TERMS and name not in PARENT_NAMES and name not in GRANDPARENT_NAMES)


def _related_ids(ex: Extraction, name: str, resolved: Resolved) -> set[int]:
    """The entities, resolved so far, of the names this message relates `name` to ("Prof. Varga's
    daughter, Dr. Eszter Varga": Eszter for the professor): none of them is `name` itself."""
    key = normalize_alias(name)
    partners = {normalize_alias(other) for r in ex.relations
                for one, other in ((r.source, r.target), (r.target, r.source)) if normalize_alias(one) == key}
    return {resolved.by_name[p].id for p in partners if p in resolved.by_name}


def resolve_entities(message: Message, known: Known, extracted: Extracted, *, llm: LLMClient,
                     embedder: EmbedderClient, tracer: Tracer, result: WriteResult, step: StepRecord) -> Resolved:
    """Exact → fuzzy → LLM → create, for every name the extraction used."""
    todo = _names_to_resolve(extracted.extraction)
    vectors = embedder.embed([e.name for e in todo]) if todo else []
    resolved, resolutions = Resolved(known=dict(known.entities)), []
    for entity, vector in zip(todo, vectors, strict=True):
        # "my brother" stood for him in this message only: it is no name of his
        aliases = [a for a in entity.aliases if not is_unnamed_relative(a) and a.lower() not in known.kin_words]
        res = entity_resolve(
            agent=message.agent, name=entity.name, entity_type=entity.type, aliases=aliases,
            speaker=message.speaker, message=message.text, embed=embedder.embed, llm=llm,
            config=message.config, usage_sink=lambda usage: tracer.add_usage(step, usage), vector=vector,
            named_apart=_related_ids(extracted.extraction, entity.name, resolved),
        )
        resolutions.append(res)
        for name in [entity.name, *entity.aliases]:
            resolved.by_name[normalize_alias(name)] = res.entity
        resolved.names_by_entity.setdefault(res.entity.id, set()).update([entity.name, *entity.aliases])
        if res.method == "created":
            resolved.created.add(res.entity.id)
    if _named_writer(message.speaker) and normalize_alias(message.speaker) not in resolved.by_name and not (
            entity_selectors.person_by_name_exists(agent=message.agent, name=message.speaker)):
        # who writes in a group chat is someone the agent knows, though the message says nothing of them:
        # later messages address them by a short name ("Congrats Han!!")
        res = entity_resolve(agent=message.agent, name=message.speaker, entity_type="person", aliases=[],
                             speaker=message.speaker, message=message.text, embed=embedder.embed, llm=llm,
                             config=message.config, usage_sink=lambda usage: tracer.add_usage(step, usage))
        resolutions.append(res)
        resolved.by_name[normalize_alias(message.speaker)] = res.entity
    step.candidates_in, step.candidates_out = len(todo), len({r.entity.id for r in resolutions})
    step.data["resolutions"] = [r.as_dict() for r in resolutions]
    result.entities_resolved = [
        {"id": r.entity.id, "key": r.entity.key, "name": r.entity.display_name, "method": r.method}
        for r in resolutions
    ]
    return resolved


def reconcile(message: Message, extracted: Extracted, resolved: Resolved, *, llm: LLMClient, tracer: Tracer,
              step: StepRecord) -> Decided:
    """Decide ADD / UPDATE / NOOP / DELETE for every fact; ambiguous ones go to the LLM in one call."""
    config, decided, pending = message.config, [], []
    for fact, vector in zip(extracted.extraction.facts, extracted.vectors, strict=True):
        existing = facts_to_reconcile(entity=resolved[fact.subject], vector=vector, slot=fact.slot,
                                      nearest=config.reconcile_candidates)
        decision = decide(
            Candidate(fact.text, vector, fact.slot, fact.value, fact.negated), existing,
            fast_path_below=config.reconcile_fast_path_below, noop_above=config.reconcile_noop_above,
            llm_available=llm.enabled,
        )
        decided.append((fact, vector, decision))
        if decision.needs_llm:
            pending.append((len(decided) - 1, fact, existing))
    if pending:
        verdicts = llm_extract.reconcile_with_llm(
            llm, pending, occurred_at=message.occurred_at, timeout=config.extraction_timeout_sec,
            usage_sink=lambda usage: tracer.add_usage(step, usage))
        for index, decision in verdicts.items():
            fact, vector, _ = decided[index]
            decided[index] = (fact, vector, decision)
    step.candidates_in = len(decided)
    step.data["decisions"] = [{"fact": f.text, **d.as_dict()} for f, _, d in decided]
    step.data["llm_reconciled"] = len(pending)
    return decided
