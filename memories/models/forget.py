from django.contrib.postgres.fields import ArrayField
from django.db import models

from .base import AgentScoped


class ForgetTombstone(AgentScoped):
    """A person the operator made the agent forget, kept only as keyed digests of the normalized
    names and aliases (never the names): a message logged before the forget but processed after
    it is redacted by the write pipeline instead of bringing the person back
    (memories.services.forget.event_forget_guard). `max_words` bounds the name length in words."""

    digests = ArrayField(models.CharField(max_length=64), default=list)
    max_words = models.PositiveSmallIntegerField(default=1)
    created_at = models.DateTimeField()

    class Meta:
        indexes = [models.Index(fields=["agent", "created_at"], name="forget_tombstone_time")]

    def __str__(self) -> str:
        return f"tombstone {self.pk} ({len(self.digests)} names)"
