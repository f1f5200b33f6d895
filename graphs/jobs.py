"""The graph's background job: `graph_warmup` rebuilds the cached entity graphs of recently
active agents (a write or a retrieval within ANAMNESIS_GRAPH_WARMUP_ACTIVE_SECONDS), so the
first retrieval after a burst of writes does not pay for the rebuild. The cache is per process:
the job warms the process it runs in (a worker, or a web process through `manage.py jobs run`)."""

from __future__ import annotations

from datetime import timedelta

from django.conf import settings

from graphs.entity_graph import agent_graph
from memories.jobs import Job, job_register
from memories.jobs.runner import JobContext
from memories.models import Agent, PipelineRun, RunKind
from memories.pipeline.trace import StepRecord


def active_agents(ctx: JobContext) -> list[Agent]:
    since = ctx.now - timedelta(seconds=settings.ANAMNESIS_GRAPH_WARMUP_ACTIVE_SECONDS)
    ids = set(PipelineRun.objects.filter(created_at__gte=since, kind__in=[RunKind.WRITE, RunKind.RETRIEVE])
              .order_by().values_list("agent_id", flat=True).distinct())
    return list(Agent.objects.filter(id__in=ids).order_by("id"))


def graph_warmup(ctx: JobContext, agent: Agent, step: StepRecord) -> dict:
    """Build (or find current) the agent's cached entity graph."""
    agent.refresh_from_db(fields=["graph_version"])
    graph = agent_graph(agent)
    step.candidates_out = graph.number_of_nodes()
    return {"nodes": graph.number_of_nodes(), "edges": graph.number_of_edges(), "graph_version": agent.graph_version}


def register() -> None:
    job_register(Job("graph_warmup", "Entity-graph caches of recently active agents rebuilt before they are needed",
                     handler=graph_warmup, agents=active_agents, every_seconds=300))
