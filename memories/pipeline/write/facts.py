"""Storing a write's facts: one decision applied (ADD / UPDATE / NOOP / DELETE), the statements a
cessation ends ("quit coffee"), and the holder's facts that name a slot value that ended. Helpers
of the `upsert` step; every row is written by memories.services.facts."""

from __future__ import annotations

from datetime import datetime

import numpy as np

from memories.extraction.mentions import is_one_sentence
from memories.extraction.offline.parse import without_ended_item
from memories.extraction.schema import ExtractedFact
from memories.models import Entity, Fact
from memories.naming import normalize_alias
from memories.pipeline.results import FactChange
from memories.pipeline.trace import StepRecord
from memories.pipeline.write.values import Decided, Storage
from memories.reconcile import (
    ADD,
    DELETE,
    NOOP,
    UPDATE,
    Decision,
    cessation_pattern,
    fact_slot_group,
    facts_ended_by,
)
from memories.selectors.entities import resolve_exact
from memories.services import facts as fact_services
from memories.services import slots
from memories.temporal import statement_start


def world_start(s: Storage, fact: ExtractedFact | None) -> datetime:
    """When the stated fact (or the message) began in the world: its own temporal expression
    ("moved to Toronto in September"), else that of a one-sentence message (an extractor may
    drop the words), else the time the message was said."""
    start = statement_start(fact.text, s.occurred_at) if fact is not None else None
    if start is None and is_one_sentence(s.message.text):
        start = statement_start(s.message.text, s.occurred_at)
    return start or s.occurred_at


def apply_decision(s: Storage, fact: ExtractedFact, vector: np.ndarray, decision: Decision) -> Fact | None:
    """Store one fact as decided; returns the stored (or reinforced) version, None for a DELETE."""
    entity = s.resolved[fact.subject]
    change = FactChange(fact_id=None, text=fact.text, entity=entity.key, reason=decision.reason)
    if decision.action in {UPDATE, NOOP, DELETE}:
        target = Fact.objects.select_for_update().current().filter(pk=decision.target_id, agent=s.agent).first()
        if target is None:  # closed meanwhile by a concurrent write: treat as new information
            decision = Decision(ADD, None, "target fact no longer active", "fallback", decision.similarity)
    if decision.action == NOOP:
        fact_services.fact_reinforce(fact=target)
        change.fact_id, change.text = target.id, target.text
        s.result.facts_unchanged.append(change)
        return target
    if decision.action == DELETE:
        fact_services.fact_close(fact=target, valid_to=world_start(s, fact), reason=f"retracted: {decision.reason}",
                                 learned_at=s.occurred_at)
        change.fact_id, change.text, change.previous_fact_id = target.id, target.text, target.id
        s.result.facts_deleted.append(change)
        return None
    config = s.message.config
    fields = dict(
        entity=entity, confidence=fact.confidence,
        importance=config.importance_category_map.get(fact.importance_category, 0.5),
        importance_category=fact.importance_category if fact.importance_category in
        config.importance_category_map else "", source_context=fact.source_context,
        speaker=s.message.speaker, source_event=s.event, slot=fact.slot, slot_value=fact.value,
    )
    links = [(e, sorted(s.resolved.names_by_entity.get(e.id, ()))) for e in s.resolved.entities()]
    fields |= dict(links=links, min_link_length=config.min_link_name_length)  # stored with the version
    if decision.action == UPDATE:
        stored = fact_services.fact_supersede(
            old=target, new_text=fact.text, embedding=vector, valid_from=world_start(s, fact),
            learned_at=s.occurred_at, reason=f"superseded: {decision.reason}", **fields,
        )
        change.previous_fact_id = target.id
        s.result.facts_updated.append(change)
        if target.slot and normalize_alias(target.slot_value) != normalize_alias(fact.value):
            _close_replaced_value_facts(s, holder=entity, slot=target.slot, old_value=target.slot_value)
    else:
        stored = fact_services.fact_add(agent=s.agent, text=fact.text, embedding=vector,
                                        valid_from=world_start(s, fact), learned_at=s.occurred_at, **fields)
        s.result.facts_added.append(change)
    change.fact_id = stored.id
    return stored


def close_ended(s: Storage, decided: Decided, step: StepRecord) -> None:
    """A cessation ("quit coffee", "no longer teaches", "gave up running") ends the subject's
    current facts about it, learned before this message; the cessation itself stays stored."""
    for fact, _, decision in decided:
        if not fact.ends or decision.action == DELETE:
            continue
        entity = s.resolved.get(fact.ends_subject or fact.subject)
        pattern = cessation_pattern(fact.ends)
        if not pattern or entity is None:
            continue
        # the subject's facts and those naming it ("Dr. Ito has Wren on X" ends with Wren's X)
        rows = list(Fact.objects.select_for_update().current()
                    .filter(agent=s.agent, text__iregex=pattern).about(entity.id)
                    .exclude(source_event=s.event))
        ended = set(facts_ended_by(fact.ends, [(f.id, f.text) for f in rows]))
        for old in (f for f in rows if f.id in ended):
            reason = f"ended: {fact.text}"[:500]
            if rest := without_ended_item(old.text, fact.ends):
                # "took up rowing and the banjo", then "dropped the banjo": rowing goes on
                new = fact_services.fact_restate(
                    old=old, text=rest, embedding=s.embedder.embed([rest])[0], valid_from=world_start(s, fact),
                    learned_at=s.occurred_at, reason=reason)
                s.result.facts_updated.append(FactChange(fact_id=new.id, text=rest, entity=entity.key,
                                                         reason="one item ended by a cessation",
                                                         previous_fact_id=old.id))
                step.data.setdefault("narrowed", []).append(old.id)
                continue
            fact_services.fact_close(fact=old, valid_to=world_start(s, fact), reason=reason, learned_at=s.occurred_at)
            s.result.facts_deleted.append(FactChange(fact_id=old.id, text=old.text, entity=entity.key,
                                                     reason="ended by a cessation", previous_fact_id=old.id))
            step.data.setdefault("ended", []).append(old.id)


def _close_replaced_value_facts(s: Storage, *, holder: Entity, slot: str, old_value: str) -> None:
    """A slot fact superseded by a new value ("my new dentist is Dr. Ito") takes along the holder's
    other facts that state the old value ("my dentist Dr. Moss is great")."""
    group = fact_slot_group(slot)
    ended = resolve_exact(agent=s.agent, name=old_value, entity_type="")[0] if group else None
    if ended is not None and ended.id != holder.id:
        close_facts_naming(s, None, holder=holder, ended=ended, group=group, why=f"new value for {slot}")


def close_facts_naming(s: Storage, step: StepRecord | None, *, holder: Entity, ended: Entity, group: str,
                       why: str) -> None:
    """The holder's current facts that state the ended slot value close with it; facts of this
    message stay (they say what ended). See services.slots.facts_naming_end."""
    record_ended(s, step, slots.facts_naming_end(agent=s.agent, holder=holder, ended=ended, group=group,
                                                 valid_to=world_start(s, None), learned_at=s.occurred_at, why=why,
                                                 keep_event=s.event))


def record_ended(s: Storage, step: StepRecord | None, ended: list[slots.EndedFact]) -> None:
    """What a slot's change closed goes into the write's result (and the step's data)."""
    for item in ended:
        s.result.facts_deleted.append(FactChange(fact_id=item.fact.id, text=item.fact.text, entity=item.holder.key,
                                                 reason=item.reason, previous_fact_id=item.fact.id))
        if step is not None:
            step.data.setdefault("ended", []).append(item.fact.id)
