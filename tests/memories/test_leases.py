"""Leases on running jobs: the decision (pure), taking and renewing a lease, a worker skipping a job
another live worker holds, and the sweeper re-queueing a job whose worker stopped."""

from __future__ import annotations

import time
from datetime import UTC, datetime, timedelta

import pytest
from django.utils import timezone

from memories.models import Fact, PipelineRun, RunKind, RunStatus
from memories.services import write_jobs
from memories.services.leases import (
    LeaseDecision,
    LeaseHeld,
    lease_decide,
    lease_kept,
    lease_owner_name,
    lease_take,
)
from memories.services.write import event_process, event_submit, memory_write

NOW = datetime(2025, 3, 1, 12, 0, tzinfo=UTC)
LATER, EARLIER = NOW + timedelta(seconds=30), NOW - timedelta(seconds=1)


CASES = [
    ("queued", "", None, LeaseDecision.TAKE),
    ("queued", "broker", LATER, LeaseDecision.TAKE),  # sent, waiting in the queue
    ("failed", "host-a:10", None, LeaseDecision.TAKE),
    ("succeeded", "host-a:10", None, LeaseDecision.DONE),
    ("running", "host-a:10", LATER, LeaseDecision.HELD),  # its worker is alive: leave it
    ("running", "host-a:10", EARLIER, LeaseDecision.TAKE),  # its worker stopped renewing
    ("running", "host-a:10", NOW, LeaseDecision.TAKE),  # expired on the dot
    ("running", "me:1", LATER, LeaseDecision.TAKE),  # left behind by this very thread
    ("running", "", None, LeaseDecision.TAKE),  # stored before leases
]


@pytest.mark.parametrize(("status", "owner", "expires_at", "expected"), CASES)
def test_the_lease_decision(status, owner, expires_at, expected):
    assert lease_decide(status=status, owner=owner, expires_at=expires_at, now=NOW, me="me:1") is expected


@pytest.mark.django_db
@pytest.mark.parametrize(("status", "owner", "expires_at", "expected"), CASES)
def test_taking_a_lease_in_one_statement_decides_as_the_rule(agent, status, owner, expires_at, expected):
    """lease_take asks the database the rule's question in its UPDATE: the same answer in every case."""
    run = _submit(agent)
    now = timezone.now()
    expires = None if expires_at is None else now + (expires_at - NOW)
    if expires_at == NOW:
        expires = now - timedelta(milliseconds=1)  # "on the dot" by the time the statement runs
    PipelineRun.objects.filter(pk=run.pk).update(
        status=status, lease_expires_at=expires, attempts=1,
        lease_owner=lease_owner_name() if owner == "me:1" else owner)
    taken = lease_take(run_id=run.pk)
    assert taken.decision is expected
    run.refresh_from_db()
    if expected is LeaseDecision.TAKE:
        assert run.status == RunStatus.RUNNING and run.lease_owner == lease_owner_name() and run.attempts == 2
    else:
        assert (run.status, run.lease_expires_at, run.attempts) == (status, expires, 1)
        assert taken.held_until == (expires if expected is LeaseDecision.HELD else None)


def test_the_owner_names_the_host_and_the_process():
    import os
    import socket

    assert lease_owner_name() == f"{socket.gethostname()}:{os.getpid()}"


def _submit(agent, text="Bruno lives in Porto.", **kwargs):
    """A queued job (inside the test's transaction nothing is sent to the broker)."""
    _, run, _ = event_submit(agent=agent, message=text, speaker_name="Rafael", **kwargs)
    return run


def _hold(run, owner="worker-b:4242", seconds=60, attempts=1):
    PipelineRun.objects.filter(pk=run.pk).update(
        status=RunStatus.RUNNING, lease_owner=owner, attempts=attempts, started_at=timezone.now(),
        lease_expires_at=timezone.now() + timedelta(seconds=seconds))


@pytest.mark.django_db
def test_taking_a_lease_marks_the_job_running_and_counts_the_attempt(agent):
    run = _submit(agent)
    assert lease_take(run_id=run.pk).decision is LeaseDecision.TAKE
    run.refresh_from_db()
    assert run.status == RunStatus.RUNNING and run.attempts == 1 and run.lease_owner == lease_owner_name()
    assert timezone.now() < run.lease_expires_at <= timezone.now() + timedelta(seconds=60)


