"""The read pipeline: `run` calls its steps in order, each timed into the trace under its name
with candidates in / out:

    plan → embed_query → signals → fusion → enhancement → rerank → select → format

Each step takes the `Request` and the values earlier steps returned, and returns its own: a
`RetrievalPlan`, a `Search`, `Rankings`, a `Pool` of candidates (which enhancement grows), the
ranked candidates, the selected ones, a `FormattedContext`. A skipped plan ends the run."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import numpy as np

from graphs.entity_graph import (
    agent_graph,
    history_graph_cached,
    history_graph_due,
    history_graph_refresh,
    neighbourhood_graph,
    personalized_pagerank,
)
from memories.budgets import llm_off_reason
from memories.models import Agent
from memories.models.visibility import Moment
from memories.pipeline.trace import StepRecord, Tracer
from memories.providers.embeddings import EmbedderClient
from memories.providers.llm import LLMClient
from memories.redaction import REDACTED_KEY_PREFIX
from memories.tokens import count_tokens_each
from retrieval import rerank as reranker
from retrieval import selectors, signals
from retrieval.concurrency import collect, fire_and_forget, start_all
from retrieval.config import FormatSettings, Fusion, RetrievalConfig
from retrieval.formatting import ContextLine, format_context
from retrieval.fusion import (
    convex,
    decayed_confidence,
    fold_by_source,
    merged_lists,
    normalize_max,
    pattern_boost,
    recency,
    rerank_blend,
    rrf,
    speaker_focus,
    weighted,
)
from retrieval.keys import CandidateKey
from retrieval.planner import RetrievalPlan, plan_query
from retrieval.vector_indexes import VectorScope

# a signal's event lists share its label (and its RRF vote when `rrf_merge_kinds`)
LABELS = {"event_semantic": "semantic", "event_keyword": "keyword", "event_temporal": "temporal"}
COSINE_LISTS = {"semantic", "event_semantic", "temporal", "event_temporal"}
KEYWORD_LISTS = {"keyword", "event_keyword"}


@dataclass(frozen=True)
class Request:
    agent: Agent
    query: str
    as_of: datetime | None
    now: datetime
    # what every signal may see (memories.models.visibility): None is the current view
    when: Moment | None
    limit: int
    hints: list[str]
    config: RetrievalConfig


@dataclass
class Search:
    """What the signal searches share: the query vector, the agent's vector scopes per kind,
    the time recency is measured from, and the BM25 searches already running."""

    vector: np.ndarray
    scopes: dict[str, VectorScope]
    reference: datetime
    graph_version: int
    started: dict = field(default_factory=dict)  # name → future of ((hits, info), ms)


@dataclass
class Rankings:
    """Each signal list's hits, best first, and the entity graph the graph signal walked."""

    lists: dict[str, list[signals.Hit]] = field(default_factory=dict)
    graph: Any = None  # networkx.Graph


@dataclass
class Candidate:
    key: CandidateKey
    scores: dict = field(default_factory=dict)
    final: float = 0.0
    via: str = ""  # "signals" | "spreading" | "contiguity"

    id = property(lambda self: self.key.id)
    is_fact = property(lambda self: self.key.is_fact)


def best_first(candidates: Iterable[Candidate]) -> list[Candidate]:
    """Highest score first; ties in the order of the written keys ("e:10" before "e:9" before
    "f:1"), the order results have always had."""
    return sorted(candidates, key=lambda x: (-x.final, str(x.key)))


