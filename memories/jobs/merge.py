"""The merge_suggestions job's search for probable duplicate entities: pairs of one type whose
names or aliases overlap, whose name vectors are close, or that share neighbours, scored, and
stored for operators (`memories.services.maintenance.merge_suggestion_*`)."""

from __future__ import annotations

import logging
from collections import defaultdict
from dataclasses import dataclass, field
from itertools import combinations

import numpy as np
from django.conf import settings

from memories import prompts
from memories.jobs.runner import JobContext
from memories.models import Agent, Entity, EntityAlias, Fact, MergeSuggestionStatus, Relationship
from memories.naming import normalize_alias
from memories.pipeline.trace import StepRecord
from memories.providers.llm import LLMError
from memories.services import maintenance

logger = logging.getLogger(__name__)
NAME_VECTOR_MIN = 0.80  # cosine of name embeddings for a pair to be considered on vectors alone
WEIGHTS = {"name_vector": 0.45, "names": 0.35, "neighbours": 0.20}
SAME_SCHEMA = {"type": "object", "properties": {"same": {"type": "boolean"}, "reason": {"type": "string"}},
               "required": ["same", "reason"], "additionalProperties": False}


@dataclass
class Candidate:
    id: int
    type: str
    name: str
    names: set[str] = field(default_factory=set)
    vector: np.ndarray | None = None
    neighbours: set[int] = field(default_factory=set)


def name_overlap(a: set[str], b: set[str]) -> float:
    """1.0 when one entity's name or alias is contained, word for word, in one of the other's
    ("guilherme" / "guilherme maturana"); 0.8 when a name is the start (4+ letters) of the
    other's first word ("guili" / "guilherme"); else 0."""
    best = 0.0
    for x in a:
        for y in b:
            wx, wy = x.split(), y.split()
            if not wx or not wy:
                continue
            if x == y or set(wx) <= set(wy) or set(wy) <= set(wx):
                return 1.0
            short, long = sorted((wx[0], wy[0]), key=len)
            if len(short) >= 4 and long.startswith(short) and (len(wx) == 1 or len(wy) == 1):
                best = 0.8
    return best


def pair_score(a: Candidate, b: Candidate) -> tuple[float, dict]:
    cos = float(np.dot(a.vector, b.vector)) if a.vector is not None and b.vector is not None else 0.0
    names = name_overlap(a.names, b.names)
    union = a.neighbours | b.neighbours
    shared = len(a.neighbours & b.neighbours) / len(union) if union else 0.0
    score = WEIGHTS["name_vector"] * max(cos, 0.0) + WEIGHTS["names"] * names + WEIGHTS["neighbours"] * shared
    return round(score, 4), {"name_vector": round(cos, 4), "names": names, "neighbours": round(shared, 4),
                             "shared_neighbours": sorted(a.neighbours & b.neighbours)[:20]}


def _candidates(agent: Agent) -> dict[int, Candidate]:
    found = {}
    for eid, etype, name, vec in (Entity.objects.filter(agent=agent, merged_into__isnull=True)
                                  .values_list("id", "type", "display_name", "name_embedding")):
        v = None
        if vec is not None:
            v = np.asarray(vec, dtype=np.float32)
            v = v / (np.linalg.norm(v) or 1.0)
        found[eid] = Candidate(eid, etype, name, {normalize_alias(name)} - {""}, v)
    for eid, alias in EntityAlias.objects.filter(agent=agent, entity_id__in=list(found)).values_list(
            "entity_id", "alias"):
        found[eid].names.add(alias)
    for s, t in Relationship.objects.filter(agent=agent).current().values_list("source_id", "target_id"):
        if s in found and t in found:
            found[s].neighbours.add(t)
            found[t].neighbours.add(s)
    return found


