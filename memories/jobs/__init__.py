"""Background jobs: a registry of named jobs, each run by `memories.jobs.runner.job_run` as a
traced PipelineRun (kind `job`), one agent at a time under an advisory lock.

The memories app registers its own jobs here (`memories.jobs.builtin`); graphs and retrieval
register theirs from their AppConfig.ready(), so the registry, `manage.py jobs` and the one
Celery task (`anamnesis.jobs.run`) know every job without memories importing a higher layer.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from django.conf import settings

if TYPE_CHECKING:
    from memories.jobs.runner import JobContext
    from memories.models import Agent
    from memories.pipeline.trace import StepRecord

JOB_TASK = "anamnesis.jobs.run"

AgentHandler = Callable[["JobContext", "Agent", "StepRecord"], dict]
GlobalHandler = Callable[["JobContext", "StepRecord"], dict]


@dataclass(frozen=True)
class Job:
    """One background job. A per-agent job has `handler(ctx, agent, step) -> counts`, run for
    each agent `agents(ctx)` picks (default: every agent, the least recently processed first);
    a global one has `run_global(ctx, step) -> counts`. A handler that runs out of time returns
    `{"complete": False, ...}` and the agent's checkpoint does not move."""

    name: str
    description: str
    handler: AgentHandler | None = None
    run_global: GlobalHandler | None = None
    agents: Callable[[JobContext], list[Agent]] | None = None
    every_seconds: float = 3600.0

    @property
    def per_agent(self) -> bool:
        return self.handler is not None

    @property
    def enabled(self) -> bool:
        return job_setting(self.name).get("enabled", True) and settings.ANAMNESIS_JOBS_ENABLED

    @property
    def schedule_seconds(self) -> float:
        return float(job_setting(self.name).get("every", self.every_seconds))


_REGISTRY: dict[str, Job] = {}


def job_register(job: Job) -> Job:
    _REGISTRY[job.name] = job
    return job


def jobs_all() -> list[Job]:
    _load_builtin()
    return sorted(_REGISTRY.values(), key=lambda j: j.name)


def job_get(name: str) -> Job:
    _load_builtin()
    if name not in _REGISTRY:
        from memories.errors import NotFound

        raise NotFound(f"no job named {name!r}", {"jobs": sorted(_REGISTRY)})
    return _REGISTRY[name]


def job_setting(name: str) -> dict:
    return getattr(settings, "ANAMNESIS_JOBS", {}).get(name, {})


def _load_builtin() -> None:
    from memories.jobs import builtin  # noqa: F401  (registers the memories app's jobs)
