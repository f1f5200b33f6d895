"""agents/{agent}/merge-suggestions/: probable duplicate entities found by the merge_suggestions
job — list them (open ones by default), dismiss one, or merge the pair."""

from __future__ import annotations

from drf_spectacular.utils import OpenApiParameter, extend_schema, extend_schema_serializer
from rest_framework import serializers
from rest_framework.decorators import action
from rest_framework.response import Response

from memories import selectors
from memories.api.views_base import AgentScopedReadViewSet
from memories.models import ApiKeyScope, Entity, MergeSuggestion, MergeSuggestionStatus
from memories.services import maintenance


class SuggestedEntitySerializer(serializers.ModelSerializer):
    class Meta:
        model = Entity
        fields = ["id", "key", "type", "display_name"]


class MergeSuggestionSerializer(serializers.ModelSerializer):
    entity_a = SuggestedEntitySerializer()
    entity_b = SuggestedEntitySerializer()

    class Meta:
        model = MergeSuggestion
        fields = ["id", "entity_a", "entity_b", "score", "reasons", "status", "created_at", "updated_at",
                  "decided_at", "decided_by"]


@extend_schema_serializer(component_name="MergeSuggestionDecision")
class DecisionSerializer(serializers.Serializer):
    reason = serializers.CharField(required=False, allow_blank=True, default="", max_length=2000)
    survivor = serializers.IntegerField(required=False, help_text="merge only: the entity that stays")


class MergeSuggestionViewSet(AgentScopedReadViewSet):
    """`?status=open|dismissed|merged|all` (default open), best score first."""

    queryset = MergeSuggestion.objects.none()
    serializer_class = MergeSuggestionSerializer
    scopes = {"dismiss": ApiKeyScope.WRITE, "merge": ApiKeyScope.ADMIN}

    def scoped_queryset(self, agent):
        query = selectors.merge_suggestions_list(agent=agent)
        wanted = self.request.query_params.get("status", MergeSuggestionStatus.OPEN)
        if self.action == "list" and wanted != "all":
            query = query.filter(status=wanted)
        return query

    @extend_schema(parameters=[OpenApiParameter("status", str, enum=[*MergeSuggestionStatus.values, "all"])])
    def list(self, request, *args, **kwargs):
        return super().list(request, *args, **kwargs)

    @extend_schema(request=DecisionSerializer, responses={200: MergeSuggestionSerializer})
    @action(detail=True, methods=["post"])
    def dismiss(self, request, agent=None, pk=None):
        data = DecisionSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        suggestion = maintenance.merge_suggestion_dismiss(agent=self.agent, suggestion_id=int(pk), actor=self.actor,
                                                          reason=data.validated_data["reason"])
        return Response(MergeSuggestionSerializer(suggestion).data)

    @extend_schema(request=DecisionSerializer, responses={200: MergeSuggestionSerializer})
    @action(detail=True, methods=["post"])
    def merge(self, request, agent=None, pk=None):
        data = DecisionSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        suggestion = maintenance.merge_suggestion_accept(
            agent=self.agent, suggestion_id=int(pk), actor=self.actor, reason=data.validated_data["reason"],
            survivor_id=data.validated_data.get("survivor"))
        return Response(MergeSuggestionSerializer(suggestion).data)