@dataclass
class Rows:
    """The candidates' rows, each loaded once."""

    agent: Agent
    facts: dict[int, selectors.FactRow] = field(default_factory=dict)
    events: dict[int, selectors.EventRow] = field(default_factory=dict)

    def load(self, keys: Iterable[CandidateKey], vector: np.ndarray | None = None) -> dict[CandidateKey, float]:
        """Rows of the keys not loaded yet; with `vector`, their cosine to it (by key)."""
        keys = list(keys)
        fact_ids = [k.id for k in keys if k.is_fact and k.id not in self.facts]
        event_ids = [k.id for k in keys if not k.is_fact and k.id not in self.events]
        facts, fact_sims = selectors.facts_for_rows(agent=self.agent, ids=fact_ids, vector=vector)
        events, event_sims = selectors.events_for_rows(agent=self.agent, ids=event_ids, vector=vector)
        self.facts.update(facts)
        self.events.update(events)
        return {**{CandidateKey.fact(i): s for i, s in fact_sims.items()},
                **{CandidateKey.event(i): s for i, s in event_sims.items()}}

    def of(self, cand: Candidate) -> selectors.FactRow | selectors.EventRow | None:
        return self.facts.get(cand.id) if cand.is_fact else self.events.get(cand.id)

    def source_event_id(self, cand: Candidate) -> int | None:
        return self.facts[cand.id].source_event_id if cand.is_fact else cand.id

    def speaker(self, cand: Candidate) -> str | None:
        """Who said the message the candidate is or was drawn from."""
        row = self.of(cand)
        event = row.source_event if cand.is_fact else row
        return event.speaker if event else None

    def text(self, cand: Candidate) -> str:
        row = self.of(cand)
        return row.text if cand.is_fact else f"{row.speaker}: {row.text}"


@dataclass
class Pool:
    """The candidates by key, and their rows."""

    candidates: dict[CandidateKey, Candidate]
    rows: Rows

    def ranked(self) -> list[Candidate]:
        return best_first(self.candidates.values())


@dataclass
class FormattedContext:
    text: str = ""
    tokens: int = 0


@dataclass
class Retrieval:
    """One run: the request, its trace and what the steps returned (what the service reads)."""

    request: Request
    tracer: Tracer
    plan: RetrievalPlan | None = None
    pool: Pool | None = None
    ordered: list[Candidate] = field(default_factory=list)  # the selected candidates, best first
    formatted: FormattedContext = field(default_factory=FormattedContext)

    query = property(lambda self: self.request.query)
    as_of = property(lambda self: self.request.as_of)
    limit = property(lambda self: self.request.limit)
    hints = property(lambda self: self.request.hints)
    candidates = property(lambda self: self.pool.candidates if self.pool else {})
    facts = property(lambda self: self.pool.rows.facts if self.pool else {})
    events = property(lambda self: self.pool.rows.events if self.pool else {})
    context = property(lambda self: self.formatted.text)
    context_tokens = property(lambda self: self.formatted.tokens)


def run(request: Request, *, llm: LLMClient, embedder: EmbedderClient, tracer: Tracer) -> Retrieval:
    out = Retrieval(request, tracer)

    def step(name: str, fn: Callable, *args):
        return tracer.run(name, lambda _, record: fn(*args, record), None)

    out.plan, state = step("plan", plan, request)
    if out.plan.strategy == "skip":
        return out
    search = step("embed_query", embed_query, request, out.plan, state, embedder)
    rankings = step("signals", retrieve_signals, request, out.plan, search)
    out.pool = step("fusion", fuse, request, out.plan, search, rankings)
    step("enhancement", enhance, request, search, rankings, out.pool)
    ranked = step("rerank", rerank, request, out.pool, llm, tracer)
    out.ordered = step("select", select, request, ranked, out.pool.rows)
    out.formatted = step("format", render, request.config.format, out.ordered, out.pool.rows, rankings)
    return out


def plan(request: Request, step: StepRecord) -> tuple[RetrievalPlan, selectors.AgentState]:
    """Deterministic plan; entities from aliases + hints, expanded by one hop. Also the agent's
    state, read first: its graph version keys what the names of earlier queries resolved to."""
    agent = request.agent
    state = selectors.agent_state(agent=agent)
    found = selectors.entities_in_query(agent=agent, query=request.query, version=state.graph_version)
    hinted = selectors.entities_for_hints(agent=agent, hints=request.hints) if request.hints else []
    seeds = list(dict.fromkeys([*found, *hinted]))
    result = plan_query(request.query, now=request.now, entity_ids=seeds,
                        known_types=selectors.known_types(agent=agent, version=state.graph_version),
                        trivial_max_chars=request.config.planner.trivial_max_chars)
    result.entity_names = sorted(set(found.values()))
    expansion = selectors.one_hop(agent=agent, entity_ids=seeds, as_of=request.when) if seeds else []
    step.data.update(result.as_dict())
    step.data["entities_sources"] = {"deterministic": found, "hints": hinted, "expansion": expansion}
    step.candidates_out = len(seeds)
    return result, state


