"""Write jobs after the fact: enqueue (never losing an accepted message when the broker is down),
retry a failed job (or one whose worker stopped), and the sweeper that re-enqueues jobs left queued
(broker down), failed by infrastructure (database or broker errors) or running under an expired
lease (their worker died), and the vacuums forgets left pending."""

from __future__ import annotations

import logging
from datetime import timedelta

from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from memories.errors import Conflict, NotFound
from memories.models import Agent, PipelineRun, RunKind, RunStatus
from memories.services.broker import task_send
from memories.services.erasures import erasure_vacuum_enqueue, erasure_vacuums_pending
from memories.services.leases import LeaseDecision, lease_decide, lease_expired, lease_owner_name

logger = logging.getLogger(__name__)

# The worker's task (memories.tasks) is named here, not imported: tasks call services.
PROCESS_EVENT_TASK = "memories.tasks.process_event_task"
# errors that say nothing about the message: the job is retried by the sweeper
INFRASTRUCTURE_ERRORS = ("OperationalError", "InterfaceError", "ConnectionError", "TimeoutError",
                         "DatabaseError", "BrokenPipeError")
# the owner of a queued job's lease once the sweeper sent it: not sent again before it expires
BROKER = "broker"
# the error a job whose lease expired carries (its worker was killed, ran out of memory, ...)
WORKER_LOST = "WorkerLost: the worker running it stopped (its lease expired)"
SWEEP_QUEUED_AFTER = timedelta(seconds=60)
SWEEP_MAX_ATTEMPTS = 5


def job_enqueue(run_id: int, *, force: bool = False) -> bool:
    """Send the job to the worker queue. A broker that is down is logged, not raised: the job
    stays queued (stored with its event) and the sweeper sends it when the broker is back (after
    a failed send the process waits a few seconds before trying again, unless `force`:
    memories.services.broker)."""
    return task_send(PROCESS_EVENT_TASK, args=[run_id], force=force, what=f"job {run_id} stays queued")


def job_enqueue_on_commit(run_id: int) -> None:
    transaction.on_commit(lambda: job_enqueue(run_id))


def sent_mark(*, for_: timedelta = SWEEP_QUEUED_AFTER) -> dict:
    """The columns that mark a queued job as sent to the broker: leased to it for `for_`, during
    which the sweeper leaves the job to the task waiting in the queue; a job still queued after
    that (its task was lost, or never sent) is sent again."""
    return {"lease_owner": BROKER, "lease_expires_at": timezone.now() + for_}


@transaction.atomic
def job_retry(*, agent: Agent, job_id: int) -> PipelineRun:
    """Queue a failed write job again, or a running one whose worker stopped (its lease expired);
    the same row: `attempts` keeps counting. The job is sent on commit and marked sent, as the
    sweeper marks what it sends: the next sweeps do not send it a second time."""
    job = PipelineRun.objects.select_for_update().filter(agent=agent, kind=RunKind.WRITE, pk=job_id).first()
    if job is None:
        raise NotFound(f"job {job_id} not found")
    held = lease_decide(status=job.status, owner=job.lease_owner, expires_at=job.lease_expires_at,
                        now=timezone.now(), me=lease_owner_name()) is LeaseDecision.HELD
    if held:
        until = job.lease_expires_at.isoformat(timespec="seconds")
        raise Conflict(f"job {job_id} is running: a worker holds it until {until}; if it is still running "
                       "then, its worker stopped and the job can be retried (the sweeper also re-queues it)",
                       {"status": job.status, "held_until": until})
    if job.status not in (RunStatus.FAILED, RunStatus.RUNNING):
        raise Conflict(f"job {job_id} is {job.status}; only a failed job, or a running one whose worker "
                       "stopped, can be retried", {"status": job.status})
    changes = {"status": RunStatus.QUEUED, "finished_at": None, **sent_mark()}
    for column, value in changes.items():
        setattr(job, column, value)
    job.save(update_fields=list(changes))
    job_enqueue_on_commit(job.id)
    return job


