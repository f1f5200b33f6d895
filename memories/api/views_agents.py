"""Agents (the tenants)."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema, extend_schema_serializer
from rest_framework import exceptions, mixins, serializers, status, viewsets
from rest_framework.decorators import action
from rest_framework.response import Response

from memories import selectors
from memories.api.auth import principal_of
from memories.api.serializers import AgentBudgetSerializer, AgentSerializer
from memories.api.strict import StrictInputSerializer
from memories.api.views_base import SLUG_REGEX, AgentScopedMixin
from memories.budgets import agent_llm_budget
from memories.models import Agent, ApiKeyScope
from memories.services.agents import agent_create
from memories.services.budgets import MAX_TOKENS, agent_llm_budget_set


class AgentViewSet(AgentScopedMixin, mixins.ListModelMixin, mixins.RetrieveModelMixin, mixins.CreateModelMixin,
                   viewsets.GenericViewSet):
    """The agents the caller may use. Creating one needs an admin key for all agents or a
    superuser's session."""

    queryset = Agent.objects.none()
    serializer_class = AgentSerializer
    lookup_field = "slug"
    lookup_url_kwarg = "agent"
    lookup_value_regex = SLUG_REGEX
    scopes = {"create": ApiKeyScope.ADMIN, "PATCH": ApiKeyScope.ADMIN}
    filterset_class = None

    @extend_schema_serializer(component_name="AgentCreateInput")
    class InputSerializer(StrictInputSerializer):
        slug = serializers.SlugField(max_length=100, help_text="lower-case letters, digits, '-' or '_'")
        name = serializers.CharField(max_length=200, required=False, allow_blank=True, default="")

    @extend_schema_serializer(component_name="AgentBudgetInput")
    class BudgetInputSerializer(StrictInputSerializer):
        day_tokens = serializers.IntegerField(
            min_value=0, max_value=MAX_TOKENS, allow_null=True, required=False,
            help_text="tokens per UTC day; 0 keeps the agent off the LLM; null gives back the server's default")
        month_tokens = serializers.IntegerField(
            min_value=0, max_value=MAX_TOKENS, allow_null=True, required=False,
            help_text="tokens per UTC month; 0 keeps the agent off the LLM; null gives back the server's default")
        reason = serializers.CharField(max_length=500, required=False, allow_blank=True, default="",
                                       help_text="kept in the audit log")

    def get_queryset(self):
        if getattr(self, "swagger_fake_view", False):
            return self.queryset
        return selectors.agents_visible(agent_id=principal_of(self.request).agent_id)

    def get_object(self):
        return self.resolve_agent()  # the same 404 as every endpoint under the agent

    @extend_schema(request=InputSerializer, responses={201: AgentSerializer})
    def create(self, request, *args, **kwargs):
        principal = principal_of(request)
        if not principal.creates_agents:
            raise exceptions.PermissionDenied("only an admin key for all agents or a superuser can create agents")
        data = self.InputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        slug = data.validated_data["slug"]
        if slug != slug.lower():
            raise exceptions.ValidationError({"slug": ["must be lower-case"]})
        if selectors.agent_by_slug(slug=slug) is not None:
            raise exceptions.ValidationError({"slug": ["an agent with this slug already exists"]})
        agent = agent_create(slug=slug, name=data.validated_data["name"], actor=principal.actor)
        return Response(AgentSerializer(agent).data, status=status.HTTP_201_CREATED)

    @extend_schema(methods=["GET"], request=None, responses={200: AgentBudgetSerializer})
    @extend_schema(methods=["PATCH"], request=BudgetInputSerializer, responses={200: AgentBudgetSerializer})
    @action(detail=True, methods=["get", "patch"])
    def budget(self, request, agent=None):
        """The agent's LLM token budgets per UTC day and month, and what it spent. PATCH sets its
        own (a window not named keeps its budget; null gives back the server's default), audited,
        by whoever may create agents (an admin key for all agents or a superuser): a key bound to
        the agent cannot raise its own budget."""
        agent = self.resolve_agent()
        if request.method == "PATCH":
            principal = principal_of(request)
            if not principal.creates_agents:
                raise exceptions.PermissionDenied("only an admin key for all agents or a superuser can set an "
                                                  "agent's LLM budget")
            data = self.BudgetInputSerializer(data=request.data)
            data.is_valid(raise_exception=True)
            windows = {k: v for k, v in data.validated_data.items() if k in ("day_tokens", "month_tokens")}
            agent_llm_budget_set(agent=agent, actor=principal.actor, reason=data.validated_data["reason"], **windows)
        return Response(AgentBudgetSerializer.of(agent, agent_llm_budget(agent=agent)))
