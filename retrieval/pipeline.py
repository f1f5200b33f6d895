"""The read pipeline as named steps over a `RetrieveContext` (plan → signals → fusion →
enhancement → rerank → format); each step is timed into the trace with candidates in/out."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from datetime import datetime

import numpy as np

from graphs.entity_graph import agent_graph, neighbourhood_graph, personalized_pagerank
from memories.models import Agent
from memories.pipeline.trace import StepRecord, Tracer
from memories.providers.embeddings import EmbedderClient
from memories.providers.llm import LLMClient, LLMError
from memories.tokens import count_tokens
from retrieval import selectors, signals
from retrieval.concurrency import collect, start_all
from retrieval.config import RetrievalConfig
from retrieval.formatting import ContextLine, format_context
from retrieval.fusion import (
    decayed_confidence,
    fold_by_source,
    normalize_max,
    pattern_boost,
    recency,
    rerank_blend,
    rrf,
    weighted,
)
from retrieval.planner import RetrievalPlan, plan_query
from retrieval.vector_indexes import VectorScope, vector_scopes

FACT_SIGNALS = ("semantic", "keyword", "graph", "temporal", "pattern")
EVENT_SIGNALS = ("event_semantic", "event_keyword", "event_temporal")


@dataclass
class Candidate:
    key: str
    kind: str
    id: int
    scores: dict = field(default_factory=dict)
    final: float = 0.0
    via: str = ""  # "signals" | "spreading"


@dataclass
class RetrieveContext:
    agent: Agent
    query: str
    as_of: datetime | None
    now: datetime
    limit: int
    hints: list[str]
    config: RetrievalConfig
    llm: LLMClient
    embedder: EmbedderClient
    tracer: Tracer
    plan: RetrievalPlan | None = None
    vector: np.ndarray | None = None
    reference: datetime | None = None
    rankings: dict[str, list[signals.Hit]] = field(default_factory=dict)
    candidates: dict[str, Candidate] = field(default_factory=dict)
    facts: dict[int, selectors.FactRow] = field(default_factory=dict)
    events: dict[int, selectors.EventRow] = field(default_factory=dict)
    ordered: list[Candidate] = field(default_factory=list)
    pending: dict = field(default_factory=dict)  # signals already started (name → future)
    graph: object | None = None  # the entity graph the graph signal used (networkx.Graph)
    scopes: dict[str, VectorScope] = field(default_factory=dict)  # per kind: rows, own vector index
    context: str = ""

    @property
    def weights(self) -> dict[str, float]:
        """The signal weights for this query's intent (the plan's lookup / enumeration)."""
        if self.plan is not None and self.plan.intent == "enumeration":
            return self.config.enumeration_signal_weights
        return self.config.signal_weights
    context_tokens: int = 0


def plan(ctx: RetrieveContext, step: StepRecord) -> None:
    """Deterministic plan; entities from aliases + hints, expanded by one hop."""
    found = selectors.entities_in_query(agent=ctx.agent, query=ctx.query)
    hinted = selectors.entities_for_hints(agent=ctx.agent, hints=ctx.hints) if ctx.hints else []
    seeds = list(dict.fromkeys([*found, *hinted]))
    ctx.plan = plan_query(ctx.query, now=ctx.now, entity_ids=seeds,
                          known_types=selectors.known_types(agent=ctx.agent),
                          trivial_max_chars=ctx.config.trivial_max_chars)
    expansion = selectors.one_hop(agent=ctx.agent, entity_ids=seeds, as_of=ctx.as_of) if seeds else []
    step.data.update(ctx.plan.as_dict())
    step.data["entities_sources"] = {"deterministic": found, "hints": hinted, "expansion": expansion}
    step.candidates_out = len(seeds)


def embed_query(ctx: RetrieveContext, step: StepRecord) -> None:
    """The query vector. BM25 needs none: its searches start first and run meanwhile."""
    ctx.pending = start_all({name: _timed(fn) for name, fn in _keyword_tasks(ctx).items()},
                            parallel=ctx.config.parallel_signals)
    ctx.vector = ctx.embedder.embed([ctx.query])[0]
    ctx.scopes = vector_scopes(agent_id=ctx.agent.id)
    ctx.reference = selectors.reference_time(agent=ctx.agent, as_of=ctx.as_of) or ctx.now


def _graph_hits(ctx: RetrieveContext) -> tuple[list[signals.Hit], dict]:
    seeds = ctx.plan.entity_ids
    if not seeds:
        return [], {"seeds": []}
    hops = ctx.config.graph_max_hops + (1 if ctx.plan.broad_query else 0)
    # now: the cached graph; as of a past moment: just the seeds' neighbourhood then
    graph = (agent_graph(ctx.agent) if ctx.as_of is None
             else neighbourhood_graph(ctx.agent, seeds, max_hops=hops, as_of=ctx.as_of))
    scores = personalized_pagerank(graph, seeds, alpha=ctx.config.ppr_alpha, max_hops=hops)
    ppr = normalize_max(scores.ppr)
    decay = ctx.config.graph_hop_decay
    mentioned = set(seeds)
    entity_scores = {
        e: ppr[e] * (decay[min(h, len(decay) - 1)] if h else 1.0)
        * (ctx.config.graph_query_bonus if e in mentioned else 1.0)
        for e, h in scores.hops.items()
    }
    ctx.graph = graph
    hits, info = signals.graph_facts(agent_id=ctx.agent.id, entity_scores=normalize_max(entity_scores),
                                     vector=ctx.vector, limit=ctx.config.candidate_pool, config=ctx.config,
                                     as_of=ctx.as_of, graph=graph, scope=ctx.scopes.get("fact"))
    return hits, {"seeds": seeds, "graph_nodes": graph.number_of_nodes(), "reached": len(scores.hops), **info}


def _timed(fn):
    def run():
        started = time.perf_counter()
        out = fn()
        return out, round((time.perf_counter() - started) * 1000, 2)
    return run


def _keyword_tasks(ctx: RetrieveContext) -> dict:
    c, pool, aid, weights = ctx.config, ctx.config.candidate_pool, ctx.agent.id, ctx.weights
    tasks = {}
    if weights.get("keyword", 0) > 0:
        tasks["keyword"] = lambda: signals.keyword(agent_id=aid, kind="fact", query=ctx.query, limit=pool, config=c,
                                                   as_of=ctx.as_of)
    if c.include_events and weights.get("event_keyword", 0) > 0:
        tasks["event_keyword"] = lambda: signals.keyword(agent_id=aid, kind="event", query=ctx.query, limit=pool,
                                                         config=c, as_of=ctx.as_of)
    return tasks


def retrieve_signals(ctx: RetrieveContext, step: StepRecord) -> None:
    """Semantic, keyword and graph signals (facts and events), plus the date window and
    aggregation patterns when the plan has them — concurrently (BM25 started with the query
    embedding)."""
    c, weights, window = ctx.config, ctx.weights, ctx.plan.window

    def nearest(kind: str, window=None):
        return lambda: signals.semantic(agent_id=ctx.agent.id, kind=kind, vector=ctx.vector, limit=c.candidate_pool,
                                        config=c, as_of=ctx.as_of, window=window, scope=ctx.scopes[kind])

    tasks = {}
    if weights.get("semantic", 0) > 0:
        tasks["semantic"] = nearest("fact")
    if weights.get("graph", 0) > 0:
        tasks["graph"] = lambda: _graph_hits(ctx)
    if c.include_events and weights.get("event_semantic", 0) > 0:
        tasks["event_semantic"] = nearest("event")
    if window is not None and weights.get("temporal", 0) > 0:
        tasks["temporal"] = nearest("fact", window)
    if window is not None and c.include_events and weights.get("event_temporal", 0) > 0:
        tasks["event_temporal"] = nearest("event", window)
    started = start_all({name: _timed(fn) for name, fn in tasks.items()}, parallel=c.parallel_signals)
    results = collect({**ctx.pending, **started})
    ctx.pending = {}
    for name, ((hits, info), ms) in results.items():
        ctx.rankings[name] = hits
        step.data[name] = {"count": len(hits), "ms": ms, **info}
    if (ctx.plan.pattern_types or ctx.plan.pattern_rel_types) and weights.get("pattern", 0) > 0:
        ids = selectors.pattern_facts(agent=ctx.agent, entity_types=ctx.plan.pattern_types,
                                      rel_types=ctx.plan.pattern_rel_types, speaker_entity_ids=ctx.plan.entity_ids,
                                      as_of=ctx.as_of, limit=c.candidate_pool)
        ctx.rankings["pattern"] = [signals.Hit("fact", i, 1.0 / (n + 1)) for n, i in enumerate(ids)]
        step.data["pattern"] = {"count": len(ids)}
    step.candidates_out = len({h.key for hits in ctx.rankings.values() for h in hits})


def _raw_scores(ctx: RetrieveContext) -> None:
    """Every candidate's per-signal scores (keyword normalized by the best hit)."""
    for name, hits in ctx.rankings.items():
        top = max((h.score for h in hits), default=0.0) or 1.0
        for hit in hits:
            cand = ctx.candidates.setdefault(hit.key, Candidate(hit.key, hit.kind, hit.id, via="signals"))
            label = {"event_semantic": "semantic", "event_keyword": "keyword", "event_temporal": "temporal"}.get(
                name, name)
            value = hit.score / top if label in {"keyword", "graph", "pattern"} else hit.score
            cand.scores[label] = max(cand.scores.get(label, 0.0), round(value, 6))


