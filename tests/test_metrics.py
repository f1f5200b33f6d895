"""/metrics: Prometheus text with latency histograms, job runs and failures, queue depth; not public."""

from datetime import UTC, datetime

import pytest

from memories.jobs import Job, job_register
from memories.jobs.runner import JobFailed, job_run
from memories.services.api_keys import api_key_create
from memories.services.write import memory_write
from retrieval.services import memory_retrieve


def test_metrics_need_an_admin_key_unless_public(client, agent, settings):
    assert client.get("/metrics").status_code == 403
    agent_admin = api_key_create(agent=agent, scope="admin")[1]
    assert client.get("/metrics", HTTP_AUTHORIZATION=f"Bearer {agent_admin}").status_code == 403
    every_read = api_key_create(agent=None, scope="read")[1]
    assert client.get("/metrics", HTTP_AUTHORIZATION=f"Bearer {every_read}").status_code == 403
    every_admin = api_key_create(agent=None, scope="admin")[1]
    assert client.get("/metrics", HTTP_AUTHORIZATION=f"Bearer {every_admin}").status_code == 200
    settings.ANAMNESIS_METRICS_PUBLIC = True
    assert client.get("/metrics").status_code == 200


def test_metrics_show_latencies_jobs_and_queue_depth(client, agent, settings):
    settings.ANAMNESIS_METRICS_PUBLIC = True
    memory_write(agent=agent, message="Clara works at Orion Tech.", speaker_name="Rafael",
                 occurred_at=datetime(2024, 1, 5, tzinfo=UTC))
    memory_retrieve(agent=agent, query="Where does Clara work?", record=False)
    job_run(name="decay", agent=agent)
    job_register(Job("test_metrics_boom", "test", handler=lambda ctx, a, step: 1 / 0))
    with pytest.raises(JobFailed):
        job_run(name="test_metrics_boom", agent=agent)
    response = client.get("/metrics")
    assert response["Content-Type"].startswith("text/plain")
    body = response.content.decode()
    assert "anamnesis_write_seconds_bucket{" in body and "anamnesis_retrieve_seconds_count" in body
    assert 'anamnesis_job_runs_total{job="decay",status="succeeded"} 1.0' in body
    assert 'anamnesis_job_failures_total{job="test_metrics_boom"} 1.0' in body
    assert 'anamnesis_queue_depth{status="queued"} 0.0' in body
