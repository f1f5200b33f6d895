"""Postgres advisory locks that keep two runs of one job off the same agent at once (across
processes and machines): the second one skips the agent instead of waiting."""

from __future__ import annotations

import zlib
from collections.abc import Iterator
from contextlib import contextmanager

from django.db import connection


def lock_key(job: str, agent_id: int) -> tuple[int, int]:
    """Two int4 keys: the job name's CRC32 (signed) and the agent id (0 for a global job)."""
    crc = zlib.crc32(f"anamnesis.job:{job}".encode())
    return crc - (1 << 32) if crc >= (1 << 31) else crc, int(agent_id)


@contextmanager
def advisory_lock(job: str, agent_id: int) -> Iterator[bool]:
    """Try the session-level lock of (job, agent); yields whether it was taken, and releases it
    on exit. Session-level, not transaction-level: a job commits in several transactions."""
    key = lock_key(job, agent_id)
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_try_advisory_lock(%s, %s)", key)
        taken = cursor.fetchone()[0]
    try:
        yield taken
    finally:
        if taken:
            with connection.cursor() as cursor:
                cursor.execute("SELECT pg_advisory_unlock(%s, %s)", key)
