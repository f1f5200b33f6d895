"""What a retrieval reads of its agent first (`agent_state`), and the names earlier questions
resolved, kept per graph version: every change of the agent's names moves that version, so a
question asked after it sees the new name."""

from __future__ import annotations

import pytest

from memories.models import Agent, Entity, Event
from memories.services.entities import alias_register, entity_alias_add, entity_alias_remove
from memories.services.write import memory_write
from retrieval.selectors import agent_state, entities_in_query, known_types
from retrieval.services import memory_retrieve

pytestmark = pytest.mark.django_db

QUESTION = "What does Didi do in the morning?"


@pytest.fixture
def odile(agent, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        memory_write(agent=agent, message="My friend Odile Fournier swims in the lake every morning.",
                     speaker_name="Rafael")
    return Entity.objects.get(agent=agent, display_name="Odile Fournier")


def test_the_state_holds_the_version_the_latest_message_and_the_scopes(agent, odile):
    state = agent_state(agent=agent)
    assert state.graph_version == Agent.objects.get(pk=agent.pk).graph_version > 0
    assert state.latest_event == Event.objects.filter(agent=agent).order_by("-occurred_at").first().occurred_at
    assert state.scopes["event"].rows == 1 and state.scopes["fact"].rows >= 1
    assert not state.scopes["fact"].own_index


def test_a_name_added_by_an_operator_is_found_by_the_next_question(agent, odile, django_capture_on_commit_callbacks,
                                                                   django_assert_num_queries):
    before = agent_state(agent=agent).graph_version
    assert entities_in_query(agent=agent, query=QUESTION, version=before) == {}
    with django_capture_on_commit_callbacks(execute=True):
        entity_alias_add(agent=agent, entity_id=odile.id, alias="Didi", actor="operator")
    after = agent_state(agent=agent).graph_version
    assert after > before
    assert odile.id in entities_in_query(agent=agent, query=QUESTION, version=after)
    with django_assert_num_queries(0):  # asked again at that version: nothing is read again
        assert odile.id in entities_in_query(agent=agent, query=QUESTION, version=after)
    result = memory_retrieve(agent=agent, query=QUESTION, record=False)
    assert any(f.entity_name == "Odile Fournier" for f in result.facts)
    plan = next(step for step in result.trace if step["name"] == "plan")
    assert odile.id in plan["data"]["entities_sources"]["deterministic"]


def test_a_new_alias_from_the_write_path_moves_the_version_and_a_known_one_does_not(
        agent, odile, django_capture_on_commit_callbacks):
    before = agent_state(agent=agent).graph_version
    with django_capture_on_commit_callbacks(execute=True):
        assert alias_register(agent=agent, entity=odile, names=["Odile Fournier"]) == 0
    assert agent_state(agent=agent).graph_version == before
    with django_capture_on_commit_callbacks(execute=True):
        assert alias_register(agent=agent, entity=odile, names=["Didi"]) == 1
    assert agent_state(agent=agent).graph_version > before


def test_known_types_follow_the_version(agent, odile, django_capture_on_commit_callbacks):
    version = agent_state(agent=agent).graph_version
    assert "person" in known_types(agent=agent, version=version)
    assert "organization" not in known_types(agent=agent, version=version)
    with django_capture_on_commit_callbacks(execute=True):
        memory_write(agent=agent, message="Odile Fournier works at Renault.", speaker_name="Rafael")
    assert "organization" in known_types(agent=agent, version=agent_state(agent=agent).graph_version)


def test_a_name_removed_or_moved_by_an_operator_no_longer_seeds_its_old_entity(
        agent, odile, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        memory_write(agent=agent, message="My neighbour Bernard Roux plays the cello.", speaker_name="Rafael")
        entity_alias_add(agent=agent, entity_id=odile.id, alias="Didi", actor="operator")
    bernard = Entity.objects.get(agent=agent, display_name="Bernard Roux")
    assert odile.id in entities_in_query(agent=agent, query=QUESTION, version=agent_state(agent=agent).graph_version)
    with django_capture_on_commit_callbacks(execute=True):
        entity_alias_add(agent=agent, entity_id=bernard.id, alias="Didi", actor="operator", move=True)
    found = entities_in_query(agent=agent, query=QUESTION, version=agent_state(agent=agent).graph_version)
    assert bernard.id in found and odile.id not in found
    with django_capture_on_commit_callbacks(execute=True):
        entity_alias_remove(agent=agent, entity_id=bernard.id, alias="Didi", actor="operator")
    assert entities_in_query(agent=agent, query=QUESTION, version=agent_state(agent=agent).graph_version) == {}
    plan = next(step for step in memory_retrieve(agent=agent, query=QUESTION, record=False).trace
                if step["name"] == "plan")
    assert plan["data"]["entities_sources"]["deterministic"] == {}
