from datetime import UTC, datetime, timedelta

import pytest

from retrieval.config import retrieval_config
from retrieval.fusion import (
    convex,
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

NOW = datetime(2024, 1, 15, tzinfo=UTC)


def test_rrf_rewards_items_ranked_well_by_several_signals():
    fused = rrf({"semantic": ["a", "b", "c"], "keyword": ["b", "d"]}, k=60)
    assert fused["b"] == pytest.approx(1 / 62 + 1 / 61)
    assert max(fused, key=fused.get) == "b"
    assert fused["a"] == pytest.approx(1 / 61)


def test_rrf_weights_and_zero_weight_signals():
    fused = rrf({"semantic": ["a"], "graph": ["b"]}, k=60, weights={"semantic": 1.0, "graph": 0.0})
    assert "b" not in fused


def test_recency_is_measured_against_the_reference_time():
    assert recency(NOW, NOW, 14) == 1.0
    assert recency(NOW - timedelta(days=14), NOW, 14) == pytest.approx(0.5)
    # an imported fact from 2023 queried "as of" 2023 is fresh, whatever the wall clock says
    old = datetime(2023, 5, 1, tzinfo=UTC)
    assert recency(old, old + timedelta(days=1), 14) > 0.9


def test_weighted_formula_uses_reference_defaults():
    assert weighted(1.0, 0.5, 0.2, {"semantic": 0.7, "recency": 0.2, "importance": 0.1}) == pytest.approx(0.82)


def test_pattern_boost_saturates_at_the_maximum():
    assert pattern_boost(0) == 0
    assert pattern_boost(1) == pytest.approx(0.05)
    assert pattern_boost(1000) < 0.10


def test_rerank_blend_dampens_and_vetoes():
    assert rerank_blend(0.91, 1.0) == pytest.approx(0.91)
    assert rerank_blend(0.65, 0.2) == pytest.approx(0.65 * (0.3 + 0.14))
    assert rerank_blend(0.30, 0.05) == 0.0


def test_a_message_found_through_its_text_and_its_facts_outranks_one_found_once():
    # "e:1" and "f:7" both come from message 1; "e:2" alone scores a little higher than "e:1"
    items = [("e:2", 2, 0.90), ("e:1", 1, 0.85), ("f:7", 1, 0.80), ("e:3", 3, 0.50)]
    folded = fold_by_source(items, support=0.2, penalty=0.5)
    assert folded["e:1"] == pytest.approx(0.85 + 0.2 * 0.80)
    assert max(folded, key=folded.get) == "e:1"
    assert folded["f:7"] == pytest.approx(0.40)  # the second item of message 1 counts less
    assert folded["e:2"] == 0.90 and folded["e:3"] == 0.50
    assert fold_by_source(items, support=0.0, penalty=1.0) == {k: v for k, _, v in items}


def test_convex_scales_cosines_from_the_floor_and_others_by_their_best_hit():
    lists = {"semantic": [("a", 0.8), ("b", 0.5)], "keyword": [("b", 12.0), ("c", 3.0)]}
    fused = convex(lists, {"semantic": 1.0, "keyword": 0.5}, floor=0.2, floored={"semantic"})
    # a: 1.0 × (0.8-0.2)/0.6 = 1; b: 1.0 × (0.5-0.2)/0.6 + 0.5 × 12/12 = 1; c: 0.5 × 3/12
    assert fused == pytest.approx({"a": 1.0, "b": 1.0, "c": 0.125})
    fused = convex(lists, {"semantic": 1.0, "keyword": 1.0}, floor=0.2, floored={"semantic"})
    assert fused == pytest.approx({"a": 1.0 / 1.5, "b": 1.5 / 1.5, "c": 0.25 / 1.5})


def test_one_strong_signal_wins_under_convex_fusion_but_not_under_rrf():
    # "x" is BM25's runaway best; "y" is ranked first, by a hair, by two correlated lists
    lists = {"keyword": [("x", 30.0), ("y", 3.0)], "semantic": [("y", 0.40), ("x", 0.39)],
             "event_semantic": [("y", 0.40), ("x", 0.39)]}
    weights = dict.fromkeys(lists, 1.0)
    fused = convex(lists, weights, floor=0.2, floored={"semantic", "event_semantic"})
    assert max(fused, key=fused.get) == "x"
    ranks = rrf({name: [key for key, _ in hits] for name, hits in lists.items()}, k=60, weights=weights)
    assert max(ranks, key=ranks.get) == "y"


def test_convex_skips_empty_and_unweighted_lists_and_a_flat_list_scores_one():
    lists = {"semantic": [("a", 0.1)], "graph": [("b", 2.0)], "pattern": []}
    fused = convex(lists, {"semantic": 1.0, "graph": 0.0, "pattern": 1.0}, floor=0.2, floored={"semantic"})
    assert fused == {"a": 1.0}  # below the floor alone: its list's range is empty
    assert convex({}, {}, floor=0.2, floored=()) == {}


def test_merged_lists_give_a_signal_one_ranking_over_facts_and_events():
    lists = {"keyword": [("f:1", 4.0), ("f:2", 2.0)], "event_keyword": [("e:1", 9.0), ("e:2", 8.0)],
             "semantic": [("f:1", 0.5)], "event_semantic": [("e:3", 0.7)], "graph": [("f:4", 1.0)]}
    labels = {"event_keyword": "keyword", "event_semantic": "semantic"}
    merged = merged_lists(lists, labels, by_best={"keyword", "event_keyword"})
    # BM25 lists divided by their best hit: f:1 1.0, e:1 1.0, e:2 0.89, f:2 0.5 (ties keep list order)
    assert merged == {"keyword": ["f:1", "e:1", "e:2", "f:2"], "semantic": ["e:3", "f:1"], "graph": ["f:4"]}


def test_normalize_max():
    assert normalize_max({"a": 2.0, "b": 1.0}) == {"a": 1.0, "b": 0.5}
    assert normalize_max({"a": 0.0}) == {"a": 0.0}


def test_weights_follow_the_query_intent():
    scoring = retrieval_config().scoring
    assert scoring.weights_for("lookup") is scoring.signal_weights
    assert scoring.weights_for("enumeration") is scoring.enumeration_signal_weights


def _rankings(lists):
    from retrieval.pipeline import Rankings
    from retrieval.signals import Hit

    return Rankings({name: [Hit(kind, i, score) for kind, i, score in hits] for name, hits in lists.items()})


@pytest.mark.parametrize("fusion", ["convex", "rrf", "weighted"])
def test_only_the_configured_fusion_is_computed(monkeypatch, fusion):
    from retrieval import pipeline

    def unused(*args, **kwargs):
        raise AssertionError("computed a fusion the config did not choose")

    for name in {"convex", "rrf", "weighted"} - {fusion}:
        monkeypatch.setattr(pipeline, name, unused)
    monkeypatch.setattr(pipeline, "merged_lists", unused)
    rankings = _rankings({"semantic": [("fact", 1, 0.9), ("fact", 2, 0.5)], "event_keyword": [("event", 3, 7.0)]})
    candidates = {key: pipeline.Candidate(key, {"semantic": 0.5, "recency": 1.0})
                  for key in [CandidateKey.fact(1), CandidateKey.fact(2), CandidateKey.event(3)]}
    config = retrieval_config({"fusion": fusion})
    fused = pipeline._fused(config, config.scoring.signal_weights, rankings, candidates)
    assert set(fused) == set(candidates)
    if fusion != "weighted":
        assert max(fused.values()) == 1.0


def test_rrf_merging_kinds_is_computed_only_when_configured(monkeypatch):
    from retrieval import pipeline

    calls = []
    fact = CandidateKey.fact(1)
    monkeypatch.setattr(pipeline, "merged_lists", lambda *a, **kw: calls.append(a) or {"semantic": [fact]})
    rankings = _rankings({"semantic": [("fact", 1, 0.9)]})
    for merge in (False, True):
        config = retrieval_config({"fusion": "rrf", "rrf_merge_kinds": merge})
        assert pipeline._fused(config, config.scoring.signal_weights, rankings, {}) == {fact: 1.0}
    assert len(calls) == 1


def test_a_query_naming_one_speaker_weighs_down_what_the_others_said():
    speakers = {"e:1": "Ana Lima", "f:2": "Bruno", "e:3": None}
    assert speaker_focus(speakers, "What are Ana's hobbies?", factor=0.8) == {"e:1": 1.0, "f:2": 0.8, "e:3": 1.0}
    assert speaker_focus(speakers, "what does bruno cook?", factor=0.8) == {"e:1": 0.8, "f:2": 1.0, "e:3": 1.0}
    # both speakers, neither, or a name inside a longer word: no focus
    for query in ("What do Ana and Bruno both like?", "Who likes jazz?", "What did Anastasia say?"):
        assert set(speaker_focus(speakers, query, factor=0.8).values()) == {1.0}
    assert set(speaker_focus(speakers, "Ana's hobbies?", factor=1.0).values()) == {1.0}
