"""RetrievalConfig: every weight and threshold of the read pipeline, named presets and
validated per-call overrides. Why the defaults are what they are: docs/DECISIONS.md."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar

from memories.config import apply_overrides
from memories.errors import ConfigError


@dataclass(frozen=True)
class RetrievalConfig:
    """Settings of the read pipeline: the reference pages' defaults, except where LoCoMo dev
    measurements chose otherwise (docs/DECISIONS.md)."""

    BOUNDS: ClassVar[dict] = {
        "topk_facts": (1, 200), "topk_events": (0, 200), "candidate_pool": (1, 1000),
        "min_similarity": (-1, 1), "min_confidence": (0, 1), "exact_scan_max_rows": (0, 10**9),
        "hnsw_ef_search_min": (1, 1000), "hnsw_ef_search_max": (1, 1000), "bm25_k1": (0, 10), "bm25_b": (0, 1),
        "fact_name_tf_cap": (0, 100),
        "ppr_alpha": (0, 0.99), "graph_hop_decay": (0, 1), "graph_exact_max_facts": (0, 10**9),
        "graph_query_bonus": (0, 10), "graph_max_hops": (0, 4), "rrf_k": (1, 1000), "signal_weights": (0, 100),
        "enumeration_signal_weights": (0, 100),
        "score_weights": (0, 100), "recency_half_life_days": (0.001, 36500),
        "confidence_half_life_days": (0.001, 36500), "spreading_activation_hops": (0, 4),
        "spreading_decay_factor": (0, 1), "spreading_facts_per_entity": (0, 50),
        "spreading_related_entities": (0, 50), "pattern_boost_max": (0, 1), "contiguity_seeds": (0, 50),
        "contiguity_window": (0, 10), "contiguity_decay": (0, 1), "contiguity_max_gap_minutes": (0, 10**6),
        "diversity_penalty": (0, 1), "source_support": (0, 1),
        "other_speaker_factor": (0, 1), "reranker_weight": (0, 1), "reranker_veto": (0, 1),
        "reranker_timeout_sec": (0.1, 120), "reranker_top_n": (1, 200), "min_score": (0, 1),
        "context_max_tokens": (1, 100000), "context_tiers": (0, 1), "trivial_max_chars": (0, 100),
    }
    # safety limits a caller's overrides may lower but never raise (overrides_within_ceilings)
    CEILINGS: ClassVar[tuple] = (
        "topk_facts", "topk_events", "candidate_pool", "exact_scan_max_rows", "hnsw_ef_search_min",
        "hnsw_ef_search_max", "graph_exact_max_facts", "graph_max_hops", "spreading_activation_hops",
        "spreading_facts_per_entity", "spreading_related_entities", "contiguity_seeds", "contiguity_window",
        "reranker_timeout_sec", "reranker_top_n", "context_max_tokens")
    # candidates and filters
    topk_facts: int = 20
    topk_events: int = 8
    candidate_pool: int = 60  # per signal, before fusion
    min_similarity: float = 0.20
    min_confidence: float = 0.55
    include_events: bool = True
    parallel_signals: bool = True
    # semantic search vs pgvector 0.6.2 (no iterative scans): an agent with its own HNSW index
    # searches it; otherwise an exact scan below this many rows for the agent (or the date
    # window), else the shared HNSW with ef_search scaled by the agent's share of the table; an
    # exact re-scan whenever an index returns fewer rows than exist.
    exact_scan_max_rows: int = 20000
    hnsw_ef_search_min: int = 40
    hnsw_ef_search_max: int = 1000
    # keyword (Okapi BM25)
    bm25_k1: float = 1.2
    bm25_b: float = 0.75
    # in facts, the query's entity names count at most this often (0: as often as written): a
    # fact says its subject's name wherever the message said "I" or "she". LoCoMo dev R@10
    # 0.784 → 0.787, multi-hop 0.509 → 0.520 (no other category lower)
    fact_name_tf_cap: int = 1
    # graph
    ppr_alpha: float = 0.85
    graph_hop_decay: tuple[float, ...] = (1.0, 0.5)
    graph_query_bonus: float = 1.5
    graph_max_hops: int = 2
    # an entity with more linked facts than this is searched through the agent's vector index
    graph_exact_max_facts: int = 3000
    # fusion (retrieval/fusion.py), one of:
    # "convex": Σ weight × normalized score per signal list (cosine lists scaled from
    #   min_similarity, BM25 / graph / pattern by their best hit);
    # "rrf": Σ weight / (rrf_k + rank) per signal list;
    # "weighted": score_weights over (max(semantic, keyword), recency, importance).
    fusion: str = "convex"
    rrf_k: int = 60
    rrf_merge_kinds: bool = False  # one RRF vote per signal (facts + events merged) instead of per list
    # per signal list: `signal_weights` for lookups ("What did Maria adopt?"),
    # `enumeration_signal_weights` for enumerations ("What books has John read?", see the planner)
    signal_weights: dict[str, float] = field(
        default_factory=lambda: {"semantic": 0.8, "keyword": 0.8, "graph": 0.1, "event_semantic": 1.0,
                                 "event_keyword": 1.3, "temporal": 0.5, "event_temporal": 0.5, "pattern": 1.0}
    )
    enumeration_signal_weights: dict[str, float] = field(
        default_factory=lambda: {"semantic": 1.0, "keyword": 1.0, "graph": 0.1, "event_semantic": 1.0,
                                 "event_keyword": 1.0, "temporal": 0.5, "event_temporal": 0.5, "pattern": 1.0}
    )
    score_weights: dict[str, float] = field(
        default_factory=lambda: {"semantic": 0.70, "recency": 0.20, "importance": 0.10}
    )
    recency_half_life_days: float = 14.0
    confidence_half_life_days: float = 365.0
    # enhancement
    spreading_activation_hops: int = 2
    spreading_decay_factor: float = 0.50
    spreading_facts_per_entity: int = 3
    spreading_related_entities: int = 5
    pattern_boost_max: float = 0.10
    # temporal contiguity: the messages said right before / after a retrieved one are recalled
    # with it (scored parent × decay), as neighbouring episodes are in human memory
    contiguity_seeds: int = 3
    contiguity_window: int = 2
    contiguity_decay: float = 0.7
    contiguity_max_gap_minutes: float = 30.0
    # one message, several items (its event, the facts drawn from it): the best of them gains
    # source_support × each other's score, the others are scored × diversity_penalty
    diversity_penalty: float = 0.5
    source_support: float = 0.2
    # a query naming one of the speakers ("What are Ana's hobbies?"): what the others said is
    # scored × this (1: off). LoCoMo dev R@10 0.787 → 0.791, multi-hop 0.520 → 0.523
    other_speaker_factor: float = 0.8
    # reranking (LLM)
    enable_reranker: bool = True
    reranker_weight: float = 0.70
    reranker_veto: float = 0.10
    reranker_timeout_sec: float = 5.0
    reranker_top_n: int = 30
    min_score: float = 0.15
    # formatting
    context_max_tokens: int = 2000
    context_tiers: tuple[float, ...] = (0.5, 0.3, 0.2)  # facts, patterns, conversations
    # planner
    trivial_max_chars: int = 3

    def weights_for(self, intent: str) -> dict[str, float]:
        """The signal weights for a query of this intent (the plan's lookup / enumeration)."""
        return self.enumeration_signal_weights if intent == "enumeration" else self.signal_weights


def _only(*signals: str) -> dict[str, float]:
    """Weights that keep just these signals (for both query intents)."""
    keys = RetrievalConfig().signal_weights
    return {key: (1.0 if key in signals else 0.0) for key in keys}


_SINGLE_SIGNAL = {"spreading_activation_hops": 0, "enable_reranker": False, "pattern_boost_max": 0.0,
                  "contiguity_seeds": 0, "diversity_penalty": 1.0, "source_support": 0.0,
                  "other_speaker_factor": 1.0}

PRESETS: dict[str, dict] = {
    "default": {},
    "weighted": {"fusion": "weighted"},
    "rrf": {"fusion": "rrf"},
    # single-signal baselines (what eval_locomo compares the pipeline with)
    "keyword_only": {"signal_weights": _only("keyword", "event_keyword"),
                     "enumeration_signal_weights": _only("keyword", "event_keyword"), **_SINGLE_SIGNAL},
    "semantic_only": {"signal_weights": _only("semantic", "event_semantic"),
                      "enumeration_signal_weights": _only("semantic", "event_semantic"), **_SINGLE_SIGNAL},
    "fast": {"enable_reranker": False, "spreading_activation_hops": 0},
}


def retrieval_config(overrides: dict | None = None, preset: str = "default") -> RetrievalConfig:
    if preset not in PRESETS:
        raise ConfigError(f"unknown preset {preset!r}", {"preset": sorted(PRESETS)})
    config = apply_overrides(RetrievalConfig(), PRESETS[preset])
    config = apply_overrides(config, overrides)
    if config.fusion not in {"rrf", "weighted", "convex"}:
        raise ConfigError("setting 'fusion' must be 'rrf', 'weighted' or 'convex'", {"fusion": config.fusion})
    return config
