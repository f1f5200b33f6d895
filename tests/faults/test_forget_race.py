"""Forget while a real worker is busy with queued messages about the person: none of them brings
her back, whether it was processed before, during or after the forget."""

from __future__ import annotations

import time
from datetime import UTC, datetime, timedelta

import pytest

from memories.models import Entity, PipelineRun, RunStatus
from memories.services.forget import entity_forget
from memories.services.write import event_submit, memory_write
from tests.api.test_forget import database_mentions
from tests.faults.figures import record, wait_for
from tests.support.worker import start_worker, stop_worker

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]
CITIES = ["Lisbon", "Porto", "Braga", "Faro", "Coimbra", "Madrid", "Paris", "Berlin", "Rome", "Vienna"]


def test_forget_during_queued_writes_never_brings_her_back(agent, tmp_path):
    start = datetime(2024, 1, 1, tzinfo=UTC)
    memory_write(agent=agent, message="Zoe Kim moved to Lisbon.", speaker_name="Rafael", occurred_at=start)
    zoe = Entity.objects.get(agent=agent, display_name="Zoe Kim")
    runs = []
    for i in range(40):
        text, speaker = ((f"Zoe Kim visited {CITIES[i % 10]}.", "Rafael") if i % 3 else
                         (f"I love {CITIES[i % 10]}.", "Zoe Kim"))
        _, run, _ = event_submit(agent=agent, message=f"{text} Bruno lives in {CITIES[(i + 3) % 10]}.",
                                 speaker_name=speaker, occurred_at=start + timedelta(hours=i + 1))
        runs.append(run.id)
    worker = start_worker(env_extra={"ANAMNESIS_LLM": "none"}, log=tmp_path / "worker.log")
    try:
        wait_for(lambda: PipelineRun.objects.filter(id__in=runs, status=RunStatus.SUCCEEDED).count() >= 8, 120,
                 "the worker to be busy")
        before = PipelineRun.objects.filter(id__in=runs, status=RunStatus.SUCCEEDED).count()
        started = time.perf_counter()
        report = entity_forget(agent=agent, entity_id=zoe.id, actor="test")
        forget_seconds = time.perf_counter() - started
        wait_for(lambda: PipelineRun.objects.filter(id__in=runs, status=RunStatus.SUCCEEDED).count() == len(runs),
                 240, "every queued write")
    finally:
        stop_worker(worker)
    left = database_mentions()
    revived = Entity.objects.filter(agent=agent, display_name__iregex=r"\m(zoe|kim|redacted)\M").count()
    record("forget_race", title="forget while a worker processes 40 queued messages about her",
           passed=not left and not revived, figures={
               "messages": len(runs), "processed before the forget": before,
               "processed after it": len(runs) - before, "forget seconds (waits for the job in flight)":
               round(forget_seconds, 2), "events redacted": report.events_redacted,
               "traces of her names left": len(left), "entities brought back": revived})
    assert left == [] and revived == 0
