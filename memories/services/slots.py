"""Single-valued slots — where one lives, one's employer, partner, manager, doctor …: a new value
ends the old one. Ending a value ends its edge, the fact that evidenced the edge (unless it
supports another current edge), and the holder's other facts that state the old value. The write
pipeline (memories/pipeline/write/relate.py) and an operator's correction (services/facts.py)
both end a value through here, so they end it alike.

Facts and relationships end each other (a closed fact ends its edges, an ended edge its evidence),
so this module and services/facts.py import each other as modules, used only inside functions."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from memories.models import Agent, Entity, Event, Fact, Relationship
from memories.reconcile import (
    CLOSING_RELATIONS,
    ENDABLE_STATES,
    SINGLE_VALUED_RELATIONS,
    CurrentEdge,
    edges_to_close,
    facts_naming_ended,
    slot_group,
)
from memories.reconcile import slot_holders as _slot_holders
from memories.services import facts as fact_services
from memories.services.relationships import relationships_close, relationships_current_of


@dataclass(frozen=True)
class EndedFact:
    """A fact version a slot's change closed, with whose slot it was and why."""

    fact: Fact
    holder: Entity
    reason: str


def edges_end(*, agent: Agent, holder: Entity, edges: list[Relationship], ended_at: datetime, learned_at: datetime,
              reason: str, keep_event: Event | None = None) -> list[EndedFact]:
    """End these edges; the fact that evidenced an ended edge closes with it, unless it supports
    another current edge or came from `keep_event` (the message that ends them says it)."""
    ids = [e.id for e in edges]
    if not ids:
        return []
    relationships_close(agent=agent, ids=ids, valid_to=ended_at, learned_at=learned_at)
    ended = []
    for edge in (e for e in edges if e.evidence_fact_id):
        evidence = Fact.objects.select_for_update().current().filter(pk=edge.evidence_fact_id).first()
        if evidence is None or (keep_event is not None and evidence.source_event_id == keep_event.id):
            continue
        if not evidence.evidenced_relationships.current().exclude(id__in=ids).exists():
            fact_services.fact_close(fact=evidence, valid_to=ended_at, learned_at=learned_at, reason=reason)
            ended.append(EndedFact(evidence, holder, "slot replaced"))
    return ended


def facts_naming_end(*, agent: Agent, holder: Entity, ended: Entity, group: str, valid_to: datetime,
                     learned_at: datetime, why: str, keep_event: Event | None = None) -> list[EndedFact]:
    """The holder's current facts that state the ended slot value ("Sam is Wren's girlfriend",
    "Wren got an offer from Acme", "Dr. Ito is Wren's dentist") close with it; facts of
    `keep_event` stay (they say what ended). The ended slot's own edge is its caller's to close:
    what else such a sentence evidences ("my girlfriend Sol got a job at Kestrel": Sol works at
    Kestrel) stays."""
    names = [ended.display_name, *ended.aliases.values_list("alias", flat=True)]
    rows = Fact.objects.select_for_update().current().filter(agent=agent).about(holder.id).about(ended.id)
    if keep_event is not None:
        rows = rows.exclude(source_event=keep_event)
    rows = list(rows)
    ended_ids = set(facts_naming_ended(group, names, [(f.id, f.text) for f in rows]))
    out = []
    for old in (f for f in rows if f.id in ended_ids):
        fact_services.fact_close(fact=old, valid_to=valid_to, learned_at=learned_at,
                                 reason=f"slot value ended: {why}"[:500], with_relationships=False)
        out.append(EndedFact(old, holder, f"{group} {ended.display_name} ended"))
    return out


@dataclass
class Replaced:
    """What a new edge ended: edge ids, and facts (its evidence first, then facts naming the value)."""

    edges: list[int]
    evidence: list[EndedFact]
    naming: list[EndedFact]


def slot_value_replace(*, agent: Agent, source: Entity, rel_type: str, target: Entity, ended_at: datetime,
                       facts_valid_to: datetime, learned_at: datetime, keep_event: Event | None = None) -> Replaced:
    """The new edge (source -[rel_type]-> target) keeps its single-valued slot to one current edge:
    a new residence, employer, partner or manager ends the previous one at `ended_at` (when the
    new one began), and a cessation ("left Acme", "broke up with Sam") ends the edge it names.
    The holder's facts that state the old value end at `facts_valid_to`."""
    edges = relationships_current_of(agent=agent, entity_ids=[source.id, target.id],
                                     rel_types=[*SINGLE_VALUED_RELATIONS, *CLOSING_RELATIONS.values(), *ENDABLE_STATES])
    ids = edges_to_close(rel_type, source.id, target.id,
                         [CurrentEdge(e.id, e.source_id, e.rel_type, e.target_id) for e in edges])
    closing = [e for e in edges if e.id in ids]
    evidence = edges_end(agent=agent, holder=source, edges=closing, ended_at=ended_at, learned_at=learned_at,
                         reason=f"{rel_type} {target.display_name} replaced it", keep_event=keep_event)
    holders = set(_slot_holders(rel_type, source.id, target.id))
    entities = {source.id: source, target.id: target}
    naming = []
    for edge in closing:
        holder_id = next((h for h in (edge.source_id, edge.target_id) if h in holders), None)
        if holder_id is None or holder_id not in entities:
            continue
        old_id = edge.target_id if holder_id == edge.source_id else edge.source_id
        old = Entity.objects.filter(pk=old_id, agent=agent).first()
        if old is not None:
            naming += facts_naming_end(agent=agent, holder=entities[holder_id], ended=old,
                                       group=slot_group(edge.rel_type), valid_to=facts_valid_to,
                                       learned_at=learned_at, why=f"{rel_type} {target.display_name}",
                                       keep_event=keep_event)
    return Replaced(ids, evidence, naming)
