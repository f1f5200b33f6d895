"""RetrievalConfig: typed sections, each setting's range in its field's metadata, the fusion as an
enum checked when the config is built, named presets, overrides by flat setting name."""

from __future__ import annotations

import dataclasses

import pytest

from memories.config import WriteConfig, apply_overrides, overrides_within_ceilings, settings_of
from memories.errors import ConfigError
from retrieval.config import PRESETS, Fusion, RetrievalConfig, ScoringSettings, retrieval_config


@pytest.mark.parametrize(("overrides", "name"), [
    ({"topk_facts": 201}, "topk_facts"), ({"topk_facts": 0}, "topk_facts"),
    ({"min_similarity": -1.5}, "min_similarity"),
    ({"ppr_alpha": 1.0}, "ppr_alpha"), ({"graph_hop_decay": [1.0, 1.5]}, "graph_hop_decay"),
    ({"signal_weights": {"graph": 101}}, "signal_weights"), ({"context_tiers": [0.5, -0.1]}, "context_tiers"),
    ({"reranker_timeout_sec": 0.05}, "reranker_timeout_sec"), ({"min_score": float("nan")}, "min_score"),
])
def test_a_value_out_of_its_declared_range_is_an_error_naming_the_setting(overrides, name):
    with pytest.raises(ConfigError, match=f"setting '{name}' must be") as raised:
        retrieval_config(overrides)
    assert name in raised.value.extra


def test_every_declared_range_is_enforced_at_its_edges():
    config = RetrievalConfig()
    for name, setting in settings_of(RetrievalConfig).items():
        if setting.hint not in (int, float) or setting.bounds.high is None:
            continue
        low, high = setting.bounds.low, setting.bounds.high
        assert apply_overrides(config, {name: low}) and apply_overrides(config, {name: high})
        for outside in (low - 1, high + 1):
            with pytest.raises(ConfigError, match=name):
                apply_overrides(config, {name: outside})


def test_write_config_ranges_are_field_metadata_too():
    with pytest.raises(ConfigError, match="'fuzzy_threshold' must be between 0 and 1"):
        apply_overrides(WriteConfig(), {"fuzzy_threshold": 1.5})
    assert apply_overrides(WriteConfig(), {"fuzzy_threshold": 1}).fuzzy_threshold == 1.0


def test_the_fusion_is_an_enum_checked_when_the_config_is_built():
    assert retrieval_config({"fusion": "rrf"}).scoring.fusion is Fusion.RRF
    assert ScoringSettings(fusion="weighted").fusion is Fusion.WEIGHTED
    for build in (lambda: retrieval_config({"fusion": "borda"}), lambda: ScoringSettings(fusion="borda"),
                  lambda: retrieval_config({"fusion": 1})):
        with pytest.raises(ConfigError, match="setting 'fusion' must be one of 'convex', 'rrf', 'weighted'"):
            build()


def test_sections_are_checked_when_built_directly_too():
    with pytest.raises(ConfigError, match="'rrf_k' must be between 1 and 1000"):
        ScoringSettings(rrf_k=0)
    with pytest.raises(ConfigError, match="'rrf_merge_kinds' must be of type bool"):
        ScoringSettings(rrf_merge_kinds="yes")


# What each preset changes, by setting name (as a caller's overrides would say it)
_SINGLE_SIGNAL = {"spreading_activation_hops": 0, "enable_reranker": False, "pattern_boost_max": 0.0,
                  "contiguity_seeds": 0, "diversity_penalty": 1.0, "source_support": 0.0,
                  "other_speaker_factor": 1.0}
_NO_WEIGHTS = {name: 0.0 for name in RetrievalConfig().scoring.signal_weights}


def _only(*signals):
    weights = {**_NO_WEIGHTS, **{name: 1.0 for name in signals}}
    return {"signal_weights": weights, "enumeration_signal_weights": weights}


@pytest.mark.parametrize(("preset", "effect"), [
    ("default", {}),
    ("weighted", {"fusion": "weighted"}),
    ("rrf", {"fusion": "rrf"}),
    ("keyword_only", {**_only("keyword", "event_keyword"), **_SINGLE_SIGNAL}),
    ("semantic_only", {**_only("semantic", "event_semantic"), **_SINGLE_SIGNAL}),
    ("fast", {"enable_reranker": False, "spreading_activation_hops": 0}),
])
def test_presets_are_the_defaults_with_their_changes(preset, effect):
    assert retrieval_config(preset=preset) == apply_overrides(RetrievalConfig(), effect)


def test_an_unknown_preset_is_an_error_listing_them():
    with pytest.raises(ConfigError, match="unknown preset 'fastest'") as raised:
        retrieval_config(preset="fastest")
    assert raised.value.extra["preset"] == sorted(PRESETS)
    assert set(PRESETS) == {"default", "weighted", "rrf", "keyword_only", "semantic_only", "fast"}


def test_overrides_name_settings_flat_whatever_their_section():
    config = retrieval_config({"topk_facts": 10, "fusion": "rrf", "signal_weights": {"graph": 0.2}}, preset="fast")
    assert config.candidates.topk_facts == 10 and config.scoring.fusion is Fusion.RRF
    assert config.scoring.signal_weights == {**RetrievalConfig().scoring.signal_weights, "graph": 0.2}
    assert config.rerank.enable_reranker is False  # the preset's own changes stay
    assert dataclasses.replace(config, candidates=RetrievalConfig().candidates, scoring=RetrievalConfig().scoring) \
        == PRESETS["fast"]


def test_unknown_settings_and_sections_are_errors_listing_the_allowed_names():
    for overrides, unknown in (({"topk": 3}, ["topk"]), ({"scoring": {"fusion": "rrf"}}, ["scoring"])):
        with pytest.raises(ConfigError, match="unknown setting") as raised:
            retrieval_config(overrides)
        assert raised.value.extra["unknown"] == unknown
        assert {"topk_facts", "fusion", "signal_weights"} <= set(raised.value.extra["allowed"])
    with pytest.raises(ConfigError, match="'signal_weights' has unknown key"):
        retrieval_config({"signal_weights": {"gossip": 1.0}})


def test_ceilings_can_be_lowered_not_raised():
    overrides_within_ceilings(RetrievalConfig, {"candidate_pool": 5, "graph_max_hops": 1, "min_score": 0.9})
    for name in ("candidate_pool", "graph_max_hops", "reranker_timeout_sec", "context_max_tokens"):
        raised_value = settings_of(RetrievalConfig)[name].value(RetrievalConfig()) + 1
        with pytest.raises(ConfigError, match=f"'{name}' is a server-side limit"):
            overrides_within_ceilings(RetrievalConfig, {name: raised_value})
    with pytest.raises(ConfigError, match="'max_message_bytes' is a server-side limit"):
        overrides_within_ceilings(WriteConfig, {"max_message_bytes": 10**6})
