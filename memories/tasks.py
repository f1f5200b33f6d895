"""Celery tasks: thin wrappers that load ids and call services."""

from __future__ import annotations

from celery import shared_task
from django.db import InterfaceError, OperationalError

from memories.services.write import PROCESS_EVENT_TASK, event_process


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
