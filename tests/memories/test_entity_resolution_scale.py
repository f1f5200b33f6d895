"""Fuzzy entity resolution among many agents: an agent whose entities are a small share of the
table still gets its nearest names (a shared HNSW index filtered by agent would return none)."""

import numpy as np
from django.db import connection

from memories.models import Entity
from memories.selectors.entities import resolve_fuzzy


def unit(rng):
    v = rng.normal(size=384)
    return v / np.linalg.norm(v)


def test_fuzzy_candidates_come_back_for_an_agent_with_few_entities(agent, other_agent):
    rng = np.random.default_rng(5)
    Entity.objects.bulk_create([
        Entity(agent=other_agent, key=f"person:p{i}", type="person", display_name=f"Person {i}",
               name_embedding=unit(rng)) for i in range(4000)])
    mine = Entity.objects.bulk_create([
        Entity(agent=agent, key=f"person:m{i}", type="person", display_name=f"Mine {i}", name_embedding=unit(rng))
        for i in range(200)])
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE memories_entity")
    query = mine[1].name_embedding
    found = resolve_fuzzy(agent=agent, vector=np.asarray(query), entity_type="person", limit=3)
    assert [e.id for e, _ in found][0] == mine[1].id
    assert len(found) == 3 and {e.id for e, _ in found} <= {e.id for e in mine}
    assert found[0][1] > 0.999
