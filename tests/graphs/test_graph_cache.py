"""The per-process entity-graph cache: one graph per agent, served while the agent's
graph_version stands, and at most ANAMNESIS_GRAPH_CACHE_AGENTS agents' graphs."""

from __future__ import annotations

import pytest
from django.conf import settings

from graphs import entity_graph
from graphs.entity_graph import agent_graph
from memories.lru import LRUCache
from memories.services.agents import agent_get_or_create, agent_graph_bump
from memories.services.write import memory_write
from retrieval import signals

pytestmark = pytest.mark.django_db


@pytest.fixture
def small_cache(monkeypatch):
    cache = LRUCache(2)
    monkeypatch.setattr(entity_graph, "_cache", cache)
    return cache


def test_the_caches_are_bounded_by_their_settings():
    assert entity_graph._cache.maxsize == settings.ANAMNESIS_GRAPH_CACHE_AGENTS
    assert signals._observed_share.maxsize == settings.ANAMNESIS_OBSERVED_SHARE_CACHE_SIZE


def test_a_cached_graph_is_served_until_the_agent_graph_version_moves(agent, small_cache):
    memory_write(agent=agent, message="Ricardo Gomes is friends with Thiago Nogueira.", speaker_name="Rafael")
    first = agent_graph(agent)
    assert first.number_of_nodes() >= 2
    assert agent_graph(agent) is first
    agent_graph_bump(agent_id=agent.id)
    rebuilt = agent_graph(agent)
    assert rebuilt is not first and sorted(rebuilt.edges) == sorted(first.edges)
    assert agent_graph(agent) is rebuilt


def test_at_most_the_bound_of_agents_keep_a_graph(agent, small_cache):
    agents = [agent, agent_get_or_create(slug="second"), agent_get_or_create(slug="third")]
    graphs = {a.slug: agent_graph(a) for a in agents[:2]}
    assert agent_graph(agents[0]) is graphs[agent.slug]  # now the most recently used
    graphs["third"] = agent_graph(agents[2])  # the least recently used ("second") makes room
    assert len(small_cache) == 2
    assert agent_graph(agents[0]) is graphs[agent.slug] and agent_graph(agents[2]) is graphs["third"]
    assert agent_graph(agents[1]) is not graphs["second"]  # rebuilt
    assert len(small_cache) == 2
