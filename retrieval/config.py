"""RetrievalConfig: every weight and threshold of the read pipeline, one typed section per stage
(each setting's range declared next to it), named presets and validated per-call overrides.
Why the defaults are what they are: docs/DECISIONS.md.

A caller overrides a setting by its own name, whatever its section: `{"topk_facts": 10,
"fusion": "rrf", "signal_weights": {"graph": 0.2}}` (`memories.config.apply_overrides`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum

from memories.config import Settings, apply_overrides, bounded
from memories.errors import ConfigError


class Fusion(StrEnum):
    """How the signal lists become one score per candidate (retrieval/fusion.py)."""

    # Σ weight × normalized score per signal list (cosine lists scaled from min_similarity,
    # BM25 / graph / pattern by their best hit)
    CONVEX = "convex"
    # Σ weight / (rrf_k + rank) per signal list
    RRF = "rrf"
    # score_weights over (max(semantic, keyword), recency, importance)
    WEIGHTED = "weighted"


@dataclass(frozen=True)
class CandidateSettings(Settings):
    """What the signals may return: how many, how similar, how confident."""

    topk_facts: int = field(default=20, metadata=bounded(1, 200, ceiling=True))
    topk_events: int = field(default=8, metadata=bounded(0, 200, ceiling=True))
    candidate_pool: int = field(default=60, metadata=bounded(1, 1000, ceiling=True))  # per signal, before fusion
    min_similarity: float = field(default=0.20, metadata=bounded(-1, 1))
    min_confidence: float = field(default=0.55, metadata=bounded(0, 1))
    include_events: bool = True
    parallel_signals: bool = True


@dataclass(frozen=True)
class SemanticSettings(Settings):
    """Vector search vs pgvector 0.6.2 (no iterative scans): an agent with its own HNSW index
    searches it; otherwise an exact scan below `exact_scan_max_rows` rows for the agent (or the
    date window), else the shared HNSW with ef_search scaled by the agent's share of the table;
    an exact re-scan whenever an index returns fewer rows than exist."""

    exact_scan_max_rows: int = field(default=20000, metadata=bounded(0, 10**9, ceiling=True))
    hnsw_ef_search_min: int = field(default=40, metadata=bounded(1, 1000, ceiling=True))
    hnsw_ef_search_max: int = field(default=1000, metadata=bounded(1, 1000, ceiling=True))


@dataclass(frozen=True)
class KeywordSettings(Settings):
    """Okapi BM25."""

    bm25_k1: float = field(default=1.2, metadata=bounded(0, 10))
    bm25_b: float = field(default=0.75, metadata=bounded(0, 1))
    # in facts, the query's entity names count at most this often (0: as often as written): a
    # fact says its subject's name wherever the message said "I" or "she". LoCoMo dev R@10
    # 0.784 → 0.787, multi-hop 0.509 → 0.520 (no other category lower)
    fact_name_tf_cap: int = field(default=1, metadata=bounded(0, 100))


@dataclass(frozen=True)
class GraphSettings(Settings):
    """Personalized PageRank from the query's entities, then their facts."""

    ppr_alpha: float = field(default=0.85, metadata=bounded(0, 0.99))
    graph_hop_decay: tuple[float, ...] = field(default=(1.0, 0.5), metadata=bounded(0, 1))
    graph_query_bonus: float = field(default=1.5, metadata=bounded(0, 10))
    graph_max_hops: int = field(default=2, metadata=bounded(0, 4, ceiling=True))
    # an entity with more linked facts than this is searched through the agent's vector index
    graph_exact_max_facts: int = field(default=3000, metadata=bounded(0, 10**9, ceiling=True))


_LOOKUP_WEIGHTS = {"semantic": 0.8, "keyword": 0.8, "graph": 0.1, "event_semantic": 1.0, "event_keyword": 1.3,
                   "temporal": 0.5, "event_temporal": 0.5, "pattern": 1.0}
_ENUMERATION_WEIGHTS = {"semantic": 1.0, "keyword": 1.0, "graph": 0.1, "event_semantic": 1.0, "event_keyword": 1.0,
                        "temporal": 0.5, "event_temporal": 0.5, "pattern": 1.0}


@dataclass(frozen=True)
class ScoringSettings(Settings):
    """Fusion of the signal lists and the scores it weighs (recency, decayed confidence)."""

    fusion: Fusion = Fusion.CONVEX
    rrf_k: int = field(default=60, metadata=bounded(1, 1000))
    # one RRF vote per signal (facts + events merged) instead of per list
    rrf_merge_kinds: bool = False
    # per signal list: `signal_weights` for lookups ("What did Maria adopt?"),
    # `enumeration_signal_weights` for enumerations ("What books has John read?", see the planner)
    signal_weights: dict[str, float] = field(default_factory=lambda: dict(_LOOKUP_WEIGHTS),
                                             metadata=bounded(0, 100))
    enumeration_signal_weights: dict[str, float] = field(default_factory=lambda: dict(_ENUMERATION_WEIGHTS),
                                                         metadata=bounded(0, 100))
    score_weights: dict[str, float] = field(
        default_factory=lambda: {"semantic": 0.70, "recency": 0.20, "importance": 0.10}, metadata=bounded(0, 100))
    recency_half_life_days: float = field(default=14.0, metadata=bounded(0.001, 36500))
    confidence_half_life_days: float = field(default=365.0, metadata=bounded(0.001, 36500))

    def weights_for(self, intent: str) -> dict[str, float]:
        """The signal weights for a query of this intent (the plan's lookup / enumeration)."""
        return self.enumeration_signal_weights if intent == "enumeration" else self.signal_weights