@pytest.mark.django_db
def test_a_worker_skips_a_job_another_live_worker_holds_and_learns_until_when(agent):
    run = _submit(agent)
    _hold(run)
    with pytest.raises(LeaseHeld) as held:
        event_process(run_id=run.pk)
    run.refresh_from_db()
    assert run.status == RunStatus.RUNNING and run.lease_owner == "worker-b:4242" and run.attempts == 1
    assert held.value.until == run.lease_expires_at and 55 < held.value.seconds_left() <= 60
    assert not Fact.objects.filter(agent=agent).exists()


@pytest.mark.django_db
def test_the_worker_task_retries_a_held_job_once_its_lease_runs_out_a_bounded_number_of_times(agent, monkeypatch):
    """A pool child was killed under a live worker, which gave its task back at once: the next
    child finds the dead child's lease still running. The task is retried when the lease runs out
    (the broker brings it back then, beat or not), not acknowledged as done."""
    from memories.tasks import process_event_task

    run = _submit(agent)
    _hold(run, owner="worker-a:99", seconds=30)
    countdowns = []
    retry = process_event_task.retry
    monkeypatch.setattr(process_event_task, "retry", lambda **kw: countdowns.append(kw["countdown"]) or retry(**kw))
    # applied here, each retry runs at once (not after its countdown): the lease still runs each time
    outcome = process_event_task.apply(args=[run.pk])
    assert len(countdowns) == process_event_task.max_retries
    assert all(30 <= countdown <= 32 for countdown in countdowns)  # the lease's 30 s, and one more
    assert "another worker holds the job" in outcome.result["skipped"]
    run.refresh_from_db()
    assert run.status == RunStatus.RUNNING and run.lease_owner == "worker-a:99" and run.attempts == 1


@pytest.mark.django_db
def test_a_job_whose_lease_expired_is_taken_over_and_stored_once(agent):
    run = _submit(agent)
    _hold(run, seconds=-5)
    result = event_process(run_id=run.pk)
    assert result.success and [c.text for c in result.facts_added] == ["Bruno lives in Porto"]
    run.refresh_from_db()
    assert run.status == RunStatus.SUCCEEDED and run.attempts == 2 and run.lease_expires_at is None
    assert event_process(run_id=run.pk).facts_added == result.facts_added  # a re-run is the stored result
    assert Fact.objects.filter(agent=agent).count() == 1


@pytest.mark.django_db
def test_a_caller_waiting_for_the_result_runs_a_held_job_alongside_and_it_is_stored_once(agent):
    run = _submit(agent, "Clara lives in Faro.", idempotency_key="k")
    _hold(run)  # a worker is on it
    result = memory_write(agent=agent, message="Clara lives in Faro.", speaker_name="Rafael", idempotency_key="k")
    assert result.success and [c.text for c in result.facts_added] == ["Clara lives in Faro"]
    run.refresh_from_db()
    assert run.status == RunStatus.SUCCEEDED
    assert event_process(run_id=run.pk).facts_added == result.facts_added  # the worker then finds it stored
    assert Fact.objects.filter(agent=agent).count() == 1


@pytest.mark.django_db
def test_a_failure_is_stored_only_by_the_lease_holder(agent, monkeypatch):
    run = _submit(agent)
    from memories.services import write

    def broken(*args, **kwargs):
        # meanwhile the sweeper re-queued the job and another worker took it
        _hold(run, owner="worker-c:7", attempts=2)
        raise RuntimeError("stalled for too long")

    monkeypatch.setattr(write, "_process", broken)
    with pytest.raises(RuntimeError):
        event_process(run_id=run.pk)
    run.refresh_from_db()
    assert run.status == RunStatus.RUNNING and run.lease_owner == "worker-c:7" and run.error == ""


@pytest.mark.django_db
def test_the_sweeper_requeues_a_job_whose_worker_stopped_and_leaves_a_live_one(agent, monkeypatch):
    sent = []
    monkeypatch.setattr(write_jobs, "job_enqueue", lambda run_id, force=False: sent.append(run_id) or True)
    live, dead, legacy, crashing = (_submit(agent, f"{name} lives in Braga.") for name in ("Ana", "Rui", "Eva", "Ivo"))
    _hold(live)
    _hold(dead, seconds=-1)
    _hold(crashing, seconds=-1, attempts=write_jobs.SWEEP_MAX_ATTEMPTS)  # it killed its worker 5 times
    PipelineRun.objects.filter(pk=legacy.pk).update(  # running since before leases existed
        status=RunStatus.RUNNING, started_at=timezone.now() - timedelta(hours=1), attempts=1)
    swept = write_jobs.jobs_sweep()
    assert swept["expired"] == 2 and swept["given_up"] == 1 and sorted(sent) == sorted([dead.pk, legacy.pk])
    statuses = dict(PipelineRun.objects.filter(agent=agent).values_list("id", "status"))
    assert statuses == {live.pk: "running", dead.pk: "queued", legacy.pk: "queued", crashing.pk: "failed"}
    assert PipelineRun.objects.get(pk=dead.pk).error.startswith("WorkerLost:")
    assert "retry" in PipelineRun.objects.get(pk=crashing.pk).error
    event_process(run_id=dead.pk)
    dead.refresh_from_db()
    assert dead.status == RunStatus.SUCCEEDED and dead.error == "" and dead.attempts == 2


