"""The background jobs: each job's effect, overlap safety, failures and their retries."""

from __future__ import annotations

import json
import threading
from datetime import UTC, datetime, timedelta

import numpy as np
import pytest
from django.core.management import call_command
from django.db import connection, connections
from django.utils import timezone

from memories.jobs import Job, job_register
from memories.jobs.locks import lock_key
from memories.jobs.runner import JobFailed, job_run
from memories.models import AuditEntry, Entity, Fact, MergeSuggestion, PipelineRun, RunKind, RunStatus
from memories.scoring import DecayPolicy, decay_confidence, dynamic_importance
from memories.services.entities import entity_get_or_create
from memories.services.facts import fact_add, fact_reinforce, facts_mark_accessed
from memories.services.write import memory_write
from memories.statements import FactRow, duplicate_groups, statement_key

T0 = datetime(2024, 3, 1, 12, 0, tzinfo=UTC)


def write(agent, text, when=T0):
    return memory_write(agent=agent, message=text, speaker_name="Rafael", occurred_at=when)


def person(agent, name, embedder):
    return entity_get_or_create(agent=agent, name=name, entity_type="person", name_embedding=embedder.embed([name])[0])


def add_fact(agent, entity, text, embedder, **fields):
    return fact_add(agent=agent, entity=entity, text=text, embedding=embedder.embed([text])[0], valid_from=T0,
                    **fields)


# --- consolidate_profiles ------------------------------------------------------------------------

def test_a_profile_reflects_a_new_fact_after_consolidate_profiles(agent):
    write(agent, "Clara works at Orion Tech.")
    run = job_run(name="consolidate_profiles", agent=agent)
    assert run.kind == RunKind.JOB and run.status == RunStatus.SUCCEEDED
    clara = Entity.objects.get(agent=agent, display_name__startswith="Clara")
    assert "Orion Tech" in clara.profile_text and clara.profile_refreshed_at is not None

    write(agent, "Clara loves climbing.", T0 + timedelta(days=1))
    run = job_run(name="consolidate_profiles", agent=agent)
    clara.refresh_from_db()
    assert "climbing" in clara.profile_text and "Orion Tech" in clara.profile_text
    assert run.result["counts"]["profiles_written"] >= 1
    step = run.steps.get()
    assert step.name == f"agent:{agent.slug}" and step.duration_ms > 0 and step.data["entities"] >= 1

    again = job_run(name="consolidate_profiles", agent=agent)  # nothing changed since: no entity visited
    assert again.result["counts"]["entities"] == 0


def test_profiles_are_written_by_the_llm_one_call_per_entity(agent, fake_llm, embedder):
    ana = person(agent, "Ana", embedder)
    add_fact(agent, ana, "Ana is an architect", embedder)
    add_fact(agent, ana, "Ana loves jazz", embedder)
    fake_llm.script(json.dumps({"profile": "Architect who loves jazz."}))
    run = job_run(name="consolidate_profiles", agent=agent)
    ana.refresh_from_db()
    assert ana.profile_text == "Architect who loves jazz."
    chats = [body for path, body in fake_llm.requests if path.endswith("/chat/completions")]
    assert run.result["counts"]["llm_profiles"] == 1 and len(chats) == 1
    assert "Ana is an architect" in chats[0]["messages"][1]["content"]


# --- decay and importance ------------------------------------------------------------------------

def test_decay_halves_the_distance_to_the_floor_per_half_life_and_reinforcement_restores():
    policy = DecayPolicy(half_life_days=90, floor=0.3)
    half_life = 90 * 86400.0
    zero = np.zeros(3)
    out = decay_confidence(np.array([0.95, 0.95, 0.2]), np.array([half_life, 2 * half_life, half_life]), zero, zero,
                           np.zeros(3, bool), np.zeros(3, bool), policy)
    assert out[0] == pytest.approx(0.3 + 0.65 / 2) and out[1] == pytest.approx(0.3 + 0.65 / 4)
    assert out[2] == pytest.approx(0.2)  # below the floor: never raised to it by decay
    # a confirmed fact is more stable (half-life × 1.3) and gets half its gap to the ceiling back
    confirmed = decay_confidence(np.array([0.6]), np.array([0.0]), np.zeros(1), np.ones(1), np.ones(1, bool),
                                 np.zeros(1, bool), policy)
    assert confirmed[0] == pytest.approx(0.6 + 0.5 * (0.95 - 0.6))


