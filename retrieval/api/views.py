"""agents/{agent}/retrieve/: a query in, a ranked, cited, token-budgeted context out."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema, extend_schema_serializer
from rest_framework import serializers
from rest_framework.response import Response
from rest_framework.views import APIView

from memories.api.fields import ConfigOverridesField, MomentField
from memories.api.strict import StrictInputSerializer
from memories.api.views_base import AgentScopedMixin, pipeline_input_errors
from memories.models import ApiKeyScope
from retrieval.api.serializers import RetrieveResultSerializer
from retrieval.config import PRESETS
from retrieval.services import MAX_QUERY_CHARS, memory_retrieve


class RetrieveApi(AgentScopedMixin, APIView):
    """Runs the read pipeline (plan, semantic / keyword / graph signals, fusion, rerank) and
    returns the context with the facts and events behind it, their score breakdowns, citations
    and the id of the stored trace. `as_of` answers as the agent knew the world then."""

    scopes = {"POST": ApiKeyScope.READ}  # a read: every integration needs it

    @extend_schema_serializer(component_name="RetrieveInput")
    class InputSerializer(StrictInputSerializer):
        query = serializers.CharField(max_length=MAX_QUERY_CHARS)
        as_of = MomentField(required=False, allow_null=True, help_text="answer with what the agent knew then")
        valid_at = MomentField(required=False, allow_null=True,
                               help_text="about this moment of the world (default: as_of)")
        recorded_as_of = MomentField(required=False, allow_null=True,
                                     help_text="with what the database held at this moment")
        limit = serializers.IntegerField(min_value=1, max_value=100, default=10)
        entity_hints = serializers.ListField(child=serializers.CharField(max_length=255), max_length=50,
                                             required=False, default=list,
                                             help_text="entity keys or names the query is about")
        preset = serializers.ChoiceField(choices=sorted(PRESETS), default="default")
        config_overrides = ConfigOverridesField(allow_empty=True)

    @extend_schema(request=InputSerializer, responses={200: RetrieveResultSerializer})
    def post(self, request, agent):
        data = self.InputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        params = data.validated_data
        with pipeline_input_errors(overrides=params.get("config_overrides")):
            result = memory_retrieve(agent=self.agent, query=params["query"], as_of=params.get("as_of"),
                                     valid_at=params.get("valid_at"), recorded_as_of=params.get("recorded_as_of"),
                                     limit=params["limit"], entity_hints=params["entity_hints"],
                                     config_overrides=params.get("config_overrides"), preset=params["preset"])
        # the result's own dict: RetrieveResultSerializer documents it (tests/test_result_shapes.py
        # holds the two equal) and would only copy it, at a few ms a request
        return Response(result.as_dict())
