"""Write jobs after the fact: enqueue (never losing an accepted message when the broker is down),
retry a failed job, and the sweeper that re-enqueues jobs left queued (broker down) or failed by
infrastructure (database or broker errors)."""

from __future__ import annotations

import logging
import time
from datetime import timedelta

from celery import current_app
from django.db import transaction
from django.utils import timezone

from memories.errors import Conflict, NotFound
from memories.models import Agent, PipelineRun, RunKind, RunStatus

logger = logging.getLogger(__name__)

# The worker's task (memories.tasks) is named here, not imported: tasks call services.
PROCESS_EVENT_TASK = "memories.tasks.process_event_task"
# errors that say nothing about the message: the job is retried by the sweeper
INFRASTRUCTURE_ERRORS = ("OperationalError", "InterfaceError", "ConnectionError", "TimeoutError",
                         "DatabaseError", "BrokenPipeError")
SWEEP_QUEUED_AFTER = timedelta(seconds=60)
SWEEP_MAX_ATTEMPTS = 5
BROKER_CONNECT_TIMEOUT = 1.0


BROKER_RETRY_AFTER = 5.0  # seconds a failed send keeps this process from trying again
_broker_down_until = 0.0


def job_enqueue(run_id: int, *, force: bool = False) -> bool:
    """Send the job to the worker queue. A broker that is down is logged, not raised: the job
    stays queued (stored with its event) and the sweeper sends it when the broker is back. After
    a failed send the process stops trying for BROKER_RETRY_AFTER seconds, so the writes accepted
    during an outage do not each wait for a connection timeout (`force`: the sweeper tries anyway)."""
    global _broker_down_until
    if not force and time.monotonic() < _broker_down_until:
        logger.info("job %s stays queued: the broker was unavailable a moment ago", run_id)
        return False
    try:
        # a connection of its own, not the shared pool: a pool whose connections an outage left
        # checked out would make this block instead of failing
        with current_app.connection_for_write(connect_timeout=BROKER_CONNECT_TIMEOUT) as connection:
            current_app.send_task(PROCESS_EVENT_TASK, args=[run_id], retry=False, connection=connection)
    except Exception as exc:  # kombu/redis raise many types; none may lose the accepted message
        _broker_down_until = time.monotonic() + BROKER_RETRY_AFTER
        logger.warning("job %s stays queued, the broker is unavailable: %s", run_id, exc)
        return False
    _broker_down_until = 0.0
    return True


def job_enqueue_on_commit(run_id: int) -> None:
    transaction.on_commit(lambda: job_enqueue(run_id))


@transaction.atomic
def job_retry(*, agent: Agent, job_id: int) -> PipelineRun:
    """Queue a failed write job again (the same row: `attempts` keeps counting)."""
    job = PipelineRun.objects.select_for_update().filter(agent=agent, kind=RunKind.WRITE, pk=job_id).first()
    if job is None:
        raise NotFound(f"job {job_id} not found")
    if job.status != RunStatus.FAILED:
        raise Conflict(f"job {job_id} is {job.status}; only a failed job can be retried",
                       {"status": job.status})
    job.status, job.finished_at = RunStatus.QUEUED, None
    job.save(update_fields=["status", "finished_at"])
    job_enqueue_on_commit(job.id)
    return job


def jobs_sweep(*, queued_after: timedelta = SWEEP_QUEUED_AFTER, max_attempts: int = SWEEP_MAX_ATTEMPTS) -> dict:
    """Re-enqueue write jobs queued for longer than `queued_after` (their task never reached the
    broker, or was lost) and jobs failed by infrastructure with attempts left. Processing is
    idempotent per event, so a job sent twice is processed once."""
    cutoff = timezone.now() - queued_after
    queued = list(PipelineRun.objects.filter(kind=RunKind.WRITE, status=RunStatus.QUEUED, created_at__lt=cutoff)
                  .order_by("id").values_list("id", flat=True)[:1000])
    failed = [run_id for run_id, error in PipelineRun.objects.filter(
        kind=RunKind.WRITE, status=RunStatus.FAILED, attempts__lt=max_attempts).values_list("id", "error")[:1000]
        if error.split(":", 1)[0].strip() in INFRASTRUCTURE_ERRORS]
    PipelineRun.objects.filter(id__in=failed, status=RunStatus.FAILED).update(status=RunStatus.QUEUED)
    # the first send tries even right after an outage; if the broker is still down the rest wait
    # for the next sweep instead of each waiting for a connection timeout
    sent = sum(job_enqueue(run_id, force=i == 0) for i, run_id in enumerate([*queued, *failed]))
    return {"queued": len(queued), "failed": len(failed), "sent": sent}
