"""Timestamps read at C speed by the raw queries that read many rows.

Django registers its own `timestamptz` loader on every connection, a Python subclass of
psycopg's that sets the tzinfo it wants, so psycopg's C loader never runs: reading a retrieval's
few hundred candidate rows spent more time parsing their timestamps than the query took. When
the connection's session time zone is UTC, which Django sets with `USE_TZ` (the database works in
UTC), psycopg's own loader returns the same values (`datetime.timezone.utc`), ten times faster."""

from __future__ import annotations

from datetime import UTC

import psycopg
from psycopg.pq import Format

_TIMESTAMPTZ = psycopg.postgres.types["timestamptz"].oid
_LOADER = psycopg.postgres.adapters.get_loader(_TIMESTAMPTZ, Format.TEXT)


def fast_timestamps(cursor) -> None:
    """On a Django cursor of a connection in UTC, psycopg's C loader for timestamptz."""
    if getattr(cursor.db, "timezone", None) is UTC:
        cursor.cursor.adapters.register_loader(_TIMESTAMPTZ, _LOADER)


def id_array(ids) -> str:
    """Ids as one `bigint[]` literal (`= ANY(%s::bigint[])`): Django's client-side binding dumps
    a Python list one element at a time, in Python, which for the few hundred candidates of a
    retrieval costs more than the statement that reads them."""
    return "{" + ",".join(str(int(i)) for i in ids) + "}"