def _load_rows(ctx: RetrieveContext, keys, *, need_cosine: bool = False) -> dict[str, float]:
    """Rows of candidates not loaded yet; with `need_cosine`, also the query cosine of those
    that no semantic list scored (returned by candidate key)."""
    fact_ids = [int(k[2:]) for k in keys if k.startswith("f:") and int(k[2:]) not in ctx.facts]
    event_ids = [int(k[2:]) for k in keys if k.startswith("e:") and int(k[2:]) not in ctx.events]
    vector = ctx.vector if need_cosine else None
    facts, fact_sims = selectors.facts_for_rows(agent=ctx.agent, ids=fact_ids, vector=vector)
    events, event_sims = selectors.events_for_rows(agent=ctx.agent, ids=event_ids, vector=vector)
    ctx.facts.update(facts)
    ctx.events.update(events)
    return {**{f"f:{i}": s for i, s in fact_sims.items()}, **{f"e:{i}": s for i, s in event_sims.items()}}


def fuse(ctx: RetrieveContext, step: StepRecord) -> None:
    """RRF (k = 60, weighted per signal) by default; the reference's weighted formula as the
    alternative. Recency is measured against the query's reference time."""
    _raw_scores(ctx)
    c = ctx.config
    for key, sim in _load_rows(ctx, ctx.candidates, need_cosine=True).items():
        ctx.candidates[key].scores.setdefault("semantic", round(sim, 6))
    ctx.candidates = {k: v for k, v in ctx.candidates.items() if _row(ctx, v) is not None}
    merged = _merged_rankings(ctx) if c.rrf_merge_kinds else {n: [h.key for h in hits] for n, hits in
                                                                   ctx.rankings.items()}
    fused = rrf(merged, k=c.rrf_k, weights=ctx.weights)
    fused = normalize_max(fused)
    convex = _convex(ctx) if c.fusion == "convex" else {}
    for cand in ctx.candidates.values():
        row = _row(ctx, cand)
        moment = row.valid_from if cand.kind == "fact" else row.occurred_at
        cand.scores["recency"] = round(recency(moment, ctx.reference, c.recency_half_life_days), 6)
        if cand.kind == "fact":
            cand.scores["importance"] = row.importance
            cand.scores["confidence"] = round(decayed_confidence(row.confidence, moment, ctx.reference,
                                                                 c.confidence_half_life_days), 6)
        if c.fusion == "convex":
            cand.final = convex.get(cand.key, 0.0)
        elif c.fusion == "weighted":
            relevance = max(cand.scores.get("semantic", 0.0), cand.scores.get("keyword", 0.0))
            cand.final = weighted(relevance, cand.scores["recency"], cand.scores.get("importance", 0.5),
                                  c.score_weights)
        else:
            cand.final = fused.get(cand.key, 0.0)
    step.candidates_in = step.candidates_out = len(ctx.candidates)
    step.data["fusion"] = c.fusion


