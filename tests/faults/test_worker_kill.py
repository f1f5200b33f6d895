"""kill -9 of the worker (with its beat) in the middle of queued writes: every event is processed
exactly once (0 lost, 0 duplicated facts) after a new worker takes over. The job that was running
when the worker died is held by the dead worker's lease until it expires; then the new worker's
sweeper re-queues it. Real Redis, real worker processes, the offline extractor or the scripted
LLM server."""

from __future__ import annotations

import json
import os
import re
import time
from datetime import UTC, datetime, timedelta

import pytest
from django.conf import settings
from django.db.models import Count, Max
from django.utils import timezone

from memories.models import Event, Fact, PipelineRun, RunStatus
from memories.services.write import event_submit
from tests.faults.figures import N_WRITES, record, wait_for
from tests.support.scripts import extraction, schema_name
from tests.support.worker import kill_worker, start_worker, stop_worker

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]
# A short lease and sweep keep the tests quick; RELIABILITY_CRASH_DEFAULTS=1 (`make reliability`)
# measures the recovery with the shipped defaults instead.
CRASH_DEFAULTS = os.environ.get("RELIABILITY_CRASH_DEFAULTS") == "1"
LEASE_ENV = {} if CRASH_DEFAULTS else {"ANAMNESIS_JOB_LEASE_SECONDS": "5", "ANAMNESIS_JOBS_SWEEP_EVERY_SECONDS": "1"}
FIRST = ["Ana", "Bruno", "Clara", "Diego", "Elena", "Felipe", "Gabriela", "Hugo", "Ines", "Joao", "Karina",
         "Lucas", "Marta", "Nuno", "Olivia", "Pedro", "Rita", "Sofia", "Tiago", "Vera"]
LAST = ["Almeida", "Barros", "Costa", "Duarte", "Esteves", "Ferreira", "Gomes", "Henriques", "Lopes", "Martins",
        "Nogueira", "Oliveira", "Pereira", "Queiroz", "Ramos", "Santos", "Teixeira", "Vieira", "Xavier", "Moura",
        "Cardoso", "Pinto", "Rocha", "Sousa", "Machado"]
CITIES = ["Lisbon", "Porto", "Braga", "Faro", "Coimbra", "Madrid", "Paris", "Berlin", "Rome", "Vienna"]


def messages(n: int) -> list[str]:
    names = [f"{first} {last}" for last in LAST for first in FIRST]
    return [f"{names[i % len(names)]} lives in {CITIES[i % len(CITIES)]}." for i in range(n)]


def duplicated_facts(agent) -> int:
    """Facts stored twice from one event (the same text from the same message)."""
    rows = (Fact.objects.filter(agent=agent).values("source_event", "text").annotate(n=Count("id"))
            .filter(n__gt=1))
    return sum(r["n"] - 1 for r in rows)


