"""A message that corrects a name said shortly before ("sorry, I meant Oak Lawn, not Elmhurst",
"his surname is Varga, not Vargas"): what the writer's last few messages stored naming the wrong
entity is restated with the right one. A helper of the `upsert` step."""

from __future__ import annotations

from datetime import timedelta

from django.db.models import Q

from memories.extraction.schema import Extraction
from memories.models import Entity, Event, Fact, Relationship
from memories.naming import person_names_compatible
from memories.pipeline.results import FactChange
from memories.pipeline.trace import StepRecord
from memories.pipeline.write.values import Storage
from memories.reconcile import CurrentEdge, plan_correction
from memories.services import entities as entity_services
from memories.services import facts as fact_services
from memories.services.relationships import relationship_upsert, relationships_close

CORRECTION_LOOKBACK_EVENTS = 3
CORRECTION_LOOKBACK = timedelta(days=2)


def apply_corrections(s: Storage, extraction: Extraction, step: StepRecord) -> None:
    """Facts get a new version (true from where the corrected one started: the wrong one never
    was), edges move to the right entity; nothing older than those messages changes."""
    if not extraction.corrections:
        return
    # the writer corrects what the writer said: another speaker's statements are theirs
    recent = list(Event.objects.filter(agent=s.agent, speaker=s.event.speaker, occurred_at__lte=s.occurred_at,
                                       occurred_at__gte=s.occurred_at - CORRECTION_LOOKBACK)
                  .exclude(pk=s.event.pk).order_by("-occurred_at", "-id")
                  .values_list("id", flat=True)[:CORRECTION_LOOKBACK_EVENTS])
    for correction in extraction.corrections:
        wrong, right = s.resolved.get(correction.wrong), s.resolved.get(correction.right)
        if wrong is None or right is None or wrong.id == right.id or not recent:
            continue
        facts = list(Fact.objects.select_for_update().current().filter(agent=s.agent, source_event_id__in=recent)
                     .about(wrong.id).order_by("id"))
        edges = list(Relationship.objects.select_for_update().current()
                     .filter(agent=s.agent, source_event_id__in=recent)
                     .filter(Q(source=wrong) | Q(target=wrong)).order_by("id"))
        names = [wrong.display_name, *wrong.aliases.values_list("alias", flat=True)]
        plan = plan_correction(
            wrong_id=wrong.id, right_id=right.id, wrong_names=names, right_name=right.display_name,
            facts=[(f.id, f.text, f.slot_value) for f in facts],
            edges=[CurrentEdge(e.id, e.source_id, e.rel_type, e.target_id) for e in edges],
        )
        if not plan.facts and not plan.edges:
            continue
        if right.type != wrong.type and right.id in s.resolved.created:
            # it names the same kind of thing as the name it corrects
            entity_services.entity_retype(agent=s.agent, entity=right, entity_type=wrong.type)
        reason = f"corrected: {right.display_name}, not {wrong.display_name}"
        restated = _restate_facts(s, facts, plan, wrong, right, reason)
        for edge in (e for e in edges if e.id in plan.edges):
            # the corrected edge was never true: it ends where it began
            relationships_close(agent=s.agent, ids=[edge.id], valid_to=edge.valid_from, learned_at=s.occurred_at)
            source_id, target_id = plan.edges[edge.id]
            relationship_upsert(
                agent=s.agent, source=right if source_id == right.id else edge.source,
                target=right if target_id == right.id else edge.target, rel_type=edge.rel_type,
                valid_from=edge.valid_from, evidence=restated.get(edge.evidence_fact_id), source_event=s.event,
                learned_at=s.occurred_at, initial_strength=edge.strength,
            )
        _merge_misnamed(s, wrong, right, reason)
        step.data.setdefault("corrections", []).append(
            {"wrong": wrong.key, "right": right.key, "facts": sorted(plan.facts), "edges": sorted(plan.edges)})


def _merge_misnamed(s: Storage, wrong: Entity, right: Entity, reason: str) -> None:
    """A person first stored under a wrong name and now named right for the first time is one
    person: the wrong entity merges into the right one (an operator can unmerge it), so his
    first name alone leads to him and no one else."""
    if (wrong.type == right.type == "person" and right.id in s.resolved.created and wrong.merged_into_id is None
            and person_names_compatible(right.display_name.split()[0], wrong.display_name, either_way=False)):
        entity_services.entity_merge(agent=s.agent, survivor_id=right.id, merged_id=wrong.id,
                                     actor="pipeline:correction", reason=reason)


def _restate_facts(s: Storage, facts: list[Fact], plan, wrong: Entity, right: Entity,
                   reason: str) -> dict[int, Fact]:
    """New versions of the corrected facts (same subject unless it was the wrong entity); old id → new."""
    todo = [f for f in facts if f.id in plan.facts]
    vectors = s.embedder.embed([plan.facts[f.id][0] for f in todo]) if todo else []
    out = {}
    for old, vector in zip(todo, vectors, strict=True):
        text, value = plan.facts[old.id]
        new = fact_services.fact_restate(
            old=old, text=text, embedding=vector, valid_from=old.valid_from, learned_at=s.occurred_at,
            reason=reason, drop=wrong, link_candidates=[right], source_event=s.event, slot_value=value,
            entity=right if old.entity_id == wrong.id else old.entity,
        )
        s.result.facts_updated.append(FactChange(fact_id=new.id, text=new.text, entity=new.entity.key,
                                                 reason=reason, previous_fact_id=old.id))
        out[old.id] = new
    return out
