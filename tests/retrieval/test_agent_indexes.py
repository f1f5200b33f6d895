"""Per-agent HNSW indexes: an agent that is a small share of the table searches an index of its
own, gets every row it asks for, and the indexes follow agents as they grow and go."""

from datetime import timedelta

import numpy as np
import pytest
from django.core.management import call_command
from django.db import connection
from django.utils import timezone

from memories.models import Entity, Fact
from memories.services.agents import agent_get_or_create
from memories.temporal import TimeWindow
from memory_project.celery import app
from retrieval import signals
from retrieval.config import retrieval_config
from retrieval.tasks import agent_indexes_ensure_task
from retrieval.vector_indexes import agent_index_name, agent_indexes, agent_indexes_ensure
from tests.support.bm25 import facts_with_postings

# exact_scan_max_rows 0: without an index of its own the agent would search the shared index
CONFIG = retrieval_config({"exact_scan_max_rows": 0, "min_similarity": -1.0, "min_confidence": 0.0})


def person(agent, name):
    return Entity.objects.create(agent=agent, key=f"person:{name.lower()}", type="person", display_name=name)


def query_vector(seed=11):
    v = np.random.default_rng(seed).normal(size=384)
    return v / np.linalg.norm(v)


def exact_ids(agent, limit):
    """The true nearest facts, computed in numpy from the stored vectors."""
    rows = list(Fact.objects.filter(agent=agent).values_list("id", "embedding"))
    ids = np.array([r[0] for r in rows])
    cosine = np.stack([np.asarray(r[1]) for r in rows]) @ query_vector()
    return ids[np.argsort(-cosine)[:limit]].tolist()


def test_an_agent_with_its_own_index_searches_it_and_gets_every_row_it_asks_for(agent, other_agent, settings):
    settings.ANAMNESIS_AGENT_INDEX_MIN_ROWS = 250
    facts_with_postings(agent, person(agent, "Ana"), [f"Ana note {i}" for i in range(300)])
    facts_with_postings(other_agent, person(other_agent, "Bo"), [f"Bo note {i}" for i in range(3000)])
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE memories_fact")
    before, info = signals.semantic(agent_id=agent.id, kind="fact", vector=query_vector(), limit=60, config=CONFIG)
    assert not info["strategy"].startswith("agent_hnsw") and len(before) == 60

    built = agent_indexes_ensure()["built"]
    assert agent_index_name("fact", agent.id) in built and agent_index_name("fact", other_agent.id) in built

    hits, info = signals.semantic(agent_id=agent.id, kind="fact", vector=query_vector(), limit=60, config=CONFIG)
    assert info["strategy"].startswith("agent_hnsw")
    assert len(hits) == 60
    assert len({h.id for h in hits} & set(exact_ids(agent, 60))) >= 54  # approximate, but close
    # asking for more rows than the agent has returns every one of them
    everything, _ = signals.semantic(agent_id=agent.id, kind="fact", vector=query_vector(), limit=400, config=CONFIG)
    assert len(everything) == 300
    assert agent_indexes_ensure()["built"] == []  # nothing left to build


def test_a_date_window_on_an_agent_index_returns_only_rows_in_the_window(agent, settings):
    settings.ANAMNESIS_AGENT_INDEX_MIN_ROWS = 100
    facts = facts_with_postings(agent, person(agent, "Ana"), [f"Ana note {i}" for i in range(200)])
    start = timezone.now() - timedelta(days=30)
    inside = {f.id for f in facts[:40]}
    for n, fact in enumerate(facts):
        Fact.objects.filter(id=fact.id).update(valid_from=start + timedelta(days=1 if fact.id in inside else 10 + n))
    agent_indexes_ensure(agent=agent)
    window = TimeWindow(start, start + timedelta(days=2), "test")
    for max_rows in (0, 1000):  # a large window takes the index path, a small one the exact path
        config = retrieval_config({"exact_scan_max_rows": max_rows, "min_similarity": -1.0})
        hits, info = signals.semantic(agent_id=agent.id, kind="fact", vector=query_vector(), limit=60,
                                      config=config, window=window)
        assert hits and {h.id for h in hits} <= inside, info
        if max_rows:
            assert {h.id for h in hits} == inside


