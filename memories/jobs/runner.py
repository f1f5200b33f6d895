"""Running one job: a PipelineRun of kind `job` with one timed step per agent (or one step for a
global job), each agent under an advisory lock, the whole run bounded in time."""

from __future__ import annotations

import logging
import time
from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime
from functools import cached_property

from django.conf import settings
from django.utils import timezone

from memories.budgets import llm_within_budget
from memories.jobs import Job, job_get
from memories.jobs.locks import advisory_lock
from memories.models import Agent, JobCheckpoint, PipelineRun
from memories.models.traces import job_pass_step_name
from memories.pipeline.trace import StepRecord, Tracer
from memories.providers.embeddings import EmbedderClient, get_embedder
from memories.providers.llm import LLMClient, get_llm_client
from memories.services.jobs import job_checkpoint_get, job_checkpoint_save, job_run_finish, job_run_start
from memories.services.leases import lease_kept

logger = logging.getLogger(__name__)


class JobFailed(Exception):
    """At least one agent's pass failed; the run is stored as failed (and the task retries it)."""

    def __init__(self, message: str, run_id: int):
        super().__init__(message, run_id)  # both in args: picklable for Celery's result
        self.message, self.run_id = message, run_id

    def __str__(self) -> str:
        return self.message


@dataclass
class JobContext:
    """What a job handler gets: the run, the moment the run began (`now`), the deadline, the
    current agent's checkpoint (`since`: None on the agent's first pass) and the providers."""

    job: Job
    run: PipelineRun
    now: datetime
    deadline: float
    tracer: Tracer
    since: datetime | None = None
    pass_started: datetime | None = None
    llm_client: LLMClient | None = None
    embedder_client: EmbedderClient | None = None
    extra: dict = field(default_factory=dict)
    agent_llm: LLMClient | None = None  # the current agent's pass: the LLM within its budget

    def time_left(self) -> float:
        return self.deadline - time.monotonic()

    def out_of_time(self) -> bool:
        return self.time_left() <= 0

    @cached_property
    def provider_llm(self) -> LLMClient:
        return self.llm_client or get_llm_client()

    @property
    def llm(self) -> LLMClient:
        """The LLM for the work at hand: in an agent's pass, off once that agent's budget is spent."""
        return self.agent_llm or self.provider_llm

    @cached_property
    def embedder(self) -> EmbedderClient:
        return self.embedder_client or get_embedder()


def agents_by_staleness(job_name: str) -> list[Agent]:
    """Every agent, those the job has never processed first, then the least recently processed."""
    done = dict(JobCheckpoint.objects.filter(job=job_name).values_list("agent_id", "finished_at"))
    agents = list(Agent.objects.all())
    epoch = datetime.min.replace(tzinfo=timezone.get_current_timezone())
    return sorted(agents, key=lambda a: (done.get(a.id, epoch), a.id))


def job_run(*, name: str, agent: Agent | None = None, run_id: int | None = None, max_seconds: float | None = None,
            llm: LLMClient | None = None, embedder: EmbedderClient | None = None, raise_errors: bool = True,
            ) -> PipelineRun:
    """Run job `name` now (for one agent, or for the agents it picks), recording a PipelineRun.
    Agents another run holds are skipped; agents left when time runs out wait for the next run.
    A failure in an agent's pass fails the run (after the other agents ran) and raises JobFailed."""
    job = job_get(name)
    budget = float(max_seconds if max_seconds is not None else settings.ANAMNESIS_JOB_MAX_SECONDS)
    params = {"agent": agent.slug if agent else None, "max_seconds": budget}
    run = job_run_start(name=name, agent=agent, params=params, run_id=run_id)
    started = time.monotonic()
    ctx = JobContext(job=job, run=run, now=timezone.now(), deadline=started + budget, tracer=Tracer(),
                     llm_client=llm, embedder_client=embedder)
    outcome = _Outcome()
    with lease_kept(run.id):  # a run whose process dies is failed by the sweeper when the lease expires
        if job.per_agent:
            for target in [agent] if agent else (job.agents(ctx) if job.agents else agents_by_staleness(name)):
                if ctx.out_of_time():
                    outcome.left.append(target.slug)
                    continue
                _agent_pass(ctx, target, outcome)
        else:
            _global_pass(ctx, outcome)
    error = "; ".join(outcome.errors)
    job_run_finish(run=run, steps=ctx.tracer.steps, result=outcome.as_dict(), error=error,
                   duration_ms=(time.monotonic() - started) * 1000,
                   tokens=(ctx.tracer.usage.input_tokens, ctx.tracer.usage.output_tokens))
    if error and raise_errors:
        raise JobFailed(f"job {name} run {run.id}: {error}", run.id)
    return run