def test_kill_9_during_queued_writes_loses_and_duplicates_nothing(agent, tmp_path):
    start = datetime(2024, 1, 1, tzinfo=UTC)
    submitted = time.perf_counter()
    runs = []
    for i, text in enumerate(messages(N_WRITES)):
        _, run, _ = event_submit(agent=agent, message=text, speaker_name="Rafael",
                                 occurred_at=start + timedelta(minutes=i), idempotency_key=f"kill-{i}")
        runs.append(run.id)
    submit_seconds = time.perf_counter() - submitted

    def done() -> int:
        return PipelineRun.objects.filter(id__in=runs, status=RunStatus.SUCCEEDED).count()

    env = {"ANAMNESIS_LLM": "none", **LEASE_ENV}
    first = start_worker(env_extra=env, log=tmp_path / "worker-1.log", beat=True)
    started = time.perf_counter()
    try:
        wait_for(lambda: done() >= N_WRITES // 3, 60 + N_WRITES, "a third of the writes")
        kill_worker(first)
    finally:
        stop_worker(first)
    killed = time.perf_counter()
    at_kill = done()
    running_at_kill = PipelineRun.objects.filter(id__in=runs, status=RunStatus.RUNNING).count()
    second = start_worker(env_extra=env, log=tmp_path / "worker-2.log", beat=True)
    try:
        wait_for(lambda: done() == N_WRITES, 120 + 2 * N_WRITES, "every write")
        total_seconds, recovery_seconds = time.perf_counter() - started, time.perf_counter() - killed
    finally:
        stop_worker(second)

    jobs = PipelineRun.objects.filter(id__in=runs)
    lost = N_WRITES - jobs.filter(status=RunStatus.SUCCEEDED).count()
    duplicated = duplicated_facts(agent)
    without_facts = Event.objects.filter(agent=agent).exclude(id__in=Fact.objects.filter(
        agent=agent).values("source_event")).count()
    retried = jobs.filter(attempts__gt=1).count()
    record("worker_kill", title=f"kill -9 of the worker during {N_WRITES} queued writes", passed=not lost
           and not duplicated, figures={
               "writes": N_WRITES, "processed before the kill": at_kill, "in flight at the kill": running_at_kill,
               "lost": lost, "duplicated facts": duplicated, "events without a fact": without_facts,
               "jobs run more than once": retried, "facts": Fact.objects.filter(agent=agent).count(),
               "submit seconds": round(submit_seconds, 1), "seconds to drain (both workers)": round(total_seconds, 1),
               "seconds from the kill until every write was processed": round(recovery_seconds, 1),
               "lease (s)": float(LEASE_ENV.get("ANAMNESIS_JOB_LEASE_SECONDS", settings.ANAMNESIS_JOB_LEASE_SECONDS)),
               "writes/s": round(N_WRITES / total_seconds, 1)})
    assert lost == 0 and duplicated == 0
    assert Event.objects.filter(agent=agent).count() == N_WRITES


def slow_extraction(request: dict) -> dict | str:
    """The scripted LLM: the extraction of "<name> lives in <city>." after half a second."""
    if schema_name(request) != "informed_extraction":
        return "{}"
    message = request["messages"][-1]["content"].split("Message:", 1)[-1].split("Existing knowledge:", 1)[0]
    found = re.search(r"([A-Z]\w+ [A-Z]\w+) lives in ([A-Z]\w+)", message)
    if not found:
        return json.dumps(extraction())
    name, city = found.groups()
    return {"content": json.dumps(extraction(
        entities=[(name, "person"), (city, "place")],
        facts=[(name, f"{name} lives in {city}", "biographical_milestone")],
        relations=[(name, "lives_in", city)])), "delay": 0.5}


def test_a_job_running_when_its_worker_is_killed_is_processed_once_when_its_lease_expires(agent, fake_llm, tmp_path):
    """The worker and its beat are killed while a job is running: the job is not stranded. Redis
    would hand the task back only after an hour (its default visibility timeout): the lease does."""
    fake_llm.responder = slow_extraction
    n = 40
    runs = [event_submit(agent=agent, message=text, speaker_name="Rafael", idempotency_key=f"crash-{i}",
                         occurred_at=datetime(2024, 1, 1, tzinfo=UTC) + timedelta(minutes=i))[1].id
            for i, text in enumerate(messages(n))]
    jobs = PipelineRun.objects.filter(id__in=runs)
    env = {"ANAMNESIS_LLM": "openai", "ANAMNESIS_LLM_BASE_URL": fake_llm.base_url,
           "ANAMNESIS_BROKER_VISIBILITY_TIMEOUT": "3600", **LEASE_ENV}
    first = start_worker(env_extra=env, log=tmp_path / "worker-1.log", beat=True)
    try:
        wait_for(lambda: jobs.filter(status=RunStatus.SUCCEEDED).count() >= 6
                 and jobs.filter(status=RunStatus.RUNNING).exists(), 120, "six writes done and one running")
        kill_worker(first)
    finally:
        stop_worker(first)
    killed_at, killed = timezone.now(), time.perf_counter()
    stranded = list(jobs.filter(status=RunStatus.RUNNING).values_list("id", flat=True))
    processed_before = jobs.filter(status=RunStatus.SUCCEEDED).count()
    second = start_worker(env_extra=env, log=tmp_path / "worker-2.log", beat=True)
    try:
        wait_for(lambda: jobs.filter(status=RunStatus.SUCCEEDED).count() == n, 300, "every accepted message")
        recovery_seconds = time.perf_counter() - killed
    finally:
        stop_worker(second)
    stranded_done = jobs.filter(id__in=stranded).aggregate(last=Max("finished_at"))["last"]
    lost = n - jobs.filter(status=RunStatus.SUCCEEDED).count()
    duplicated = duplicated_facts(agent)
    without_facts = Event.objects.filter(agent=agent).exclude(
        id__in=Fact.objects.filter(agent=agent).values("source_event")).count()
    lease = float(LEASE_ENV.get("ANAMNESIS_JOB_LEASE_SECONDS", settings.ANAMNESIS_JOB_LEASE_SECONDS))
    sweep = LEASE_ENV.get("ANAMNESIS_JOBS_SWEEP_EVERY_SECONDS",
                          settings.CELERY_BEAT_SCHEDULE["write-jobs-sweep"]["schedule"])
    record("crash_recovery", title=f"kill -9 of the worker and its beat while a job runs ({n} messages, "
           "LLM path)", passed=bool(stranded) and not lost and not duplicated and not without_facts, figures={
               "messages": n, "processed before the kill": processed_before, "running at the kill": len(stranded),
               "lease (s)": lease, "sweep every (s)": float(sweep), "broker visibility timeout (s)": 3600,
               "seconds from the kill until the running job was stored": round(
                   (stranded_done - killed_at).total_seconds(), 1) if stranded_done else None,
               "seconds from the kill until every message was processed": round(recovery_seconds, 1),
               "lost": lost, "duplicated facts": duplicated, "events without a fact": without_facts,
               "jobs run more than once": jobs.filter(attempts__gt=1).count()})
    assert stranded, "no job was running when the worker was killed"
    assert lost == 0 and duplicated == 0 and without_facts == 0
