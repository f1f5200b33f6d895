from django.db import models

from .base import AgentScoped


class JobCheckpoint(models.Model):
    """Where one background job left off for one agent: when its last complete pass over the
    agent started (`watermark`: rows changed after it are the next pass's work, and decay counts
    time from it) and when it finished. One row per (job, agent); an agent without a row has
    never been processed by the job."""

    job = models.CharField(max_length=64)
    agent = models.ForeignKey("memories.Agent", on_delete=models.CASCADE, related_name="+")
    watermark = models.DateTimeField()
    finished_at = models.DateTimeField()
    data = models.JSONField(default=dict, blank=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["job", "agent"], name="job_checkpoint_unique")]

    def __str__(self) -> str:
        return f"{self.job}/{self.agent_id} @ {self.watermark:%Y-%m-%d %H:%M}"


class MergeSuggestionStatus(models.TextChoices):
    OPEN = "open"
    DISMISSED = "dismissed"
    MERGED = "merged"


class MergeSuggestion(AgentScoped):
    """Two entities of one agent that are probably the same (similar names or aliases, close
    name vectors, shared neighbours), found by the `merge_suggestions` job for an operator to
    merge or dismiss. The pair is stored once (`entity_a` has the lower id); a dismissed pair is
    not suggested again. `reasons` holds the evidence and its scores."""

    entity_a = models.ForeignKey("memories.Entity", on_delete=models.CASCADE, related_name="+")
    entity_b = models.ForeignKey("memories.Entity", on_delete=models.CASCADE, related_name="+")
    score = models.FloatField()
    reasons = models.JSONField(default=dict, blank=True)
    status = models.CharField(max_length=16, choices=MergeSuggestionStatus.choices,
                              default=MergeSuggestionStatus.OPEN)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)
    decided_at = models.DateTimeField(null=True, blank=True)
    decided_by = models.CharField(max_length=200, blank=True, default="")

    class Meta:
        ordering = ["-score", "id"]
        constraints = [
            models.UniqueConstraint(fields=["agent", "entity_a", "entity_b"], name="merge_suggestion_unique_pair"),
            models.CheckConstraint(condition=models.Q(entity_a__lt=models.F("entity_b")),
                                   name="merge_suggestion_ordered_pair"),
        ]
        indexes = [models.Index(fields=["agent", "status", "-score"], name="merge_suggestion_agent_status")]

    def __str__(self) -> str:
        return f"{self.entity_a_id} ≟ {self.entity_b_id} ({self.status}, {self.score:.2f})"
