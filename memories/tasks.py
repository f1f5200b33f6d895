"""Celery tasks: thin wrappers that load ids and call services."""

from __future__ import annotations

from celery import shared_task
from django.db import InterfaceError, OperationalError

from memories.services.jobs import PROCESS_EVENT_TASK, jobs_sweep
from memories.services.write import event_process


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
    """Run the write pipeline for one logged event (idempotent per event)."""
    result = event_process(run_id=run_id)
    return {"run_id": run_id, "success": result.success}


@shared_task(name="memories.tasks.jobs_sweep_task")
def jobs_sweep_task() -> dict:
    """Re-enqueue write jobs left queued (broker down when they were accepted) or failed by
    infrastructure (see memories.services.jobs.jobs_sweep)."""
    return jobs_sweep()
