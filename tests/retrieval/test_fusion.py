from datetime import UTC, datetime, timedelta

import pytest

from retrieval.fusion import fold_by_source, pattern_boost, recency, rerank_blend, rrf, weighted

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
