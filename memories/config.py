"""Declarative pipeline configuration: frozen dataclasses with the reference defaults, each
number's range — and whether it is a server-side ceiling — declared in its field's metadata
(`bounded`), and per-call overrides by setting name, validated by type and range (an unknown
name, a wrong type or a value out of range is a ConfigError naming the setting).

A config is flat (`WriteConfig`) or made of sections, one frozen dataclass per stage
(`retrieval.config.RetrievalConfig`); either way a caller names a setting by its own name
("topk_facts", "fusion"), never by its section, so every setting name is unique in a config."""

from __future__ import annotations

import dataclasses
import functools
import typing
from dataclasses import dataclass, field
from enum import Enum
from typing import Any

from memories.errors import ConfigError
from memories.extraction.schema import IMPORTANCE_CATEGORY_MAP


@dataclass(frozen=True)
class Bounds:
    """A number setting's range (each number of a tuple or mapping setting); `ceiling`: a
    server-side limit a caller may lower, never raise (`overrides_within_ceilings`)."""

    low: float = 0
    high: float | None = None
    ceiling: bool = False

    def check(self, name: str, value) -> None:
        values = value.values() if isinstance(value, dict) else value if isinstance(value, tuple) else [value]
        for item in values:
            if isinstance(item, bool) or not isinstance(item, (int, float)):
                continue
            if item != item or item < self.low or (self.high is not None and item > self.high):
                span = f"between {self.low} and {self.high}" if self.high is not None else f"at least {self.low}"
                raise ConfigError(f"setting '{name}' must be {span}", {name: span})


_BOUNDS = "bounds"
NON_NEGATIVE = Bounds()  # a number setting that declares no range


def bounded(low: float = 0, high: float | None = None, *, ceiling: bool = False) -> dict:
    """Field metadata declaring the setting's range: `field(default=20, metadata=bounded(1, 200))`."""
    return {_BOUNDS: Bounds(low, high, ceiling)}


@dataclass(frozen=True)
class Setting:
    """One setting of a config class: its name, the section holding it (None in a flat config),
    its type and its bounds."""

    name: str
    section: str | None
    hint: Any
    bounds: Bounds

    def value(self, config):
        return getattr(getattr(config, self.section) if self.section else config, self.name)

    def validated(self, value):
        """`value` as this setting's type (a float from an int, an enum member from its value),
        checked against the bounds; else a ConfigError naming the setting."""
        value = _coerce(self.name, value, self.hint)
        self.bounds.check(self.name, value)
        return value


@functools.cache
def settings_of(cls) -> dict[str, Setting]:
    """Every setting of a config class by name, those of its sections included."""
    out: dict[str, Setting] = {}
    hints = typing.get_type_hints(cls)
    for f in dataclasses.fields(cls):
        if dataclasses.is_dataclass(hints[f.name]):
            section, section_hints = hints[f.name], typing.get_type_hints(hints[f.name])
            found = [Setting(s.name, f.name, section_hints[s.name], s.metadata.get(_BOUNDS, NON_NEGATIVE))
                     for s in dataclasses.fields(section)]
        else:
            found = [Setting(f.name, None, hints[f.name], f.metadata.get(_BOUNDS, NON_NEGATIVE))]
        for setting in found:
            if setting.name in out:
                raise TypeError(f"{cls.__name__} has two settings named {setting.name!r}")
            out[setting.name] = setting
    return out


@dataclass(frozen=True)
class Settings:
    """Base of a flat config or of a config section: every setting is checked (type and bounds)
    when the config is built, so a bad value never reaches a pipeline."""

    def __post_init__(self):
        for name, setting in settings_of(type(self)).items():
            object.__setattr__(self, name, setting.validated(getattr(self, name)))


