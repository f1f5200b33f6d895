"""The memories app's background jobs: consolidate_profiles, importance, decay, dedupe_facts,
merge_suggestions. Each handler reads one agent's rows, decides with the pure functions of
`memories.scoring` / `statements` / `profiles`, and writes through `memories.services.maintenance`."""

from __future__ import annotations

import logging
from collections import defaultdict
from datetime import datetime

import numpy as np
from django.conf import settings
from django.db.models import Count, Q

from memories import prompts
from memories.extraction.schema import IMPORTANCE_CATEGORY_MAP
from memories.jobs import Job, job_register
from memories.jobs.merge import merge_suggestions_find
from memories.jobs.runner import JobContext
from memories.models import Agent, AuditEntry, Entity, Fact, FactEntityLink, Relationship, SourceContext
from memories.pipeline.trace import StepRecord
from memories.profiles import ProfileFact, profile_text
from memories.providers.llm import LLMError
from memories.scoring import DecayPolicy, decay_confidence, dynamic_importance, entity_importance
from memories.selectors import profile_facts
from memories.services import entities as entity_services
from memories.services import maintenance
from memories.services.facts import facts_access_fold
from memories.statements import FactRow, duplicate_groups

logger = logging.getLogger(__name__)
CHANGED_EPSILON = 1e-4
PROFILE_SCHEMA = {"type": "object", "properties": {"profile": {"type": "string"}}, "required": ["profile"],
                  "additionalProperties": False}


def _ts(values) -> np.ndarray:
    """Datetimes (or None) as POSIX seconds (NaN for None)."""
    return np.array([v.timestamp() if v is not None else np.nan for v in values], dtype=np.float64)


def _changed_entity_ids(agent: Agent, since: datetime | None) -> list[int]:
    """Entities whose facts (as subject or mentioned) changed since `since` (None: every entity
    with a current fact)."""
    facts = Fact.objects.filter(agent=agent)
    if since is None:
        facts = facts.current()
    else:
        facts = facts.filter(Q(recorded_at__gt=since) | Q(invalidated_at__gt=since) | Q(valid_to__gt=since))
    ids = set(facts.values_list("entity_id", flat=True))
    ids |= set(FactEntityLink.objects.filter(fact__in=facts).values_list("entity_id", flat=True))
    return sorted(ids)


# --- consolidate_profiles -------------------------------------------------------------------------

def consolidate_profiles(ctx: JobContext, agent: Agent, step: StepRecord) -> dict:
    """Rewrite the profile of every entity whose facts changed since the last pass, from all its
    current facts: with an LLM one call per entity, else (or when the call fails) a deterministic
    summary grouped by slot."""
    entity_ids = _changed_entity_ids(agent, ctx.since)
    step.candidates_in = len(entity_ids)
    counts = {"entities": len(entity_ids), "profiles_written": 0, "llm_profiles": 0, "llm_failures": 0,
              "complete": True}
    for start in range(0, len(entity_ids), 200):
        if ctx.out_of_time():
            counts["complete"] = False
            break
        batch = entity_ids[start:start + 200]
        entities = {e.id: e for e in Entity.objects.filter(agent=agent, id__in=batch, merged_into__isnull=True)
                    .defer("name_embedding")}
        facts = profile_facts(agent=agent, entity_ids=list(entities))
        for entity_id, entity in entities.items():
            rows = facts.get(entity_id, [])
            text = _llm_profile(ctx, entity, rows, step, counts) if ctx.llm.enabled and rows else None
            text = text or profile_text(name=entity.display_name, entity_type=entity.type, facts=rows)
            if text != entity.profile_text:
                entity_services.entity_profile_set(entity=entity, text=text)
                counts["profiles_written"] += 1
    step.candidates_out = counts["profiles_written"]
    return counts


def _llm_profile(ctx: JobContext, entity: Entity, rows: list[ProfileFact], step: StepRecord, counts: dict):
    lines = "\n".join(f"- {f.text}" for f in sorted(rows, key=lambda f: (-f.importance, f.id))[:80])
    try:
        reply = ctx.llm.complete_json(
            system=prompts.PROFILE_SYSTEM, schema=PROFILE_SCHEMA, schema_name="entity_profile",
            user=prompts.PROFILE_USER.format(name=entity.display_name, entity_type=entity.type, facts=lines))
    except LLMError as exc:
        ctx.tracer.add_usage(step, exc.usage)
        counts["llm_failures"] += 1
        logger.warning("profile of entity %s: LLM failed (%s); deterministic profile", entity.id, exc)
        return None
    ctx.tracer.add_usage(step, reply.usage)
    text = str((reply.data or {}).get("profile", "")).strip()
    if text:
        counts["llm_profiles"] += 1
    return text[:4000] or None


