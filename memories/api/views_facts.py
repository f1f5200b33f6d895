"""agents/{agent}/facts/: browse fact versions; history, correct and retract one."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema, extend_schema_serializer, inline_serializer
from rest_framework import serializers, status
from rest_framework.response import Response
from rest_framework.views import APIView

from memories import selectors
from memories.api.serializers import FactSerializer, FactVersionSerializer
from memories.api.views_base import AgentScopedMixin, AgentScopedReadViewSet
from memories.filters import FactFilterSet
from memories.models import Fact
from memories.services import operator


class FactViewSet(AgentScopedReadViewSet):
    """Fact versions. The list shows the open versions unless `as_of` (what was true and known
    then) or `include_superseded` says otherwise."""

    queryset = Fact.objects.none()
    serializer_class = FactSerializer
    filterset_class = FactFilterSet

    def scoped_queryset(self, agent):
        return selectors.facts_list(agent=agent)


class FactHistoryApi(AgentScopedMixin, APIView):
    """The whole version chain the fact belongs to, oldest first, each version with its valid
    and recorded windows and the event it came from."""

    @extend_schema_serializer(component_name="FactHistory")
    class OutputSerializer(serializers.Serializer):
        fact_id = serializers.IntegerField()
        versions = FactVersionSerializer(many=True)

    @extend_schema(responses={200: OutputSerializer})
    def get(self, request, agent, pk):
        chain = operator.fact_history(agent=self.agent, fact_id=int(pk))
        return Response(self.OutputSerializer({"fact_id": int(pk), "versions": chain}, context=self.context()).data)


class FactCorrectApi(AgentScopedMixin, APIView):
    """A new version with the given text supersedes the fact from now on, attributed to the
    caller. Correcting a closed version is a 400 naming the latest version."""

    @extend_schema_serializer(component_name="FactCorrectInput")
    class InputSerializer(serializers.Serializer):
        text = serializers.CharField(max_length=4000, help_text="the corrected statement")
        reason = serializers.CharField(max_length=500, required=False, allow_blank=True, default="")

    @extend_schema(request=InputSerializer, responses={201: FactSerializer})
    def post(self, request, agent, pk):
        data = self.InputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        new = operator.fact_correct(agent=self.agent, fact_id=int(pk), text=data.validated_data["text"],
                                    reason=data.validated_data["reason"], actor=self.actor)
        fact = selectors.fact_get(agent=self.agent, fact_id=new.id)
        return Response(FactSerializer(fact, context=self.context()).data, status=status.HTTP_201_CREATED)


class FactRetractApi(AgentScopedMixin, APIView):
    """Close the fact on both time axes now; relationships it evidences close with it."""

    @extend_schema_serializer(component_name="FactRetractInput")
    class InputSerializer(serializers.Serializer):
        reason = serializers.CharField(max_length=500, required=False, allow_blank=True, default="")

    @extend_schema(request=InputSerializer, responses={200: inline_serializer("FactRetracted", {
        "fact": FactSerializer(), "relationships_closed": serializers.IntegerField()})})
    def post(self, request, agent, pk):
        data = self.InputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        fact, closed = operator.fact_retract(agent=self.agent, fact_id=int(pk), reason=data.validated_data["reason"],
                                             actor=self.actor)
        fact = selectors.fact_get(agent=self.agent, fact_id=fact.id)
        return Response({"fact": FactSerializer(fact, context=self.context()).data, "relationships_closed": closed})
