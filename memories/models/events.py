from django.contrib.postgres.indexes import GinIndex
from django.contrib.postgres.search import SearchVector, SearchVectorField
from django.db import models
from pgvector.django import HnswIndex, VectorField

from .base import EMBEDDING_DIMENSIONS, AgentScoped


class Event(AgentScoped):
    """One message as it arrived: the immutable log everything else is derived from.
    `occurred_at` is when it was said, `recorded_at` when we received it. The write pipeline
    never updates or deletes an event; only "forget" redacts its text. An event that came with an
    agent import keeps its times; `imported_at` says when this database stored it."""

    speaker = models.CharField(max_length=200)
    text = models.TextField()
    occurred_at = models.DateTimeField()
    recorded_at = models.DateTimeField()
    embedding = VectorField(dimensions=EMBEDDING_DIMENSIONS, null=True, blank=True)
    # "speaker text", stemmed: the event's BM25 document.
    search_vector = models.GeneratedField(
        expression=SearchVector("speaker", "text", config="english"),
        output_field=SearchVectorField(),
        db_persist=True,
    )
    external_id = models.CharField(max_length=200, null=True, blank=True)
    idempotency_key = models.CharField(max_length=200, null=True, blank=True)
    metadata = models.JSONField(default=dict, blank=True)
    redacted_at = models.DateTimeField(null=True, blank=True)
    imported_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["occurred_at", "id"]
        constraints = [
            models.UniqueConstraint(
                fields=["agent", "external_id"],
                condition=models.Q(external_id__isnull=False),
                name="event_unique_external_id",
            ),
            models.UniqueConstraint(
                fields=["agent", "idempotency_key"],
                condition=models.Q(idempotency_key__isnull=False),
                name="event_unique_idempotency_key",
            ),
        ]
        indexes = [
            models.Index(fields=["agent", "occurred_at"], name="event_agent_time"),
            GinIndex(fields=["search_vector"], name="event_search_gin"),
            HnswIndex(
                name="event_embedding_hnsw",
                fields=["embedding"],
                m=16,
                ef_construction=64,
                opclasses=["vector_cosine_ops"],
            ),
        ]

    def __str__(self) -> str:
        return f"{self.speaker}: {self.text[:60]}"