# --- importance ----------------------------------------------------------------------------------

def importance(ctx: JobContext, agent: Agent, step: StepRecord) -> dict:
    """Recompute every current fact's importance (retrieval frequency, recency of use, operator
    corrections, pattern membership) and every entity's from its facts and connections."""
    facts_access_fold(agent=agent)  # the retrievals counted since the last pass
    rows = list(Fact.objects.filter(agent=agent).current().values_list(
        "id", "entity_id", "importance", "importance_category", "access_count", "last_accessed_at",
        "reinforcement_count", "source_context", "supersedes_id"))
    step.candidates_in = len(rows)
    if not rows:
        return {"facts": 0, "facts_changed": 0, "entities_changed": 0}
    ids, entity_ids, old, category, access, accessed_at, reinforced, source, supersedes = map(list, zip(*rows,
                                                                                                      strict=True))
    audited = set(AuditEntry.objects.filter(agent=agent, object_type="fact", action="fact_correct")
                  .values_list("object_id", flat=True))
    corrected = np.array([s == SourceContext.OPERATOR or str(i) in audited or str(p) in audited
                          for i, s, p in zip(ids, source, supersedes, strict=True)])
    base = np.array([IMPORTANCE_CATEGORY_MAP.get(c, 0.5) for c in category])
    days = (ctx.pass_started.timestamp() - _ts(accessed_at)) / 86400.0
    new = dynamic_importance(base, np.array(access, dtype=np.float64), np.where(np.isnan(days), np.inf, days),
                             corrected, np.array(reinforced, dtype=np.float64))
    changed = np.abs(new - np.array(old)) > CHANGED_EPSILON
    facts_changed = maintenance.facts_column_set(
        agent=agent, column="importance", ids=np.array(ids)[changed].tolist(), values=new[changed].tolist())
    by_entity: dict[int, list[float]] = defaultdict(list)
    for entity_id, value in zip(entity_ids, new.tolist(), strict=True):
        by_entity[entity_id].append(value)
    degree = defaultdict(int)
    for column in ("source_id", "target_id"):
        for entity_id, n in (Relationship.objects.filter(agent=agent).current().values_list(column)
                             .annotate(n=Count("id"))):
            degree[entity_id] += n
    current = dict(Entity.objects.filter(agent=agent, id__in=list(by_entity)).values_list("id", "importance"))
    entity_values = {e: entity_importance(v, degree[e]) for e, v in by_entity.items()}
    entity_values = {e: v for e, v in entity_values.items() if abs(current.get(e, -1) - v) > CHANGED_EPSILON}
    entities_changed = maintenance.entities_importance_set(agent=agent, values=entity_values)
    step.candidates_out = facts_changed
    return {"facts": len(rows), "facts_changed": facts_changed, "entities_changed": entities_changed}


# --- decay ---------------------------------------------------------------------------------------

def decay_policy() -> DecayPolicy:
    return DecayPolicy(half_life_days=settings.ANAMNESIS_DECAY_HALF_LIFE_DAYS, floor=settings.ANAMNESIS_DECAY_FLOOR)


def decay(ctx: JobContext, agent: Agent, step: StepRecord) -> dict:
    """Decay the confidence of every current fact (an operator's excepted) for the time since the
    previous pass, toward the floor, and reinforce the ones confirmed or retrieved meanwhile."""
    facts_access_fold(agent=agent)  # the retrievals counted since the last pass
    rows = list(Fact.objects.filter(agent=agent).current().exclude(source_context=SourceContext.OPERATOR)
                .values_list("id", "confidence", "recorded_at", "last_confirmed_at", "last_accessed_at",
                             "access_count", "reinforcement_count"))
    step.candidates_in = len(rows)
    if not rows:
        return {"facts": 0, "facts_changed": 0, "reinforced": 0}
    ids, confidence, recorded, confirmed_at, accessed_at, access, reinforced = map(list, zip(*rows, strict=True))
    now = ctx.pass_started.timestamp()
    since = ctx.since.timestamp() if ctx.since else -np.inf
    recorded_ts, confirmed_ts, accessed_ts = _ts(recorded), _ts(confirmed_at), _ts(accessed_at)
    start = np.fmax(np.fmax(np.fmax(recorded_ts, since), confirmed_ts), accessed_ts)
    confirmed = np.nan_to_num(confirmed_ts, nan=-np.inf) > np.maximum(since, recorded_ts + 1.0)
    accessed = np.nan_to_num(accessed_ts, nan=-np.inf) > since if ctx.since else np.zeros(len(ids), dtype=bool)
    new = decay_confidence(np.array(confidence), now - start, np.array(access, dtype=np.float64),
                           np.array(reinforced, dtype=np.float64), confirmed, accessed, decay_policy())
    changed = np.abs(new - np.array(confidence)) > CHANGED_EPSILON
    facts_changed = maintenance.facts_column_set(
        agent=agent, column="confidence", ids=np.array(ids)[changed].tolist(), values=new[changed].tolist())
    step.candidates_out = facts_changed
    return {"facts": len(rows), "facts_changed": facts_changed,
            "reinforced": int(np.count_nonzero(confirmed | accessed))}


