"""Pipeline traces: the one place where a run's steps (write, retrieval, job) become
PipelineStep rows, and where a retrieval's run is recorded."""

from __future__ import annotations

import json
from collections.abc import Iterable
from datetime import datetime

from django.db import connection, transaction
from django.utils import timezone

from memories.live import live_notify
from memories.models import Agent, PipelineRun, PipelineStep, RunKind, RunStatus
from memories.pipeline.trace import StepRecord, Tracer


def trace_steps_persist(*, run: PipelineRun, steps: Iterable[StepRecord], attempt: int = 1) -> None:
    """Store the timed steps of one attempt of `run`, in one statement: the steps travel as one
    JSON document (building a model instance per step cost more than PostgreSQL's insert)."""
    rows = [{"order": int(s.order), "name": s.name, "status": s.status, "duration_ms": float(s.duration_ms),
             "candidates_in": _count(s.candidates_in), "candidates_out": _count(s.candidates_out),
             "tokens_in": int(s.tokens_in), "tokens_out": int(s.tokens_out), "data": s.data} for s in steps]
    if not rows:
        return
    with connection.cursor() as cursor:
        cursor.execute(
            f"INSERT INTO {PipelineStep._meta.db_table} (run_id, attempt, {_STEP_COLUMNS}) "
            f"SELECT %s, %s, {_STEP_COLUMNS} FROM jsonb_to_recordset(%s::jsonb) AS s({_STEP_TYPES})",
            [run.pk, attempt, json.dumps(rows)])


def _count(value) -> int | None:
    return None if value is None else int(value)


_STEP_COLUMNS = ('"order", name, status, duration_ms, candidates_in, candidates_out, tokens_in, tokens_out, '
                 'data')
_STEP_TYPES = ('"order" integer, name varchar, status varchar, duration_ms float8, candidates_in integer, '
               'candidates_out integer, tokens_in integer, tokens_out integer, data jsonb')


def run_id_reserve() -> int:
    """A PipelineRun id handed out now, for a run stored later (off a request's hot path)."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT nextval(pg_get_serial_sequence(%s, 'id'))", [PipelineRun._meta.db_table])
        return cursor.fetchone()[0]


def retrieval_run_record(
    *, agent: Agent, run_id: int, query: str, params: dict, duration_ms: float, tracer: Tracer, result: dict,
    at: datetime | None = None,
) -> PipelineRun:
    """A finished retrieval as a succeeded run (under the reserved `run_id`) with its steps, in
    one transaction (one commit instead of one per statement)."""
    at = at or timezone.now()
    with transaction.atomic():
        run = PipelineRun.objects.create(
            id=run_id, agent=agent, kind=RunKind.RETRIEVE, name="retrieve", status=RunStatus.SUCCEEDED,
            input_ref=query[:500], params=params, started_at=at, finished_at=at, duration_ms=duration_ms,
            attempts=1, tokens_in=tracer.usage.input_tokens, tokens_out=tracer.usage.output_tokens, result=result,
        )
        trace_steps_persist(run=run, steps=tracer.steps)
        live_notify(agent=agent, kind="run", obj_id=run.id)
    return run
