"""A time-travel query reads only its seeds' neighbourhood of the entity graph: the same PPR,
hops and edge weights as the whole graph as of that moment."""

import pytest
from django.utils import timezone

from graphs.entity_graph import build_graph, neighbourhood_graph, personalized_pagerank
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
