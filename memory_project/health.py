"""The readiness check at /api/v1/health/: the database answers, the broker accepts a connection,
the embedding model embeds. It looks at the whole deployment rather than one domain, so it lives in
the project package, beside the URL wiring that serves it."""

from __future__ import annotations

import time

from django.conf import settings
from django.core.cache import cache
from django.db import connection
from drf_spectacular.utils import extend_schema, inline_serializer
from rest_framework import serializers, status
from rest_framework.permissions import AllowAny
from rest_framework.response import Response
from rest_framework.views import APIView

from memories.api.auth import AddressRateThrottle


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