def embed_query(request: Request, plan: RetrievalPlan, state: selectors.AgentState, embedder: EmbedderClient,
                step: StepRecord) -> Search:
    """The query vector. BM25 needs none: its searches start first and run meanwhile."""
    started = start_all({name: _timed(fn) for name, fn in _keyword_tasks(request, plan).items()},
                        parallel=request.config.candidates.parallel_signals)
    vector = embedder.embed([request.query])[0]
    # what "recent" is measured against: as_of, else the agent's latest message
    reference = request.as_of or state.latest_event or request.now
    return Search(vector, state.scopes, reference, state.graph_version, started)


def _timed(fn):
    def run():
        started = time.perf_counter()
        out = fn()
        return out, round((time.perf_counter() - started) * 1000, 2)
    return run


def _keyword_tasks(request: Request, plan: RetrievalPlan) -> dict:
    c, aid = request.config, request.agent.id
    pool, weights = c.candidates.candidate_pool, c.scoring.weights_for(plan.intent)
    tasks = {}
    # a fact names its subject wherever the message said "I" or "she": the names count once in facts
    names = " ".join(plan.entity_names)
    if weights.get("keyword", 0) > 0:
        tasks["keyword"] = lambda: signals.keyword(agent_id=aid, kind="fact", query=request.query, limit=pool,
                                                   config=c, as_of=request.when, names=names,
                                                   name_tf_cap=c.keyword.fact_name_tf_cap)
    if c.candidates.include_events and weights.get("event_keyword", 0) > 0:
        tasks["event_keyword"] = lambda: signals.keyword(agent_id=aid, kind="event", query=request.query,
                                                         limit=pool, config=c, as_of=request.when)
    return tasks


def _graph_hits(request: Request, plan: RetrievalPlan, search: Search) -> tuple[list[signals.Hit], dict, Any]:
    """The facts of the entities Personalized PageRank reaches from the plan's entities, and
    the graph it walked."""
    seeds, c, as_of = plan.entity_ids, request.config, request.when
    if not seeds:
        return [], {"seeds": []}, None
    g = c.graph
    hops = g.graph_max_hops + (1 if plan.broad_query else 0)
    # now: the cached graph; as of a past moment: just the seeds' neighbourhood then
    graph = (agent_graph(request.agent, version=search.graph_version) if as_of is None
             else neighbourhood_graph(request.agent, seeds, max_hops=hops, as_of=as_of,
                                      history=_history(request, search.graph_version)))
    scores = personalized_pagerank(graph, seeds, alpha=g.ppr_alpha, max_hops=hops)
    ppr = normalize_max(scores.ppr)
    decay = g.graph_hop_decay
    mentioned = set(seeds)
    entity_scores = {
        e: ppr[e] * (decay[min(h, len(decay) - 1)] if h else 1.0) * (g.graph_query_bonus if e in mentioned else 1.0)
        for e, h in scores.hops.items()
    }
    hits, info = signals.graph_facts(agent_id=request.agent.id, entity_scores=normalize_max(entity_scores),
                                     vector=search.vector, limit=c.candidates.candidate_pool, config=c, as_of=as_of,
                                     graph=graph, scope=search.scopes.get("fact"))
    return hits, {"seeds": seeds, "graph_nodes": graph.number_of_nodes(), "reached": len(scores.hops), **info}, graph


def _history(request: Request, version: int):
    """The agent's history graph when the cache holds it at the current graph version; else
    None, and it is built in the background (at most every ANAMNESIS_HISTORY_GRAPH_MIN_INTERVAL)."""
    agent = request.agent
    history = history_graph_cached(agent, version)
    if history is None and history_graph_due(agent):
        fire_and_forget(lambda: history_graph_refresh(agent))
    return history