def test_dynamic_importance_rises_with_use_corrections_and_patterns():
    base = np.full(4, 0.5)
    out = dynamic_importance(base, np.array([0, 20, 0, 0.0]), np.array([np.inf, 0, np.inf, np.inf]),
                             np.array([False, False, True, False]), np.array([0, 0, 0, 5.0]))
    assert out[0] == pytest.approx(0.5)
    assert out[1] == pytest.approx(0.5 + 0.5 * (0.35 + 0.20))
    assert out[2] == pytest.approx(0.5 + 0.5 * 0.25) and out[3] == pytest.approx(0.5 + 0.5 * 0.20)


def test_the_decay_job_moves_confidence_as_the_reference_says(agent, embedder):
    ana = person(agent, "Ana", embedder)
    old = add_fact(agent, ana, "Ana lives in Lisbon", embedder)
    fresh = add_fact(agent, ana, "Ana likes tea", embedder)
    days_ago = timezone.now() - timedelta(days=90)
    Fact.objects.filter(pk=old.pk).update(recorded_at=days_ago, last_confirmed_at=days_ago, valid_from=days_ago)
    job_run(name="decay", agent=agent)
    old.refresh_from_db()
    fresh.refresh_from_db()
    assert old.confidence == pytest.approx(0.3 + 0.65 / 2, abs=0.01)  # one half-life untouched
    assert fresh.confidence == pytest.approx(0.95, abs=0.001)

    fact_reinforce(fact=old)  # the same statement heard again
    job_run(name="decay", agent=agent)
    old.refresh_from_db()
    assert old.confidence == pytest.approx(0.625 + 0.5 * (0.95 - 0.625), abs=0.01)
    settled = old.confidence
    job_run(name="decay", agent=agent)  # idempotent: nothing new since the last pass
    old.refresh_from_db()
    assert old.confidence == pytest.approx(settled, abs=1e-4)


def test_the_importance_job_rewards_retrieval_and_corrections(agent, embedder):
    ana = person(agent, "Ana", embedder)
    used = add_fact(agent, ana, "Ana lives in Lisbon", embedder)
    idle = add_fact(agent, ana, "Ana likes tea", embedder)
    Fact.objects.filter(pk=used.pk).update(access_count=20, last_accessed_at=timezone.now())
    run = job_run(name="importance", agent=agent)
    used.refresh_from_db()
    idle.refresh_from_db()
    assert used.importance == pytest.approx(0.5 + 0.5 * 0.55, abs=0.01) and idle.importance == pytest.approx(0.5)
    assert run.result["counts"]["facts_changed"] == 1
    ana.refresh_from_db()
    assert ana.importance > 0.5


def test_retrievals_counted_since_the_last_pass_reach_the_importance_job(agent, embedder):
    ana = person(agent, "Ana", embedder)
    used = add_fact(agent, ana, "Ana lives in Lisbon", embedder)
    for _ in range(20):  # as retrievals count them: in the pending table, the fact row untouched
        facts_mark_accessed(agent=agent, fact_ids=[used.id])
    assert Fact.objects.get(pk=used.pk).access_count == 0
    job_run(name="importance", agent=agent)
    used.refresh_from_db()
    assert used.access_count == 20 and used.last_accessed_at is not None
    assert used.importance == pytest.approx(0.5 + 0.5 * 0.55, abs=0.01)


# --- dedupe_facts --------------------------------------------------------------------------------

def test_statement_keys_separate_negations_and_numbers():
    assert statement_key("Ana likes jazz.") == statement_key("ana likes   jazz")
    assert statement_key("Ana likes jazz") != statement_key("Ana dislikes jazz")
    assert statement_key("Ana has 2 cats") != statement_key("Ana has 3 cats")
    rows = [FactRow(1, "Ana likes jazz", "", "", 0.9, 0, 1.0), FactRow(2, "Ana likes jazz.", "", "", 0.95, 2, 2.0),
            FactRow(3, "Ana dislikes jazz", "", "", 0.95, 0, 3.0)]
    ((kept, dups, why),) = duplicate_groups(rows, None)
    assert kept.id == 2 and [d.id for d in dups] == [1] and why == "same statement"


