"""Storing a write's relationships: each relation the message states becomes an edge with the
fact that evidences it (or a mirror fact stating it); a single-valued slot keeps one current edge
(a new home ends the old one, with the facts that said it), a cessation ("left Acme") ends the
edge it names, a death ends the partnerships. Helpers of the `upsert` step; every row is
written by memories.services."""

from __future__ import annotations

from datetime import datetime

from django.db import DatabaseError, transaction
from django.db.models import Q

from memories.extraction.mentions import message_sentences
from memories.extraction.schema import ExtractedFact, Extraction
from memories.models import Entity, Fact, Relationship
from memories.naming import mentions, normalize_alias
from memories.pipeline.trace import StepRecord
from memories.pipeline.write.facts import apply_decision, close_facts_naming, record_ended, world_start
from memories.pipeline.write.values import Known, Storage
from memories.reconcile import (
    ADD,
    CLOSING_RELATIONS,
    NOOP,
    Candidate,
    Decision,
    decide,
    group_relations,
    is_closing_relation,
    slot_group,
    slot_holders,
    states_left_instead,
)
from memories.roles import PARTNER_SLOT
from memories.selectors.facts import facts_to_reconcile
from memories.services import slots
from memories.services.relationships import relationship_upsert, relationships_close, relationships_current_of
from memories.temporal import ended_after

PARTNER_RELATIONS = group_relations("partner")
# the slots "I left the clinic" can end without naming the value, when there is one current edge
UNNAMED_CLOSABLE = ("works_at", "studies_at", "lives_in")


def _evidence(s: Storage, persisted: list[Fact], source: Entity, target: Entity,
              rel_type: str = "") -> Fact | None:
    def names(e: Entity) -> list[str]:
        return [e.display_name, *s.resolved.names_by_entity.get(e.id, ())]

    matches = [
        f for f in persisted
        if any(mentions(f.text, n) for n in names(source)) and any(mentions(f.text, n) for n in names(target))
    ]
    # the fact that fills this relation's slot first: a sentence that says two things ("a nurse at
    # ⟨org⟩ in ⟨city⟩") must not end the residence when the job is superseded
    return max(matches, key=lambda f: (f.slot == rel_type, f.confidence), default=None)


# what "my parents" do together: one home
_SHARED_BY_COMPANIONS = frozenset({"lives_in"})


def relationships(s: Storage, extraction: Extraction, known: Known, persisted: list[Fact], step: StepRecord) -> None:
    """The relations the message states, as edges (with their evidence facts, or mirror facts);
    what a companion or a partner shares ("my parents moved", "we moved") goes to them too."""
    household = []
    for rel in extraction.relations:
        source = s.resolved.get(rel.source)
        target = s.resolved.get(rel.target)
        if source is None or target is None or source.id == target.id:
            continue
        edge = _relationship(s, step, persisted, source, rel.rel_type, target)
        if rel.household and edge is not None:
            household.append((source, rel.rel_type, target, edge))
        if edge is not None and rel.rel_type in _SHARED_BY_COMPANIONS:
            evidence = Fact.objects.filter(pk=edge.evidence_fact_id).first()
            for companion in known.companions.get(source.id, []):
                _relationship(s, step, [], companion, rel.rel_type, target, evidence=evidence,
                              valid_from=edge.valid_from)
    for source, rel_type, target, edge in household:
        _household(s, extraction, step, source, rel_type, target, edge)
    step.data["relationships"] = s.result.relationships