LABELS = {"event_semantic": "semantic", "event_keyword": "keyword", "event_temporal": "temporal"}


def _merged_rankings(ctx: RetrieveContext) -> dict[str, list[str]]:
    """One ranking per signal: facts and events of the same signal merged by their (per-kind
    max-normalized) scores, so correlated lists don't each get a full RRF vote."""
    merged: dict[str, list[tuple[float, str]]] = {}
    for name, hits in ctx.rankings.items():
        top = max((h.score for h in hits), default=0.0) or 1.0
        scale = top if name.endswith("keyword") else 1.0
        merged.setdefault(LABELS.get(name, name), []).extend((h.score / scale, h.key) for h in hits)
    return {label: [key for _, key in sorted(items, key=lambda x: -x[0])] for label, items in merged.items()}


COSINE_LISTS = {"semantic", "event_semantic", "temporal", "event_temporal"}


def _convex(ctx: RetrieveContext) -> dict[str, float]:
    """Σ weight × normalized score per signal: one strong signal can win on its own."""
    out: dict[str, float] = {}
    for name, hits in ctx.rankings.items():
        weight = ctx.weights.get(name, 0.0)
        if not hits or weight <= 0:
            continue
        hi = max(h.score for h in hits)
        # cosine lists are scaled from the similarity floor (stable on short lists), the others
        # (BM25, graph, pattern: unbounded) by their best hit
        lo = min(ctx.config.min_similarity, hi) if name in COSINE_LISTS else 0.0
        for hit in hits:
            share = (hit.score - lo) / (hi - lo) if hi > lo else 1.0
            out[hit.key] = out.get(hit.key, 0.0) + weight * share
    return normalize_max(out)