def test_graph_facts_of_a_large_entity_come_from_the_agent_index(agent, settings):
    """An entity linked to more facts than `graph_exact_max_facts` is searched through the
    agent's own index: its nearest facts, scored entity score × (0.5 + 0.5 cosine), the same
    best facts an exact pass finds."""
    from memories.models import FactEntityLink

    settings.ANAMNESIS_AGENT_INDEX_MIN_ROWS = 100
    ana = person(agent, "Ana")
    facts = facts_with_postings(agent, ana, [f"Ana note {i}" for i in range(400)])
    FactEntityLink.objects.bulk_create([FactEntityLink(fact=f, entity=ana, is_primary=True) for f in facts])
    config = retrieval_config({"graph_exact_max_facts": 50, "min_confidence": 0.0})
    exact, info = signals.graph_facts(agent_id=agent.id, entity_scores={ana.id: 1.0}, vector=query_vector(),
                                      limit=20, config=config)
    assert info["entities_measured"] == 1  # no index of its own yet: every linked fact measured
    assert [h.id for h in exact] == exact_ids(agent, 20)
    agent_indexes_ensure(agent=agent)
    hits, info = signals.graph_facts(agent_id=agent.id, entity_scores={ana.id: 1.0}, vector=query_vector(),
                                     limit=20, config=config)
    assert info["entities_searched"] == 1 and info["ef_search"] >= 20
    assert len(hits) == 20
    assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)
    assert len({h.id for h in hits} & {h.id for h in exact}) >= 18


@pytest.mark.django_db(transaction=True)
def test_the_command_builds_indexes_concurrently_and_drops_those_of_deleted_agents(settings):
    settings.ANAMNESIS_AGENT_INDEX_MIN_ROWS = 50
    big, small = agent_get_or_create(slug="big-agent"), agent_get_or_create(slug="small-agent")
    facts_with_postings(big, person(big, "Ana"), [f"Ana note {i}" for i in range(60)])
    facts_with_postings(small, person(small, "Bo"), [f"Bo note {i}" for i in range(10)])
    try:
        agent_indexes_ensure_task.apply().get()  # what the beat job runs
        names = {i.name: i.valid for i in agent_indexes()}
        assert names == {agent_index_name("fact", big.id): True}
        call_command("agent_indexes")  # nothing left to build; the operator's way does the same
        names = {i.name: i.valid for i in agent_indexes()}
        assert names == {agent_index_name("fact", big.id): True}
        big.delete()
        call_command("agent_indexes")
        assert agent_indexes() == []
    finally:
        with connection.cursor() as cursor:
            for index in agent_indexes():
                cursor.execute(f'DROP INDEX IF EXISTS "{index.name}"')


def test_the_beat_job_names_a_registered_task(settings):
    app.loader.import_default_modules()
    entry = settings.CELERY_BEAT_SCHEDULE["job-vector_indexes"]
    assert entry["task"] in app.tasks and entry["args"] == ["vector_indexes"]


def test_the_command_names_an_unknown_agent(db):
    from django.core.management.base import CommandError

    with pytest.raises(CommandError, match="no agent with slug 'nobody'"):
        call_command("agent_indexes", agent="nobody")


def _estimated_rows(agent) -> float:
    with connection.cursor() as cursor:
        cursor.execute("EXPLAIN (FORMAT JSON) SELECT id FROM memories_fact WHERE agent_id = %s", [agent.id])
        return cursor.fetchone()[0][0]["Plan"]["Plan Rows"]


def test_the_planner_learns_an_agents_size_when_its_own_index_is_built(agent, other_agent, settings):
    """Grown since the table was last analyzed, an agent is planned as the few rows it had, and its
    questions measure every row instead of searching its new index: building the index refreshes
    the table's statistics."""
    settings.ANAMNESIS_AGENT_INDEX_MIN_ROWS = 250
    facts_with_postings(other_agent, person(other_agent, "Bo"), [f"Bo note {i}" for i in range(3000)])
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE memories_fact")
    facts_with_postings(agent, person(agent, "Ana"), [f"Ana note {i}" for i in range(600)])
    assert _estimated_rows(agent) < 100  # the statistics predate the agent's facts

    assert agent_index_name("fact", agent.id) in agent_indexes_ensure(agent=agent)["built"]
    assert 450 <= _estimated_rows(agent) <= 750
