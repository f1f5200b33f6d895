"""A time-travel query reads only its seeds' neighbourhood of the entity graph: the same PPR,
hops and edge weights as the whole graph as of that moment."""

import pytest
from django.utils import timezone

from graphs.entity_graph import build_graph, build_history_graph, neighbourhood_graph, personalized_pagerank
from memories.models import Entity
from memories.services.write import memory_write

MESSAGES = [
    "Ricardo Gomes works at Vertix with Ana Souza.",
    "Ricardo Gomes is friends with Thiago Nogueira.",
    "Thiago Nogueira plays football with Bruno Lima.",
    "Bruno Lima moved to Lisbon with Clara Dias.",
    "Ricardo Gomes moved to Austin, Texas.",
    "Ricardo Gomes now works at Orbital with Ana Souza.",
]


@pytest.fixture
def history(agent):
    """Live writes (recorded now), with the moment after each one."""
    moments = []
    for text in MESSAGES:
        memory_write(agent=agent, message=text, speaker_name="Rafael")
        moments.append(timezone.now())
    return agent, moments


def test_the_neighbourhood_graph_scores_like_the_whole_graph_then(history):
    agent, moments = history
    ricardo = Entity.objects.get(agent=agent, key="person:ricardo_gomes")
    assert build_graph(agent, moments[-1]).number_of_edges() >= 4
    for as_of in moments:
        whole = build_graph(agent, as_of)
        for hops in (1, 2):
            part = neighbourhood_graph(agent, [ricardo.id], max_hops=hops, as_of=as_of)
            expected = personalized_pagerank(whole, [ricardo.id], max_hops=hops)
            got = personalized_pagerank(part, [ricardo.id], max_hops=hops)
            assert got.hops == expected.hops
            assert got.ppr == pytest.approx(expected.ppr)
            for a, b, data in part.edges(data=True):
                assert data["weight"] == pytest.approx(whole[a][b]["weight"])
            assert set(part) <= set(whole)
            for node in part:  # every version counted: never fewer than the facts visible then
                assert part.nodes[node].get("facts", 0) >= whole.nodes[node].get("facts", 0)


def test_the_history_graph_gives_the_same_neighbourhood_as_the_database_walk(history):
    """A time-travel query with the agent's cached history graph checks only the rows of the
    edges near its seeds, and finds the same graph — nodes, edge weights, relation types and fact
    counts — as the hop-by-hop walk in the database, before and after Ricardo's job and home
    changed; a closed edge stays in the past and out of the present."""
    agent, moments = history
    ricardo = Entity.objects.get(agent=agent, key="person:ricardo_gomes")
    vertix = Entity.objects.get(agent=agent, key="organization:vertix")
    past = build_history_graph(agent)
    assert past.link_counts[ricardo.id] >= 3
    for as_of in [moments[0], moments[2], moments[-1], timezone.now()]:
        for hops in (1, 2, 3):
            walked = neighbourhood_graph(agent, [ricardo.id], max_hops=hops, as_of=as_of)
            read = neighbourhood_graph(agent, [ricardo.id], max_hops=hops, as_of=as_of, history=past)
            assert set(read.nodes) == set(walked.nodes)
            assert {frozenset(e) for e in read.edges} == {frozenset(e) for e in walked.edges}
            for a, b, data in read.edges(data=True):
                assert data["weight"] == pytest.approx(walked[a][b]["weight"])
                assert data.get("rel_type") == walked[a][b].get("rel_type")
            assert {n: read.nodes[n].get("facts") for n in read} == {n: walked.nodes[n].get("facts") for n in walked}
    first = neighbourhood_graph(agent, [ricardo.id], max_hops=1, as_of=moments[0], history=past)
    assert first.has_edge(ricardo.id, vertix.id)
    last = neighbourhood_graph(agent, [ricardo.id], max_hops=1, as_of=timezone.now(), history=past)
    assert not last.has_edge(ricardo.id, vertix.id)  # he works at Orbital now


def test_a_time_travel_retrieval_ranks_alike_with_and_without_the_history_graph(history):
    """The first time-travel query reads the neighbourhood from the database and leaves the
    agent's history graph built; the next one reads it from that graph: same answer, same scores."""
    from graphs import entity_graph
    from retrieval.services import memory_retrieve

    agent, moments = history
    entity_graph._history_cache.clear()
    entity_graph._history_built_at.pop(agent.pk, None)
    first = memory_retrieve(agent=agent, query="Where does Ricardo Gomes work?", as_of=moments[2], record=False)
    assert entity_graph.history_graph_cached(agent, entity_graph.graph_version(agent)) is not None
    second = memory_retrieve(agent=agent, query="Where does Ricardo Gomes work?", as_of=moments[2], record=False)
    assert first.ranking == second.ranking and first.ranking
    assert [f.scores for f in first.facts] == [f.scores for f in second.facts]
    assert "Vertix" in second.context and "Orbital" not in second.context