def _row(ctx: RetrieveContext, cand: Candidate):
    return ctx.facts.get(cand.id) if cand.kind == "fact" else ctx.events.get(cand.id)


def enhance(ctx: RetrieveContext, step: StepRecord) -> None:
    """Spreading activation from the top facts' entities through relationships, and the
    reinforcement pattern boost."""
    c = ctx.config
    step.candidates_in = len(ctx.candidates)
    added = 0
    if c.spreading_activation_hops > 0:
        seeds = sorted((x for x in ctx.candidates.values() if x.kind == "fact"), key=lambda x: -x.final)[:5]
        frontier = {ctx.facts[s.id].entity_id: s.final for s in seeds}
        visited = set(frontier)
        for hop in range(1, c.spreading_activation_hops + 1):
            neighbours = selectors.one_hop(agent=ctx.agent, entity_ids=list(frontier), as_of=ctx.as_of,
                                           limit=c.spreading_related_entities)
            neighbours = [n for n in neighbours if n not in visited]
            if not neighbours:
                break
            parent = max(frontier.values())
            hits, _ = signals.graph_facts(agent_id=ctx.agent.id, entity_scores={n: 1.0 for n in neighbours},
                                          vector=ctx.vector, limit=c.spreading_facts_per_entity * len(neighbours),
                                          config=c, as_of=ctx.as_of, graph=ctx.graph,
                                          scope=ctx.scopes.get("fact"))
            decay = c.spreading_decay_factor ** hop
            for hit in hits:
                if hit.key not in ctx.candidates:
                    ctx.candidates[hit.key] = Candidate(hit.key, "fact", hit.id, {"spreading": round(decay, 6)},
                                                        final=parent * decay * hit.score, via="spreading")
                    added += 1
            visited.update(neighbours)
            frontier = {n: parent * decay for n in neighbours}
        _load_rows(ctx, ctx.candidates)
    added += _contiguity(ctx)
    for cand in ctx.candidates.values():
        if cand.kind == "fact" and cand.id in ctx.facts:
            boost = pattern_boost(ctx.facts[cand.id].reinforcement_count, c.pattern_boost_max)
            if boost:
                cand.scores["pattern"] = round(cand.scores.get("pattern", 0.0) + boost, 6)
                cand.final += boost
    step.candidates_out = len(ctx.candidates)
    step.data["spreading_candidates_unique"] = added


def _source_event_id(ctx: RetrieveContext, cand: Candidate) -> int | None:
    return ctx.facts[cand.id].source_event_id if cand.kind == "fact" else cand.id


def _contiguity(ctx: RetrieveContext) -> int:
    """The messages said right before and after the top hits join the candidates."""
    c = ctx.config
    if c.contiguity_seeds <= 0:
        return 0
    top = sorted(ctx.candidates.values(), key=lambda x: (-x.final, x.key))[: c.contiguity_seeds]
    parent = {}
    for cand in top:
        source = _source_event_id(ctx, cand)
        if source is not None:
            parent[source] = max(parent.get(source, 0.0), cand.final)
    pairs = selectors.neighbour_events(agent=ctx.agent, event_ids=list(parent), window=c.contiguity_window,
                                       max_gap_minutes=c.contiguity_max_gap_minutes, as_of=ctx.as_of)
    added = 0
    for seed, neighbour in pairs:
        key, score = f"e:{neighbour}", parent[seed] * c.contiguity_decay
        cand = ctx.candidates.get(key)
        if cand is None:
            cand = ctx.candidates[key] = Candidate(key, "event", neighbour, via="contiguity")
            added += 1
        if score > cand.final:
            cand.final = score
            cand.scores["contiguity"] = round(c.contiguity_decay, 6)
    _load_rows(ctx, ctx.candidates)
    return added


RERANK_SCHEMA = {
    "type": "object",
    "required": ["scores"],
    "properties": {"scores": {"type": "array", "items": {
        "type": "object", "required": ["index", "score"],
        "properties": {"index": {"type": "integer"}, "score": {"type": "number"}}}}},
}


