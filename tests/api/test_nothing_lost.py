"""Nothing accepted is lost: a reused Idempotency-Key or external_id with another body is refused
(not silently dropped), a bad fact is skipped while the rest of the message is stored, failed jobs
and jobs whose worker stopped can be retried (by the caller or the sweeper), a waiting client sees
a failure in the HTTP status, and the CLI says what went wrong in one line."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.db import ProgrammingError

from memories.management.cli import cli_errors
from memories.models import Entity, Event, Fact, PipelineRun, RunStatus
from memories.services import broker
from memories.services import write_jobs as jobs
from memories.services.write import event_process, event_submit, memory_write
from tests.api.conftest import url
from tests.support.scripts import by_schema, extraction

pytestmark = pytest.mark.django_db
BODY = {"speaker": "Rafael", "text": "Marta prefers tea.", "occurred_at": "2024-01-05T10:00:00Z"}


def post(api, agent, body, key, query=""):
    return api.post(url(agent, "events") + query, body, format="json", HTTP_IDEMPOTENCY_KEY=key)


def test_a_reused_key_with_another_body_is_a_422_and_every_replay_says_so(agent, api):
    first = post(api, agent, BODY, "k-1")
    assert first.status_code == 202 and "Idempotent-Replayed" not in first
    other = post(api, agent, {**BODY, "text": "Marta prefers coffee."}, "k-1")
    assert other.status_code == 422
    error = other.json()["error"]
    assert error["code"] == "idempotency_conflict" and "Idempotency-Key" in error["fields"]
    assert Event.objects.filter(agent=agent).count() == 1
    again = post(api, agent, BODY, "k-1")
    assert again.status_code == 202 and again["Idempotent-Replayed"] == "true"
    assert again.json()["job"]["id"] == first.json()["job"]["id"]
    waited = post(api, agent, BODY, "k-1", "?wait=true&wait_timeout=0.2")  # still queued: 202
    assert waited.status_code == 202 and waited["Idempotent-Replayed"] == "true"
    event_process(run_id=first.json()["job"]["id"])
    done = post(api, agent, BODY, "k-1", "?wait=true")
    assert done.status_code == 200 and done["Idempotent-Replayed"] == "true" and done.json()["success"]


def test_a_reused_external_id_with_another_body_is_a_422_naming_it_and_the_stored_message_stays(agent, api):
    body = {**BODY, "external_id": "chat-7-msg-1"}
    first = api.post(url(agent, "events"), body, format="json")
    assert first.status_code == 202 and "Idempotent-Replayed" not in first
    other = api.post(url(agent, "events"), {**body, "text": "Marta prefers coffee."}, format="json")
    assert other.status_code == 422 and "Idempotent-Replayed" not in other
    error = other.json()["error"]
    assert error["code"] == "external_id_conflict" and "external_id" in error["fields"]
    assert "chat-7-msg-1" in error["message"] and error["fields"]["job"] == first.json()["job"]["id"]
    stored = Event.objects.get(agent=agent)
    assert (stored.text, stored.external_id) == ("Marta prefers tea.", "chat-7-msg-1")
    again = api.post(url(agent, "events"), body, format="json")  # the same body: still a replay
    assert again.status_code == 202 and again["Idempotent-Replayed"] == "true"
    assert again.json()["job"]["id"] == first.json()["job"]["id"]


def test_a_fresh_key_with_a_reused_external_id_blames_the_external_id_not_the_key(agent, api):
    body = {**BODY, "external_id": "chat-7-msg-2"}
    first = post(api, agent, body, "k-first")
    other = post(api, agent, {**body, "text": "Marta prefers coffee."}, "k-fresh")
    assert other.status_code == 422
    error = other.json()["error"]
    assert error["code"] == "external_id_conflict"
    assert "external_id" in error["fields"] and "Idempotency-Key" not in error["fields"]
    same = post(api, agent, body, "k-another")  # another key, the same body: a replay of the stored one
    assert same.status_code == 202 and same["Idempotent-Replayed"] == "true"
    assert same.json()["job"]["id"] == first.json()["job"]["id"]
    assert Event.objects.filter(agent=agent).count() == 1


def test_a_failed_job_is_a_non_2xx_for_a_waiting_client_and_can_be_retried(agent, api):
    accepted = post(api, agent, BODY, "k-2").json()["job"]
    PipelineRun.objects.filter(pk=accepted["id"]).update(status=RunStatus.FAILED, error="OperationalError: db gone")
    waited = post(api, agent, BODY, "k-2", "?wait=true")
    assert waited.status_code == 422 and waited["Idempotent-Replayed"] == "true"
    assert waited.json()["error"]["code"] == "job_failed" and "retry" in waited.json()["error"]["message"]

    retried = api.post(url(agent, "jobs", accepted["id"], "retry"), format="json")
    assert retried.status_code == 202 and retried.json()["job"]["status"] == "queued"
    event_process(run_id=accepted["id"])
    assert api.get(url(agent, "jobs", accepted["id"])).json()["status"] == "succeeded"
    assert Fact.objects.filter(agent=agent, text__icontains="tea").exists()
    again = api.post(url(agent, "jobs", accepted["id"], "retry"), format="json")
    assert again.status_code == 409 and again.json()["error"]["code"] == "conflict"


def test_a_running_job_whose_worker_stopped_can_be_retried_and_a_live_one_cannot(agent, api):
    accepted = post(api, agent, BODY, "k-3").json()["job"]
    held_until = datetime.now(UTC) + timedelta(seconds=45)
    PipelineRun.objects.filter(pk=accepted["id"]).update(  # a worker is on it
        status=RunStatus.RUNNING, attempts=1, lease_owner="worker-a:17", lease_expires_at=held_until)
    job = api.get(url(agent, "jobs", accepted["id"])).json()
    assert job["status"] == "running" and job["held_until"] == held_until.isoformat().replace("+00:00", "Z")
    live = api.post(url(agent, "jobs", accepted["id"], "retry"), format="json")
    assert live.status_code == 409
    error = live.json()["error"]
    assert error["code"] == "conflict" and "until" in error["message"]
    assert error["fields"]["held_until"].startswith(held_until.strftime("%Y-%m-%dT%H:%M"))

    # the worker is killed: nothing renews its lease, which runs out
    PipelineRun.objects.filter(pk=accepted["id"]).update(lease_expires_at=datetime.now(UTC) - timedelta(seconds=1))
    retried = api.post(url(agent, "jobs", accepted["id"], "retry"), format="json")
    assert retried.status_code == 202 and retried.json()["job"]["status"] == "queued"
    assert retried.json()["job"]["held_until"] is None
    event_process(run_id=accepted["id"])
    job = api.get(url(agent, "jobs", accepted["id"])).json()
    assert job["status"] == "succeeded" and job["attempts"] == 2
    assert Fact.objects.filter(agent=agent, text__icontains="tea").count() == 1


def test_the_sweeper_resends_jobs_left_queued_and_jobs_failed_by_infrastructure(agent, monkeypatch):
    sent = []
    monkeypatch.setattr(jobs, "job_enqueue", lambda run_id, force=False: sent.append(run_id) or True)
    _, old, _ = event_submit(agent=agent, message="Bruno lives in Porto.", speaker_name="Rafael")
    _, fresh, _ = event_submit(agent=agent, message="Clara lives in Faro.", speaker_name="Rafael")
    _, broken, _ = event_submit(agent=agent, message="Ana lives in Braga.", speaker_name="Rafael")
    _, bad, _ = event_submit(agent=agent, message="Rui lives in Evora.", speaker_name="Rafael")
    PipelineRun.objects.filter(pk=old.pk).update(created_at=datetime.now(UTC) - timedelta(minutes=5))
    PipelineRun.objects.filter(pk=broken.pk).update(status=RunStatus.FAILED, attempts=1,
                                                    error="OperationalError: server closed the connection")
    PipelineRun.objects.filter(pk=bad.pk).update(status=RunStatus.FAILED, attempts=1, error="KeyError: 'x'")
    assert jobs.jobs_sweep() == {"queued": 1, "failed": 1, "expired": 0, "given_up": 0, "job_runs_lost": 0,
                                 "sent": 2, "vacuums": 0}
    assert sorted(sent) == sorted([old.pk, broken.pk]) and fresh.pk not in sent
    assert PipelineRun.objects.get(pk=broken.pk).status == RunStatus.QUEUED
    # what was sent waits in the queue: the next sweeps leave it there for a minute, then send it again
    assert jobs.jobs_sweep()["sent"] == 0
    PipelineRun.objects.filter(pk=old.pk).update(lease_expires_at=datetime.now(UTC) - timedelta(seconds=1))
    assert jobs.jobs_sweep()["sent"] == 1 and sent[-1] == old.pk


def test_a_retried_job_is_sent_once_not_again_by_the_next_sweep(agent, api, monkeypatch,
                                                                 django_capture_on_commit_callbacks):
    sent = []
    monkeypatch.setattr(jobs, "job_enqueue", lambda run_id, force=False: sent.append(run_id) or True)
    job_id = post(api, agent, BODY, "k-5").json()["job"]["id"]
    PipelineRun.objects.filter(pk=job_id).update(  # accepted a while ago, then failed
        status=RunStatus.FAILED, attempts=1, error="KeyError: 'x'", created_at=datetime.now(UTC) - timedelta(minutes=5))
    with django_capture_on_commit_callbacks(execute=True):
        assert api.post(url(agent, "jobs", job_id, "retry"), format="json").status_code == 202
    assert sent == [job_id]
    # the retry's task waits in the queue: the sweeps of the next minute leave it there
    assert jobs.jobs_sweep()["sent"] == 0 and sent == [job_id]
    # a job still queued after that (its task was lost) is sent again
    PipelineRun.objects.filter(pk=job_id).update(lease_expires_at=datetime.now(UTC) - timedelta(seconds=1))
    assert jobs.jobs_sweep()["sent"] == 1 and sent == [job_id, job_id]


def test_a_broker_that_is_down_leaves_the_job_queued_not_lost(agent, monkeypatch):
    from celery import current_app

    def down(*args, **kwargs):
        raise ConnectionRefusedError("Error 111 connecting to 127.0.0.1:6390")

    monkeypatch.setattr(current_app, "send_task", down)
    monkeypatch.setattr(broker, "_broker_down_until", 0.0)
    assert jobs.job_enqueue(12345) is False


def test_during_an_outage_later_writes_do_not_each_wait_for_the_broker(agent, monkeypatch):
    """After a failed send the process leaves the next jobs queued at once (the sweeper sends
    them); the sweeper itself tries again, and a send that works lifts the pause."""
    from celery import current_app

    attempts = []

    def down(*args, **kwargs):
        attempts.append(args)
        raise ConnectionRefusedError("Error 111 connecting to 127.0.0.1:6390")

    monkeypatch.setattr(current_app, "send_task", down)
    monkeypatch.setattr(broker, "_broker_down_until", 0.0)
    assert [jobs.job_enqueue(run_id) for run_id in (1, 2, 3)] == [False, False, False]
    assert len(attempts) == 1  # one connection attempt, not three
    assert jobs.job_enqueue(4, force=True) is False and len(attempts) == 2
    monkeypatch.setattr(current_app, "send_task", lambda *args, **kwargs: attempts.append(args))
    assert jobs.job_enqueue(5, force=True) is True
    assert jobs.job_enqueue(6) is True and len(attempts) == 4


def test_an_oversized_name_is_skipped_with_a_reason_and_the_rest_is_stored(agent, fake_llm):
    long_name = "Bartholomew " + "Q" * 300
    fake_llm.responder = by_schema({"informed_extraction": extraction(
        entities=[(long_name, "person"), ("Marta", "person")],
        facts=[(long_name, f"{long_name} plays chess", "stable_preference"),
               ("Marta", "Marta prefers tea", "stable_preference")],
        relations=[("Marta", "friend_of", long_name)],
    )})
    result = memory_write(agent=agent, message="Marta prefers tea; her friend plays chess.", speaker_name="Rafael")
    assert result.success
    assert [c.text for c in result.facts_added] == ["Marta prefers tea"]
    reasons = [s["reason"] for s in result.facts_skipped]
    assert len(reasons) == 2 and all("200" in r for r in reasons)
    assert not Entity.objects.filter(agent=agent, display_name__startswith="Bartholomew").exists()
    job = PipelineRun.objects.get(event_id=result.event_id)
    assert job.status == RunStatus.SUCCEEDED and job.result["facts_skipped"]


def test_remember_refuses_an_unknown_agent_and_errors_are_one_line(db, capsys):
    with pytest.raises(CommandError, match="no agent 'typo-agent'.*--create-agent"):
        call_command("remember", "I live in Curitiba.", agent="typo-agent", speaker="Rafael")
    call_command("remember", "I live in Curitiba.", agent="new-agent", speaker="Rafael", create_agent=True)
    assert "Curitiba" in capsys.readouterr().out
    with pytest.raises(CommandError, match="^speaker is required$"):
        call_command("remember", "hi", agent="new-agent", speaker=" ")


def test_an_unmigrated_database_says_run_migrate():
    with pytest.raises(CommandError, match="run `python manage.py migrate`"), cli_errors():
        raise ProgrammingError('relation "memories_agent" does not exist\nLINE 1: SELECT ...')
    with pytest.raises(CommandError, match="^RuntimeError: boom$"), cli_errors():
        raise RuntimeError("boom\nsecond line")


@pytest.mark.parametrize(("endpoint", "overrides", "field"), [
    ("events", {"max_message_bytes": 1048576}, "max_message_bytes"),
    ("events", {"extraction_timeout_sec": 600}, "extraction_timeout_sec"),
    ("retrieve", {"candidate_pool": 1000}, "candidate_pool"),
    ("retrieve", {"context_max_tokens": 100000}, "context_max_tokens"),
])
def test_server_limits_are_ceilings_a_caller_can_lower_but_not_raise(agent, api, endpoint, overrides, field):
    body = {"speaker": "Rafael", "text": "x" * 40000} if endpoint == "events" else {"query": "who?"}
    response = api.post(url(agent, endpoint), {**body, "config_overrides": overrides}, format="json")
    assert response.status_code == 400, response.content
    assert field in response.json()["error"]["fields"] and "lowered" in response.json()["error"]["message"]
    assert not Event.objects.filter(agent=agent).exists()


def test_a_lowered_limit_applies(agent, api):
    response = api.post(url(agent, "events"), {"speaker": "Rafael", "text": "Marta prefers tea.",
                                                "config_overrides": {"max_message_bytes": 5}}, format="json")
    assert response.status_code == 413
    lowered = api.post(url(agent, "retrieve"), {"query": "who?", "config_overrides": {"candidate_pool": 5}},
                       format="json")
    assert lowered.status_code == 200
