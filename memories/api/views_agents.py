"""Agents (the tenants) and the unauthenticated health check."""

from __future__ import annotations

import time

from django.conf import settings
from django.core.cache import cache
from django.db import connection
from drf_spectacular.utils import extend_schema, extend_schema_serializer, inline_serializer
from rest_framework import exceptions, mixins, serializers, status, viewsets
from rest_framework.permissions import AllowAny
from rest_framework.response import Response
from rest_framework.views import APIView

from memories import selectors
from memories.api.auth import AddressRateThrottle, principal_of
from memories.api.serializers import AgentSerializer
from memories.api.strict import StrictInputSerializer
from memories.api.views_base import SLUG_REGEX, AgentScopedMixin
from memories.models import Agent, ApiKeyScope
from memories.services.agents import agent_create


class AgentViewSet(AgentScopedMixin, mixins.ListModelMixin, mixins.RetrieveModelMixin, mixins.CreateModelMixin,
                   viewsets.GenericViewSet):
    """The agents the caller may use. Creating one needs an admin key for all agents."""

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
        if principal.agent_id is not None:
            raise exceptions.PermissionDenied("only an admin key for all agents can create agents")
        data = self.InputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        slug = data.validated_data["slug"]
        if slug != slug.lower():
            raise exceptions.ValidationError({"slug": ["must be lower-case"]})
        if selectors.agent_by_slug(slug=slug) is not None:
            raise exceptions.ValidationError({"slug": ["an agent with this slug already exists"]})
        agent = agent_create(slug=slug, name=data.validated_data["name"], actor=principal.actor)
        return Response(AgentSerializer(agent).data, status=status.HTTP_201_CREATED)


def _timed(check) -> dict:
    started = time.perf_counter()
    try:
        check()
        error = None
    except Exception as exc:  # a health check reports failures, it never raises them
        error = f"{type(exc).__name__}: {exc}"[:500]
    return {"ok": error is None, "duration_ms": round((time.perf_counter() - started) * 1000, 3), "error": error}


def check_database() -> None:
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1")
        cursor.fetchone()


def check_broker() -> None:
    from celery import current_app

    with current_app.connection_for_write(settings.CELERY_BROKER_URL, connect_timeout=2) as conn:
        conn.ensure_connection(max_retries=1, interval_start=0, interval_step=0.2, interval_max=0.5, timeout=2)


def check_embedding() -> None:
    from memories.providers.embeddings import get_embedder

    embedder = get_embedder()
    vectors = embedder.embed(["ok"])
    if len(vectors) != 1 or len(vectors[0]) != embedder.dimensions:
        raise RuntimeError("the embedding model returned an unexpected vector")


_check = inline_serializer("HealthCheck", {
    "ok": serializers.BooleanField(),
    "duration_ms": serializers.FloatField(),
    "error": serializers.CharField(allow_null=True),
})
_health = inline_serializer("Health", {
    "status": serializers.ChoiceField(choices=["ok", "unavailable"]),
    "checks": inline_serializer("HealthChecks", {"database": _check, "broker": _check, "embedding": _check}),
})


HEALTH_CACHE_SECONDS = 5
HEALTH_CACHE_KEY = "anamnesis:health"


def health_checks() -> dict:
    """The checks' latest results, run again at most every HEALTH_CACHE_SECONDS (in the default
    cache): a flood of health requests never reaches the database, broker or model."""
    checks = cache.get(HEALTH_CACHE_KEY)
    if checks is None:
        checks = {"database": _timed(check_database), "broker": _timed(check_broker),
                  "embedding": _timed(check_embedding)}
        cache.set(HEALTH_CACHE_KEY, checks, HEALTH_CACHE_SECONDS)
    return checks


class HealthApi(APIView):
    """Readiness: the database answers, the broker accepts a connection, the embedding model
    embeds. 200 when all do, else 503 with the failing check's error. No authentication; the
    checks run at most every few seconds (cached) and callers are throttled per address."""

    authentication_classes: list = []
    permission_classes = [AllowAny]
    throttle_classes = [AddressRateThrottle]

    @extend_schema(auth=[], responses={200: _health, 503: _health})
    def get(self, request):
        checks = health_checks()
        ok = all(c["ok"] for c in checks.values())
        return Response({"status": "ok" if ok else "unavailable", "checks": checks},
                        status=status.HTTP_200_OK if ok else status.HTTP_503_SERVICE_UNAVAILABLE)
