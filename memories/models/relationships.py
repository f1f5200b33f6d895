from django.db import models

from .base import AgentScoped, BiTemporal, bitemporal_constraints
from .visibility import VersionQuerySet


class Relationship(AgentScoped, BiTemporal):
    """A directed, typed edge between two entities (clara → works_at → orion_tech) with both
    time axes. `evidence_fact` is the fact that supports it: closing that fact closes the edge."""

    source = models.ForeignKey("memories.Entity", on_delete=models.CASCADE, related_name="outgoing")
    target = models.ForeignKey("memories.Entity", on_delete=models.CASCADE, related_name="incoming")
    rel_type = models.CharField(max_length=100)
    strength = models.FloatField(default=0.8)
    evidence_fact = models.ForeignKey(
        "memories.Fact", null=True, blank=True, on_delete=models.SET_NULL, related_name="evidenced_relationships"
    )
    source_event = models.ForeignKey(
        "memories.Event", null=True, blank=True, on_delete=models.SET_NULL, related_name="relationships"
    )

    objects = VersionQuerySet.as_manager()

    class Meta:
        ordering = ["-recorded_at", "-id"]
        constraints = bitemporal_constraints("relationship") + [
            models.CheckConstraint(
                condition=~models.Q(source=models.F("target")), name="relationship_no_self_reference"
            ),
            models.CheckConstraint(
                condition=models.Q(strength__gte=0) & models.Q(strength__lte=1), name="relationship_strength_range"
            ),
            # At most one active edge per (source, type, target): repeats reinforce it instead.
            models.UniqueConstraint(
                fields=["agent", "source", "rel_type", "target"],
                condition=models.Q(invalidated_at__isnull=True, valid_to__isnull=True),
                name="relationship_unique_active",
            ),
        ]
        indexes = [
            models.Index(fields=["agent", "valid_to", "invalidated_at"], name="rel_agent_validity"),
            models.Index(fields=["source", "rel_type"], name="rel_source_type"),
            models.Index(fields=["target"], name="rel_target"),
        ]

    def __str__(self) -> str:
        return f"{self.source_id} -[{self.rel_type}]-> {self.target_id}"
