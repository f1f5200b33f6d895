"""The services that own versioned rows: a correction restates what the fact says (slot value and
links follow the new text), a merge moves current relationship versions by closing them and
inserting new ones (closed versions keep their ends), one rule ends every version, and nothing
outside memories/services writes a versioned row."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from memories.models import Entity, Fact, Relationship
from memories.selectors.facts import fact_history
from memories.services import entities as entity_services
from memories.services import facts as fact_services
from memories.services.relationships import relationship_move, relationships_close
from memories.services.write import memory_write

pytestmark = pytest.mark.django_db
T0 = datetime(2024, 3, 1, 9, tzinfo=UTC)


def say(agent, text, at=T0, speaker="Helena Sousa"):
    return memory_write(agent=agent, message=text, speaker_name=speaker, occurred_at=at)


def current_fact(agent, entity_name, contains) -> Fact:
    entity = Entity.objects.get(agent=agent, display_name=entity_name)
    return Fact.objects.current().filter(agent=agent, entity=entity, text__icontains=contains).get()


def linked_names(fact: Fact) -> set[str]:
    return {link.entity.display_name for link in fact.entity_links.select_related("entity")}


def test_a_corrected_employer_is_the_new_slot_value_and_the_old_employer_is_no_longer_linked(agent):
    say(agent, "I work at Acme Robotics.")
    say(agent, "Vertix Labs opened an office next to ours.", at=T0 + timedelta(days=1))
    old = current_fact(agent, "Helena Sousa", "Acme")
    assert (old.slot, old.slot_value) == ("works_at", "Acme Robotics")
    assert "Acme Robotics" in linked_names(old)

    new = fact_services.fact_correct(agent=agent, fact_id=old.id, text="Helena Sousa works at Vertix Labs",
                                     reason="wrong employer", actor="user:ops")

    assert (new.slot, new.slot_value) == ("works_at", "Vertix Labs")
    assert linked_names(new) == {"Helena Sousa", "Vertix Labs"}
    # the old version keeps what it said and linked
    old.refresh_from_db()
    assert old.slot_value == "Acme Robotics" and "Acme Robotics" in linked_names(old)


def test_a_correction_that_fills_no_slot_clears_it(agent):
    say(agent, "I live in Porto.")
    old = current_fact(agent, "Helena Sousa", "Porto")
    assert old.slot == "lives_in"
    new = fact_services.fact_correct(agent=agent, fact_id=old.id, text="Helena Sousa is a freelance designer",
                                     reason="wrong statement", actor="user:ops")
    assert (new.slot, new.slot_value) == ("", "")
    assert linked_names(new) == {"Helena Sousa"}


def test_a_merge_closes_and_recreates_current_edges_and_leaves_closed_versions_alone(agent):
    say(agent, "My friend Joana Reis lives in Braga.")
    say(agent, "Joana Reis moved to Lisbon.", at=T0 + timedelta(days=30))
    joana = Entity.objects.get(agent=agent, display_name="Joana Reis")
    jo = entity_services.entity_get_or_create(agent=agent, name="Joana Maria Reis", entity_type="person")
    closed = Relationship.objects.filter(agent=agent, source=joana, target__display_name="Braga").get()
    assert closed.valid_to is not None
    before = {r.id: (r.source_id, r.target_id, r.valid_to, r.invalidated_at) for r in Relationship.objects.filter(
        agent=agent)}
    lisbon_old = Relationship.objects.current().get(agent=agent, source=joana, target__display_name="Lisbon")
    current = Relationship.objects.current().filter(agent=agent).filter(source=joana).count() + (
        Relationship.objects.current().filter(agent=agent, target=joana).count())
    assert current >= 1

    report = entity_services.entity_merge(agent=agent, survivor_id=jo.id, merged_id=joana.id, actor="user:ops")

    assert report.relationships_moved == current
    closed.refresh_from_db()
    assert (closed.source_id, closed.target_id, closed.valid_to, closed.invalidated_at) == before[closed.id]
    lisbon_old.refresh_from_db()
    assert lisbon_old.source_id == joana.id and lisbon_old.unlearned_at is not None  # closed, ends unchanged
    lisbon_new = Relationship.objects.current().get(agent=agent, target__display_name="Lisbon")
    assert lisbon_new.source_id == jo.id and lisbon_new.valid_from == lisbon_old.valid_from
    # what the agent knew before the merge reads as it did: Joana lived in Lisbon
    just_before = lisbon_old.unlearned_at - timedelta(seconds=1)
    assert list(Relationship.objects.visible(just_before).filter(target__display_name="Lisbon")
                .values_list("source_id", flat=True)) == [joana.id]

    unmerged = entity_services.entity_unmerge(agent=agent, entity_id=joana.id, actor="user:ops")

    assert unmerged.relationships_moved == current
    back = Relationship.objects.current().get(agent=agent, target__display_name="Lisbon")
    assert back.source_id == joana.id and back.valid_from == lisbon_old.valid_from
    closed.refresh_from_db()
    assert (closed.source_id, closed.target_id, closed.valid_to, closed.invalidated_at) == before[closed.id]


def test_ends_never_run_backwards_on_any_clock(agent):
    """A backfilled end (learned before the version itself was learned) is known from when the
    version was: facts and relationships follow the same rule."""
    say(agent, "I live in Porto.", at=T0 + timedelta(days=10))
    fact = current_fact(agent, "Helena Sousa", "Porto")
    edge = Relationship.objects.current().get(agent=agent, evidence_fact=fact)
    fact_services.fact_close(fact=fact, valid_to=T0, learned_at=T0, reason="backfilled")
    fact.refresh_from_db()
    edge.refresh_from_db()
    for version in (fact, edge):
        assert version.valid_to == version.valid_from  # never before it began
        assert version.valid_to_learned_at == version.learned_at  # never known before it was learned


def test_moving_an_edge_keeps_its_world_time_and_strength(agent):
    say(agent, "I live in Porto.")
    edge = Relationship.objects.current().get(agent=agent, target__display_name="Porto")
    other = Entity.objects.create(agent=agent, key="person:rita_sousa", type="person", display_name="Rita Sousa")
    moved = relationship_move(rel=edge, source=other, target=edge.target)
    edge.refresh_from_db()
    assert edge.unlearned_at is not None and edge.source.display_name == "Helena Sousa"
    assert (moved.source_id, moved.valid_from, moved.strength, moved.evidence_fact_id) == (
        other.id, edge.valid_from, edge.strength, edge.evidence_fact_id)
    assert relationships_close(agent=agent, ids=[moved.id], valid_to=T0 + timedelta(days=3)) == 1


def test_reinstating_a_corrected_fact_restores_its_text_slot_and_links(agent):
    say(agent, "I work at Acme Robotics.")
    old = current_fact(agent, "Helena Sousa", "Acme")
    new = fact_services.fact_correct(agent=agent, fact_id=old.id, text="Helena Sousa works at Vertix Labs",
                                     reason="wrong", actor="user:ops")
    back = fact_services.fact_reinstate(agent=agent, fact_id=old.id, reason="it was right", actor="user:ops")
    assert (back.text, back.slot_value, linked_names(back)) == (old.text, "Acme Robotics", linked_names(old))
    assert [v.id for v in fact_history(agent=agent, fact_id=back.id)] == [old.id, new.id, back.id]


def current_targets(agent, entity_name, rel_type) -> list[str]:
    return sorted(Relationship.objects.current().filter(
        agent=agent, source__display_name=entity_name, rel_type=rel_type).values_list("target__display_name",
                                                                                      flat=True))


def test_a_correction_derives_the_relationships_the_new_text_states(agent):
    say(agent, "I live in Madrid.")
    old = current_fact(agent, "Helena Sousa", "Madrid")
    madrid = Relationship.objects.current().get(agent=agent, evidence_fact=old)

    new = fact_services.fact_correct(agent=agent, fact_id=old.id, text="Helena Sousa lives in Barcelona",
                                     reason="wrong city", actor="user:ops")

    assert current_targets(agent, "Helena Sousa", "lives_in") == ["Barcelona"]
    barcelona = Relationship.objects.current().get(agent=agent, source__display_name="Helena Sousa",
                                                   rel_type="lives_in")
    assert barcelona.evidence_fact_id == new.id and barcelona.valid_from == new.valid_from
    assert barcelona.target.type == "place" and "Barcelona" in linked_names(new)
    madrid.refresh_from_db()
    assert madrid.valid_to == madrid.valid_from  # the corrected edge was never true


def test_reinstating_brings_back_the_first_edge_and_ends_the_correction_s(agent):
    say(agent, "I live in Madrid.")
    old = current_fact(agent, "Helena Sousa", "Madrid")
    fact_services.fact_correct(agent=agent, fact_id=old.id, text="Helena Sousa lives in Barcelona",
                               reason="wrong city", actor="user:ops")
    back = fact_services.fact_reinstate(agent=agent, fact_id=old.id, reason="it was Madrid", actor="user:ops")
    assert current_targets(agent, "Helena Sousa", "lives_in") == ["Madrid"]
    edge = Relationship.objects.current().get(agent=agent, source__display_name="Helena Sousa", rel_type="lives_in")
    assert edge.evidence_fact_id == back.id


def test_a_reinstated_operator_statement_gets_its_relationships_from_its_text(agent):
    """A version an operator wrote has no edge of its own to restore: its text is read again."""
    say(agent, "I live in Madrid.")
    old = current_fact(agent, "Helena Sousa", "Madrid")
    corrected = fact_services.fact_correct(agent=agent, fact_id=old.id, text="Helena Sousa lives in Valencia",
                                           reason="wrong city", actor="user:ops")
    fact_services.fact_correct(agent=agent, fact_id=corrected.id, text="Helena Sousa lives in Bilbao",
                               reason="wrong again", actor="user:ops")
    fact_services.fact_reinstate(agent=agent, fact_id=corrected.id, reason="Valencia after all", actor="user:ops")
    assert current_targets(agent, "Helena Sousa", "lives_in") == ["Valencia"]


def test_a_correction_to_a_statement_of_no_relation_leaves_no_edge(agent):
    say(agent, "I work at Acme Robotics.")
    old = current_fact(agent, "Helena Sousa", "Acme")
    fact_services.fact_correct(agent=agent, fact_id=old.id, text="Helena Sousa is a freelance designer",
                               reason="no employer", actor="user:ops")
    assert current_targets(agent, "Helena Sousa", "works_at") == []


def test_a_correction_that_moves_a_fact_into_a_slot_ends_the_slot_s_old_value_as_a_write_would(agent):
    """Correcting another fact into "lives in Barcelona" ends the Madrid edge and the fact that
    said it, so the graph and the facts agree (a write of "I live in Barcelona" would do the same)."""
    say(agent, "I live in Madrid.")
    say(agent, "I like Paris.", at=T0 + timedelta(days=1))
    liked = current_fact(agent, "Helena Sousa", "Paris")
    fact_services.fact_correct(agent=agent, fact_id=liked.id, text="Helena Sousa lives in Barcelona",
                               reason="misheard", actor="user:ops")
    assert current_targets(agent, "Helena Sousa", "lives_in") == ["Barcelona"]
    homes = Fact.objects.current().filter(agent=agent, entity__display_name="Helena Sousa", slot="lives_in")
    assert [f.slot_value for f in homes] == ["Barcelona"]


def test_a_correction_naming_something_too_long_to_be_a_name_stores_the_fact_without_it(agent):
    say(agent, "I live in Madrid.")
    old = current_fact(agent, "Helena Sousa", "Madrid")
    endless = " ".join(["Very Long Capitalised Place Name Segment"] * 12)
    new = fact_services.fact_correct(agent=agent, fact_id=old.id, text=f"Helena Sousa lives in {endless}",
                                     reason="odd", actor="user:ops")
    assert new.is_active and new.text.endswith("Segment")
    assert not Entity.objects.filter(agent=agent, display_name__startswith="Very Long").exists()


def test_a_correction_resolves_names_without_calling_the_llm(agent, fake_llm):
    """An operator's action holds row locks: it waits on no model, even when one is configured."""
    say(agent, "I live in Madrid.")
    old = current_fact(agent, "Helena Sousa", "Madrid")
    calls = len(fake_llm.requests)
    fact_services.fact_correct(agent=agent, fact_id=old.id, text="Helena Sousa lives in Barcelona",
                               reason="wrong city", actor="user:ops")
    assert len(fake_llm.requests) == calls
    assert current_targets(agent, "Helena Sousa", "lives_in") == ["Barcelona"]