@dataclass(frozen=True)
class EnhancementSettings(Settings):
    """What grows the pool after fusion: spreading activation along relationships, temporal
    contiguity — the messages said right before / after a retrieved one are recalled with it
    (scored parent × decay), as neighbouring episodes are in human memory — and the
    reinforcement (pattern) boost."""

    spreading_activation_hops: int = field(default=2, metadata=bounded(0, 4, ceiling=True))
    spreading_decay_factor: float = field(default=0.50, metadata=bounded(0, 1))
    spreading_facts_per_entity: int = field(default=3, metadata=bounded(0, 50, ceiling=True))
    spreading_related_entities: int = field(default=5, metadata=bounded(0, 50, ceiling=True))
    pattern_boost_max: float = field(default=0.10, metadata=bounded(0, 1))
    contiguity_seeds: int = field(default=3, metadata=bounded(0, 50, ceiling=True))
    contiguity_window: int = field(default=2, metadata=bounded(0, 10, ceiling=True))
    contiguity_decay: float = field(default=0.7, metadata=bounded(0, 1))
    contiguity_max_gap_minutes: float = field(default=30.0, metadata=bounded(0, 10**6))


@dataclass(frozen=True)
class SelectionSettings(Settings):
    """Which ranked candidates are returned."""

    # one message, several items (its event, the facts drawn from it): the best of them gains
    # source_support × each other's score, the others are scored × diversity_penalty
    diversity_penalty: float = field(default=0.5, metadata=bounded(0, 1))
    source_support: float = field(default=0.2, metadata=bounded(0, 1))
    # a query naming one of the speakers ("What are Ana's hobbies?"): what the others said is
    # scored × this (1: off). LoCoMo dev R@10 0.787 → 0.791, multi-hop 0.520 → 0.523
    other_speaker_factor: float = field(default=0.8, metadata=bounded(0, 1))
    min_score: float = field(default=0.15, metadata=bounded(0, 1))


@dataclass(frozen=True)
class RerankSettings(Settings):
    """The LLM reranker (when an LLM is configured)."""

    enable_reranker: bool = True
    reranker_weight: float = field(default=0.70, metadata=bounded(0, 1))
    reranker_veto: float = field(default=0.10, metadata=bounded(0, 1))
    reranker_timeout_sec: float = field(default=5.0, metadata=bounded(0.1, 120, ceiling=True))
    reranker_top_n: int = field(default=30, metadata=bounded(1, 200, ceiling=True))


@dataclass(frozen=True)
class FormatSettings(Settings):
    """The context text."""

    context_max_tokens: int = field(default=2000, metadata=bounded(1, 100000, ceiling=True))
    # shares of the budget: facts, patterns, conversations
    context_tiers: tuple[float, ...] = field(default=(0.5, 0.3, 0.2), metadata=bounded(0, 1))


@dataclass(frozen=True)
class PlannerSettings(Settings):
    """The deterministic query planner."""

    trivial_max_chars: int = field(default=3, metadata=bounded(0, 100))


@dataclass(frozen=True)
class RetrievalConfig:
    """Settings of the read pipeline: the reference pages' defaults, except where LoCoMo dev
    measurements chose otherwise (docs/DECISIONS.md)."""

    candidates: CandidateSettings = field(default_factory=CandidateSettings)
    semantic: SemanticSettings = field(default_factory=SemanticSettings)
    keyword: KeywordSettings = field(default_factory=KeywordSettings)
    graph: GraphSettings = field(default_factory=GraphSettings)
    scoring: ScoringSettings = field(default_factory=ScoringSettings)
    enhancement: EnhancementSettings = field(default_factory=EnhancementSettings)
    selection: SelectionSettings = field(default_factory=SelectionSettings)
    rerank: RerankSettings = field(default_factory=RerankSettings)
    format: FormatSettings = field(default_factory=FormatSettings)
    planner: PlannerSettings = field(default_factory=PlannerSettings)


def _only(*signals: str) -> ScoringSettings:
    """Scoring that keeps just these signals (for both query intents)."""
    weights = {key: (1.0 if key in signals else 0.0) for key in _LOOKUP_WEIGHTS}
    return ScoringSettings(signal_weights=weights, enumeration_signal_weights=dict(weights))


# single-signal baselines (what eval_locomo compares the pipeline with): one signal's lists, and
# nothing after fusion that would mix others in or reorder them
_SINGLE_SIGNAL = {
    "enhancement": EnhancementSettings(spreading_activation_hops=0, pattern_boost_max=0.0, contiguity_seeds=0),
    "rerank": RerankSettings(enable_reranker=False),
    "selection": SelectionSettings(diversity_penalty=1.0, source_support=0.0, other_speaker_factor=1.0),
}

PRESETS: dict[str, RetrievalConfig] = {
    "default": RetrievalConfig(),
    "weighted": RetrievalConfig(scoring=ScoringSettings(fusion=Fusion.WEIGHTED)),
    "rrf": RetrievalConfig(scoring=ScoringSettings(fusion=Fusion.RRF)),
    "keyword_only": RetrievalConfig(scoring=_only("keyword", "event_keyword"), **_SINGLE_SIGNAL),
    "semantic_only": RetrievalConfig(scoring=_only("semantic", "event_semantic"), **_SINGLE_SIGNAL),
    "fast": RetrievalConfig(rerank=RerankSettings(enable_reranker=False),
                            enhancement=EnhancementSettings(spreading_activation_hops=0)),
}


def retrieval_config(overrides: dict | None = None, preset: str = "default") -> RetrievalConfig:
    """The preset with the caller's overrides (by setting name) applied: a ConfigError for an
    unknown preset or setting, a wrong type or a value out of range."""
    if preset not in PRESETS:
        raise ConfigError(f"unknown preset {preset!r}", {"preset": sorted(PRESETS)})
    return apply_overrides(PRESETS[preset], overrides)
