"""kill -9 of the worker in the middle of N queued writes: every event is processed exactly once
(0 lost, 0 duplicated facts) after a new worker takes over. Real Redis, real worker processes,
the offline extractor."""

from __future__ import annotations

import time
from datetime import UTC, datetime, timedelta

import pytest
from django.db.models import Count

from memories.models import Event, Fact, PipelineRun, RunStatus
from memories.services.write import event_submit
from tests.faults.figures import N_WRITES, record, wait_for
from tests.support.worker import kill_worker, start_worker, stop_worker

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]
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

    first = start_worker(env_extra={"ANAMNESIS_LLM": "none"}, log=tmp_path / "worker-1.log")
    started = time.perf_counter()
    try:
        wait_for(lambda: done() >= N_WRITES // 3, 60 + N_WRITES, "a third of the writes")
        at_kill = done()
        running_at_kill = PipelineRun.objects.filter(id__in=runs, status=RunStatus.RUNNING).count()
        kill_worker(first)
    finally:
        stop_worker(first)
    second = start_worker(env_extra={"ANAMNESIS_LLM": "none"}, log=tmp_path / "worker-2.log")
    try:
        wait_for(lambda: done() == N_WRITES, 120 + 2 * N_WRITES, "every write")
    finally:
        stop_worker(second)
    total_seconds = time.perf_counter() - started

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
               "writes/s": round(N_WRITES / total_seconds, 1)})
    assert lost == 0 and duplicated == 0
    assert Event.objects.filter(agent=agent).count() == N_WRITES
