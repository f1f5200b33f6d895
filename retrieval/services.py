"""`memory_retrieve`: a query in, a ranked, cited, token-budgeted context out."""

from __future__ import annotations

import time
from datetime import datetime

from django.utils import timezone

from memories.budgets import llm_within_budget
from memories.config import overrides_within_ceilings
from memories.errors import DomainError
from memories.metrics import RETRIEVE_SECONDS
from memories.models import Agent
from memories.models.visibility import Moment
from memories.pipeline.trace import Tracer
from memories.providers.embeddings import EmbedderClient, get_embedder
from memories.providers.llm import LLMClient, get_llm_client
from memories.services.facts import facts_mark_accessed
from memories.services.traces import retrieval_run_record, run_id_reserve
from retrieval import pipeline
from retrieval.concurrency import fire_and_forget, retrieval_running
from retrieval.config import RetrievalConfig, retrieval_config
from retrieval.keys import CandidateKey
from retrieval.results import Citation, RetrievedEvent, RetrievedFact, RetrieveResult

MAX_QUERY_CHARS = 4000


def memory_retrieve(
    *, agent: Agent, query: str, as_of: datetime | None = None, valid_at: datetime | None = None,
    recorded_as_of: datetime | None = None, limit: int = 10, entity_hints=(),
    config_overrides: dict | None = None, preset: str = "default", now: datetime | None = None,
    llm: LLMClient | None = None, embedder: EmbedderClient | None = None, record: bool = True,
) -> RetrieveResult:
    """Plan → signals (semantic, BM25, graph) → fusion → enhancement → rerank → format.
    `as_of` answers with what the agent knew then, `valid_at` about another moment of the world,
    `recorded_as_of` with what the database held then (memories.models.visibility); `now` is
    the time relative expressions ("yesterday") are resolved against (default: as_of, else the
    wall clock)."""
    started = time.perf_counter()
    _validate(query, limit, {"as_of": as_of, "valid_at": valid_at, "recorded_as_of": recorded_as_of})
    overrides_within_ceilings(RetrievalConfig, config_overrides)
    config = retrieval_config(config_overrides, preset)
    moment = Moment(as_of=as_of, valid_at=valid_at, recorded_as_of=recorded_as_of)
    request = pipeline.Request(
        agent=agent, query=query.strip(), as_of=as_of, now=now or as_of or timezone.now(),
        when=None if moment.is_now else moment, limit=limit, hints=[str(h) for h in entity_hints], config=config,
    )
    # past the agent's LLM budget the reranker is skipped (the budget is read only if it is wanted)
    llm = llm_within_budget(agent=agent, llm=llm or get_llm_client())
    with retrieval_running():
        ctx = pipeline.run(request, llm=llm, embedder=embedder or get_embedder(), tracer=Tracer())
    result = _result(ctx)
    result.duration_ms = round((time.perf_counter() - started) * 1000, 3)
    RETRIEVE_SECONDS.observe(result.duration_ms / 1000)
    if record:
        result.trace_id = run_id_reserve()
        fire_and_forget(lambda: _record(agent, ctx, result))
    return result


def _validate(query, limit, moments: dict) -> None:
    if not isinstance(query, str):
        raise DomainError("query must be a string", {"query": "expected a string"})
    if len(query) > MAX_QUERY_CHARS:
        raise DomainError(f"query is longer than {MAX_QUERY_CHARS} characters", {"query": "too long"})
    if not isinstance(limit, int) or isinstance(limit, bool) or not 1 <= limit <= 100:
        raise DomainError("limit must be an integer from 1 to 100", {"limit": "1..100"})
    for name, value in moments.items():
        if value is not None and (not isinstance(value, datetime) or value.tzinfo is None):
            raise DomainError(f"{name} must be a timezone-aware datetime", {name: "ISO-8601 with timezone"})


def _iso(moment) -> str | None:
    return moment.isoformat() if moment else None


def _citation(event) -> list[Citation]:
    if event is None:
        return []
    return [Citation(event.id, event.external_id, _iso(event.occurred_at), event.speaker)]


def _result(ctx) -> RetrieveResult:
    when = ctx.request.when
    result = RetrieveResult(query=ctx.query, strategy=ctx.plan.strategy, as_of=_iso(ctx.as_of),
                            valid_at=_iso(when.valid_at) if when else None,
                            recorded_as_of=_iso(when.recorded_as_of) if when else None)
    for rank, cand in enumerate(ctx.ordered, start=1):
        result.ranking.append(str(cand.key))  # "f:<id>" / "e:<id>": what clients read
        if cand.is_fact:
            f = ctx.facts[cand.id]
            result.facts.append(RetrievedFact(
                id=f.id, text=f.text, entity=f.entity.key, entity_name=f.entity.display_name,
                score=round(cand.final, 6), rank=rank, scores=cand.scores, citations=_citation(f.source_event),
                valid_from=_iso(f.valid_from), valid_to=_iso(f.valid_to), recorded_at=_iso(f.recorded_at),
                invalidated_at=_iso(f.invalidated_at), source_context=f.source_context))
        else:
            e = ctx.events[cand.id]
            result.events.append(RetrievedEvent(
                id=e.id, text=e.text, speaker=e.speaker, occurred_at=_iso(e.occurred_at),
                external_id=e.external_id, score=round(cand.final, 6), rank=rank, scores=cand.scores))
    result.context, result.context_tokens = ctx.context, ctx.context_tokens
    result.total_candidates = len(ctx.candidates)
    result.tokens_used = ctx.tracer.usage.as_dict()
    result.trace = [s.as_dict() for s in ctx.tracer.steps]
    return result


def _record(agent: Agent, ctx, result: RetrieveResult) -> None:
    """Off the hot path: access statistics of the returned facts and the persisted trace."""
    facts_mark_accessed(agent=agent, fact_ids=[f.id for f in result.facts])
    retrieval_run_record(
        agent=agent, run_id=result.trace_id, query=ctx.query, duration_ms=result.duration_ms, tracer=ctx.tracer,
        params={"as_of": result.as_of, "valid_at": result.valid_at, "recorded_as_of": result.recorded_as_of,
                "limit": ctx.limit, "hints": ctx.hints},
        result={"ranking": result.ranking, "context_tokens": result.context_tokens,
                "total_candidates": result.total_candidates,
                # "why was this retrieved": each returned item's score by signal, for the trace page
                "scores": {**{str(CandidateKey.fact(f.id)): f.scores for f in result.facts},
                           **{str(CandidateKey.event(e.id)): e.scores for e in result.events}}},
    )
