"""agents/{agent}/facts/: browse fact versions; history, correct, retract and reinstate one."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema, extend_schema_serializer, inline_serializer
from rest_framework import serializers, status
from rest_framework.response import Response
from rest_framework.reverse import reverse
from rest_framework.views import APIView

from memories import selectors
from memories.api.fields import MomentField
from memories.api.serializers import FactDetailSerializer, FactSerializer, FactVersionSerializer
from memories.api.strict import StrictInputSerializer
from memories.api.views_base import AgentScopedMixin, AgentScopedReadViewSet
from memories.filters import FactFilterSet
from memories.models import Fact
from memories.selectors import facts as fact_selectors
from memories.services import facts as fact_services


class FactViewSet(AgentScopedReadViewSet):
    """Fact versions. The list shows the current versions unless `as_of` (what the agent knew
    then), `valid_at`, `recorded_as_of` or `include_superseded` says otherwise; the detail
    answers for every version, current or not."""

    queryset = Fact.objects.none()
    serializer_class = FactSerializer
    filterset_class = FactFilterSet

    def scoped_queryset(self, agent):
        return selectors.facts_list(agent=agent)

    def filter_queryset(self, queryset):
        if self.action == "retrieve":  # any version by id: the filters choose what a list shows
            return queryset
        return super().filter_queryset(queryset)

    @extend_schema(responses={200: FactDetailSerializer})
    def retrieve(self, request, *args, **kwargs):
        fact = self.get_object()
        current = fact_selectors.fact_current_version(fact)
        fact.current_version = current.id if current else None
        fact.current_url = (reverse("api:fact-detail", kwargs={"agent": self.agent.slug, "pk": current.id},
                                    request=request) if current else None)
        return Response(FactDetailSerializer(fact, context=self.get_serializer_context()).data)


class FactHistoryApi(AgentScopedMixin, APIView):
    """The whole version chain the fact belongs to, oldest first, each version with its valid
    and recorded windows and the event it came from."""

    @extend_schema_serializer(component_name="FactHistory")
    class OutputSerializer(serializers.Serializer):
        fact_id = serializers.IntegerField()
        versions = FactVersionSerializer(many=True)

    @extend_schema(responses={200: OutputSerializer})
    def get(self, request, agent, pk):
        chain = fact_selectors.fact_history(agent=self.agent, fact_id=int(pk))
        return Response(self.OutputSerializer({"fact_id": int(pk), "versions": chain}, context=self.context()).data)


class FactCorrectApi(AgentScopedMixin, APIView):
    """The stored statement was wrong: a new version with the given text supersedes it,
    attributed to the caller and known from now on. In the world it holds from `valid_from`
    (default: where the corrected version started). Correcting a closed version is a 409
    naming the current one."""

    @extend_schema_serializer(component_name="FactCorrectInput")
    class InputSerializer(StrictInputSerializer):
        text = serializers.CharField(max_length=4000, help_text="the corrected statement")
        reason = serializers.CharField(max_length=500, required=False, allow_blank=True, default="")
        valid_from = MomentField(required=False, allow_null=True,
                                 help_text="since when the corrected statement is true (default: since the "
                                           "corrected version's start)")

    @extend_schema(request=InputSerializer, responses={201: FactSerializer})
    def post(self, request, agent, pk):
        data = self.InputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        new = fact_services.fact_correct(agent=self.agent, fact_id=int(pk), text=data.validated_data["text"],
                                    reason=data.validated_data["reason"], actor=self.actor,
                                    valid_from=data.validated_data.get("valid_from"))
        fact = selectors.fact_get(agent=self.agent, fact_id=new.id)
        return Response(FactSerializer(fact, context=self.context()).data, status=status.HTTP_201_CREATED)


class FactRetractApi(AgentScopedMixin, APIView):
    """The agent stops believing the fact from now on; relationships it evidences go with it.
    `reopen_previous` also reinstates the version it superseded (undoes a wrong update).
    Retracting a closed version is a 409 naming the current one."""

    @extend_schema_serializer(component_name="FactRetractInput")
    class InputSerializer(StrictInputSerializer):
        reason = serializers.CharField(max_length=500, required=False, allow_blank=True, default="")
        reopen_previous = serializers.BooleanField(required=False, default=False,
                                                   help_text="reinstate the version this one superseded")

    @extend_schema(request=InputSerializer, responses={200: inline_serializer("FactRetracted", {
        "fact": FactSerializer(), "relationships_closed": serializers.IntegerField(),
        "reinstated": FactSerializer(allow_null=True)})})
    def post(self, request, agent, pk):
        data = self.InputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        report = fact_services.fact_retract(agent=self.agent, fact_id=int(pk), reason=data.validated_data["reason"],
                                       actor=self.actor, reopen_previous=data.validated_data["reopen_previous"])
        fact = selectors.fact_get(agent=self.agent, fact_id=report.fact.id)
        reinstated = selectors.fact_get(agent=self.agent, fact_id=report.reinstated.id) if report.reinstated else None
        return Response({
            "fact": FactSerializer(fact, context=self.context()).data,
            "relationships_closed": report.relationships_closed,
            "reinstated": FactSerializer(reinstated, context=self.context()).data if reinstated else None,
        })


class FactReinstateApi(AgentScopedMixin, APIView):
    """Make a closed version's statement current again: a new version, known from now, true from
    where the reinstated one started, supersedes the chain's latest version (retracting it when
    it was still current); relationships it evidenced come back. 409 for a current version."""

    @extend_schema_serializer(component_name="FactReinstateInput")
    class InputSerializer(StrictInputSerializer):
        reason = serializers.CharField(max_length=500, required=False, allow_blank=True, default="")

    @extend_schema(request=InputSerializer, responses={201: FactSerializer})
    def post(self, request, agent, pk):
        data = self.InputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        new = fact_services.fact_reinstate(agent=self.agent, fact_id=int(pk), reason=data.validated_data["reason"],
                                      actor=self.actor)
        fact = selectors.fact_get(agent=self.agent, fact_id=new.id)
        return Response(FactSerializer(fact, context=self.context()).data, status=status.HTTP_201_CREATED)