def retrieve_signals(request: Request, plan: RetrievalPlan, search: Search, step: StepRecord) -> Rankings:
    """Semantic, keyword and graph signals (facts and events), plus the date window and
    aggregation patterns when the plan has them — concurrently (BM25 started with the query
    embedding)."""
    c, window, as_of = request.config, plan.window, request.when
    weights = c.scoring.weights_for(plan.intent)
    rankings = Rankings()

    def nearest(kind: str, window=None):
        return lambda: signals.semantic(agent_id=request.agent.id, kind=kind, vector=search.vector,
                                        limit=c.candidates.candidate_pool, config=c, as_of=as_of, window=window,
                                        scope=search.scopes[kind])

    def graph():
        hits, info, rankings.graph = _graph_hits(request, plan, search)
        return hits, info

    tasks = {}
    if weights.get("semantic", 0) > 0:
        tasks["semantic"] = nearest("fact")
    if weights.get("graph", 0) > 0:
        tasks["graph"] = graph
    if c.candidates.include_events and weights.get("event_semantic", 0) > 0:
        tasks["event_semantic"] = nearest("event")
    if window is not None and weights.get("temporal", 0) > 0:
        tasks["temporal"] = nearest("fact", window)
    if window is not None and c.candidates.include_events and weights.get("event_temporal", 0) > 0:
        tasks["event_temporal"] = nearest("event", window)
    started = start_all({name: _timed(fn) for name, fn in tasks.items()}, parallel=c.candidates.parallel_signals)
    for name, ((hits, info), ms) in collect({**search.started, **started}).items():
        rankings.lists[name] = hits
        step.data[name] = {"count": len(hits), "ms": ms, **info}
    if (plan.pattern_types or plan.pattern_rel_types) and weights.get("pattern", 0) > 0:
        ids = selectors.pattern_facts(agent=request.agent, entity_types=plan.pattern_types,
                                      rel_types=plan.pattern_rel_types, speaker_entity_ids=plan.entity_ids,
                                      as_of=as_of, limit=c.candidates.candidate_pool)
        rankings.lists["pattern"] = [signals.Hit("fact", i, 1.0 / (n + 1)) for n, i in enumerate(ids)]
        step.data["pattern"] = {"count": len(ids)}
    step.candidates_out = len({h.key for hits in rankings.lists.values() for h in hits})
    return rankings


def _signal_candidates(rankings: Rankings) -> dict[CandidateKey, Candidate]:
    """Every hit's candidate with its per-signal scores (keyword, graph and pattern divided by
    their list's best hit; a fact and an event list of one signal share its label)."""
    candidates: dict[CandidateKey, Candidate] = {}
    for name, hits in rankings.lists.items():
        top = max((h.score for h in hits), default=0.0) or 1.0
        label = LABELS.get(name, name)
        for hit in hits:
            cand = candidates.setdefault(hit.key, Candidate(hit.key, via="signals"))
            value = hit.score / top if label in {"keyword", "graph", "pattern"} else hit.score
            cand.scores[label] = max(cand.scores.get(label, 0.0), round(value, 6))
    return candidates


def fuse(request: Request, plan: RetrievalPlan, search: Search, rankings: Rankings, step: StepRecord) -> Pool:
    """The signals' candidates that still exist, with recency (measured from the reference
    time), importance and decayed confidence, scored by the configured fusion (`fusion.py`)."""
    c = request.config
    rows = Rows(request.agent)
    candidates = _signal_candidates(rankings)
    for key, sim in rows.load(candidates, vector=search.vector).items():
        candidates[key].scores.setdefault("semantic", round(sim, 6))
    candidates = {k: v for k, v in candidates.items() if rows.of(v) is not None}
    for cand in candidates.values():
        row = rows.of(cand)
        moment = row.valid_from if cand.is_fact else row.occurred_at
        cand.scores["recency"] = round(recency(moment, search.reference, c.scoring.recency_half_life_days), 6)
        if cand.is_fact:
            cand.scores["importance"] = row.importance
            cand.scores["confidence"] = round(decayed_confidence(row.confidence, moment, search.reference,
                                                                 c.scoring.confidence_half_life_days), 6)
    fused = _fused(c, c.scoring.weights_for(plan.intent), rankings, candidates)
    for cand in candidates.values():
        cand.final = fused.get(cand.key, 0.0)
    step.candidates_in = step.candidates_out = len(candidates)
    step.data["fusion"] = c.scoring.fusion.value
    return Pool(candidates, rows)


