"""Outages of the database and of the broker during a burst of writes through the API:
requests fail fast with 503 while the database is down, and every message the API accepted
(202) is processed once it is back; with the broker down writes are still accepted and stored,
and queued when it returns (the sweeper sends them)."""

from __future__ import annotations

import contextlib
import statistics
import time
from datetime import timedelta

import pytest
from django.conf import settings
from django.db import connection

from memories.models import Event, PipelineRun, RunStatus
from memories.services.write_jobs import jobs_sweep
from memory_project import embedded_pg
from tests.api.conftest import url
from tests.faults.figures import N_WRITES, record, wait_for
from tests.faults.test_worker_kill import duplicated_facts, messages
from tests.support.worker import start_worker, stop_worker

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]


def _post(api, agent, i, text):
    started = time.perf_counter()
    response = api.post(url(agent, "events"), {"speaker": "Rafael", "text": text}, format="json",
                        HTTP_IDEMPOTENCY_KEY=f"burst-{i}")
    return response, time.perf_counter() - started


def _drain(runs: list[int], timeout: float) -> int:
    """Wait until every job succeeded, running the sweeper (the beat job) meanwhile."""
    def done():
        jobs_sweep(queued_after=timedelta(seconds=10))
        return PipelineRun.objects.filter(id__in=runs, status=RunStatus.SUCCEEDED).count() == len(runs)
    wait_for(done, timeout, "every accepted write", interval=1.0)
    return len(runs)


@contextlib.contextmanager
def broker_at(broker_url: str):
    """Point this process's Celery app at another broker (job_enqueue opens its own connection
    from the app's broker URL on every send)."""
    from celery import current_app

    previous = current_app.conf.broker_url
    current_app.conf.broker_url = broker_url
    try:
        yield
    finally:
        current_app.conf.broker_url = previous


def test_broker_down_writes_are_accepted_stored_and_sent_when_it_returns(agent, api, tmp_path):
    n = max(40, N_WRITES // 5)
    texts = messages(n)
    accepted, seconds = [], []
    with broker_at("redis://127.0.0.1:1/15"):  # nothing listens on port 1
        for i, text in enumerate(texts):
            response, took = _post(api, agent, i, text)
            assert response.status_code == 202, (i, response.status_code, response.content[:300])
            accepted.append(response.json()["job"]["id"])
            seconds.append(took)
    stored = Event.objects.filter(agent=agent).count()
    queued = PipelineRun.objects.filter(id__in=accepted, status=RunStatus.QUEUED).count()
    worker = start_worker(env_extra={"ANAMNESIS_LLM": "none"}, log=tmp_path / "worker.log")
    try:
        started = time.perf_counter()
        sweep = jobs_sweep(queued_after=timedelta(0))  # what the beat job does every 30 s
        wait_for(lambda: PipelineRun.objects.filter(id__in=accepted, status=RunStatus.SUCCEEDED).count() == n,
                 120 + 2 * n, "the writes accepted while the broker was down")
        drain_seconds = time.perf_counter() - started
    finally:
        stop_worker(worker)
    record("broker_down", title=f"broker down during {n} API writes", passed=stored == n == queued, figures={
        "writes": n, "accepted (202)": len(accepted), "stored": stored, "queued while down": queued,
        "median accept (ms)": round(1000 * statistics.median(seconds), 1),
        "slowest accept (ms)": round(1000 * max(seconds), 1), "sent by the sweeper": sweep["sent"],
        "processed after it returned": n, "duplicated facts": duplicated_facts(agent),
        "seconds to process": round(drain_seconds, 1)})
    assert stored == n and queued == n and duplicated_facts(agent) == 0


@pytest.mark.skipif(bool(settings.DATABASE_URL), reason="stops and starts the embedded PostgreSQL")
def test_database_restart_during_a_write_burst(agent, api, tmp_path):
    if not embedded_pg.status(settings.EMBEDDED_PGDATA).running:
        pytest.skip("the embedded PostgreSQL is not running")
    n = max(60, N_WRITES // 4)
    texts = messages(n)
    worker = start_worker(env_extra={"ANAMNESIS_LLM": "none"}, log=tmp_path / "worker.log")
    accepted, refused, refused_seconds, down_seconds = [], 0, [], 0.0
    try:
        for i, text in enumerate(texts):
            if i == n // 3:
                embedded_pg.stop(settings.EMBEDDED_PGDATA)
                went_down = time.perf_counter()
            if i == 2 * n // 3:
                embedded_pg.start(settings.EMBEDDED_PGDATA)
                down_seconds = time.perf_counter() - went_down
            response, seconds = _post(api, agent, i, text)
            # what Django's request handler does between requests (the test client does not)
            connection.close_if_unusable_or_obsolete()
            if response.status_code == 202:
                accepted.append(response.json()["job"]["id"])
            else:
                assert response.status_code == 503, (i, response.status_code, response.content[:300])
                assert response["Retry-After"]
                refused += 1
                refused_seconds.append(seconds)
                time.sleep(0.1)  # a client backing off
        connection.close()
        started = time.perf_counter()
        _drain(accepted, 180 + 2 * n)
        drain_seconds = time.perf_counter() - started
    finally:
        embedded_pg.start(settings.EMBEDDED_PGDATA)
        stop_worker(worker)
    lost = len(accepted) - PipelineRun.objects.filter(id__in=accepted, status=RunStatus.SUCCEEDED).count()
    duplicated = duplicated_facts(agent)
    record("database_restart", title=f"database stopped and restarted during a burst of {n} API writes",
           passed=refused > 0 and not lost and not duplicated, figures={
               "requests": n, "accepted (202)": len(accepted), "refused (503)": refused,
               "5xx other than 503": 0, "slowest 503 (ms)": round(1000 * max(refused_seconds, default=0), 1),
               "median 503 (ms)": round(1000 * statistics.median(refused_seconds or [0]), 1),
               "database down (s)": round(down_seconds, 1), "accepted then lost": lost,
               "duplicated facts": duplicated, "seconds to process after restart": round(drain_seconds, 1)})
    assert refused > 0 and lost == 0 and duplicated == 0
    assert max(refused_seconds) < 2.0  # fail fast
