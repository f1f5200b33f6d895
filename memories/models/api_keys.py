from django.db import models


class ApiKeyScope(models.TextChoices):
    READ = "read"
    WRITE = "write"
    ADMIN = "admin"


class ApiKey(models.Model):
    """One credential for the REST API: whoever presents the key acts with its `scope` (read <
    write < admin) on its `agent`, or on every agent when `agent` is empty. Only the SHA-256 of
    the key is stored (the key itself is shown once, at creation); `prefix` (its first 8
    characters) identifies it in lists and in the audit log. A revoked key stays as a record."""

    agent = models.ForeignKey(
        "memories.Agent", null=True, blank=True, on_delete=models.CASCADE, related_name="api_keys",
        help_text="the only agent this key may use; empty means every agent",
    )
    name = models.CharField(max_length=200, blank=True, default="")
    prefix = models.CharField(max_length=8, db_index=True)
    key_hash = models.CharField(max_length=64, unique=True)
    scope = models.CharField(max_length=8, choices=ApiKeyScope.choices, default=ApiKeyScope.READ)
    created_at = models.DateTimeField(auto_now_add=True)
    last_used_at = models.DateTimeField(null=True, blank=True)
    revoked_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        verbose_name = "API key"
        ordering = ["-created_at", "-id"]

    def __str__(self) -> str:
        target = self.agent.slug if self.agent_id else "all agents"
        return f"{self.prefix}… ({self.scope}, {target})"

    @property
    def is_active(self) -> bool:
        return self.revoked_at is None
