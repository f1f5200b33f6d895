"""Celery tasks: thin wrappers that load ids and call services."""

from __future__ import annotations

import math

from celery import shared_task
from django.db import InterfaceError, OperationalError

from memories import selectors
from memories.jobs import JOB_TASK, job_get
from memories.jobs.runner import JobFailed, job_run
from memories.services.erasures import ERASURE_VACUUM_TASK, erasure_vacuum
from memories.services.leases import LeaseHeld
from memories.services.write import PROCESS_EVENT_TASK, event_process
from memories.services.write_jobs import jobs_sweep


@shared_task(
    name=PROCESS_EVENT_TASK,
    bind=True,
    acks_late=True,
    reject_on_worker_lost=True,
    autoretry_for=(OperationalError, InterfaceError),
    retry_backoff=True,
    max_retries=5,
)
def process_event_task(self, run_id: int) -> dict:
    """Run the write pipeline for one logged event (idempotent per event). A job another worker
    holds is tried again one second after its lease runs out — its holder may be a pool child
    killed a moment ago, whose task the worker gave back at once —, at most `max_retries` times;
    after that the sweeper re-queues it if its lease expires."""
    try:
        result = event_process(run_id=run_id)
    except LeaseHeld as held:
        if self.request.retries >= self.max_retries:
            return {"run_id": run_id, "skipped": "another worker holds the job; the sweeper re-queues it "
                                                 "if its lease expires"}
        raise self.retry(countdown=math.ceil(held.seconds_left()) + 1) from held
    return {"run_id": run_id, "success": result.success}


@shared_task(
    name=JOB_TASK,
    bind=True,
    acks_late=True,
    reject_on_worker_lost=True,
    max_retries=3,
)
def run_job_task(self, name: str, agent_slug: str | None = None, run_id: int | None = None) -> dict:
    """Run one background job (beat, or `manage.py jobs run --queue`). A failed run is retried
    with exponential backoff (30 s, 60 s, 120 s) on the same PipelineRun row, which keeps the error."""
    agent = selectors.agent_by_slug(slug=agent_slug) if agent_slug else None
    if agent_slug and agent is None:
        return {"job": name, "skipped": f"no agent {agent_slug!r}"}
    if not job_get(name).enabled and not agent_slug:
        return {"job": name, "skipped": "disabled"}
    try:
        done = job_run(name=name, agent=agent, run_id=run_id)
    except JobFailed as exc:
        raise self.retry(exc=exc, countdown=30 * 2 ** self.request.retries,
                         kwargs={"name": name, "agent_slug": agent_slug, "run_id": exc.run_id}) from exc
    return {"job": name, "run_id": done.id, "status": done.status}


@shared_task(name=ERASURE_VACUUM_TASK, acks_late=True, reject_on_worker_lost=True)
def erasure_vacuum_task(receipt_id: int) -> dict:
    """VACUUM the tables a forget touched, after its commit, and record it on its erasure receipt
    (memories.services.erasures.erasure_vacuum; a receipt already vacuumed is left alone)."""
    return {"receipt_id": receipt_id, "vacuumed": erasure_vacuum(receipt_id=receipt_id)}


@shared_task(name="memories.tasks.jobs_sweep_task")
def jobs_sweep_task() -> dict:
    """Re-enqueue write jobs left queued (broker down when they were accepted), failed by
    infrastructure or running under an expired lease, and the vacuums forgets left pending (see
    memories.services.write_jobs.jobs_sweep)."""
    return jobs_sweep()
