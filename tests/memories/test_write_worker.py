"""The write job in a real Celery worker process, killed in the middle of a write."""

import time
from datetime import UTC, datetime

import pytest

from memories.models import Entity, Event, Fact, PipelineRun, Relationship, RunStatus
from memories.services.write import event_submit, memory_write
from tests.support.scripts import extraction, schema_name
from tests.support.worker import kill_worker, start_worker, stop_worker

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]

SAO_PAULO = extraction(entities=[("Ricardo Gomes", "person"), ("São Paulo", "place")],
                       facts=[("Ricardo Gomes", "Ricardo Gomes lives in São Paulo", "biographical_milestone")],
                       relations=[("Ricardo Gomes", "lives_in", "São Paulo")])
AUSTIN = extraction(entities=[("Ricardo Gomes", "person"), ("Austin", "place")],
                    facts=[("Ricardo Gomes", "Ricardo Gomes moved to Austin, Texas", "biographical_milestone")],
                    relations=[("Ricardo Gomes", "lives_in", "Austin")])


def _wait(predicate, timeout, what):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.1)
    raise AssertionError(f"timed out waiting for {what}")


def test_killed_worker_keeps_the_event_and_the_redelivered_job_writes_once(agent, fake_llm, tmp_path):
    import json

    fake_llm.responder = lambda req: json.dumps(SAO_PAULO)
    memory_write(agent=agent, message="Ricardo Gomes lives in São Paulo.", speaker_name="Rafael",
                 occurred_at=datetime(2024, 1, 5, tzinfo=UTC))
    old = Fact.objects.get(text="Ricardo Gomes lives in São Paulo")
    entities_before = Entity.objects.count()
    reconcile_calls = []

    def respond(req):
        if schema_name(req) == "informed_extraction":
            return json.dumps(AUSTIN)
        reconcile_calls.append(time.monotonic())
        verdict = json.dumps({"decisions": [{"index": 0, "action": "UPDATE", "target_id": old.id,
                                             "reason": "moved"}]})
        # the first worker hangs here, inside its write transaction, until it is killed
        return {"content": verdict, "delay": 60} if len(reconcile_calls) == 1 else verdict

    fake_llm.responder = respond
    # a short lease: the second worker's sweeper re-queues the job soon after the kill
    llm_env = {"ANAMNESIS_LLM": "openai", "ANAMNESIS_LLM_BASE_URL": fake_llm.base_url,
               "ANAMNESIS_JOB_LEASE_SECONDS": "5"}
    worker = start_worker(env_extra=llm_env, log=tmp_path / "worker1.log")
    try:
        event, run, _ = event_submit(agent=agent, message="Ricardo Gomes moved to Austin, Texas.",
                                     speaker_name="Rafael", occurred_at=datetime(2024, 5, 1, tzinfo=UTC))
        _wait(lambda: reconcile_calls, 60, "the worker to reach reconciliation")
        kill_worker(worker)
    finally:
        stop_worker(worker)

    assert Event.objects.filter(pk=event.pk).exists()
    run.refresh_from_db()
    assert run.status == RunStatus.RUNNING
    assert not Fact.objects.filter(supersedes=old).exists()
    assert Fact.objects.get(pk=old.pk).is_active

    worker = start_worker(env_extra=llm_env, log=tmp_path / "worker2.log", beat=True)
    try:
        _wait(lambda: PipelineRun.objects.get(pk=run.pk).status == RunStatus.SUCCEEDED, 90, "the redelivered job")
    finally:
        stop_worker(worker)

    run.refresh_from_db()
    assert run.attempts == 2
    assert Fact.objects.filter(supersedes=old).count() == 1
    assert Fact.objects.filter(text="Ricardo Gomes moved to Austin, Texas").count() == 1
    assert Entity.objects.count() == entities_before + 1  # Austin, once
    active = Relationship.objects.filter(rel_type="lives_in", invalidated_at__isnull=True)
    assert [r.target.display_name for r in active] == ["Austin"]
    assert Event.objects.count() == 2


def test_a_job_whose_pool_child_is_killed_is_run_again_when_the_dead_childs_lease_runs_out_without_beat(
        agent, fake_llm, tmp_path):
    """The pool child running a job is killed while its worker lives on. The worker gives the task
    back at once (reject_on_worker_lost) and the next child receives it while the dead child's
    lease still runs: the task is retried when that lease runs out. No beat runs (no sweeper) and
    the broker's visibility timeout is an hour: only the retry brings the job back."""
    import json
    import os
    import signal

    extraction_calls = []

    def respond(req):
        if schema_name(req) != "informed_extraction":
            return "{}"
        extraction_calls.append(time.monotonic())
        # the first child hangs here, renewing its lease, until it is killed
        return {"content": json.dumps(SAO_PAULO), "delay": 60} if len(extraction_calls) == 1 else json.dumps(SAO_PAULO)

    fake_llm.responder = respond
    env = {"ANAMNESIS_LLM": "openai", "ANAMNESIS_LLM_BASE_URL": fake_llm.base_url,
           "ANAMNESIS_JOB_LEASE_SECONDS": "15", "ANAMNESIS_BROKER_VISIBILITY_TIMEOUT": "3600"}
    worker = start_worker(env_extra=env, log=tmp_path / "worker.log")
    try:
        _, run, _ = event_submit(agent=agent, message="Ricardo Gomes lives in São Paulo.", speaker_name="Rafael",
                                 occurred_at=datetime(2024, 1, 5, tzinfo=UTC))
        _wait(lambda: extraction_calls, 60, "the worker's child to reach extraction")
        run.refresh_from_db()
        child = int(run.lease_owner.rsplit(":", 1)[1])
        assert run.status == RunStatus.RUNNING and child != worker.pid
        os.kill(child, signal.SIGKILL)
        _wait(lambda: PipelineRun.objects.get(pk=run.pk).status == RunStatus.SUCCEEDED, 120,
              "the job to be run again after the dead child's lease")
    finally:
        stop_worker(worker)

    run.refresh_from_db()
    assert run.attempts == 2 and len(extraction_calls) == 2
    assert Fact.objects.filter(agent=agent, text="Ricardo Gomes lives in São Paulo").count() == 1
