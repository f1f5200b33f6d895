"""Helpers for tests that drive a live server process on the test database."""

from __future__ import annotations

import time

from django.db import connection


def server_work_settled(timeout: float = 15.0, quiet: float = 0.5) -> None:
    """Wait until no other session has been busy on the test database for `quiet` seconds. A
    retrieval records its trace after responding; a transactional test's teardown truncates every
    table, which deadlocks with such an insert in flight. Gives up after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    quiet_since = None
    with connection.cursor() as cursor:
        while time.monotonic() < deadline:
            cursor.execute("SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() "
                           "AND pid <> pg_backend_pid() AND state <> 'idle'")
            if cursor.fetchone()[0] == 0:
                quiet_since = quiet_since or time.monotonic()
                if time.monotonic() - quiet_since >= quiet:
                    return
            else:
                quiet_since = None
            time.sleep(0.05)
