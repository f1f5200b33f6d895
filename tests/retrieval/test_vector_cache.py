"""Small agents' vectors held in the process: the exact measures rank as PostgreSQL's do, a copy
of an older state is never used (a message re-embedded by a forget's redaction included), what
is not visible is never returned, and a refreshed copy keeps nothing of what was forgotten.
Tests run inside a transaction, where no copy is made on its own (its state could be rolled
back): they make one with `refresh`."""

import numpy as np
import pytest
from django.utils import timezone

from memories.models import Event, Fact, FactEntityLink
from memories.services.forget import entity_forget
from memories.services.keyword import keyword_stats_apply
from retrieval import signals, vector_cache
from retrieval.config import retrieval_config
from retrieval.selectors import agent_state
from tests.retrieval.test_agent_indexes import person, query_vector
from tests.support.bm25 import facts_with_postings

CONFIG = retrieval_config({"min_similarity": -1.0, "min_confidence": 0.0})


@pytest.fixture
def held(settings):
    """The process's cache, on and empty (and off again after)."""
    cache = vector_cache.cache
    cache.max_bytes, cache.REFRESH_INTERVAL = 64 * 2**20, 0.0
    cache.clear()
    yield cache
    cache.clear()
    cache.max_bytes = int(settings.ANAMNESIS_VECTOR_CACHE_MB * 2**20)
    for setting in ("REFRESH_INTERVAL", "KEEP_USED"):  # back to the class's own
        vars(cache).pop(setting, None)


def nearest(agent, limit=40, scope=True):
    state = agent_state(agent=agent)
    return signals.semantic(agent_id=agent.id, kind="fact", vector=query_vector(), limit=limit, config=CONFIG,
                            scope=state.scopes["fact"] if scope else None)


def linked(agent, entity, limit=20):
    state = agent_state(agent=agent)
    return signals.graph_facts(agent_id=agent.id, entity_scores={entity.id: 1.0}, vector=query_vector(),
                               limit=limit, config=CONFIG, scope=state.scopes["fact"])


def test_held_vectors_rank_the_facts_as_the_database_does(agent, other_agent, held):
    ana, bo = person(agent, "Ana"), person(agent, "Bo")
    # every third fact a closed version: what the measure must skip
    facts = facts_with_postings(agent, ana, [f"Ana note {i}" for i in range(300)], closed=set(range(0, 300, 3)))
    FactEntityLink.objects.bulk_create([FactEntityLink(fact=f, entity=ana if i % 2 else bo, is_primary=True)
                                        for i, f in enumerate(facts)])
    facts_with_postings(other_agent, person(other_agent, "Cy"), [f"Cy note {i}" for i in range(50)])

    held.max_bytes = 0
    in_database, info = nearest(agent)
    graph_in_database, graph_info = linked(agent, ana)
    assert info["strategy"] == "exact" and "measured_in_process" not in graph_info

    held.max_bytes = 64 * 2**20
    held.refresh(agent.id, "fact")
    in_process, info = nearest(agent)
    graph_in_process, graph_info = linked(agent, ana)
    assert info["strategy"] == "exact_in_process" and graph_info["measured_in_process"]
    assert [h.id for h in in_process] == [h.id for h in in_database]
    assert np.allclose([h.score for h in in_process], [h.score for h in in_database], atol=1e-5)
    assert [h.id for h in graph_in_process] == [h.id for h in graph_in_database]
    assert np.allclose([h.score for h in graph_in_process], [h.score for h in graph_in_database], atol=1e-5)
    closed = {f.id for i, f in enumerate(facts) if i % 3 == 0}
    assert not closed & {h.id for h in in_process + graph_in_process}


def test_asking_for_more_than_is_visible_returns_every_visible_fact(agent, held):
    ana = person(agent, "Ana")
    facts = facts_with_postings(agent, ana, [f"Ana note {i}" for i in range(120)], closed=set(range(100)))
    held.refresh(agent.id, "fact")
    hits, info = nearest(agent, limit=50)
    assert info["strategy"] == "exact_in_process"
    assert sorted(h.id for h in hits) == sorted(f.id for f in facts[100:])
    # a few asked for where most of the nearest are closed: the batches grow until they are found
    few, _ = nearest(agent, limit=5)
    assert len(few) == 5 and {h.id for h in few} <= {f.id for f in facts[100:]}
    assert linked(agent, ana, limit=0)[0] == [] and nearest(agent, limit=0)[0] == []


