"""A real Celery worker process for tests, on the test database and this run's own queue."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from django.conf import settings
from django.db import connection

ROOT = Path(__file__).resolve().parents[2]


def worker_env() -> dict:
    env = dict(os.environ)
    env.update(
        DJANGO_SETTINGS_MODULE="memory_project.settings.test",
        CELERY_QUEUE=settings.CELERY_TASK_DEFAULT_QUEUE,
        TEST_CELERY_BROKER_URL=settings.CELERY_BROKER_URL,
        ANAMNESIS_DB_NAME=connection.settings_dict["NAME"],
    )
    if settings.DATABASE_URL:
        base, _, _ = settings.DATABASE_URL.rpartition("/")
        env["DATABASE_URL"] = f"{base}/{connection.settings_dict['NAME']}"
    return env


def start_worker(*, env_extra: dict | None = None, log: Path | None = None, beat: bool = False) -> subprocess.Popen:
    """Start `celery worker` (prefork, one child) and wait until it is ready. With `beat`, the
    worker runs beat too (`-B`, as `make run` runs one beside it): the sweeper every second
    unless `env_extra` says otherwise, and no background jobs."""
    celery = Path(sys.executable).parent / "celery"
    out = open(log, "w") if log else subprocess.DEVNULL  # noqa: SIM115
    command = [str(celery), "-A", "memory_project", "worker", "--concurrency=1", "--loglevel=INFO",
               "--without-gossip", "--without-mingle", "-Q", settings.CELERY_TASK_DEFAULT_QUEUE]
    env = worker_env()
    if beat:
        schedule = Path(tempfile.mkdtemp(prefix="beat-")) / "celerybeat-schedule"
        command += ["-B", "-s", str(schedule)]
        env.update(ANAMNESIS_JOBS_SWEEP_EVERY_SECONDS="1", ANAMNESIS_JOBS_ENABLED="0")
    proc = subprocess.Popen(
        command, cwd=ROOT, env={**env, **(env_extra or {})}, stdout=out, stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    deadline = time.monotonic() + 90
    from memory_project.celery import app

    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"celery worker exited with {proc.returncode}; see {log}")
        replies = app.control.ping(timeout=0.5) or []
        if replies:
            return proc
        time.sleep(0.5)
    proc.kill()
    raise RuntimeError("celery worker did not become ready in 90 s")


def kill_worker(proc: subprocess.Popen) -> None:
    """SIGKILL the worker and its pool children: no chance to ack or clean up."""
    import signal

    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait(timeout=10)


def stop_worker(proc: subprocess.Popen) -> None:
    import signal

    if proc.poll() is None:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
