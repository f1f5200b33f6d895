"""Shapes of the graph API."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema_serializer
from rest_framework import serializers

from memories.api.serializers import ClocksQuerySerializer


@extend_schema_serializer(component_name="GraphQuery")
class GraphQuerySerializer(ClocksQuerySerializer):
    entity = serializers.CharField(max_length=255, required=False, help_text="centre entity: id or key")
    depth = serializers.IntegerField(min_value=1, max_value=3, default=1)
    rel_types = serializers.CharField(max_length=2000, required=False, allow_blank=True,
                                      help_text="comma-separated relationship types")


class GraphNodeSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    key = serializers.CharField()
    label = serializers.CharField()
    type = serializers.CharField()


class GraphEdgeSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    source = serializers.IntegerField(help_text="node id")
    target = serializers.IntegerField(help_text="node id")
    rel_type = serializers.CharField()
    strength = serializers.FloatField()
    valid_from = serializers.DateTimeField()
    valid_to = serializers.DateTimeField(allow_null=True)


class GraphSerializer(serializers.Serializer):
    nodes = GraphNodeSerializer(many=True)
    edges = GraphEdgeSerializer(many=True)