def test_a_fact_stored_after_the_copy_was_made_is_found_by_the_next_retrieval(agent, held):
    ana = person(agent, "Ana")
    facts_with_postings(agent, ana, [f"Ana note {i}" for i in range(200)])
    held.refresh(agent.id, "fact")
    first, info = nearest(agent)
    assert info["strategy"] == "exact_in_process"
    # a new fact whose vector is the query's own: the nearest of all once it is stored
    new = facts_with_postings(agent, ana, ["Ana moved to Porto"])[0]
    Fact.objects.filter(pk=new.pk).update(embedding=query_vector())
    hits, info = nearest(agent)  # the copy is of the state before: measured in the database
    assert info["strategy"] == "exact"
    assert hits[0].id == new.id
    held.refresh(agent.id, "fact")  # brought up to date: the new row read, the others kept
    again, info = nearest(agent)
    assert info["strategy"] == "exact_in_process"
    assert [h.id for h in again] == [h.id for h in hits]
    assert np.allclose([h.score for h in again], [h.score for h in hits], atol=1e-5)
    assert again[0].score == pytest.approx(1.0, abs=1e-5) and new.id not in {h.id for h in first}


def test_a_copy_read_before_a_change_is_not_used_after_it(agent, held):
    """Without the agent's state read by this retrieval the copy is not used at all, and a copy
    of an older state is not used for a newer one."""
    ana = person(agent, "Ana")
    facts_with_postings(agent, ana, [f"Ana note {i}" for i in range(60)])
    held.refresh(agent.id, "fact")
    _, info = nearest(agent, scope=False)
    assert info["strategy"] == "exact"
    stale = agent_state(agent=agent).scopes["fact"]
    _, info = nearest(agent)
    assert info["strategy"] == "exact_in_process"
    facts_with_postings(agent, ana, ["Ana joined a choir"])
    _, info = nearest(agent)
    assert info["strategy"] == "exact"
    assert held.current(agent.id, "fact", stale.vectors_key) is not None


def test_forgetting_a_person_leaves_none_of_their_vectors_held(agent, held, django_capture_on_commit_callbacks):
    ana, bo = person(agent, "Ana"), person(agent, "Bo")
    anas = facts_with_postings(agent, ana, [f"Ana note {i}" for i in range(80)])
    FactEntityLink.objects.bulk_create([FactEntityLink(fact=f, entity=ana, is_primary=True) for f in anas])
    bos = facts_with_postings(agent, bo, [f"Bo likes tea {i}" for i in range(81)])
    FactEntityLink.objects.bulk_create([FactEntityLink(fact=f, entity=bo, is_primary=True) for f in bos])
    held.refresh(agent.id, "fact")
    hits, info = nearest(agent, limit=200)
    assert info["strategy"] == "exact_in_process" and {h.id for h in hits} >= {f.id for f in anas}

    with django_capture_on_commit_callbacks(execute=True):
        entity_forget(agent=agent, entity_id=ana.id, actor="test")
    hits, info = nearest(agent, limit=200)  # the copy is of the state before: never used now
    assert info["strategy"] == "exact" and not {f.id for f in anas} & {h.id for h in hits}
    held.refresh(agent.id, "fact")
    hits, info = nearest(agent, limit=200)
    assert info["strategy"] == "exact_in_process"
    forgotten = {f.id for f in anas}
    assert not forgotten & {h.id for h in hits}
    assert {h.id for h in hits} == {f.id for f in bos}
    copy = held.current(agent.id, "fact", agent_state(agent=agent).scopes["fact"].vectors_key)
    assert copy is not None and not forgotten & set(copy.ids.tolist())


