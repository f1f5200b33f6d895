"""Sending a Celery task by name, never raising when the broker is down: what was sent for is
stored first (a queued job, a pending vacuum), so the sweeper (memories.services.write_jobs:
jobs_sweep) sends it again later. The tasks (memories.tasks) are named here, not imported: tasks
call services."""

from __future__ import annotations

import logging
import time

from celery import current_app

logger = logging.getLogger(__name__)

BROKER_CONNECT_TIMEOUT = 1.0
BROKER_RETRY_AFTER = 5.0  # seconds a failed send keeps this process from trying again
_broker_down_until = 0.0


def task_send(name: str, *, args: list, what: str, force: bool = False) -> bool:
    """Send the task `name` with `args`. A broker that is down is logged (`what` stays behind: "job
    12 stays queued"), not raised. After a failed send the process stops trying for
    BROKER_RETRY_AFTER seconds, so the requests accepted during an outage do not each wait for a
    connection timeout (`force`: the sweeper tries anyway)."""
    global _broker_down_until
    if not force and time.monotonic() < _broker_down_until:
        logger.info("%s: the broker was unavailable a moment ago", what)
        return False
    try:
        # a connection of its own, not the shared pool: a pool whose connections an outage left
        # checked out would make this block instead of failing
        with current_app.connection_for_write(connect_timeout=BROKER_CONNECT_TIMEOUT) as connection:
            current_app.send_task(name, args=args, retry=False, connection=connection)
    except Exception as exc:  # kombu/redis raise many types; none may lose what was accepted
        _broker_down_until = time.monotonic() + BROKER_RETRY_AFTER
        logger.warning("%s, the broker is unavailable: %s", what, exc)
        return False
    _broker_down_until = 0.0
    return True
