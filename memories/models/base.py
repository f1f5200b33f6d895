"""Shared pieces of the memory models."""

from django.db import models

EMBEDDING_DIMENSIONS = 384


class AgentScoped(models.Model):
    """Every row belongs to exactly one agent (the tenant)."""

    agent = models.ForeignKey("memories.Agent", on_delete=models.CASCADE, related_name="+")

    class Meta:
        abstract = True


class BiTemporal(models.Model):
    """Three clocks (see memories/models/visibility.py for how they are queried):

    - the world's: when the statement was true, `valid_from` / `valid_to`;
    - the agent's: when the agent learned the statement (`learned_at`: the time the message was
      said, or when an operator made the change), when it learned the statement's end
      (`valid_to_learned_at`), and when it stopped believing the statement at all
      (`unlearned_at`: a retraction, or a correction that replaced it from its start);
    - the database's: when the row was stored and closed, `recorded_at` / `invalidated_at`.

    Open ends are NULL. A version that came with an agent import keeps the clocks it had where
    it was exported; `imported_at` says when this database stored it (NULL: written here)."""

    valid_from = models.DateTimeField(db_index=False)
    valid_to = models.DateTimeField(null=True, blank=True)
    learned_at = models.DateTimeField()
    valid_to_learned_at = models.DateTimeField(null=True, blank=True)
    unlearned_at = models.DateTimeField(null=True, blank=True)
    recorded_at = models.DateTimeField()
    invalidated_at = models.DateTimeField(null=True, blank=True)
    imported_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        abstract = True

    @property
    def is_active(self) -> bool:
        return self.valid_to is None and self.invalidated_at is None

    # The one rule for ending a version, used by every service that closes or unlearns one: a
    # clock never runs backwards within a version (an end is never before its start), so a
    # backfilled message that ends a version learned later ends it from when it was learned.
    def mark_closed(self, *, valid_to, learned_at, now) -> list[str]:
        """The statement stopped being true at `valid_to`, as the agent learned at `learned_at`;
        the database closes the row `now`. Returns the fields set."""
        self.valid_to = max(valid_to, self.valid_from)
        self.valid_to_learned_at = max(learned_at, self.learned_at)
        self.invalidated_at = max(now, self.recorded_at)
        return ["valid_to", "valid_to_learned_at", "invalidated_at"]

    def mark_unlearned(self, *, at, now) -> list[str]:
        """The agent stops believing the statement at all from `at`; the row closes `now` unless
        it was closed already. Returns the fields set."""
        self.unlearned_at = max(at, self.learned_at)
        self.invalidated_at = self.invalidated_at or max(now, self.recorded_at)
        return ["unlearned_at", "invalidated_at"]


def bitemporal_constraints(prefix: str) -> list[models.CheckConstraint]:
    return [
        models.CheckConstraint(
            condition=models.Q(valid_to__isnull=True) | models.Q(valid_to__gte=models.F("valid_from")),
            name=f"{prefix}_valid_window",
            violation_error_message="valid_to must not be before valid_from",
        ),
        models.CheckConstraint(
            condition=models.Q(invalidated_at__isnull=True)
            | models.Q(invalidated_at__gte=models.F("recorded_at")),
            name=f"{prefix}_recorded_window",
            violation_error_message="invalidated_at must not be before recorded_at",
        ),
        models.CheckConstraint(
            condition=models.Q(unlearned_at__isnull=True) | models.Q(unlearned_at__gte=models.F("learned_at")),
            name=f"{prefix}_learned_window",
            violation_error_message="unlearned_at must not be before learned_at",
        ),
    ]