def _pairs(cands: dict[int, Candidate]) -> set[tuple[int, int]]:
    """Pairs worth scoring: same type and (close name vectors, or a shared first-word prefix)."""
    pairs: set[tuple[int, int]] = set()
    by_type: dict[str, list[Candidate]] = defaultdict(list)
    for c in cands.values():
        by_type[c.type].append(c)
    for group in by_type.values():
        prefix: dict[str, list[int]] = defaultdict(list)
        for c in group:
            for n in c.names:
                for word in n.split()[:3]:
                    if len(word) >= 4:
                        prefix[word[:4]].append(c.id)
        for ids in prefix.values():
            if len(ids) <= 50:
                pairs.update((min(a, b), max(a, b)) for a, b in combinations(sorted(set(ids)), 2))
        with_vec = [c for c in group if c.vector is not None]
        if len(with_vec) < 2:
            continue
        matrix = np.stack([c.vector for c in with_vec])
        for start in range(0, len(with_vec), 512):
            sims = matrix[start:start + 512] @ matrix.T
            for i, j in zip(*np.nonzero(sims >= NAME_VECTOR_MIN), strict=True):
                a, b = with_vec[start + i].id, with_vec[j].id
                if a != b:
                    pairs.add((min(a, b), max(a, b)))
    return pairs


def merge_suggestions_find(ctx: JobContext, agent: Agent, step: StepRecord) -> dict:
    cands = _candidates(agent)
    pairs = _pairs(cands)
    step.candidates_in = len(pairs)
    threshold = settings.ANAMNESIS_MERGE_SUGGESTION_MIN_SCORE
    counts = {"entities": len(cands), "pairs": len(pairs), "suggested": 0, "new": 0, "auto_merged": 0,
              "complete": True}
    for a, b in sorted(pairs):
        if ctx.out_of_time():
            counts["complete"] = False
            break
        score, reasons = pair_score(cands[a], cands[b])
        if score < threshold:
            continue
        suggestion, created = maintenance.merge_suggestion_upsert(agent=agent, a_id=a, b_id=b, score=score,
                                                                  reasons=reasons)
        counts["suggested"] += 1
        counts["new"] += int(created)
        if suggestion.status == MergeSuggestionStatus.OPEN and _auto_merge_confirmed(ctx, cands[a], cands[b], step):
            maintenance.merge_suggestion_accept(agent=agent, suggestion_id=suggestion.id,
                                                actor=maintenance.JOB_ACTOR.format(name="merge_suggestions"),
                                                reason="confirmed by the LLM")
            counts["auto_merged"] += 1
    step.candidates_out = counts["suggested"]
    return counts


def _auto_merge_confirmed(ctx: JobContext, a: Candidate, b: Candidate, step: StepRecord) -> bool:
    """Only with ANAMNESIS_AUTO_MERGE on and an LLM configured, and only when it says yes."""
    if not settings.ANAMNESIS_AUTO_MERGE or not ctx.llm.enabled:
        return False

    def describe(c: Candidate) -> tuple[str, str]:
        facts = Fact.objects.filter(entity_id=c.id).current().order_by("-importance").values_list("text", flat=True)
        return f"{c.name} ({c.type}; also {', '.join(sorted(c.names)) or '-'})", "\n".join(f"- {t}" for t in facts[:20])

    (a_text, a_facts), (b_text, b_facts) = describe(a), describe(b)
    try:
        reply = ctx.llm.complete_json(system=prompts.SAME_ENTITY_SYSTEM, schema=SAME_SCHEMA, schema_name="same_entity",
                                      user=prompts.SAME_ENTITY_USER.format(a=a_text, a_facts=a_facts or "-",
                                                                           b=b_text, b_facts=b_facts or "-"))
    except LLMError as exc:
        ctx.tracer.add_usage(step, exc.usage)
        logger.warning("merge confirmation of %s/%s failed: %s", a.id, b.id, exc)
        return False
    ctx.tracer.add_usage(step, reply.usage)
    return bool((reply.data or {}).get("same") is True)
