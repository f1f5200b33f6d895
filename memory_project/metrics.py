"""/metrics in the Prometheus text format (prometheus-client): the write and retrieve latency
histograms of this process (or of every process sharing PROMETHEUS_MULTIPROC_DIR), and, read from
the database at scrape time so they are right whichever process did the work, job runs and
failures by job, the queue depth (write jobs queued or running, and the broker's queue length
when it is Redis) and each agent's LLM tokens in the current UTC day and month against its
budgets. Public only with ANAMNESIS_METRICS_PUBLIC; otherwise a session of a UI user with a role
(viewers, operators, superusers: the overview page shows the same figures) or an admin-scope API
key of all agents. `is_staff` alone is not enough."""

from __future__ import annotations

import os

from django.conf import settings
from django.db.models import Count
from django.http import HttpResponse
from django.urls import path
from prometheus_client import CONTENT_TYPE_LATEST, REGISTRY, CollectorRegistry, generate_latest
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily

import memories.metrics  # noqa: F401  (registers the histograms)
from memories.budgets import agents_llm_budgets
from memories.models import ApiKeyScope, PipelineRun, RunKind, RunStatus
from memories.services.api_keys import api_key_authenticate
from memories.services.roles import user_can_view


class DatabaseCollector:
    """Job runs and failures (counters over the stored runs), queue depth and LLM use against
    budget per agent (gauges)."""

    def collect(self):
        runs = CounterMetricFamily("anamnesis_job_runs", "Background job runs by job and final status",
                                   labels=["job", "status"])
        rows = (PipelineRun.objects.filter(kind=RunKind.JOB).values_list("name", "status")
                .annotate(n=Count("id")).order_by())
        for name, status, n in rows:
            runs.add_metric([name, status], n)
        yield runs
        failures = CounterMetricFamily("anamnesis_job_failures", "Background job runs that failed", labels=["job"])
        for name, status, n in rows:
            if status == RunStatus.FAILED:
                failures.add_metric([name], n)
        yield failures
        depth = GaugeMetricFamily("anamnesis_queue_depth", "Write jobs waiting or running", labels=["status"])
        counts = dict(PipelineRun.objects.filter(kind=RunKind.WRITE, status__in=[RunStatus.QUEUED, RunStatus.RUNNING])
                      .values_list("status").annotate(n=Count("id")).order_by())
        for status in (RunStatus.QUEUED, RunStatus.RUNNING):
            depth.add_metric([status], counts.get(status, 0))
        yield depth
        yield from _llm_budget_metrics()
        broker = _broker_queue_length()
        if broker is not None:
            yield GaugeMetricFamily("anamnesis_broker_queue_length", "Messages waiting in the Celery queue",
                                    value=broker)


def _llm_budget_metrics():
    """Each agent's LLM tokens in the current UTC day and month, and its budgets (a window
    without one has no budget line)."""
    used = GaugeMetricFamily("anamnesis_llm_tokens_used", "LLM tokens an agent spent in the current UTC day or month",
                             labels=["agent", "window"])
    budget = GaugeMetricFamily("anamnesis_llm_tokens_budget",
                               "An agent's LLM token budget for the UTC day or month (absent: unlimited)",
                               labels=["agent", "window"])
    for agent, agent_budget in agents_llm_budgets():
        for window in agent_budget.windows:
            used.add_metric([agent.slug, window.name], window.used)
            if window.limit is not None:
                budget.add_metric([agent.slug, window.name], window.limit)
    yield used
    yield budget


def _broker_queue_length() -> int | None:
    url = settings.CELERY_BROKER_URL
    if not url.startswith(("redis://", "rediss://")):
        return None
    try:
        import redis

        return int(redis.Redis.from_url(url, socket_timeout=1).llen(settings.CELERY_TASK_DEFAULT_QUEUE))
    except Exception:  # a scrape must not fail because the broker is away
        return None


def _registry() -> CollectorRegistry:
    if os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
        from prometheus_client import multiprocess

        registry = CollectorRegistry()
        multiprocess.MultiProcessCollector(registry)
    else:
        registry = CollectorRegistry()
        for collector in list(REGISTRY._collector_to_names):  # the process's own instruments
            registry.register(collector)
    registry.register(DatabaseCollector())
    return registry


def _allowed(request) -> bool:
    if settings.ANAMNESIS_METRICS_PUBLIC:
        return True
    if user_can_view(getattr(request, "user", None)):
        return True
    scheme, _, token = request.headers.get("Authorization", "").partition(" ")
    key = api_key_authenticate(plaintext=token.strip()) if scheme.lower() == "bearer" else None
    return key is not None and key.scope == ApiKeyScope.ADMIN and key.agent_id is None


def metrics_view(request):
    if not _allowed(request):
        return HttpResponse("metrics need a session with the viewers role or an admin API key of all agents\n",
                            status=403, content_type="text/plain")
    return HttpResponse(generate_latest(_registry()), content_type=CONTENT_TYPE_LATEST)


urlpatterns = [path("", metrics_view, name="metrics")]  # included at /metrics by memory_project.urls
