"""Which versions can be seen: the one definition, as Q objects for the ORM, SQL fragments for
raw queries, and the queryset behind `Fact.objects` and `Relationship.objects`.

A `Moment` names up to three clocks (see BiTemporal):

- `as_of` T, the agent's clock: what the agent knew at T — versions learned at or before T and
  not unlearned by T, with the world-time ends it knew at T (an end learned after T does not
  hide a version);
- `valid_at` V, the world's clock (default: T): which of those were true at V;
- `recorded_as_of` R, the database's clock: only rows stored by R, and closures stored after R
  not applied — what the database held at R.

No clock at all is the current view: versions open on both the world and the database clock.
Events are visible once said (occurred_at ≤ T), stored (recorded_at ≤ R) and not redacted.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from django.db import models
from django.db.models import Q


@dataclass(frozen=True)
class Moment:
    as_of: datetime | None = None
    valid_at: datetime | None = None
    recorded_as_of: datetime | None = None

    @property
    def is_now(self) -> bool:
        return self.as_of is None and self.valid_at is None and self.recorded_as_of is None

    @property
    def world(self) -> datetime | None:
        """The moment of the world asked about."""
        return self.valid_at or self.as_of

    def as_dict(self) -> dict:
        return {k: v.isoformat() if v else None for k, v in
                (("as_of", self.as_of), ("valid_at", self.valid_at), ("recorded_as_of", self.recorded_as_of))}


NOW = Moment()


def as_moment(when: Moment | datetime | None) -> Moment:
    """A Moment from a Moment, a bare `as_of` datetime, or None (now)."""
    if when is None:
        return NOW
    if isinstance(when, Moment):
        return when
    return Moment(as_of=when)


def version_visible(when: Moment | datetime | None, prefix: str = "") -> Q:
    """Versions visible at `when` (None: the current ones). `prefix` reaches a related version,
    e.g. "fact__" from a FactEntityLink."""
    m, p = as_moment(when), prefix

    def q(**lookups) -> Q:
        return Q(**{f"{p}{k}": v for k, v in lookups.items()})

    if m.is_now:
        return q(valid_to__isnull=True, invalidated_at__isnull=True)
    closed_later = q(invalidated_at__gt=m.recorded_as_of) if m.recorded_as_of else Q(pk__in=[])
    cond = Q()
    if m.recorded_as_of is not None:
        cond &= q(recorded_at__lte=m.recorded_as_of)
    if m.as_of is not None:
        cond &= q(learned_at__lte=m.as_of) & (
            q(unlearned_at__isnull=True) | q(unlearned_at__gt=m.as_of) | closed_later)
        ended = q(valid_to__isnull=True) | q(valid_to_learned_at__gt=m.as_of) | closed_later
    else:
        cond &= q(unlearned_at__isnull=True) | closed_later
        ended = q(valid_to__isnull=True) | closed_later
    world = m.world
    if world is not None:
        cond &= q(valid_from__lte=world)
        ended |= q(valid_to__gt=world)
    return cond & ended


def version_visible_sql(when: Moment | datetime | None, alias: str = "d") -> tuple[str, list]:
    """The same condition as `version_visible` for a raw query over `alias`."""
    m, a = as_moment(when), alias
    if m.is_now:
        return f"{a}.valid_to IS NULL AND {a}.invalidated_at IS NULL", []
    parts: list[str] = []
    params: list = []
    closed_later, closed_params = "FALSE", []
    if m.recorded_as_of is not None:
        parts.append(f"{a}.recorded_at <= %s")
        params.append(m.recorded_as_of)
        closed_later, closed_params = f"{a}.invalidated_at > %s", [m.recorded_as_of]
    if m.as_of is not None:
        parts.append(f"{a}.learned_at <= %s AND ({a}.unlearned_at IS NULL OR {a}.unlearned_at > %s "
                     f"OR {closed_later})")
        params += [m.as_of, m.as_of, *closed_params]
        ended = f"{a}.valid_to IS NULL OR {a}.valid_to_learned_at > %s OR {closed_later}"
        ended_params = [m.as_of, *closed_params]
    else:
        parts.append(f"({a}.unlearned_at IS NULL OR {closed_later})")
        params += closed_params
        ended = f"{a}.valid_to IS NULL OR {closed_later}"
        ended_params = list(closed_params)
    world = m.world
    if world is not None:
        parts.append(f"{a}.valid_from <= %s")
        params.append(world)
        ended += f" OR {a}.valid_to > %s"
        ended_params.append(world)
    parts.append(f"({ended})")
    params += ended_params
    return " AND ".join(parts), params


def event_visible(when: Moment | datetime | None) -> Q:
    m = as_moment(when)
    q = Q(redacted_at__isnull=True)
    if m.as_of is not None:
        q &= Q(occurred_at__lte=m.as_of)
    if m.recorded_as_of is not None:
        q &= Q(recorded_at__lte=m.recorded_as_of)
    return q


def event_visible_sql(when: Moment | datetime | None, alias: str = "d") -> tuple[str, list]:
    m = as_moment(when)
    sql, params = f"{alias}.redacted_at IS NULL", []
    if m.as_of is not None:
        sql += f" AND {alias}.occurred_at <= %s"
        params.append(m.as_of)
    if m.recorded_as_of is not None:
        sql += f" AND {alias}.recorded_at <= %s"
        params.append(m.recorded_as_of)
    return sql, params


class VersionQuerySet(models.QuerySet):
    """`Fact.objects.current()`, `Relationship.objects.visible(moment)`."""

    def visible(self, when: Moment | datetime | None = None) -> VersionQuerySet:
        return self.filter(version_visible(when))

    def current(self) -> VersionQuerySet:
        return self.filter(version_visible(None))