def _fused(c: RetrievalConfig, weights: dict[str, float], rankings: Rankings,
           candidates: dict[CandidateKey, Candidate]) -> dict[CandidateKey, float]:
    """Only the configured fusion's scores, by candidate key."""
    scoring = c.scoring
    lists = {name: [(h.key, h.score) for h in hits] for name, hits in rankings.lists.items()}
    if scoring.fusion is Fusion.CONVEX:
        return convex(lists, weights, floor=c.candidates.min_similarity, floored=COSINE_LISTS)
    if scoring.fusion is Fusion.WEIGHTED:
        return {key: weighted(max(cand.scores.get("semantic", 0.0), cand.scores.get("keyword", 0.0)),
                              cand.scores["recency"], cand.scores.get("importance", 0.5), scoring.score_weights)
                for key, cand in candidates.items()}
    ranked = (merged_lists(lists, LABELS, by_best=KEYWORD_LISTS) if scoring.rrf_merge_kinds
              else {name: [key for key, _ in hits] for name, hits in lists.items()})
    return normalize_max(rrf(ranked, k=scoring.rrf_k, weights=weights))


def enhance(request: Request, search: Search, rankings: Rankings, pool: Pool, step: StepRecord) -> Pool:
    """Grows the pool: spreading activation from the top facts' entities through
    relationships, temporal contiguity, then the reinforcement pattern boost."""
    c, candidates, rows = request.config.enhancement, pool.candidates, pool.rows
    step.candidates_in = len(candidates)
    added = 0
    if c.spreading_activation_hops > 0:
        seeds = sorted((x for x in candidates.values() if x.is_fact), key=lambda x: -x.final)[:5]
        frontier = {rows.facts[s.id].entity_id: s.final for s in seeds}
        visited = set(frontier)
        for hop in range(1, c.spreading_activation_hops + 1):
            neighbours = selectors.one_hop(agent=request.agent, entity_ids=list(frontier), as_of=request.when,
                                           limit=c.spreading_related_entities)
            neighbours = [n for n in neighbours if n not in visited]
            if not neighbours:
                break
            parent = max(frontier.values())
            hits, _ = signals.graph_facts(agent_id=request.agent.id, entity_scores={n: 1.0 for n in neighbours},
                                          vector=search.vector, limit=c.spreading_facts_per_entity * len(neighbours),
                                          config=request.config, as_of=request.when, graph=rankings.graph,
                                          scope=search.scopes.get("fact"))
            decay = c.spreading_decay_factor ** hop
            for hit in hits:
                if hit.key not in candidates:
                    candidates[hit.key] = Candidate(hit.key, {"spreading": round(decay, 6)},
                                                    final=parent * decay * hit.score, via="spreading")
                    added += 1
            visited.update(neighbours)
            frontier = {n: parent * decay for n in neighbours}
        rows.load(candidates)
    added += _contiguity(request, pool)
    for cand in candidates.values():
        if cand.is_fact and cand.id in rows.facts:
            boost = pattern_boost(rows.facts[cand.id].reinforcement_count, c.pattern_boost_max)
            if boost:
                cand.scores["pattern"] = round(cand.scores.get("pattern", 0.0) + boost, 6)
                cand.final += boost
    step.candidates_out = len(candidates)
    step.data["spreading_candidates_unique"] = added
    return pool


def _contiguity(request: Request, pool: Pool) -> int:
    """The messages said right before and after the top hits join the candidates."""
    c = request.config.enhancement
    if c.contiguity_seeds <= 0:
        return 0
    parent = {}
    for cand in pool.ranked()[: c.contiguity_seeds]:
        source = pool.rows.source_event_id(cand)
        if source is not None:
            parent[source] = max(parent.get(source, 0.0), cand.final)
    pairs = selectors.neighbour_events(agent=request.agent, event_ids=list(parent), window=c.contiguity_window,
                                       max_gap_minutes=c.contiguity_max_gap_minutes, as_of=request.when)
    added = 0
    for seed, neighbour in pairs:
        key, score = CandidateKey.event(neighbour), parent[seed] * c.contiguity_decay
        cand = pool.candidates.get(key)
        if cand is None:
            cand = pool.candidates[key] = Candidate(key, via="contiguity")
            added += 1
        if score > cand.final:
            cand.final = score
            cand.scores["contiguity"] = round(c.contiguity_decay, 6)
    pool.rows.load(pool.candidates)
    return added


