"""/metrics: Prometheus text with latency histograms, job runs and failures, queue depth; not public."""

from datetime import UTC, datetime

import pytest

from memories.jobs import Job, job_register
from memories.jobs.runner import JobFailed, job_run
from memories.models import PipelineRun
from memories.services.api_keys import api_key_create
from memories.services.budgets import agent_llm_budget_set
from memories.services.write import memory_write
from retrieval.services import memory_retrieve
from tests.support.fake_openai import Reply


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


def test_metrics_show_each_agents_llm_use_against_its_budget(client, agent, other_agent, fake_llm, settings):
    settings.ANAMNESIS_METRICS_PUBLIC = True
    settings.ANAMNESIS_LLM_BUDGET_MONTH_TOKENS = 90_000
    agent_llm_budget_set(agent=agent, actor="user:olga", day_tokens=5000)
    fake_llm.responder = lambda request: Reply(content="{}", prompt_tokens=70, completion_tokens=30)
    memory_write(agent=agent, message="Clara works at Orion Tech.", speaker_name="Rafael",
                 occurred_at=datetime(2024, 1, 5, tzinfo=UTC))
    spent = PipelineRun.objects.get(agent=agent, kind="write")
    tokens = spent.tokens_in + spent.tokens_out
    assert tokens > 0

    body = client.get("/metrics").content.decode()

    assert f'anamnesis_llm_tokens_used{{agent="test-agent",window="day"}} {tokens}.0' in body
    assert f'anamnesis_llm_tokens_used{{agent="test-agent",window="month"}} {tokens}.0' in body
    assert 'anamnesis_llm_tokens_budget{agent="test-agent",window="day"} 5000.0' in body
    assert 'anamnesis_llm_tokens_budget{agent="test-agent",window="month"} 90000.0' in body
    assert 'anamnesis_llm_tokens_used{agent="other-agent",window="day"} 0.0' in body
    assert 'anamnesis_llm_tokens_budget{agent="other-agent",window="day"}' not in body  # no budget: no line
