from __future__ import annotations

from django.contrib.postgres.indexes import GinIndex
from django.contrib.postgres.search import SearchVector, SearchVectorField
from django.db import models
from pgvector.django import HnswIndex, VectorField

from .base import EMBEDDING_DIMENSIONS, AgentScoped, BiTemporal, bitemporal_constraints
from .visibility import VersionQuerySet


class SourceContext(models.TextChoices):
    EXTRACTED = "extracted", "extracted from a message"
    INFERRED_FROM_RELATION = "inferred_from_relation", "mirror of a relationship"
    OPERATOR = "operator", "written by an operator"


class ImportanceCategory(models.TextChoices):
    BIOGRAPHICAL_MILESTONE = "biographical_milestone"
    RELATIONSHIP_CHANGE = "relationship_change"
    STABLE_PREFERENCE = "stable_preference"
    SPECIFIC_EVENT = "specific_event"
    ROUTINE_ACTIVITY = "routine_activity"
    CONVERSATIONAL = "conversational"


class FactQuerySet(VersionQuerySet):
    def about(self, entity_id: int) -> FactQuerySet:
        """Facts whose subject is the entity or that name it (through a FactEntityLink)."""
        linked = FactEntityLink.objects.filter(entity_id=entity_id).values("fact_id")
        return self.filter(models.Q(entity_id=entity_id) | models.Q(id__in=linked))


class Fact(AgentScoped, BiTemporal):
    """One version of one statement about an entity ("Ricardo lives in Austin"), with both time
    axes. A correction never edits a row: it closes this version (valid_to / invalidated_at) and
    inserts a new one whose `supersedes` points here, so every fact has a walkable chain."""

    entity = models.ForeignKey("memories.Entity", on_delete=models.CASCADE, related_name="facts")
    text = models.TextField()
    embedding = VectorField(dimensions=EMBEDDING_DIMENSIONS, null=True, blank=True)
    search_vector = models.GeneratedField(
        expression=SearchVector("text", config="english"),
        output_field=SearchVectorField(),
        db_persist=True,
    )
    confidence = models.FloatField(default=0.95)
    importance = models.FloatField(default=0.5)
    importance_category = models.CharField(
        max_length=40, choices=ImportanceCategory.choices, blank=True, default=""
    )
    source_context = models.CharField(
        max_length=32, choices=SourceContext.choices, default=SourceContext.EXTRACTED
    )
    speaker = models.CharField(max_length=200, blank=True, default="")
    source_event = models.ForeignKey(
        "memories.Event", null=True, blank=True, on_delete=models.SET_NULL, related_name="facts"
    )
    reinforcement_count = models.PositiveIntegerField(default=0)
    last_confirmed_at = models.DateTimeField(null=True, blank=True)
    access_count = models.PositiveIntegerField(default=0)
    last_accessed_at = models.DateTimeField(null=True, blank=True)
    supersedes = models.OneToOneField(
        "self", null=True, blank=True, on_delete=models.SET_NULL, related_name="superseded_by"
    )
    invalidation_reason = models.CharField(max_length=500, blank=True, default="")
    # The attribute this fact fills ("lives_in") and its value ("Austin"), when known: a new value
    # for the same slot supersedes the old version without needing an LLM.
    slot = models.CharField(max_length=64, blank=True, default="")
    slot_value = models.CharField(max_length=255, blank=True, default="")

    objects = FactQuerySet.as_manager()

    class Meta:
        ordering = ["-recorded_at", "-id"]
        constraints = bitemporal_constraints("fact") + [
            models.CheckConstraint(
                condition=models.Q(confidence__gte=0) & models.Q(confidence__lte=1),
                name="fact_confidence_range",
            ),
        ]
        indexes = [
            models.Index(fields=["agent", "valid_to", "invalidated_at"], name="fact_agent_validity"),
            models.Index(fields=["agent", "valid_from"], name="fact_agent_valid_from"),
            models.Index(fields=["entity", "valid_to"], name="fact_entity_validity"),
            GinIndex(fields=["search_vector"], name="fact_search_gin"),
            HnswIndex(
                name="fact_embedding_hnsw",
                fields=["embedding"],
                m=16,
                ef_construction=64,
                opclasses=["vector_cosine_ops"],
            ),
        ]

    def __str__(self) -> str:
        return self.text[:80]


class FactEntityLink(models.Model):
    """Says that a fact mentions an entity, so the fact is findable from every entity it names,
    not only its primary subject (`is_primary`)."""

    fact = models.ForeignKey(Fact, on_delete=models.CASCADE, related_name="entity_links")
    entity = models.ForeignKey("memories.Entity", on_delete=models.CASCADE, related_name="fact_links")
    is_primary = models.BooleanField(default=False)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["fact", "entity"], name="fact_link_unique")]
        indexes = [models.Index(fields=["entity", "fact"], name="fact_link_entity")]

    def __str__(self) -> str:
        return f"fact {self.fact_id} ↔ entity {self.entity_id}"


class FactAccess(models.Model):
    """Retrievals of a fact version not yet added to its row's `access_count` and
    `last_accessed_at`. Counting a retrieval rewrites this narrow row, not the fact's wide one:
    every new version of a fact row (its vector inline) goes into the vector and text indexes
    (updating three fact rows took 17–75 ms, the narrow rows about 1 ms), and those indexes
    grew with a dead entry per returned fact per retrieval.
    `facts_access_fold` adds them to the facts before anything reads the counters."""

    fact = models.OneToOneField(Fact, primary_key=True, on_delete=models.CASCADE, related_name="+")
    agent = models.ForeignKey("memories.Agent", on_delete=models.CASCADE, related_name="+")
    count = models.PositiveIntegerField(default=0)
    last_accessed_at = models.DateTimeField()

    def __str__(self) -> str:
        return f"fact {self.fact_id}: {self.count} retrievals not yet counted"