def rerank(request: Request, pool: Pool, llm: LLMClient, tracer: Tracer, step: StepRecord) -> list[Candidate]:
    """The candidates best first, after blending in the LLM's relevance scores for the top ones
    (multiplicatively, `rerank_blend`); on any failure the order before reranking."""
    c = request.config.rerank
    ranked = pool.ranked()
    if not (c.enable_reranker and ranked and llm.enabled):
        step.status = "skipped"
        step.data["reason"] = ("disabled" if not c.enable_reranker else "no candidates" if not ranked
                               else llm_off_reason(llm))
        if step.data["reason"] == "budget":
            step.data["budget"] = llm.note()
        return ranked
    top = ranked[: c.reranker_top_n]
    scored = reranker.relevance(llm, request.query, [pool.rows.text(cand) for cand in top],
                                timeout=c.reranker_timeout_sec)
    tracer.add_usage(step, scored.usage)
    if scored.error is not None:
        step.data["error"] = scored.error
        return ranked
    for i, cand in enumerate(top):
        if i in scored.scores:
            score = scored.scores[i]
            cand.scores["reranker"] = round(score, 6)
            cand.final = rerank_blend(cand.final, score, weight=c.reranker_weight, veto=c.reranker_veto)
    step.candidates_in = len(top)
    return best_first(ranked)


def select(request: Request, ranked: list[Candidate], rows: Rows, step: StepRecord) -> list[Candidate]:
    """What other speakers said weighed down when the query names one speaker; items grouped
    by the message they cite (support and diversity), min_score, then the limit; an event
    already cited by a higher-ranked fact is folded into it."""
    step.candidates_in = len(ranked)
    c = request.config.selection
    focus = speaker_focus({x.key: rows.speaker(x) for x in ranked}, request.query, factor=c.other_speaker_factor)
    for cand in ranked:
        if focus[cand.key] < 1:
            cand.final *= focus[cand.key]
            cand.scores["speaker"] = focus[cand.key]
    ranked = best_first(ranked)
    # an item with no source message (an operator's correction) is its own group
    folded = fold_by_source([(x.key, rows.source_event_id(x) or x.key, x.final) for x in ranked],
                            support=c.source_support, penalty=c.diversity_penalty)
    for cand in ranked:
        if folded[cand.key] < cand.final:
            cand.scores["diversity"] = c.diversity_penalty
        cand.final = folded[cand.key]
    cited, out = set(), []
    for cand in best_first(ranked):
        if cand.final < c.min_score:
            continue
        if cand.is_fact:
            cited.add(rows.facts[cand.id].source_event_id)
        elif cand.id in cited:
            continue
        out.append(cand)
        if len(out) >= request.limit:
            break
    for cand in out:
        cand.scores["final"] = round(cand.final, 6)
    step.candidates_out = len(out)
    return out


def render(config: FormatSettings, selected: list[Candidate], rows: Rows, rankings: Rankings,
           step: StepRecord) -> FormattedContext:
    """The selected items as the context text, in sections, within the token budget."""
    patterns = {h.id for h in rankings.lists.get("pattern", [])}
    lines = []
    for cand in selected:
        row = rows.of(cand)
        if cand.is_fact:
            section = "patterns" if row.reinforcement_count >= 2 or cand.id in patterns else "facts"
            lines.append(ContextLine(section, cand.key, row.text, _citation_label(row.source_event)))
        else:
            date = row.occurred_at.date().isoformat()
            lines.append(ContextLine("events", cand.key, f"({date}) {row.speaker}: {row.text}",
                                     _citation_label(row)))
    text, tokens, included = format_context(lines, max_tokens=config.context_max_tokens,
                                            tiers=config.context_tiers, count=count_tokens_each)
    step.candidates_in, step.candidates_out = len(lines), len(included)
    step.data["context_tokens"] = tokens
    return FormattedContext(text, tokens)


def _citation_label(event: selectors.EventRow | None) -> str:
    if event is None:
        return ""
    shown = event.external_id and not event.external_id.startswith(REDACTED_KEY_PREFIX)  # a forget's digest: noise
    return f"event {event.id}" + (f" / {event.external_id}" if shown else "")
