"""Steps `pre_retrieval`, `extraction` and `normalize_dedup`: what the agent knows about the named
entities (for the LLM), what the message says, and that cleaned up. They read and may call the
LLM; they write nothing, so they run before the write's transaction."""

from __future__ import annotations

from django.db.models import Value
from pgvector.django import CosineDistance

from memories.budgets import llm_off_reason
from memories.extraction import llm_extract
from memories.extraction.limits import extraction_within_limits
from memories.extraction.offline import extract_offline
from memories.models import Fact
from memories.naming import normalize_alias
from memories.pipeline.trace import StepRecord, Tracer
from memories.pipeline.write.values import Extracted, Known, Message
from memories.providers.embeddings import EmbedderClient
from memories.providers.llm import LLMClient
from memories.reconcile import semantic_dedup
from memories.tokens import count_tokens


def pre_retrieval(message: Message, known: Known, llm: LLMClient, step: StepRecord) -> str:
    """What we already know about those entities (profile, else top-K facts), within budget."""
    if not llm.enabled:
        step.status = "skipped"
        step.data["reason"] = ("the agent's LLM budget is spent" if llm_off_reason(llm) == "budget" else "no LLM")
        step.data["reason"] += ": the offline extractor needs no knowledge context"
        return ""
    budget, lines, used = message.config.informed_extraction_context_budget_tokens, [], 0
    for entity in known.entities.values():
        if entity.profile_text:
            chunk = [f"[{entity.display_name} profile] {entity.profile_text}"]
        else:
            facts = (
                Fact.objects.current().filter(entity=entity)
                # "+ 0": sorted exactly, never by the shared HNSW index, which filters by entity
                # after its scan and would return too few of this entity's facts
                .order_by(CosineDistance("embedding", message.event.embedding) + Value(0.0))
                .values_list("text", "confidence")[: message.config.informed_extraction_topk]
            )
            chunk = [f"[{entity.display_name} fact] {text} ({conf:.2f})" for text, conf in facts]
        for line in chunk:
            cost = count_tokens(line)
            if used + cost > budget:
                break
            lines.append(line)
            used += cost
    step.candidates_out, step.data["context_tokens"] = len(lines), used
    return "\n".join(lines)


def extract(message: Message, known: Known, knowledge: str, llm: LLMClient, tracer: Tracer,
            embedder: EmbedderClient, step: StepRecord) -> Extracted:
    """Informed extraction (one LLM call); blind extraction when it fails; the offline
    extractor when there is no LLM or both LLM paths fail, so the event is never lost."""
    config = message.config
    sink = lambda usage: tracer.add_usage(step, usage)  # noqa: E731
    extracted = None
    if llm.enabled:
        prompt = llm_extract.MessageInput(text=message.text, speaker=message.speaker, occurred_at=message.occurred_at,
                                          recent_messages=message.recent, knowledge=knowledge)
        if config.enable_informed_extraction:
            try:
                extracted = Extracted(llm_extract.informed(llm, prompt, timeout=config.extraction_timeout_sec,
                                                           usage_sink=sink), "informed")
            except llm_extract.ExtractionFailed as exc:
                step.data["informed_error"] = str(exc)
        if extracted is None:
            try:
                extraction, retried = llm_extract.blind(llm, prompt, timeout=config.extraction_timeout_sec,
                                                        usage_sink=sink)
                extracted = Extracted(extraction, "blind")
                step.data["relation_retry_triggered"] = retried
            except llm_extract.ExtractionFailed as exc:
                step.data["blind_error"] = str(exc)
    if extracted is None:
        # why the LLM was not used: `budget` (the agent's is spent), `no_llm`, or `llm_failed`
        step.data["fallback"] = llm_off_reason(llm) if not llm.enabled else "llm_failed"
        if step.data["fallback"] == "budget":
            step.data["budget"] = llm.note()
        extracted = Extracted(extract_offline(
            message.text, speaker=message.speaker, recent_messages=message.recent, known_names=sorted(known.names),
            occurred_at=message.occurred_at, known_aliases=known.aliases, known_types=known.types,
            embed=embedder.embed if config.offline_semantic_backoff else None,
        ), "offline")
    ex = extracted.extraction
    step.data["path"] = extracted.path
    step.candidates_out = len(ex.facts)
    step.data["entities"] = [e.name for e in ex.entities]
    step.data["relations"] = [f"{r.source} -[{r.rel_type}]-> {r.target}" for r in ex.relations]
    if methods := {f"{r.source} -[{r.rel_type}]-> {r.target}": r.method for r in ex.relations if r.method}:
        step.data["relation_methods"] = methods  # found by a frame over the parse, or the semantic back-off
    return extracted


def normalize(message: Message, extracted: Extracted, embedder: EmbedderClient, step: StepRecord) -> Extracted:
    """Drop what cannot be stored (reported in the result), rewrite aliases to canonical names,
    drop identity relations, dedup near-identical facts; embed the facts kept."""
    ex = extracted.extraction
    skipped = extraction_within_limits(ex)
    if skipped:
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
    vectors = embedder.embed([f.text for f in facts]) if facts else []
    kept = []
    # a fact is a near-copy only of one about the same subject: "Pip is Ana's greyhound" stays beside
    # "Ana got a greyhound called Pip", since each is what its own entity shows
    groups: dict[tuple[bool, str], list[int]] = {}
    for i, f in enumerate(facts):
        groups.setdefault((f.negated, normalize_alias(f.subject)), []).append(i)
    for group in groups.values():
        kept += [group[i] for i in semantic_dedup([vectors[i] for i in group],
                                                  message.config.semantic_dedup_threshold,
                                                  [facts[i].text for i in group])]
    kept.sort()
    step.candidates_in, step.candidates_out = len(ex.facts), len(kept)
    ex.facts = [facts[i] for i in kept]
    return Extracted(ex, extracted.path, [vectors[i] for i in kept], skipped)
