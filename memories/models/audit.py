from django.db import models


class AuditEntry(models.Model):
    """Who changed what: one operator (or API key) action on one memory object, with the
    object's state before and after and the reason given. Append-only."""

    agent = models.ForeignKey("memories.Agent", null=True, blank=True, on_delete=models.CASCADE, related_name="+")
    actor = models.CharField(max_length=200)
    action = models.CharField(max_length=64)
    object_type = models.CharField(max_length=64)
    object_id = models.CharField(max_length=64)
    before = models.JSONField(default=dict, blank=True)
    after = models.JSONField(default=dict, blank=True)
    reason = models.TextField(blank=True, default="")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        verbose_name_plural = "audit entries"
        ordering = ["-created_at", "-id"]
        indexes = [models.Index(fields=["object_type", "object_id"], name="audit_object")]

    def __str__(self) -> str:
        return f"{self.actor} {self.action} {self.object_type}:{self.object_id}"
