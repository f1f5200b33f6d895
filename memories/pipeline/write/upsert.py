"""Step `upsert`, inside the write's transaction: corrections first, then each fact decision in
its own savepoint, the statements cessations end, the relationships, and the profiles."""

from __future__ import annotations

import logging

from django.db import DatabaseError, transaction

from memories import selectors
from memories.extraction.schema import Extraction
from memories.models import Entity, Fact
from memories.naming import normalize_alias
from memories.pipeline.trace import StepRecord
from memories.pipeline.write.corrections import apply_corrections
from memories.pipeline.write.facts import apply_decision, close_ended
from memories.pipeline.write.relate import close_unnamed, record_ended_states, relationships
from memories.pipeline.write.values import Decided, Known, Storage
from memories.profiles import profile_text
from memories.services import entities as entity_services
from memories.services.agents import agent_graph_bump_on_commit
from memories.services.keyword import keyword_stats_apply

logger = logging.getLogger(__name__)


def upsert(s: Storage, extraction: Extraction, known: Known, decided: Decided, step: StepRecord) -> list[Fact]:
    """Apply each decision in its own savepoint; then relationships (with evidence or mirror
    facts) and profiles. Returns the facts stored or confirmed."""
    apply_corrections(s, extraction, step)
    persisted: list[Fact] = []
    for fact, vector, decision in decided:
        try:
            with transaction.atomic():
                stored = apply_decision(s, fact, vector, decision)
        except DatabaseError as exc:
            logger.warning("fact upsert failed: %s", exc)
            step.data.setdefault("failures", []).append({"fact": fact.text, "error": str(exc)[:200]})
            continue
        if stored is not None:
            persisted.append(stored)
    close_ended(s, decided, step)
    close_unnamed(s, extraction, step)
    relationships(s, extraction, known, persisted, step)
    record_ended_states(s, extraction, persisted, step)
    _seed_profiles(s, extraction, persisted)
    _refresh_changed_profiles(s, step)
    new_ids = sorted(c.fact_id for c in s.result.facts_added + s.result.facts_updated)
    keyword_stats_apply(agent_id=s.agent.id, kind="fact", ids=new_ids)
    if new_ids or s.result.relationships or s.result.facts_deleted:
        agent_graph_bump_on_commit(agent_id=s.agent.id)
    step.candidates_out = len(persisted)
    return persisted


def _seed_profiles(s: Storage, extraction: Extraction, persisted: list[Fact]) -> None:
    """An entity without a profile gets the one the extraction wrote, else its facts of this write."""
    profiles = {normalize_alias(k): v for k, v in extraction.profiles.items()}
    for entity in {e.id: e for e in s.resolved.by_name.values()}.values():
        if entity.profile_text:
            continue
        text = profiles.get(normalize_alias(entity.display_name)) or " ".join(
            f.text.rstrip(".") + "." for f in persisted if f.entity_id == entity.id
        )[:1200]
        entity_services.entity_profile_seed(entity=entity, text=text)


def _refresh_changed_profiles(s: Storage, step: StepRecord) -> None:
    """A profile that states what this write superseded or closed is rewritten at once from the
    entity's current facts (the deterministic summary; `consolidate_profiles` rewrites it again,
    with the LLM when there is one, since its facts changed)."""
    keys = {c.entity for c in s.result.facts_updated + s.result.facts_deleted if c.entity}
    if not keys:
        return
    entities = list(Entity.objects.filter(agent=s.agent, key__in=keys, merged_into__isnull=True)
                    .exclude(profile_text="").defer("name_embedding"))
    rows = selectors.profile_facts(agent=s.agent, entity_ids=[e.id for e in entities])
    for entity in entities:
        text = profile_text(name=entity.display_name, entity_type=entity.type, facts=rows.get(entity.id, []))
        if text and text != entity.profile_text:
            entity_services.entity_profile_set(entity=entity, text=text)
            step.data.setdefault("profiles_refreshed", []).append(entity.id)