def _relationship(s: Storage, step: StepRecord, persisted: list[Fact], source: Entity, rel_type: str,
                  target: Entity, *, evidence: Fact | None = None, valid_from: datetime | None = None):
    """Store one edge: end what it replaces (from when its evidence says it began), then upsert it."""
    if evidence is None and not is_closing_relation(rel_type):
        evidence = _evidence(s, persisted, source, target, rel_type)
    began = valid_from or (evidence.valid_from if evidence is not None else None)
    replaced = slots.slot_value_replace(
        agent=s.agent, source=source, rel_type=rel_type, target=target, ended_at=began or world_start(s, None),
        facts_valid_to=world_start(s, None), learned_at=s.occurred_at, keep_event=s.event)
    record_ended(s, None, replaced.evidence + replaced.naming)
    if replaced.edges:
        step.data.setdefault("relationships_closed", []).extend(replaced.edges)
    if is_closing_relation(rel_type):
        # a cessation ends the slot's facts that name the other end, with or without an edge
        ends = {source.id: (source, target), target.id: (target, source)}
        for holder, ended in (ends[h] for h in dict.fromkeys(slot_holders(rel_type, source.id, target.id))):
            close_facts_naming(s, step, holder=holder, ended=ended, group=slot_group(rel_type), why=rel_type)
        return None  # a cessation ends the edge; it is no link of today
    if evidence is None:
        evidence = _mirror_fact(s, source, rel_type, target)
    edge, outcome = relationship_upsert(
        agent=s.agent, source=source, target=target, rel_type=rel_type,
        valid_from=began or (evidence.valid_from if evidence is not None else s.occurred_at),
        evidence=evidence, source_event=s.event, learned_at=s.occurred_at,
        initial_strength=s.message.config.relationship_initial_strength,
        reinforcement=s.message.config.relationship_reinforcement,
    )
    if edge is not None:
        s.result.relationships.append(
            {"id": edge.id, "source": source.key, "rel_type": rel_type, "target": target.key,
             "strength": edge.strength, "outcome": outcome, "evidence_fact_id": edge.evidence_fact_id}
        )
    return edge


def _household(s: Storage, extraction: Extraction, step: StepRecord, source: Entity, rel_type: str, target: Entity,
               edge) -> None:
    """"We moved to ⟨city⟩" said by someone with a current partner: the partner moved too, from
    the same moment (unless the message gave the partner a home of their own)."""
    said = (s.resolved.get(r.source) for r in extraction.relations if r.rel_type == rel_type)
    said_ids = {e.id for e in said if e is not None}
    links = relationships_current_of(agent=s.agent, entity_ids=[source.id], rel_types=list(PARTNER_RELATIONS))
    evidence = Fact.objects.filter(pk=edge.evidence_fact_id).first() if edge.evidence_fact_id else None
    for link in links:
        partner = link.target if link.source_id == source.id else link.source
        if partner.id in said_ids or partner.id == target.id or partner.type != "person":
            continue
        said_ids.add(partner.id)
        _relationship(s, step, [], partner, rel_type, target, evidence=evidence, valid_from=edge.valid_from)


def record_ended_states(s: Storage, extraction: Extraction, persisted: list[Fact], step: StepRecord) -> None:
    """"Paulo no longer works at Embraer", "I left Infosys in 2021", "my ex Bartek", "our cat
    Whiskers died" with no edge of that state stored before: the state that ended is kept as a
    closed edge, ending when the message says it ended and beginning as long before as the message
    says it lasted ("after four years"; when it says nothing, at its end, so no earlier moment sees
    it), so the history has it and nothing reads it as today's. Run after
    the message's own edges, so an edge this message closed counts as stored."""
    for subject, rel_type, value, fact in _ended_states(extraction):
        source, target = s.resolved.get(subject), s.resolved.get(value)
        if source is None or target is None or source.id == target.id:
            continue
        # (a job's ending said of a club or a school the subject was in ended that state instead)
        kinds = (*(group_relations(slot_group(rel_type)) or (rel_type,)), *states_left_instead(rel_type))
        if Relationship.objects.filter(Q(source=source, target=target) | Q(source=target, target=source),
                                       agent=s.agent, rel_type__in=kinds).exists():
            continue  # stored before, in either direction ("my ex-wife" of a spouse_of edge this message ended)
        ended = world_start(s, fact)
        evidence = next((f for f in persisted if fact is not None and f.text == fact.text), None) or _evidence(
            s, persisted, source, target, rel_type)
        if evidence is None:
            continue  # every edge stands on a fact that says it
        edge, _ = relationship_upsert(agent=s.agent, source=source, target=target, rel_type=rel_type,
                                      valid_from=_began(s, [value, target.display_name], ended),
                                      evidence=evidence, source_event=s.event,
                                      learned_at=s.occurred_at,
                                      initial_strength=s.message.config.relationship_initial_strength)
        if edge is None:
            continue
        relationships_close(agent=s.agent, ids=[edge.id], valid_to=ended, learned_at=s.occurred_at)
        step.data.setdefault("relationships_kept_ended", []).append(edge.id)
        s.result.relationships.append(
            {"id": edge.id, "source": source.key, "rel_type": rel_type, "target": target.key,
             "strength": edge.strength, "outcome": "ended", "evidence_fact_id": edge.evidence_fact_id})