def test_duplicates_are_closed_with_the_reason_and_the_kept_fact_reinforced(agent, embedder):
    ana = person(agent, "Ana", embedder)
    first = add_fact(agent, ana, "Ana loves jazz", embedder)
    older = add_fact(agent, ana, "Ana loved blues", embedder)
    second = add_fact(agent, ana, "Ana loves jazz.", embedder, supersedes=None)
    other = add_fact(agent, ana, "Ana hates jazz", embedder)
    Fact.objects.filter(pk=older.pk).update(invalidated_at=timezone.now(), valid_to=timezone.now())
    chained = add_fact(agent, ana, "Ana loves the jazz", embedder, supersedes=older)
    run = job_run(name="dedupe_facts", agent=agent)
    assert run.result["counts"]["closed"] == 2
    for fact in (first, second, other, chained):
        fact.refresh_from_db()
    assert first.is_active and first.reinforcement_count == 2
    assert not second.is_active and second.invalidation_reason.startswith(f"duplicate of fact {first.id}")
    assert second.valid_to is None  # closed on the system axis only
    assert not chained.is_active and chained.supersedes_id == older.id  # the chain stays walkable
    assert other.is_active
    assert AuditEntry.objects.filter(agent=agent, action="fact_dedupe").count() == 1


# --- merge_suggestions ---------------------------------------------------------------------------

def test_a_suggestion_is_listed_dismissed_and_not_suggested_again(agent, embedder, make_key, client_for):
    full = person(agent, "Guilherme Maturana", embedder)
    short = person(agent, "Guilherme", embedder)
    person(agent, "Marta", embedder)
    job_run(name="merge_suggestions", agent=agent)
    api = client_for(make_key(agent, "write"))
    listed = api.get(f"/api/v1/agents/{agent.slug}/merge-suggestions/").json()["results"]
    assert len(listed) == 1
    pair = {listed[0]["entity_a"]["id"], listed[0]["entity_b"]["id"]}
    assert pair == {full.id, short.id} and listed[0]["reasons"]["names"] == 1.0
    url = f"/api/v1/agents/{agent.slug}/merge-suggestions/{listed[0]['id']}/dismiss/"
    assert api.post(url, {"reason": "two people"}, format="json").status_code == 200
    assert api.get(f"/api/v1/agents/{agent.slug}/merge-suggestions/").json()["results"] == []
    job_run(name="merge_suggestions", agent=agent)
    assert list(MergeSuggestion.objects.filter(agent=agent).values_list("status", flat=True)) == ["dismissed"]
    assert api.post(url, {}, format="json").status_code == 400  # already decided


def test_merging_a_suggestion_needs_admin_and_merges(agent, embedder, make_key, client_for):
    full = person(agent, "Guilherme Maturana", embedder)
    short = person(agent, "Guilherme", embedder)
    add_fact(agent, full, "Guilherme Maturana plays guitar", embedder)
    job_run(name="merge_suggestions", agent=agent)
    suggestion = MergeSuggestion.objects.get(agent=agent)
    url = f"/api/v1/agents/{agent.slug}/merge-suggestions/{suggestion.id}/merge/"
    assert client_for(make_key(agent, "write")).post(url, {}, format="json").status_code == 403
    assert client_for(make_key(agent, "admin")).post(url, {}, format="json").status_code == 200
    short.refresh_from_db()
    assert short.merged_into_id == full.id


def test_no_automatic_merge_without_the_setting(agent, embedder, fake_llm, settings):
    person(agent, "Guilherme Maturana", embedder)
    person(agent, "Guilherme", embedder)
    settings.ANAMNESIS_AUTO_MERGE = False
    job_run(name="merge_suggestions", agent=agent)
    assert fake_llm.requests == [] and MergeSuggestion.objects.get(agent=agent).status == "open"
    settings.ANAMNESIS_AUTO_MERGE = True
    fake_llm.script(json.dumps({"same": True, "reason": "Guilherme is short for Guilherme Maturana"}))
    MergeSuggestion.objects.all().delete()
    run = job_run(name="merge_suggestions", agent=agent)
    assert run.result["counts"]["auto_merged"] == 1
    assert MergeSuggestion.objects.get(agent=agent).status == "merged"


