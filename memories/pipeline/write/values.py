"""The values the write steps hand each other (memories/pipeline/write/__init__.py runs them):

    Message ─ alias_lookup → Known ─ pre_retrieval → knowledge ─ extraction → Extracted
            ─ normalize_dedup → Extracted (deduplicated, with vectors)          [before the transaction]
            ─ resolve_entities → Resolved ─ reconcile → decisions ─ upsert      [inside it]

Each is built by one step and only read by the later ones, except `WriteResult`, which the
storing steps fill in as they change rows."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from datetime import datetime

import numpy as np

from memories.config import WriteConfig
from memories.extraction.schema import ExtractedFact, Extraction
from memories.models import Agent, Entity, Event
from memories.naming import normalize_alias
from memories.pipeline.results import WriteResult
from memories.providers.embeddings import EmbedderClient
from memories.reconcile import Decision


@dataclass(frozen=True)
class Message:
    """The message being written: its event, who wrote it (after a self-introduction, the person
    who did), the messages said just before it, and the write's settings."""

    agent: Agent
    event: Event
    speaker: str
    config: WriteConfig
    recent: tuple[str, ...] = ()

    @property
    def text(self) -> str:
        return self.event.text

    @property
    def occurred_at(self) -> datetime:
        return self.event.occurred_at

    def written_by(self, speaker: str) -> Message:
        return replace(self, speaker=speaker)


@dataclass
class Known:
    """What the agent already knows that the message names (the alias lookup's answer)."""

    entities: dict[int, Entity] = field(default_factory=dict)
    names: set[str] = field(default_factory=set)
    aliases: dict[str, str] = field(default_factory=dict)  # surface in the message → canonical name
    types: dict[str, str] = field(default_factory=dict)  # canonical name → stored type
    kin_words: set[str] = field(default_factory=set)  # "Dad" said for the writer's father: no name of his
    companions: dict[int, list[Entity]] = field(default_factory=dict)  # "my parents" → the other parent

    def add(self, entity: Entity, surface: str) -> None:
        """The message says `surface` for this known entity."""
        self.entities[entity.id] = entity
        self.names.add(surface)
        self.names.add(entity.display_name)
        self.types[entity.display_name] = entity.type
        if normalize_alias(surface) != normalize_alias(entity.display_name):
            self.aliases[surface] = entity.display_name


@dataclass
class Extracted:
    """What the message says, as extracted, and how (informed / blind / offline); after
    `normalize_dedup`, one vector per fact."""

    extraction: Extraction
    path: str
    vectors: list[np.ndarray] = field(default_factory=list)
    skipped: list[dict] = field(default_factory=list)  # what could not be stored, and why


@dataclass
class Resolved:
    """Every name the extraction used, resolved to an entity (found or created)."""

    by_name: dict[str, Entity] = field(default_factory=dict)  # normalized name → entity
    names_by_entity: dict[int, set[str]] = field(default_factory=dict)
    created: set[int] = field(default_factory=set)  # entities this write created
    known: dict[int, Entity] = field(default_factory=dict)  # the alias lookup's, linked as well

    def get(self, name: str) -> Entity | None:
        return self.by_name.get(normalize_alias(name))

    def __getitem__(self, name: str) -> Entity:
        return self.by_name[normalize_alias(name)]

    def entities(self) -> list[Entity]:
        """Every entity this message names, resolved or found by the lookup."""
        unique = {e.id: e for e in self.by_name.values()}
        unique.update(self.known)
        return list(unique.values())


# One decision per extracted fact: the fact, its vector and ADD / UPDATE / NOOP / DELETE.
Decided = list[tuple[ExtractedFact, np.ndarray, Decision]]


@dataclass
class Storage:
    """What the storing helpers of `upsert` share: the message, the entities it resolved, the
    embedder for texts the write makes up (mirror facts, narrowed statements) and the result
    they fill in."""

    message: Message
    resolved: Resolved
    embedder: EmbedderClient
    result: WriteResult

    @property
    def agent(self) -> Agent:
        return self.message.agent

    @property
    def event(self) -> Event:
        return self.message.event

    @property
    def occurred_at(self) -> datetime:
        return self.message.occurred_at
