"""Declarative pipeline configuration: typed dataclasses with the reference defaults, and
per-call overrides validated by type (unknown keys and wrong types are a clear error)."""

from __future__ import annotations

import dataclasses
import typing
from dataclasses import dataclass, field
from typing import ClassVar

from memories.errors import ConfigError
from memories.extraction.schema import IMPORTANCE_CATEGORY_MAP


def apply_overrides(config, overrides: dict | None):
    """Return a copy of `config` with `overrides` applied, checking names and types."""
    if not overrides:
        return config
    if not isinstance(overrides, dict):
        raise ConfigError("config_overrides must be an object of setting names to values")
    hints = typing.get_type_hints(type(config))
    known = {f.name for f in dataclasses.fields(config)}
    unknown = sorted(set(overrides) - known)
    if unknown:
        raise ConfigError(
            f"unknown setting(s): {', '.join(unknown)}",
            {"unknown": unknown, "allowed": sorted(known)},
        )
    changes = {}
    for name, value in overrides.items():
        changes[name] = _coerce(name, value, hints[name])
        _check_bounds(type(config), name, changes[name])
        current = getattr(config, name)
        if isinstance(current, dict):
            if set(changes[name]) - set(current):
                extra = sorted(set(changes[name]) - set(current))
                raise ConfigError(f"setting '{name}' has unknown key(s): {', '.join(extra)}",
                                  {name: {"unknown": extra, "allowed": sorted(current)}})
            # a mapping override changes the keys it names; the others keep their values
            changes[name] = {**current, **changes[name]}
    return dataclasses.replace(config, **changes)


def overrides_within_ceilings(cls, overrides: dict | None) -> None:
    """A caller's overrides may lower the server's safety limits (`cls.CEILINGS`: sizes, pools,
    hops, timeouts), never raise them above the server's values: a 400 naming the setting."""
    if not isinstance(overrides, dict):
        return
    defaults = cls()
    for name in getattr(cls, "CEILINGS", ()):
        value, ceiling = overrides.get(name), getattr(defaults, name)
        if isinstance(value, (int, float)) and not isinstance(value, bool) and value > ceiling:
            raise ConfigError(f"setting '{name}' is a server-side limit: it can be lowered, not raised above "
                              f"{ceiling}", {name: f"at most {ceiling}"})


def _check_bounds(cls, name: str, value) -> None:
    """Numbers must lie in the setting's range: BOUNDS on the class, else non-negative."""
    low, high = getattr(cls, "BOUNDS", {}).get(name, (0, None))
    values = value.values() if isinstance(value, dict) else value if isinstance(value, tuple) else [value]
    for item in values:
        if isinstance(item, bool) or not isinstance(item, (int, float)):
            continue
        if item != item or (low is not None and item < low) or (high is not None and item > high):
            span = f"between {low} and {high}" if high is not None else f"at least {low}"
            raise ConfigError(f"setting '{name}' must be {span}", {name: span})


def _coerce(name: str, value, hint):
    origin = typing.get_origin(hint)
    if hint is bool:
        if isinstance(value, bool):
            return value
    elif hint is int:
        if isinstance(value, int) and not isinstance(value, bool):
            return value
    elif hint is float:
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return float(value)
    elif hint is str:
        if isinstance(value, str):
            return value
    elif origin is dict:
        if isinstance(value, dict) and all(isinstance(v, (int, float)) for v in value.values()):
            return {k: float(v) for k, v in value.items()}
    elif origin is tuple:
        if isinstance(value, (list, tuple)):
            return tuple(value)
    else:
        return value
    type_name = getattr(hint, "__name__", str(hint))
    raise ConfigError(f"setting '{name}' must be of type {type_name}", {name: f"expected {type_name}"})


@dataclass(frozen=True)
class WriteConfig:
    """Settings of the write pipeline (defaults from the reference)."""

    BOUNDS: ClassVar[dict] = {
        "max_message_bytes": (1, 1024 * 1024), "event_embedding_context": (0, 10), "extraction_timeout_sec": (0.1, 600),
        "informed_extraction_topk": (0, 200), "informed_extraction_context_budget_tokens": (0, 32000),
        "semantic_dedup_threshold": (0, 1), "fuzzy_threshold": (0, 1), "fuzzy_ambiguous_floor": (0, 1),
        "reconcile_fast_path_below": (0, 1), "reconcile_noop_above": (0, 1),
        "reconcile_candidates": (1, 1000),
        "relationship_initial_strength": (0, 1), "relationship_reinforcement": (0, 1),
        "mirror_fact_confidence": (0, 1), "min_link_name_length": (1, 100), "importance_category_map": (0, 1),
    }

    # safety limits a caller's overrides may lower but never raise (overrides_within_ceilings)
    CEILINGS: ClassVar[tuple] = ("max_message_bytes", "extraction_timeout_sec",
                                 "informed_extraction_topk", "informed_extraction_context_budget_tokens",
                                 "reconcile_candidates")

    max_message_bytes: int = 32 * 1024
    # What the event's vector embeds: "Speaker: text" (a question about Maria finds what Maria
    # said), optionally after this many previous messages from recent_messages, so a short reply
    # is found by what it answers. Measured on LoCoMo dev, recall@10: text alone 0.722,
    # "Speaker: text" 0.734, with one previous message 0.725 (the context dilutes the reply).
    event_embedding_speaker: bool = True
    event_embedding_context: int = 0
    extraction_timeout_sec: float = 30.0
    enable_informed_extraction: bool = True
    informed_extraction_topk: int = 10
    informed_extraction_context_budget_tokens: int = 800
    semantic_dedup_threshold: float = 0.85
    fuzzy_threshold: float = 0.85
    fuzzy_ambiguous_floor: float = 0.50
    enable_llm_resolution: bool = True
    reconcile_fast_path_below: float = 0.50
    reconcile_noop_above: float = 0.92
    reconcile_candidates: int = 20  # nearest active facts of the entity compared (plus its same-slot facts)
    relationship_initial_strength: float = 0.8
    relationship_reinforcement: float = 0.1
    mirror_fact_confidence: float = 0.60
    min_link_name_length: int = 3
    importance_category_map: dict[str, float] = field(default_factory=lambda: dict(IMPORTANCE_CATEGORY_MAP))
