"""Leases on running jobs: a job row says which process runs it (`lease_owner`) and until when it
holds it (`lease_expires_at`). The process takes the lease when it starts the job, renews it from a
heartbeat thread every third of the lease while it works, and gives it up when it stores the
outcome. A lease that expired means its process stopped (killed, out of memory, the machine gone):
the sweeper then re-queues the job (memories/services/write_jobs.py: jobs_sweep), and a process
that receives a job another one holds leaves it (LeaseHeld says until when: the worker's task
tries again then).

The owner is the host, the process and (outside a process's main thread) the thread: one thread
runs one job at a time, so a lease a thread finds in its own name is one it left behind."""

from __future__ import annotations

import logging
import os
import socket
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime, timedelta
from enum import StrEnum

from django.conf import settings
from django.db import connection, connections, transaction
from django.db.models import F, Q
from django.utils import timezone

from memories.models import PipelineRun, RunStatus

logger = logging.getLogger(__name__)


class LeaseDecision(StrEnum):
    TAKE = "take"  # nobody alive holds the job: run it
    HELD = "held"  # another process holds it and its lease runs: leave it to that process
    DONE = "done"  # it succeeded: nothing to run


def lease_decide(*, status: str, owner: str, expires_at: datetime | None, now: datetime, me: str) -> LeaseDecision:
    """Whether process `me` may run a job found in this state at `now`. A running job is held
    while its lease runs, unless `me` holds it; a lease that expired (or a running job with no
    lease, stored before leases) is free to take."""
    if status == RunStatus.SUCCEEDED:
        return LeaseDecision.DONE
    if status == RunStatus.RUNNING and owner != me and expires_at is not None and expires_at > now:
        return LeaseDecision.HELD
    return LeaseDecision.TAKE


def lease_free(*, me: str, now: datetime) -> Q:
    """The jobs `me` may take at `now` (lease_decide's TAKE, as a query)."""
    return ~Q(status=RunStatus.SUCCEEDED) & (
        ~Q(status=RunStatus.RUNNING) | Q(lease_owner=me) | Q(lease_expires_at__isnull=True)
        | Q(lease_expires_at__lte=now))


@dataclass(frozen=True)
class LeaseTaken:
    """What lease_take found: the decision, and until when the job is held (HELD)."""

    decision: LeaseDecision
    held_until: datetime | None = None


class LeaseHeld(Exception):
    """Job `run_id` is held by another live process until `until`."""

    def __init__(self, *, run_id: int, until: datetime | None):
        super().__init__(f"job {run_id} is held by another process until {until}")
        self.run_id, self.until = run_id, until

    def seconds_left(self) -> float:
        return max((self.until - timezone.now()).total_seconds(), 0.0) if self.until else 0.0


def lease_seconds() -> float:
    return float(settings.ANAMNESIS_JOB_LEASE_SECONDS)


def lease_owner_name() -> str:
    """This thread's name as a lease owner: `host:pid`, and `/thread` outside the main thread."""
    name = f"{socket.gethostname()[:200]}:{os.getpid()}"
    native = threading.get_native_id()
    return name if native == os.getpid() else f"{name}/{native}"


def lease_fields(now: datetime | None = None) -> dict:
    """The columns of a lease taken now by this thread (for a row stored as running at once)."""
    return {"lease_owner": lease_owner_name(),
            "lease_expires_at": (now or timezone.now()) + timedelta(seconds=lease_seconds())}


