"""The LLM tokens agents spent, summed from what their runs recorded (memories/budgets.py turns
them into budgets): an agent's own runs — writes, retrievals, jobs started for it — finished in
the window, and its passes in the background job runs that covered every agent. Only rows that
spent tokens are read, through the partial indexes `run_llm_tokens` and `step_llm_tokens`."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from django.db.models import BigIntegerField, F, Func, OuterRef, Q, QuerySet, Subquery, Value
from django.db.models.functions import Coalesce, Concat

from memories.models import Agent, PipelineRun, PipelineStep, RunKind
from memories.models.traces import JOB_PASS_STEP_PREFIX, SPENT_TOKENS


@dataclass(frozen=True)
class AgentTokenUse:
    """An agent's own budgets as stored (None: the server's default) and the tokens it spent,
    by window."""

    day_tokens: int | None
    month_tokens: int | None
    used: dict[str, int]


def _total(rows: QuerySet) -> Coalesce:
    spent = Func(F("tokens_in") + F("tokens_out"), function="SUM", output_field=BigIntegerField())
    return Coalesce(Subquery(rows.order_by().annotate(total=spent).values("total")[:1]), Value(0),
                    output_field=BigIntegerField())


def _spent_since(since: datetime) -> Coalesce:
    own = PipelineRun.objects.filter(SPENT_TOKENS, agent=OuterRef("pk"), finished_at__gte=since)
    passes = PipelineStep.objects.filter(
        SPENT_TOKENS, Q(run__tokens_in__gt=0) | Q(run__tokens_out__gt=0), run__kind=RunKind.JOB,
        run__agent__isnull=True, run__finished_at__gte=since,
        name=Concat(Value(JOB_PASS_STEP_PREFIX), OuterRef("slug")))
    return _total(own) + _total(passes)


def agents_with_llm_use(agents: QuerySet[Agent], *, windows: dict[str, datetime]) -> QuerySet[Agent]:
    """`agents`, each with `llm_tokens_<window>`: the tokens it spent since the window began
    (`windows`: name → start, memories.budgets.budget_windows)."""
    return agents.annotate(**{f"llm_tokens_{name}": _spent_since(since) for name, since in windows.items()})


def llm_tokens_used(*, agent_id: int, windows: dict[str, datetime]) -> AgentTokenUse:
    """One agent's own budgets and what it spent in each window, in one statement."""
    row = (agents_with_llm_use(Agent.objects.filter(pk=agent_id), windows=windows)
           .values("llm_budget_day_tokens", "llm_budget_month_tokens", *(f"llm_tokens_{n}" for n in windows)).first())
    if row is None:  # the agent is gone: nothing spent, nothing of its own
        return AgentTokenUse(None, None, dict.fromkeys(windows, 0))
    return AgentTokenUse(row["llm_budget_day_tokens"], row["llm_budget_month_tokens"],
                         {name: row[f"llm_tokens_{name}"] for name in windows})
