"""The write endpoint against a real Celery worker process: `?wait=true` returns the finished
WriteResult, the job and its trace show it, and an idempotent retry gets the same result."""

from __future__ import annotations

import pytest

from memories.models import Event, Fact
from tests.api.conftest import url
from tests.support.worker import start_worker, stop_worker

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]


@pytest.fixture(scope="module")
def worker(django_db_setup, tmp_path_factory):
    proc = start_worker(env_extra={"ANAMNESIS_LLM": "none"}, log=tmp_path_factory.mktemp("worker") / "worker.log")
    yield proc
    stop_worker(proc)


def test_wait_returns_the_result_of_the_job_run_by_the_worker(worker, agent, api):
    message = {"speaker": "Rafael", "text": "Ana lives in Lisbon.", "occurred_at": "2024-03-01T12:00:00Z"}
    response = api.post(url(agent, "events") + "?wait=true&wait_timeout=30", message, format="json",
                        HTTP_IDEMPOTENCY_KEY="wait-1")
    assert response.status_code == 200, response.json()
    result = response.json()
    assert result["success"] is True and result["dry_run"] is False
    assert [f["text"] for f in result["facts_added"]] == ["Ana lives in Lisbon"]
    assert Fact.objects.get(agent=agent).text == "Ana lives in Lisbon"

    job = api.get(url(agent, "jobs", result["run_id"])).json()
    assert job["status"] == "succeeded" and job["attempts"] == 1 and job["finished_at"]
    assert job["result"]["facts_added"] == result["facts_added"]
    trace = api.get(job["trace_url"]).json()
    assert trace["kind"] == "write" and trace["status"] == "succeeded"
    names = [step["name"] for step in trace["steps"]]
    assert names[0] == "alias_lookup" and "upsert" in names
    assert [s["order"] for s in trace["steps"]] == sorted(s["order"] for s in trace["steps"])

    again = api.post(url(agent, "events") + "?wait=true", message, format="json", HTTP_IDEMPOTENCY_KEY="wait-1")
    assert again.status_code == 200 and again.json()["run_id"] == result["run_id"]
    assert Event.objects.filter(agent=agent).count() == 1