def _began(s: Storage, names: list[str], ended: datetime) -> datetime:
    """When an ended state began: as long before its end as the sentence naming it says it lasted ("I
    left Halden Bank after almost four years"), else at its end (a beginning never said)."""
    for sentence in message_sentences(s.message.text):
        if any(mentions(sentence, name) for name in names) and (span := ended_after(sentence)):
            return ended - span
    return ended


def _ended_states(extraction: Extraction):
    """(subject, relation, value, fact or None) of each state the message says ended: a negated
    slot fact with its value, or a closing relation ("my ex Bartek", "our cat Whiskers died")."""
    for fact in extraction.facts:
        if fact.negated and fact.slot in UNNAMED_CLOSABLE and fact.value:
            yield fact.subject, fact.slot, fact.value, fact
    for rel in extraction.relations:
        if (ended := CLOSING_RELATIONS.get(rel.rel_type)) is not None:  # "my ex Bartek", "our cat died"
            yield rel.source, ended, rel.target, None


def close_unnamed(s: Storage, extraction: Extraction, step: StepRecord) -> None:
    """"I left the clinic": a retraction of a slot without a value ends the subject's current edge
    of that slot when there is exactly one (of two employers, which one is unknown). A death
    ("Bob passed away", "my husband died") retracts the partner slot: every current partner
    edge of the subject ends, with the facts that evidenced it ("has been married to Bob")."""
    for fact in extraction.facts:
        if not (fact.negated and fact.slot in (*UNNAMED_CLOSABLE, PARTNER_SLOT) and not fact.value):
            continue
        entity = s.resolved.get(fact.subject)
        if entity is None:
            continue
        if fact.slot == PARTNER_SLOT:
            edges = relationships_current_of(agent=s.agent, entity_ids=[entity.id],
                                             rel_types=list(PARTNER_RELATIONS))
            _end_edges(s, entity, edges, world_start(s, fact), f"ended: {fact.text}"[:500])
            step.data.setdefault("relationships_closed", []).extend(e.id for e in edges)
            for edge in edges:  # "Judith is married to Bob", "Bob is Judith's husband"
                other = edge.target if edge.source_id == entity.id else edge.source
                for holder, ended in ((entity, other), (other, entity)):
                    close_facts_naming(s, step, holder=holder, ended=ended, group="partner", why=fact.text)
            continue
        edges = [e for e in relationships_current_of(agent=s.agent, entity_ids=[entity.id], rel_types=[fact.slot])
                 if e.source_id == entity.id]
        if len(edges) == 1:
            _end_edges(s, entity, edges, world_start(s, fact), f"ended: {fact.text}"[:500])
            step.data.setdefault("relationships_closed", []).append(edges[0].id)


def _mirror_fact(s: Storage, source: Entity, rel_type: str, target: Entity) -> Fact | None:
    """No stored fact states the relation: create one through the same reconcile/apply path."""
    text = f"{source.display_name} {rel_type.replace('_', ' ')} {target.display_name}"
    vector = s.embedder.embed([text])[0]
    fact = ExtractedFact(subject=source.display_name, text=text, confidence=s.message.config.mirror_fact_confidence,
                         source_context="inferred_from_relation")
    s.resolved.by_name.setdefault(normalize_alias(source.display_name), source)
    decision = decide(Candidate(text, vector), facts_to_reconcile(entity=source, vector=vector, slot="",
                                                                  nearest=s.message.config.reconcile_candidates),
                      fast_path_below=s.message.config.reconcile_fast_path_below,
                      noop_above=s.message.config.reconcile_noop_above, llm_available=False)
    if decision.action not in {ADD, NOOP}:
        decision = Decision(ADD, None, "mirror fact", "rule", decision.similarity)
    try:
        with transaction.atomic():
            return apply_decision(s, fact, vector, decision)
    except DatabaseError:
        return None


def _end_edges(s: Storage, holder: Entity, edges: list, ended_at: datetime, reason: str) -> None:
    record_ended(s, None, slots.edges_end(agent=s.agent, holder=holder, edges=edges, ended_at=ended_at,
                                          learned_at=s.occurred_at, reason=reason, keep_event=s.event))