@dataclass
class _Outcome:
    done: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    left: list[str] = field(default_factory=list)
    incomplete: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    counts: Counter = field(default_factory=Counter)

    def add(self, counts: dict) -> None:
        for key, value in counts.items():
            if isinstance(value, int | float) and not isinstance(value, bool):
                self.counts[key] += value

    def as_dict(self) -> dict:
        return {"agents_done": self.done, "agents_skipped": self.skipped, "agents_left": self.left,
                "agents_incomplete": self.incomplete, "counts": dict(self.counts), "errors": self.errors}


def _agent_pass(ctx: JobContext, agent: Agent, outcome: _Outcome) -> None:
    with advisory_lock(ctx.job.name, agent.id) as taken:
        if not taken:
            step = StepRecord(name=job_pass_step_name(agent.slug), order=len(ctx.tracer.steps) + 1, status="skipped",
                              data={"reason": "another run of this job holds the agent"})
            ctx.tracer.steps.append(step)
            outcome.skipped.append(agent.slug)
            return
        checkpoint = job_checkpoint_get(job=ctx.job.name, agent=agent)
        ctx.since = checkpoint.watermark if checkpoint else None
        watermark = ctx.pass_started = timezone.now()
        ctx.agent_llm = llm_within_budget(agent=agent, llm=ctx.provider_llm, metered=True)
        try:
            counts = ctx.tracer.run(job_pass_step_name(agent.slug), lambda c, step: _handle(c, agent, step), ctx)
        except Exception as exc:
            logger.exception("job %s failed for agent %s", ctx.job.name, agent.slug)
            outcome.errors.append(f"{agent.slug}: {type(exc).__name__}: {exc}"[:500])
            return
        finally:
            ctx.agent_llm = None
        outcome.add(counts)
        if counts.get("complete", True):
            job_checkpoint_save(job=ctx.job.name, agent=agent, watermark=watermark,
                                data={k: v for k, v in counts.items() if k != "complete"})
            outcome.done.append(agent.slug)
        else:
            outcome.incomplete.append(agent.slug)


def _handle(ctx: JobContext, agent: Agent, step: StepRecord) -> dict:
    counts = ctx.job.handler(ctx, agent, step) or {}
    step.data.update({k: v for k, v in counts.items() if k != "complete"})
    if getattr(ctx.llm, "refused", False):  # the handler wanted the LLM past the agent's budget
        step.data["llm"], step.data["budget"] = "budget", ctx.llm.note()
    if counts.get("complete", True) is False:
        step.status = "incomplete"
    return counts


def _global_pass(ctx: JobContext, outcome: _Outcome) -> None:
    with advisory_lock(ctx.job.name, 0) as taken:
        if not taken:
            ctx.tracer.steps.append(StepRecord(name=ctx.job.name, order=1, status="skipped",
                                               data={"reason": "another run of this job is running"}))
            outcome.skipped.append("*")
            return
        try:
            counts = ctx.tracer.run(ctx.job.name, lambda c, step: _global(c, step), ctx)
        except Exception as exc:
            logger.exception("job %s failed", ctx.job.name)
            outcome.errors.append(f"{type(exc).__name__}: {exc}"[:500])
            return
        outcome.add(counts)
        outcome.done.append("*")


def _global(ctx: JobContext, step: StepRecord) -> dict:
    counts = ctx.job.run_global(ctx, step) or {}
    step.data.update(counts)
    return counts
