"""Pipeline traces: the one place where a run's steps (write, retrieval, job) become
PipelineStep rows, and where a retrieval's run is recorded."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime

from django.db import connection
from django.utils import timezone

from memories.live import live_notify
from memories.models import Agent, PipelineRun, PipelineStep, RunKind, RunStatus
from memories.pipeline.trace import StepRecord, Tracer


def trace_steps_persist(*, run: PipelineRun, steps: Iterable[StepRecord], attempt: int = 1) -> None:
    """Store the timed steps of one attempt of `run`."""
    PipelineStep.objects.bulk_create([
        PipelineStep(run=run, attempt=attempt, order=s.order, name=s.name, status=s.status,
                     duration_ms=s.duration_ms, candidates_in=s.candidates_in, candidates_out=s.candidates_out,
                     tokens_in=s.tokens_in, tokens_out=s.tokens_out, data=s.data)
        for s in steps
    ])


def run_id_reserve() -> int:
    """A PipelineRun id handed out now, for a run stored later (off a request's hot path)."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT nextval(pg_get_serial_sequence(%s, 'id'))", [PipelineRun._meta.db_table])
        return cursor.fetchone()[0]


def retrieval_run_record(
    *, agent: Agent, run_id: int, query: str, params: dict, duration_ms: float, tracer: Tracer, result: dict,
    at: datetime | None = None,
) -> PipelineRun:
    """A finished retrieval as a succeeded run (under the reserved `run_id`) with its steps."""
    at = at or timezone.now()
    run = PipelineRun.objects.create(
        id=run_id, agent=agent, kind=RunKind.RETRIEVE, name="retrieve", status=RunStatus.SUCCEEDED,
        input_ref=query[:500], params=params, started_at=at, finished_at=at, duration_ms=duration_ms,
        attempts=1, tokens_in=tracer.usage.input_tokens, tokens_out=tracer.usage.output_tokens, result=result,
    )
    trace_steps_persist(run=run, steps=tracer.steps)
    live_notify(agent=agent, kind="run", obj_id=run.id)
    return run
