"""Background job bookkeeping: a job run's PipelineRun (start, finish, failure) and the per-agent
checkpoints that make the next run incremental."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime

from django.db import transaction
from django.db.models import F
from django.utils import timezone

from memories.models import Agent, JobCheckpoint, PipelineRun, RunKind, RunStatus
from memories.pipeline.trace import StepRecord
from memories.services.leases import lease_fields
from memories.services.traces import trace_steps_persist


def job_run_start(*, name: str, agent: Agent | None, params: dict, run_id: int | None = None) -> PipelineRun:
    """A running job run, leased to this thread (see memories/services/leases.py): a new row, or
    the same row again when a failed run is retried (`attempts` counts the tries; each try's steps
    are kept under its attempt number)."""
    now = timezone.now()
    if run_id is not None:
        updated = PipelineRun.objects.filter(pk=run_id, kind=RunKind.JOB).update(
            status=RunStatus.RUNNING, started_at=now, finished_at=None, attempts=F("attempts") + 1, error="",
            **lease_fields(now))
        if updated:
            return PipelineRun.objects.get(pk=run_id)
    return PipelineRun.objects.create(
        agent=agent, kind=RunKind.JOB, name=name, status=RunStatus.RUNNING, input_ref=name,
        params=params, started_at=now, attempts=1, **lease_fields(now),
    )


@transaction.atomic
def job_run_finish(*, run: PipelineRun, steps: Iterable[StepRecord], result: dict, duration_ms: float,
                   error: str = "", tokens: tuple[int, int] = (0, 0)) -> PipelineRun:
    """Store the outcome of one attempt: succeeded, or failed with its error, and its steps."""
    run.status = RunStatus.FAILED if error else RunStatus.SUCCEEDED
    run.error = error[:2000]
    run.result = result
    run.finished_at = timezone.now()
    run.duration_ms = round(duration_ms, 3)
    run.tokens_in, run.tokens_out = tokens
    run.lease_expires_at = None
    run.save(update_fields=["status", "error", "result", "finished_at", "duration_ms", "tokens_in", "tokens_out",
                            "lease_expires_at"])
    trace_steps_persist(run=run, steps=steps, attempt=run.attempts)
    return run


def job_checkpoint_get(*, job: str, agent: Agent) -> JobCheckpoint | None:
    return JobCheckpoint.objects.filter(job=job, agent=agent).first()


def job_checkpoint_save(*, job: str, agent: Agent, watermark: datetime, data: dict | None = None) -> JobCheckpoint:
    """The job has processed everything of the agent up to `watermark` (the moment its pass began)."""
    checkpoint, _ = JobCheckpoint.objects.update_or_create(
        job=job, agent=agent,
        defaults={"watermark": watermark, "finished_at": timezone.now(), "data": data or {}},
    )
    return checkpoint