@pytest.mark.django_db
def test_the_sweeper_fails_a_background_job_run_whose_worker_stopped(agent, monkeypatch):
    monkeypatch.setattr(write_jobs, "job_enqueue", lambda run_id, force=False: True)
    from memories.services.jobs import job_run_start

    run = job_run_start(name="decay", agent=agent, params={})
    assert run.lease_owner == lease_owner_name() and run.lease_expires_at > timezone.now()
    assert write_jobs.jobs_sweep()["job_runs_lost"] == 0
    PipelineRun.objects.filter(pk=run.pk).update(lease_expires_at=timezone.now() - timedelta(seconds=1))
    assert write_jobs.jobs_sweep()["job_runs_lost"] == 1
    run.refresh_from_db()
    assert run.kind == RunKind.JOB and run.status == RunStatus.FAILED and run.error.startswith("WorkerLost:")


@pytest.mark.django_db(transaction=True)
def test_the_lease_is_renewed_while_the_job_runs_and_no_longer_after(agent, settings):
    settings.ANAMNESIS_JOB_LEASE_SECONDS = 0.9  # renewed every 0.3 s
    _, run, _ = event_submit(agent=agent, message="Bruno lives in Porto.", speaker_name="Rafael", enqueue=False)
    assert lease_take(run_id=run.pk).decision is LeaseDecision.TAKE
    taken = PipelineRun.objects.get(pk=run.pk).lease_expires_at
    with lease_kept(run.pk):
        time.sleep(1.5)  # longer than the lease: only the renewals keep it
        renewed = PipelineRun.objects.get(pk=run.pk).lease_expires_at
        assert renewed > taken and renewed > timezone.now()
    time.sleep(1.0)
    assert PipelineRun.objects.get(pk=run.pk).lease_expires_at < timezone.now()  # no renewal after the block


@pytest.mark.django_db(transaction=True)
def test_an_imports_batch_keeps_the_leases_of_its_waiting_jobs_until_each_is_stored(agent, settings):
    """An import logs a batch's messages together, each job running and leased to the importer:
    the ones waiting their turn stay leased (no sweeper takes them) while the batch is written,
    and each ends succeeded, with its facts, in the order the turns were said."""
    from memories.importers.locomo import Turn
    from memories.services.imports import conversation_import

    settings.ANAMNESIS_JOB_LEASE_SECONDS = 0.9  # renewed every 0.3 s
    said = timezone.now() - timedelta(days=1)
    texts = ["Bruno lives in Porto.", "", "Marta works at Siemens.", "I adopted a cat named Tofu."]
    turns = [Turn(dia_id=f"d{i}", speaker="Rafael", text=text, occurred_at=said + timedelta(minutes=i), session=1)
             for i, text in enumerate(texts)]
    seen = []

    def progress(_):
        now = timezone.now()
        waiting = PipelineRun.objects.filter(agent=agent, status=RunStatus.RUNNING)
        seen.extend((expires, now) for expires in waiting.values_list("lease_expires_at", flat=True))
        time.sleep(0.4)  # the last job waits longer than its first lease: the batch's beat renews it

    stats = conversation_import(agent=agent, turns=turns, progress=progress)
    assert (stats.imported, stats.failed) == (4, 0)  # the empty turn is counted and stores nothing
    assert seen and all(expires > now for expires, now in seen)  # no waiting job's lease ran out
    runs = list(PipelineRun.objects.filter(agent=agent, kind=RunKind.WRITE).order_by("event__occurred_at"))
    assert [r.event.text for r in runs] == ["Bruno lives in Porto.", "Marta works at Siemens.",
                                           "I adopted a cat named Tofu."]
    assert [r.status for r in runs] == [RunStatus.SUCCEEDED] * 3 and [r.id for r in runs] == sorted(r.id for r in runs)
    assert Fact.objects.filter(agent=agent, text__contains="Siemens").exists()
    assert conversation_import(agent=agent, turns=turns).skipped == 3  # a second import stores nothing again