def apply_overrides(config, overrides: dict | None):
    """Return a copy of `config` with `overrides` (setting name → value) applied, checking
    names, types and bounds; a mapping override changes only the keys it names."""
    if not overrides:
        return config
    if not isinstance(overrides, dict):
        raise ConfigError("config_overrides must be an object of setting names to values")
    known = settings_of(type(config))
    unknown = sorted(set(overrides) - set(known))
    if unknown:
        raise ConfigError(
            f"unknown setting(s): {', '.join(unknown)}",
            {"unknown": unknown, "allowed": sorted(known)},
        )
    changes: dict[str | None, dict] = {}
    for name, value in overrides.items():
        setting = known[name]
        value = setting.validated(value)
        current = setting.value(config)
        if isinstance(current, dict):
            if set(value) - set(current):
                extra = sorted(set(value) - set(current))
                raise ConfigError(f"setting '{name}' has unknown key(s): {', '.join(extra)}",
                                  {name: {"unknown": extra, "allowed": sorted(current)}})
            # a mapping override changes the keys it names; the others keep their values
            value = {**current, **value}
        changes.setdefault(setting.section, {})[name] = value
    top = changes.pop(None, {})
    for section, values in changes.items():
        top[section] = dataclasses.replace(getattr(config, section), **values)
    return dataclasses.replace(config, **top)


def overrides_within_ceilings(cls, overrides: dict | None) -> None:
    """A caller's overrides may lower the server's safety limits (the settings declared
    `ceiling=True`: sizes, pools, hops, timeouts), never raise them above the server's values:
    a 400 naming the setting."""
    if not isinstance(overrides, dict):
        return
    defaults = cls()
    for name, setting in settings_of(cls).items():
        if not setting.bounds.ceiling:
            continue
        value, ceiling = overrides.get(name), setting.value(defaults)
        if isinstance(value, (int, float)) and not isinstance(value, bool) and value > ceiling:
            raise ConfigError(f"setting '{name}' is a server-side limit: it can be lowered, not raised above "
                              f"{ceiling}", {name: f"at most {ceiling}"})


def _coerce(name: str, value, hint):
    origin = typing.get_origin(hint)
    if isinstance(hint, type) and issubclass(hint, Enum):
        if isinstance(value, str) and value in {member.value for member in hint}:
            return hint(value)
        choices = ", ".join(repr(member.value) for member in hint)
        raise ConfigError(f"setting '{name}' must be one of {choices}", {name: f"one of {choices}"})
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
class WriteConfig(Settings):
    """Settings of the write pipeline (defaults from the reference)."""

    max_message_bytes: int = field(default=32 * 1024, metadata=bounded(1, 1024 * 1024, ceiling=True))
    # What the event's vector embeds: "Speaker: text" (a question about Maria finds what Maria
    # said), optionally after this many previous messages from recent_messages, so a short reply
    # is found by what it answers. Measured on LoCoMo dev, recall@10: text alone 0.722,
    # "Speaker: text" 0.734, with one previous message 0.725 (the context dilutes the reply).
    event_embedding_speaker: bool = True
    event_embedding_context: int = field(default=0, metadata=bounded(0, 10))
    extraction_timeout_sec: float = field(default=30.0, metadata=bounded(0.1, 600, ceiling=True))
    enable_informed_extraction: bool = True
    informed_extraction_topk: int = field(default=10, metadata=bounded(0, 200, ceiling=True))
    informed_extraction_context_budget_tokens: int = field(default=800, metadata=bounded(0, 32000, ceiling=True))
    semantic_dedup_threshold: float = field(default=0.85, metadata=bounded(0, 1))
    # the offline extractor's semantic back-off (memories/extraction/offline/frames.py): where no
    # rule or frame links a person to a place or organization of the same clause, the clause is
    # compared with the frames' prototype sentences by the embedder
    offline_semantic_backoff: bool = True
    fuzzy_threshold: float = field(default=0.85, metadata=bounded(0, 1))
    fuzzy_ambiguous_floor: float = field(default=0.50, metadata=bounded(0, 1))
    enable_llm_resolution: bool = True
    reconcile_fast_path_below: float = field(default=0.50, metadata=bounded(0, 1))
    reconcile_noop_above: float = field(default=0.92, metadata=bounded(0, 1))
    # nearest active facts of the entity compared (plus its same-slot facts)
    reconcile_candidates: int = field(default=20, metadata=bounded(1, 1000, ceiling=True))
    relationship_initial_strength: float = field(default=0.8, metadata=bounded(0, 1))
    relationship_reinforcement: float = field(default=0.1, metadata=bounded(0, 1))
    mirror_fact_confidence: float = field(default=0.60, metadata=bounded(0, 1))
    min_link_name_length: int = field(default=3, metadata=bounded(1, 100))
    importance_category_map: dict[str, float] = field(default_factory=lambda: dict(IMPORTANCE_CATEGORY_MAP),
                                                      metadata=bounded(0, 1))