def test_a_message_re_embedded_by_a_redaction_is_ranked_by_its_new_vector(agent, held):
    """A forget's redaction rewrites a message's text and vector in place: the count of messages
    stays, and the graph version may, but the copy made before is not used again."""
    now = timezone.now()
    rng = np.random.default_rng(5)
    events = Event.objects.bulk_create([
        Event(agent=agent, speaker="user", text=f"note {i}", occurred_at=now, recorded_at=now,
              embedding=(v := rng.normal(size=384)) / np.linalg.norm(v)) for i in range(50)])
    keyword_stats_apply(agent_id=agent.id, kind="event", ids=[e.id for e in events])
    target = events[7]
    Event.objects.filter(pk=target.pk).update(embedding=query_vector())
    held.refresh(agent.id, "event")

    def messages():
        state = agent_state(agent=agent)
        return signals.semantic(agent_id=agent.id, kind="event", vector=query_vector(), limit=10, config=CONFIG,
                                scope=state.scopes["event"])

    hits, info = messages()
    assert info["strategy"] == "exact_in_process" and hits[0].id == target.id
    before = agent_state(agent=agent).scopes["event"]
    # as `memories.services.forget` redacts a mention: out of the corpus, re-embedded, back in
    keyword_stats_apply(agent_id=agent.id, kind="event", ids=[target.id], sign=-1)
    far = -query_vector()
    Event.objects.filter(pk=target.pk).update(text="note [redacted]", embedding=far)
    keyword_stats_apply(agent_id=agent.id, kind="event", ids=[target.id])
    after = agent_state(agent=agent).scopes["event"]
    assert after.rows == before.rows and after.graph_version == before.graph_version
    hits, info = messages()
    assert info["strategy"] == "exact" and target.id not in {h.id for h in hits}
    held.refresh(agent.id, "event")
    again, info = messages()
    assert info["strategy"] == "exact_in_process"
    assert [h.id for h in again] == [h.id for h in hits]


def test_a_new_copy_does_not_push_out_one_in_use(agent, other_agent, held):
    """With room for one agent's vectors, a second agent's are not read while the first's are in
    use: its retrievals are measured in PostgreSQL instead of reading its vectors again and again."""
    facts_with_postings(agent, person(agent, "Ana"), [f"Ana note {i}" for i in range(100)])
    facts_with_postings(other_agent, person(other_agent, "Bo"), [f"Bo note {i}" for i in range(100)])
    held.max_bytes = 150 * vector_cache.ROW_BYTES
    held.refresh(agent.id, "fact")
    assert nearest(agent)[1]["strategy"] == "exact_in_process"  # in use now
    held.refresh_soon(other_agent.id, "fact", 100)
    assert nearest(other_agent)[1]["strategy"] == "exact"
    assert nearest(agent)[1]["strategy"] == "exact_in_process"
    held.KEEP_USED = 0.0  # the first no longer counts as in use: the second takes its place
    held.refresh_soon(other_agent.id, "fact", 100)
    assert nearest(other_agent)[1]["strategy"] == "exact_in_process"
    assert nearest(agent)[1]["strategy"] == "exact"


def test_a_fact_of_a_lower_id_stored_late_is_held_after_the_next_refresh(agent, held):
    """A write's transaction can take an id, then commit after later ids were held: new rows
    alone would miss it, so the copy is listed again and the fact found as the database finds it."""
    from django.db import connection

    ana = person(agent, "Ana")
    facts_with_postings(agent, ana, [f"Ana note {i}" for i in range(60)])
    with connection.cursor() as cursor:
        cursor.execute("SELECT nextval(pg_get_serial_sequence('memories_fact', 'id'))")
        late_id = cursor.fetchone()[0]
    facts_with_postings(agent, ana, [f"Ana later note {i}" for i in range(5)])
    held.refresh(agent.id, "fact")
    now = timezone.now()
    Fact.objects.bulk_create([Fact(id=late_id, agent=agent, entity=ana, text="Ana took up rowing", valid_from=now,
                                   recorded_at=now, learned_at=now, embedding=query_vector())])
    keyword_stats_apply(agent_id=agent.id, kind="fact", ids=[late_id])
    held.refresh(agent.id, "fact")
    hits, info = nearest(agent)
    assert info["strategy"] == "exact_in_process"
    assert hits[0].id == late_id
    held.max_bytes = 0
    assert [h.id for h in nearest(agent)[0]] == [h.id for h in hits]


def test_a_copy_is_read_only_for_an_agent_read_twice_at_one_state(held):
    """An agent written to between every two retrievals (a chat's turns) would have its copy
    stale before its first use: a copy is read only once a second retrieval finds none at the
    same state."""
    assert not held.missed(1, "event", (3, 10, 50))
    assert held.missed(1, "event", (3, 10, 50))
    assert not held.missed(1, "event", (3, 11, 51))  # a message stored in between
    assert not held.missed(1, "fact", (3, 11, 51))  # each kind on its own
    assert held.missed(1, "event", (3, 11, 51))