# --- the framework -------------------------------------------------------------------------------

def test_jobs_list_names_every_job(db, capsys):
    call_command("jobs", "list")
    out = capsys.readouterr().out
    for name in ("consolidate_profiles", "importance", "decay", "dedupe_facts", "merge_suggestions",
                 "graph_warmup", "vector_indexes"):
        assert name in out


def test_graph_warmup_builds_the_graph_of_active_agents(agent, other_agent):
    write(agent, "Clara works at Orion Tech.")
    run = job_run(name="graph_warmup")
    assert run.result["agents_done"] == [agent.slug]  # the other agent was not active
    assert run.result["counts"]["nodes"] >= 2


@pytest.mark.django_db(transaction=True)
def test_a_run_skips_the_agent_another_run_holds(agent):
    def hold(ready, release):
        with connections["default"].cursor() as cursor:
            cursor.execute("SELECT pg_advisory_lock(%s, %s)", lock_key("decay", agent.id))
            ready.set()
            release.wait(10)
            cursor.execute("SELECT pg_advisory_unlock(%s, %s)", lock_key("decay", agent.id))
        connections["default"].close()

    ready, release = threading.Event(), threading.Event()
    holder = threading.Thread(target=hold, args=(ready, release))
    holder.start()
    try:
        assert ready.wait(10)
        run = job_run(name="decay", agent=agent)
        assert run.result["agents_skipped"] == [agent.slug] and run.steps.get().status == "skipped"
    finally:
        release.set()
        holder.join()
    assert job_run(name="decay", agent=agent).result["agents_done"] == [agent.slug]


@pytest.mark.django_db(transaction=True)
def test_two_runs_at_once_one_skips(agent):
    entered, proceed = threading.Event(), threading.Event()

    def slow(ctx, a, step):
        entered.set()
        proceed.wait(10)
        return {"visited": 1}

    job_register(Job("test_slow", "test", handler=slow))
    results = {}

    def first():
        results["first"] = job_run(name="test_slow", agent=agent).result
        connections["default"].close()

    thread = threading.Thread(target=first)
    thread.start()
    try:
        assert entered.wait(10)
        results["second"] = job_run(name="test_slow", agent=agent).result
    finally:
        proceed.set()
        thread.join()
    assert results["second"]["agents_skipped"] == [agent.slug]
    assert results["first"]["agents_done"] == [agent.slug] and results["first"]["counts"] == {"visited": 1}


def test_a_failed_job_is_retried_on_the_same_run_which_shows_the_error(agent):
    def boom(ctx, a, step):
        raise RuntimeError("disk on fire")

    job_register(Job("test_boom", "test", handler=boom))
    with pytest.raises(JobFailed):
        job_run(name="test_boom", agent=agent)
    run = PipelineRun.objects.get(kind=RunKind.JOB, name="test_boom")
    assert run.status == RunStatus.FAILED and "disk on fire" in run.error
    assert run.steps.get().status == "error"

    from memories.tasks import run_job_task

    PipelineRun.objects.filter(name="test_boom").delete()
    outcome = run_job_task.apply(args=["test_boom"], kwargs={"agent_slug": agent.slug})
    assert isinstance(outcome.result, JobFailed)
    run = PipelineRun.objects.get(kind=RunKind.JOB, name="test_boom")
    assert run.attempts == 4 and run.status == RunStatus.FAILED and "disk on fire" in run.error
    assert sorted(set(run.steps.values_list("attempt", flat=True))) == [1, 2, 3, 4]


def test_a_run_out_of_time_leaves_agents_for_the_next(agent, other_agent):
    run = job_run(name="importance", max_seconds=0)
    assert sorted(run.result["agents_left"]) == sorted([agent.slug, other_agent.slug])
    assert connection.in_atomic_block  # (the test transaction) — the run did not need its own