def lease_take(*, run_id: int) -> LeaseTaken:
    """Take the lease of job `run_id` for this thread when nobody alive holds it: the job is
    marked running, an attempt more. One conditional UPDATE; only when it takes nothing is the row
    read, to say why (DONE, or HELD and until when). Waits while another transaction holds the row
    (a forget, or a worker storing the job's result), then decides on the row as that left it."""
    me = lease_owner_name()
    for _ in range(3):  # the row changed between the UPDATE and the read: ask again
        now = timezone.now()
        if PipelineRun.objects.filter(lease_free(me=me, now=now), pk=run_id).update(
                status=RunStatus.RUNNING, started_at=now, attempts=F("attempts") + 1, **lease_fields(now)):
            return LeaseTaken(LeaseDecision.TAKE)
        row = PipelineRun.objects.filter(pk=run_id).values("status", "lease_owner", "lease_expires_at").first()
        if row is None:
            raise PipelineRun.DoesNotExist(f"job {run_id} does not exist")
        decision = lease_decide(status=row["status"], owner=row["lease_owner"],
                                expires_at=row["lease_expires_at"], now=now, me=me)
        if decision is LeaseDecision.HELD:
            return LeaseTaken(decision, held_until=row["lease_expires_at"])
        if decision is LeaseDecision.DONE:
            return LeaseTaken(decision)
    return LeaseTaken(LeaseDecision.HELD)


def lease_renew(*, run_id: int | Sequence[int], owner: str) -> bool | None:
    """Extend `owner`'s lease of a running job (or of several: an import's logged batch). True:
    renewed; None: the rows are locked (the job's result being stored, or a forget waiting on
    it: the next beat renews); False: no lease is `owner`'s any more (the jobs finished, or were
    re-queued after they expired)."""
    ids = [run_id] if isinstance(run_id, int) else list(run_id)
    held = PipelineRun.objects.filter(pk__in=ids, status=RunStatus.RUNNING, lease_owner=owner)
    with transaction.atomic():
        free = list(held.select_for_update(skip_locked=True).values_list("pk", flat=True))
        if free:
            held.filter(pk__in=free).update(lease_expires_at=timezone.now() + timedelta(seconds=lease_seconds()))
            return True
    return None if held.exists() else False


def lease_expired(*, now: datetime | None = None) -> Q:
    """Running jobs whose process stopped: their lease expired, or (stored before leases) they
    started more than a lease ago with none."""
    now = now or timezone.now()
    return Q(status=RunStatus.RUNNING) & (
        Q(lease_expires_at__lte=now)
        | Q(lease_expires_at__isnull=True, started_at__lt=now - timedelta(seconds=lease_seconds())))


@contextmanager
def lease_kept(run_id: int | Sequence[int]) -> Iterator[None]:
    """Renew this thread's lease of job `run_id` (or of each of several jobs) while the block
    runs. Not inside a transaction of the caller's: the lease taken there is invisible to the
    others until it commits."""
    if connection.in_atomic_block:
        yield
        return
    beat = _Heartbeat(run_id=run_id, owner=lease_owner_name(), every=max(lease_seconds() / 3, 0.2))
    beat.start()
    try:
        yield
    finally:
        beat.stop()


class _Heartbeat(threading.Thread):
    """Renews one lease until stopped or until the lease is no longer its owner's. Its database
    connection is its own (opened at the first renewal, closed when it stops)."""

    def __init__(self, *, run_id: int | Sequence[int], owner: str, every: float):
        first = run_id if isinstance(run_id, int) else min(run_id, default=0)
        super().__init__(name=f"lease-{first}", daemon=True)
        self.run_id, self.owner, self.every = run_id, owner, every
        self._stopped = threading.Event()

    def run(self) -> None:
        try:
            while not self._stopped.wait(self.every):
                if self._beat() is False:
                    logger.warning("job %s: the lease of %s was lost (re-queued after it expired?)",
                                   self.run_id, self.owner)
                    return
        finally:
            connections.close_all()  # this thread's connections only

    def _beat(self) -> bool | None:
        try:
            return lease_renew(run_id=self.run_id, owner=self.owner)
        except Exception as exc:  # a database that restarts: try again at the next beat
            logger.warning("job %s: the lease could not be renewed: %s", self.run_id, exc)
            connections.close_all()
            return None

    def stop(self) -> None:
        self._stopped.set()
        self.join(timeout=10)
