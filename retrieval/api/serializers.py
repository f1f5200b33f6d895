"""Shapes of the retrieve API, checked against retrieval.results (tests/test_result_shapes.py)."""

from __future__ import annotations

from rest_framework import serializers

from memories.api.serializers import TokenUsageSerializer


class CitationSerializer(serializers.Serializer):
    event_id = serializers.IntegerField(allow_null=True)
    external_id = serializers.CharField(allow_null=True)
    occurred_at = serializers.CharField(allow_null=True)
    speaker = serializers.CharField(allow_null=True)


class RetrievedFactSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    text = serializers.CharField()
    entity = serializers.CharField(help_text="entity key")
    entity_name = serializers.CharField()
    score = serializers.FloatField()
    rank = serializers.IntegerField()
    scores = serializers.DictField(child=serializers.FloatField(), help_text="score breakdown by signal")
    citations = CitationSerializer(many=True)
    valid_from = serializers.CharField()
    valid_to = serializers.CharField(allow_null=True)
    recorded_at = serializers.CharField()
    invalidated_at = serializers.CharField(allow_null=True)
    source_context = serializers.CharField()


class RetrievedEventSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    text = serializers.CharField()
    speaker = serializers.CharField()
    occurred_at = serializers.CharField()
    external_id = serializers.CharField(allow_null=True)
    score = serializers.FloatField()
    rank = serializers.IntegerField()
    scores = serializers.DictField(child=serializers.FloatField())


class RetrieveResultSerializer(serializers.Serializer):
    query = serializers.CharField(allow_blank=True)
    context = serializers.CharField(allow_blank=True, help_text="the formatted, token-budgeted context")
    facts = RetrievedFactSerializer(many=True)
    events = RetrievedEventSerializer(many=True)
    ranking = serializers.ListField(child=serializers.CharField(), help_text='"f:<id>" / "e:<id>" in final order')
    total_candidates = serializers.IntegerField()
    duration_ms = serializers.FloatField()
    context_tokens = serializers.IntegerField()
    tokens_used = TokenUsageSerializer()
    strategy = serializers.CharField()
    as_of = serializers.CharField(allow_null=True)
    valid_at = serializers.CharField(allow_null=True)
    recorded_as_of = serializers.CharField(allow_null=True)
    trace_id = serializers.IntegerField(allow_null=True, help_text="id of the trace (GET traces/{id}/)")
    trace = serializers.ListField(child=serializers.DictField(child=serializers.JSONField()))