# --- dedupe_facts --------------------------------------------------------------------------------

def dedupe_facts(ctx: JobContext, agent: Agent, step: StepRecord) -> dict:
    """Consolidate current facts of one entity that say the same statement (entities whose facts
    changed since the last pass): one kept and reinforced, the others closed with the reason."""
    changed = _changed_entity_ids(agent, ctx.since)
    rows = list(Fact.objects.filter(agent=agent, entity_id__in=changed).current().order_by("entity_id", "id")
                .values_list("id", "entity_id", "text", "slot", "slot_value", "confidence", "reinforcement_count",
                             "recorded_at"))
    step.candidates_in = len(rows)
    by_entity: dict[int, list[FactRow]] = defaultdict(list)
    for fid, entity_id, text, slot, value, conf, reinf, recorded in rows:
        by_entity[entity_id].append(FactRow(fid, text, slot, value, conf, reinf, recorded.timestamp()))
    counts = {"entities": len(by_entity), "facts": len(rows), "groups": 0, "closed": 0, "complete": True}
    actor = maintenance.JOB_ACTOR.format(name="dedupe_facts")
    for facts in by_entity.values():
        if len(facts) < 2:
            continue
        if ctx.out_of_time():
            counts["complete"] = False
            break
        for kept, duplicates, why in duplicate_groups(facts, _slot_vectors(facts)):
            counts["groups"] += 1
            counts["closed"] += maintenance.facts_duplicates_consolidate(
                agent=agent, kept_id=kept.id, duplicate_ids=[d.id for d in duplicates], reason=why, actor=actor)
    step.candidates_out = counts["closed"]
    return counts


def _slot_vectors(facts: list[FactRow]) -> np.ndarray | None:
    """Embeddings of the facts that share a filled slot with another (the only ones compared)."""
    slots = defaultdict(int)
    for f in facts:
        if f.slot and f.slot_value:
            slots[(f.slot, f.slot_value.strip().lower())] += 1
    wanted = [f.id for f in facts if f.slot and f.slot_value and slots[(f.slot, f.slot_value.strip().lower())] > 1]
    if not wanted:
        return None
    found = dict(Fact.objects.filter(id__in=wanted).values_list("id", "embedding"))
    vectors = np.zeros((len(facts), settings.ANAMNESIS_EMBEDDING_DIMENSIONS), dtype=np.float32)
    for i, f in enumerate(facts):
        vec = found.get(f.id)
        if vec is not None:
            v = np.asarray(vec, dtype=np.float32)
            vectors[i] = v / (np.linalg.norm(v) or 1.0)
    return vectors


# --- merge_suggestions ---------------------------------------------------------------------------

def merge_suggestions(ctx: JobContext, agent: Agent, step: StepRecord) -> dict:
    """Store probable duplicate entities for operators. Merged automatically only when
    ANAMNESIS_AUTO_MERGE is on, an LLM is configured and it confirms the pair."""
    counts = merge_suggestions_find(ctx, agent, step)
    counts["pruned"] = maintenance.merge_suggestions_prune(agent=agent)
    return counts


for _job in (
    Job("consolidate_profiles", "Entity profiles rewritten from all their current facts (changed entities only)",
        handler=consolidate_profiles, every_seconds=3600),
    Job("importance", "Fact and entity importance from retrieval frequency, recency of use, corrections, patterns",
        handler=importance, every_seconds=6 * 3600),
    Job("decay", "Confidence decay toward the floor since the last pass; reinforcement by confirmations and use",
        handler=decay, every_seconds=24 * 3600),
    Job("dedupe_facts", "Current facts of one entity saying the same statement consolidated into one",
        handler=dedupe_facts, every_seconds=3600),
    Job("merge_suggestions", "Probable duplicate entities listed for operators to merge or dismiss",
        handler=merge_suggestions, every_seconds=6 * 3600),
):
    job_register(_job)
