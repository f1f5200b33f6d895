from django.contrib.postgres.fields import ArrayField
from django.db import models

from .base import AgentScoped


class ForgetTombstone(AgentScoped):
    """A person the operator made the agent forget, kept only as keyed digests of the normalized
    names and aliases (never the names): a message logged before the forget but processed after
    it is redacted by the write pipeline instead of bringing the person back
    (memories.services.forget.event_forget_guard). `max_words` bounds the name length in words;
    `capitalized_digests` are the names that count only when written capitalized (a family name
    alone: memories.name_forms); `part_digests` are also each word of her names, in any case, as
    they are matched in identifiers (an external id or idempotency key: `chat-brandt-9`)."""

    digests = ArrayField(models.CharField(max_length=64), default=list)
    capitalized_digests = ArrayField(models.CharField(max_length=64), default=list)
    part_digests = ArrayField(models.CharField(max_length=64), default=list)
    max_words = models.PositiveSmallIntegerField(default=1)
    created_at = models.DateTimeField()

    class Meta:
        indexes = [models.Index(fields=["agent", "created_at"], name="forget_tombstone_time")]

    def __str__(self) -> str:
        return f"tombstone {self.pk} ({len(self.digests)} names)"


class ErasureReceipt(AgentScoped):
    """The record of one forget, for the operator and for the person who asked for it: what was
    removed or redacted, counted per table (`tables`: {"memories_fact": {"deleted": 4}, …}),
    when, by whom (`actor`: `user:<name>` / `key:<prefix>`), and the opaque key the forgotten
    entity's key became everywhere it was stored (`opaque_key`, `person:forgotten-12`; every
    entity removed with it in `opaque_keys`). It holds no personal data of the forgotten person:
    no names, no texts, no external ids, not even the reason given (only whether there was one).
    `vacuumed_at` is set when a worker vacuumed the touched tables after the commit
    (`vacuum_error` says why not); until then the vacuum is pending."""

    created_at = models.DateTimeField()
    actor = models.CharField(max_length=200)
    opaque_key = models.CharField(max_length=255)
    opaque_keys = ArrayField(models.CharField(max_length=255), default=list)
    reason_given = models.BooleanField(default=False)
    totals = models.JSONField(default=dict, blank=True)
    tables = models.JSONField(default=dict, blank=True)
    name_forms = models.JSONField(default=dict, blank=True)
    vacuum_tables = ArrayField(models.CharField(max_length=100), default=list)
    vacuumed_at = models.DateTimeField(null=True, blank=True)
    vacuum_seconds = models.FloatField(null=True, blank=True)
    vacuum_error = models.TextField(blank=True, default="")

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [models.Index(fields=["agent", "-created_at"], name="erasure_receipt_time")]

    def __str__(self) -> str:
        return f"erasure {self.pk} ({self.opaque_key})"

    @property
    def vacuum_status(self) -> str:
        """done, failed, or pending (a worker has not run it yet)."""
        if self.vacuumed_at is not None:
            return "done"
        return "failed" if self.vacuum_error else "pending"
