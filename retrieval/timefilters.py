"""Bi-temporal visibility as SQL fragments and Q objects (shared by every signal).

As of T a fact or relationship is visible when valid_from ≤ T < valid_to (or open) AND
recorded_at ≤ T < invalidated_at (or open): true in the world then, and known to us then.
Without T: the open (current) versions. Events are visible once they occurred and were recorded.
"""

from __future__ import annotations

from datetime import datetime

from django.db.models import Q


def fact_visible(as_of: datetime | None, prefix: str = "") -> Q:
    p = prefix
    if as_of is None:
        return Q(**{f"{p}valid_to__isnull": True, f"{p}invalidated_at__isnull": True})
    return (
        Q(**{f"{p}valid_from__lte": as_of, f"{p}recorded_at__lte": as_of})
        & (Q(**{f"{p}valid_to__isnull": True}) | Q(**{f"{p}valid_to__gt": as_of}))
        & (Q(**{f"{p}invalidated_at__isnull": True}) | Q(**{f"{p}invalidated_at__gt": as_of}))
    )


def fact_visible_sql(as_of: datetime | None, alias: str = "d") -> tuple[str, list]:
    if as_of is None:
        return f"{alias}.valid_to IS NULL AND {alias}.invalidated_at IS NULL", []
    return (
        f"{alias}.valid_from <= %s AND {alias}.recorded_at <= %s "
        f"AND ({alias}.valid_to IS NULL OR {alias}.valid_to > %s) "
        f"AND ({alias}.invalidated_at IS NULL OR {alias}.invalidated_at > %s)",
        [as_of] * 4,
    )


def event_visible_sql(as_of: datetime | None, alias: str = "d") -> tuple[str, list]:
    if as_of is None:
        return f"{alias}.redacted_at IS NULL", []
    return f"{alias}.redacted_at IS NULL AND {alias}.occurred_at <= %s AND {alias}.recorded_at <= %s", [as_of, as_of]


def event_visible(as_of: datetime | None) -> Q:
    q = Q(redacted_at__isnull=True)
    if as_of is not None:
        q &= Q(occurred_at__lte=as_of, recorded_at__lte=as_of)
    return q
