from django.db import models
from pgvector.django import HnswIndex, VectorField

from .base import EMBEDDING_DIMENSIONS, AgentScoped


class Entity(AgentScoped):
    """A person, place, organization or thing the agent knows about, identified per agent by
    `key` (`person:carlos`). A merged entity keeps its row and points at the survivor through
    `merged_into`, so old references can be followed. An entity that came with an agent import
    keeps its `created_at`; `imported_at` says when this database stored it."""

    key = models.CharField(max_length=255)
    type = models.CharField(max_length=64)
    display_name = models.CharField(max_length=255)
    profile_text = models.TextField(blank=True, default="")
    profile_refreshed_at = models.DateTimeField(null=True, blank=True)
    summary_text = models.TextField(blank=True, default="")
    importance = models.FloatField(default=0.5)
    name_embedding = VectorField(dimensions=EMBEDDING_DIMENSIONS, null=True, blank=True)
    merged_into = models.ForeignKey(
        "self", null=True, blank=True, on_delete=models.SET_NULL, related_name="merged_entities"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)
    imported_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        verbose_name_plural = "entities"
        ordering = ["display_name"]
        constraints = [
            models.UniqueConstraint(fields=["agent", "key"], name="entity_unique_key"),
            models.CheckConstraint(
                condition=models.Q(type=models.functions.Lower("type")), name="entity_type_lowercase"
            ),
        ]
        indexes = [
            models.Index(fields=["agent", "type"], name="entity_agent_type"),
            HnswIndex(
                name="entity_name_embedding_hnsw",
                fields=["name_embedding"],
                m=16,
                ef_construction=64,
                opclasses=["vector_cosine_ops"],
            ),
        ]

    def survivor(self) -> "Entity":
        """The entity this one lives on as: itself, or the end of its `merged_into` chain (every
        hop followed; a cycle, which merges refuse to create, stops where it closes)."""
        entity, seen = self, {self.id}
        while entity.merged_into_id and entity.merged_into_id not in seen:
            seen.add(entity.merged_into_id)
            entity = Entity.objects.defer("name_embedding").get(pk=entity.merged_into_id)
        return entity

    def __str__(self) -> str:
        return f"{self.display_name} ({self.key})"


class EntityAlias(AgentScoped):
    """One normalized name ("guili") that points at one entity for one agent. Unique per agent:
    the first writer wins, later registrations of the same alias are ignored."""

    alias = models.CharField(max_length=255)
    entity = models.ForeignKey(Entity, on_delete=models.CASCADE, related_name="aliases")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        verbose_name_plural = "entity aliases"
        ordering = ["alias"]
        constraints = [models.UniqueConstraint(fields=["agent", "alias"], name="alias_unique_per_agent")]

    def __str__(self) -> str:
        return f"{self.alias} → {self.entity_id}"



class EntityMerge(AgentScoped):
    """What one merge moved, so that it can be undone (`entity_unmerge`): the ids of the facts,
    links, relationships and aliases that went from `merged` to `survivor`."""

    survivor = models.ForeignKey(Entity, on_delete=models.CASCADE, related_name="merges_absorbed")
    merged = models.ForeignKey(Entity, on_delete=models.CASCADE, related_name="merges_into")
    moved = models.JSONField(default=dict)
    actor = models.CharField(max_length=200)
    reason = models.TextField(blank=True, default="")
    created_at = models.DateTimeField(auto_now_add=True)
    undone_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [models.Index(fields=["merged", "undone_at"], name="entity_merge_open")]

    def __str__(self) -> str:
        return f"{self.merged_id} → {self.survivor_id}"
