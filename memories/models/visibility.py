"""Bi-temporal visibility: the one definition of "which versions can be seen as of T", as Q
objects for the ORM, SQL fragments for raw queries, and the queryset behind `Fact.objects` and
`Relationship.objects`.

As of T a fact or relationship is visible when valid_from ≤ T < valid_to (or open) AND
recorded_at ≤ T < invalidated_at (or open): true in the world then, and known to us then.
Without T: the open (current) versions. Events are visible once they occurred and were recorded,
and until they are redacted.
"""

from __future__ import annotations

from datetime import datetime

from django.db import models
from django.db.models import Q


def version_visible(as_of: datetime | None, prefix: str = "") -> Q:
    """Versions visible as of `as_of` (None: the current ones). `prefix` reaches a related
    version, e.g. "fact__" from a FactEntityLink."""
    p = prefix
    if as_of is None:
        return Q(**{f"{p}valid_to__isnull": True, f"{p}invalidated_at__isnull": True})
    return (
        Q(**{f"{p}valid_from__lte": as_of, f"{p}recorded_at__lte": as_of})
        & (Q(**{f"{p}valid_to__isnull": True}) | Q(**{f"{p}valid_to__gt": as_of}))
        & (Q(**{f"{p}invalidated_at__isnull": True}) | Q(**{f"{p}invalidated_at__gt": as_of}))
    )


def version_visible_sql(as_of: datetime | None, alias: str = "d") -> tuple[str, list]:
    """The same condition as `version_visible` for a raw query over `alias`."""
    if as_of is None:
        return f"{alias}.valid_to IS NULL AND {alias}.invalidated_at IS NULL", []
    return (
        f"{alias}.valid_from <= %s AND {alias}.recorded_at <= %s "
        f"AND ({alias}.valid_to IS NULL OR {alias}.valid_to > %s) "
        f"AND ({alias}.invalidated_at IS NULL OR {alias}.invalidated_at > %s)",
        [as_of] * 4,
    )


def event_visible(as_of: datetime | None) -> Q:
    q = Q(redacted_at__isnull=True)
    if as_of is not None:
        q &= Q(occurred_at__lte=as_of, recorded_at__lte=as_of)
    return q


def event_visible_sql(as_of: datetime | None, alias: str = "d") -> tuple[str, list]:
    if as_of is None:
        return f"{alias}.redacted_at IS NULL", []
    return f"{alias}.redacted_at IS NULL AND {alias}.occurred_at <= %s AND {alias}.recorded_at <= %s", [as_of, as_of]


class VersionQuerySet(models.QuerySet):
    """`Fact.objects.current()`, `Relationship.objects.visible(as_of)`."""

    def visible(self, as_of: datetime | None = None) -> VersionQuerySet:
        return self.filter(version_visible(as_of))

    def current(self) -> VersionQuerySet:
        return self.filter(version_visible(None))