def jobs_sweep(*, queued_after: timedelta = SWEEP_QUEUED_AFTER, max_attempts: int = SWEEP_MAX_ATTEMPTS) -> dict:
    """Re-enqueue write jobs queued for longer than `queued_after` (their task never reached the
    broker, or was lost), jobs failed by infrastructure with attempts left, and running jobs whose
    lease expired (their worker stopped; after `max_attempts` such a job fails instead: a message
    that kills its worker is not run for ever). A background job run whose lease expired is
    marked failed. A job sent is leased to the broker for `queued_after`: a backlog waiting in the
    queue is not sent again at every sweep. Processing is idempotent per event, so a job sent
    twice is processed once. Also sends the vacuums of forgets still pending a while after the
    forget (the broker was down when it committed: memories.services.erasures); a vacuum sent
    twice runs once."""
    now = timezone.now()
    queued = list(PipelineRun.objects.filter(kind=RunKind.WRITE, status=RunStatus.QUEUED).filter(
        Q(lease_expires_at__isnull=True, created_at__lt=now - queued_after) | Q(lease_expires_at__lt=now))
        .order_by("id").values_list("id", flat=True)[:1000])
    failed = [run_id for run_id, error in PipelineRun.objects.filter(
        kind=RunKind.WRITE, status=RunStatus.FAILED, attempts__lt=max_attempts).values_list("id", "error")[:1000]
        if error.split(":", 1)[0].strip() in INFRASTRUCTURE_ERRORS]
    PipelineRun.objects.filter(id__in=failed, status=RunStatus.FAILED).update(status=RunStatus.QUEUED)
    expired, given_up, runs_lost = _expired_leases_release(max_attempts=max_attempts)
    # the first send tries even right after an outage; if the broker is still down the rest wait
    # for the next sweep instead of each waiting for a connection timeout
    sent = [run_id for i, run_id in enumerate([*queued, *failed, *expired]) if job_enqueue(run_id, force=i == 0)]
    PipelineRun.objects.filter(id__in=sent, status=RunStatus.QUEUED).update(**sent_mark(for_=queued_after))
    vacuums = [receipt_id for i, receipt_id in enumerate(erasure_vacuums_pending())
               if erasure_vacuum_enqueue(receipt_id=receipt_id, force=i == 0)]
    return {"queued": len(queued), "failed": len(failed), "expired": len(expired), "given_up": given_up,
            "job_runs_lost": runs_lost, "sent": len(sent), "vacuums": len(vacuums)}


@transaction.atomic
def _expired_leases_release(*, max_attempts: int) -> tuple[list[int], int, int]:
    """Re-queue the write jobs whose lease expired (failing those out of attempts) and fail the
    background job runs whose lease expired. A row another transaction holds is skipped: whoever
    holds it is alive."""
    now = timezone.now()
    rows = list(PipelineRun.objects.select_for_update(skip_locked=True).filter(
        lease_expired(now=now), kind__in=[RunKind.WRITE, RunKind.JOB]).values_list("id", "kind", "attempts")[:1000])
    requeue = [run_id for run_id, kind, attempts in rows if kind == RunKind.WRITE and attempts < max_attempts]
    give_up = [run_id for run_id, kind, attempts in rows if kind == RunKind.WRITE and attempts >= max_attempts]
    lost = [run_id for run_id, kind, _ in rows if kind == RunKind.JOB]
    if rows:
        logger.warning("leases expired: write jobs %s re-queued, %s failed after %d attempts; job runs %s failed",
                       requeue, give_up, max_attempts, lost)
    PipelineRun.objects.filter(id__in=requeue).update(
        status=RunStatus.QUEUED, lease_expires_at=None, error=f"{WORKER_LOST}; re-queued")
    PipelineRun.objects.filter(id__in=give_up).update(
        status=RunStatus.FAILED, lease_expires_at=None, finished_at=now,
        error=f"{WORKER_LOST}, after {max_attempts} attempts or more; retry it with POST jobs/<id>/retry/")
    PipelineRun.objects.filter(id__in=lost).update(
        status=RunStatus.FAILED, lease_expires_at=None, finished_at=now, error=WORKER_LOST)
    return requeue, len(give_up), len(lost)