def rerank(ctx: RetrieveContext, step: StepRecord) -> None:
    """LLM relevance scores for the top candidates, blended multiplicatively; on any failure
    the pre-rerank order is kept."""
    c = ctx.config
    ranked = sorted(ctx.candidates.values(), key=lambda x: (-x.final, x.key))
    if not (ctx.llm.enabled and c.enable_reranker) or not ranked:
        step.status = "skipped"
        ctx.ordered = ranked
        return
    top = ranked[: c.reranker_top_n]
    listing = "\n".join(f"[{i}] {_text(ctx, cand)}" for i, cand in enumerate(top))
    try:
        reply = ctx.llm.complete_json(
            system="Score how relevant each memory is to the query, from 0 (irrelevant) to 1 (exactly what is "
                   "asked). Reply as JSON {\"scores\": [{\"index\": i, \"score\": s}, ...]}.",
            user=f"Query: {ctx.query}\n\nMemories:\n{listing}", schema=RERANK_SCHEMA, schema_name="rerank",
            timeout=c.reranker_timeout_sec)
    except LLMError as exc:
        ctx.tracer.add_usage(step, exc.usage)
        step.data["error"] = str(exc)
        ctx.ordered = ranked
        return
    ctx.tracer.add_usage(step, reply.usage)
    given = {item["index"]: float(item["score"]) for item in reply.data.get("scores", [])
             if isinstance(item.get("index"), int) and 0 <= item["index"] < len(top)}
    for i, cand in enumerate(top):
        if i in given:
            score = min(1.0, max(0.0, given[i]))
            cand.scores["reranker"] = round(score, 6)
            cand.final = rerank_blend(cand.final, score, weight=c.reranker_weight, veto=c.reranker_veto)
    step.candidates_in = len(top)
    ctx.ordered = sorted(ranked, key=lambda x: (-x.final, x.key))


def _text(ctx: RetrieveContext, cand: Candidate) -> str:
    row = _row(ctx, cand)
    return row.text if cand.kind == "fact" else f"{row.speaker}: {row.text}"


def select(ctx: RetrieveContext, step: StepRecord) -> None:
    """Items grouped by the message they cite (support and diversity), min_score, then the
    limit; an event already cited by a higher-ranked fact is folded into it."""
    step.candidates_in = len(ctx.ordered)
    c = ctx.config
    # an item with no source message (an operator's correction) is its own group
    folded = fold_by_source([(x.key, _source_event_id(ctx, x) or x.key, x.final) for x in ctx.ordered],
                            support=c.source_support, penalty=c.diversity_penalty)
    for cand in ctx.ordered:
        if folded[cand.key] < cand.final:
            cand.scores["diversity"] = c.diversity_penalty
        cand.final = folded[cand.key]
    ranked = sorted(ctx.ordered, key=lambda x: (-x.final, x.key))
    cited, out = set(), []
    for cand in ranked:
        if cand.final < ctx.config.min_score:
            continue
        if cand.kind == "fact":
            cited.add(ctx.facts[cand.id].source_event_id)
        elif cand.id in cited:
            continue
        out.append(cand)
        if len(out) >= ctx.limit:
            break
    for cand in out:
        cand.scores["final"] = round(cand.final, 6)
    ctx.ordered = out
    step.candidates_out = len(out)


def format_step(ctx: RetrieveContext, step: StepRecord) -> None:
    lines = []
    for cand in ctx.ordered:
        row = _row(ctx, cand)
        if cand.kind == "fact":
            section = "patterns" if row.reinforcement_count >= 2 or "pattern" in ctx.rankings and any(
                h.id == cand.id for h in ctx.rankings["pattern"]) else "facts"
            citation = _citation_label(row.source_event)
            lines.append(ContextLine(section, cand.key, row.text, citation))
        else:
            date = row.occurred_at.date().isoformat()
            lines.append(ContextLine("events", cand.key, f"({date}) {row.speaker}: {row.text}",
                                     _citation_label(row)))
    ctx.context, ctx.context_tokens, included = format_context(
        lines, max_tokens=ctx.config.context_max_tokens, tiers=ctx.config.context_tiers, count=count_tokens)
    step.candidates_in, step.candidates_out = len(lines), len(included)
    step.data["context_tokens"] = ctx.context_tokens


def _citation_label(event: selectors.EventRow | None) -> str:
    if event is None:
        return ""
    return f"event {event.id}" + (f" / {event.external_id}" if event.external_id else "")


STEPS = [
    ("plan", plan),
    ("embed_query", embed_query),
    ("signals", retrieve_signals),
    ("fusion", fuse),
    ("enhancement", enhance),
    ("rerank", rerank),
    ("select", select),
    ("format", format_step),
]
