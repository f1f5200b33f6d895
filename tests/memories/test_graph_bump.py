"""The agent's graph version moves once per committed change, not once per alias or edge in it,
and a change rolled back inside a savepoint does not take the move of the rest with it."""

from __future__ import annotations

import pytest
from django.db import transaction

from memories.models import Agent
from memories.services.agents import agent_graph_bump_on_commit
from memories.services.write import memory_write

pytestmark = pytest.mark.django_db


def _version(agent) -> int:
    return Agent.objects.get(pk=agent.pk).graph_version


def _bump_in_a_savepoint_rolled_back(agent) -> None:
    try:
        with transaction.atomic():
            agent_graph_bump_on_commit(agent_id=agent.id)
            raise RuntimeError("rolled back")
    except RuntimeError:
        pass


def test_a_write_with_several_names_and_links_moves_the_version_once(agent, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        memory_write(agent=agent, message="I'm Ana Souza and I live in Lisbon.", speaker_name="Ana Souza")
    before = _version(agent)
    with django_capture_on_commit_callbacks(execute=True):
        result = memory_write(agent=agent, message="My brother Tiago moved to Porto last year and works at Sonae.",
                              speaker_name="Ana Souza")
    assert len(result.relationships) >= 2  # brother, lives in, works at: each used to move it again
    assert _version(agent) == before + 1


def test_a_move_asked_for_in_a_savepoint_rolled_back_leaves_the_later_one(agent, django_capture_on_commit_callbacks):
    before = _version(agent)
    with django_capture_on_commit_callbacks(execute=True), transaction.atomic():
        _bump_in_a_savepoint_rolled_back(agent)
        agent_graph_bump_on_commit(agent_id=agent.id)
    assert _version(agent) == before + 1


def test_a_move_waiting_outside_a_savepoint_stands_for_one_inside_it(agent, django_capture_on_commit_callbacks):
    before = _version(agent)
    with django_capture_on_commit_callbacks(execute=True), transaction.atomic():
        agent_graph_bump_on_commit(agent_id=agent.id)
        _bump_in_a_savepoint_rolled_back(agent)
    assert _version(agent) == before + 1


def test_each_agent_moves_once(agent, django_capture_on_commit_callbacks):
    other = Agent.objects.create(slug="graph-bump-other")
    with django_capture_on_commit_callbacks(execute=True), transaction.atomic():
        agent_graph_bump_on_commit(agent_id=agent.id)
        agent_graph_bump_on_commit(agent_id=other.id)
        agent_graph_bump_on_commit(agent_id=agent.id)
    assert (_version(agent), _version(other)) == (1, 1)
