"""Agents (the tenants)."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema, extend_schema_serializer
from rest_framework import exceptions, mixins, serializers, status, viewsets
from rest_framework.response import Response

from memories import selectors
from memories.api.auth import principal_of
from memories.api.serializers import AgentSerializer
from memories.api.strict import StrictInputSerializer
from memories.api.views_base import SLUG_REGEX, AgentScopedMixin
from memories.models import Agent, ApiKeyScope
from memories.services.agents import agent_create


class AgentViewSet(AgentScopedMixin, mixins.ListModelMixin, mixins.RetrieveModelMixin, mixins.CreateModelMixin,
                   viewsets.GenericViewSet):
    """The agents the caller may use. Creating one needs an admin key for all agents or a
    superuser's session."""

    queryset = Agent.objects.none()
    serializer_class = AgentSerializer
    lookup_field = "slug"
    lookup_url_kwarg = "agent"
    lookup_value_regex = SLUG_REGEX
    scopes = {"create": ApiKeyScope.ADMIN}
    filterset_class = None

    @extend_schema_serializer(component_name="AgentCreateInput")
    class InputSerializer(StrictInputSerializer):
        slug = serializers.SlugField(max_length=100, help_text="lower-case letters, digits, '-' or '_'")
        name = serializers.CharField(max_length=200, required=False, allow_blank=True, default="")

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
