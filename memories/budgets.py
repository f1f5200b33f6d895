"""LLM token budgets per agent: how many tokens one agent's writes, retrievals and background jobs
may spend in the current UTC day and UTC month, and the LLM client that keeps to them.

A window's limit is the agent's own (`Agent.llm_budget_day_tokens` / `_month_tokens`, set by
`memories.services.budgets.agent_llm_budget_set`), else the server's default
(`ANAMNESIS_LLM_BUDGET_DAY_TOKENS` / `_MONTH_TOKENS`), else none. What was spent is what the runs
recorded (memories/selectors/budgets.py): a run counts once it finished, so a budget is a soft
limit — the work that starts under it finishes with the LLM.

Past a budget the work goes on without the LLM: a write takes the offline extractor (its trace
says `fallback: budget`), a retrieval skips the reranker, a background job its LLM calls. The
decision is `BudgetedLLM`'s: a client that is off (`enabled` False) when the budget is spent.
A write or a retrieval decides once, when it first asks; a job's pass over an agent (`metered`)
also counts its own calls, since one pass may make hundreds."""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime

from django.conf import settings
from django.utils import timezone

from memories.models import Agent
from memories.providers.llm import LLMBudgetReached, LLMClient, LLMError, LLMReply, TokenUsage
from memories.selectors.budgets import agents_with_llm_use, llm_tokens_used

WINDOWS = ("day", "month")


def budget_windows(now: datetime) -> dict[str, datetime]:
    """When the current UTC day and UTC month began."""
    day = now.astimezone(UTC).replace(hour=0, minute=0, second=0, microsecond=0)
    return {"day": day, "month": day.replace(day=1)}


def budget_limits(*, day_tokens: int | None, month_tokens: int | None) -> dict[str, tuple[int | None, str]]:
    """Each window's limit and where it comes from, given an agent's own budgets: `agent` (its
    own), `default` (the server's), or `unlimited`."""
    own = {"day": day_tokens, "month": month_tokens}
    defaults = {"day": settings.ANAMNESIS_LLM_BUDGET_DAY_TOKENS, "month": settings.ANAMNESIS_LLM_BUDGET_MONTH_TOKENS}
    limits = {}
    for name in WINDOWS:
        if own[name] is not None:
            limits[name] = (own[name], "agent")
        elif defaults[name] is not None:
            limits[name] = (defaults[name], "default")
        else:
            limits[name] = (None, "unlimited")
    return limits


def agent_budget_limited(agent) -> bool:
    """Whether any window limits the agent (else nothing needs counting)."""
    limits = budget_limits(day_tokens=agent.llm_budget_day_tokens, month_tokens=agent.llm_budget_month_tokens)
    return any(limit is not None for limit, _ in limits.values())


@dataclass(frozen=True)
class BudgetWindow:
    """One window of an agent's budget: the tokens spent `since` the window began, its limit
    (None: unlimited) and where the limit comes from (`agent`, `default`, `unlimited`)."""

    name: str
    since: datetime
    used: int
    limit: int | None
    source: str

    @property
    def exceeded(self) -> bool:
        return self.limit is not None and self.used >= self.limit

    @property
    def remaining(self) -> int | None:
        return None if self.limit is None else max(0, self.limit - self.used)

    @property
    def percent(self) -> float | None:
        """How much of the budget is spent, 0-100 (None: unlimited)."""
        if self.limit is None:
            return None
        return 100.0 if self.used >= self.limit else round(100.0 * self.used / self.limit, 1)

    def as_dict(self) -> dict:
        return {"budget": self.limit, "source": self.source, "used": self.used, "since": self.since.isoformat(),
                "exceeded": self.exceeded}


@dataclass(frozen=True)
class LLMBudget:
    """An agent's budget now: its day and month windows."""

    day: BudgetWindow
    month: BudgetWindow

    @classmethod
    def of(cls, *, day_tokens: int | None, month_tokens: int | None, used: dict[str, int],
           now: datetime) -> LLMBudget:
        """The budget of an agent with these own budgets (None: the default) that spent `used`
        tokens (by window) by `now`."""
        since, limits = budget_windows(now), budget_limits(day_tokens=day_tokens, month_tokens=month_tokens)
        windows = {name: BudgetWindow(name, since[name], int(used.get(name) or 0), *limits[name]) for name in WINDOWS}
        return cls(**windows)

    @property
    def windows(self) -> tuple[BudgetWindow, BudgetWindow]:
        return self.day, self.month

    @property
    def exceeded(self) -> bool:
        return any(w.exceeded for w in self.windows)

    @property
    def remaining(self) -> int | None:
        """Tokens left before the first window is spent (None: unlimited)."""
        left = [w.remaining for w in self.windows if w.remaining is not None]
        return min(left) if left else None

    def note(self, *, spent_since: int = 0) -> str:
        """Which budget is spent, for a trace: "the day budget of 500 tokens is spent (612 used
        since 2024-05-02 00:00 UTC)"; `spent_since`: tokens this work spent since it was read."""
        for w in self.windows:
            used = w.used + spent_since
            if w.limit is not None and used >= w.limit:
                return (f"the {w.name} budget of {w.limit:,} tokens is spent ({used:,} used since "
                        f"{w.since:%Y-%m-%d %H:%M} UTC)")
        return ""


class BudgetedLLM:
    """An LLM client for one agent's work that keeps to the agent's budget: off (`enabled`
    False; a call raises LLMBudgetReached and reaches no server) when the budget is spent. The
    budget is read once, when first needed (`budget`: a callable reading it), so a write makes
    every LLM decision of its steps on one reading. `metered` also counts what this client's
    own calls spend, and goes off when that uses up what was left (a job's pass over an agent
    makes many calls before its run records them)."""

    def __init__(self, inner: LLMClient, *, budget: Callable[[], LLMBudget], metered: bool = False):
        self.inner, self.metered = inner, metered
        self._read, self._budget = budget, None
        self._spent = 0
        self._lock = threading.Lock()
        self.refused = False  # the LLM was wanted (asked for or called) while the budget was spent

    def budget(self) -> LLMBudget:
        with self._lock:
            if self._budget is None:
                self._budget = self._read()
            return self._budget

    @property
    def over_budget(self) -> bool:
        if not self.inner.enabled:
            return False
        budget = self.budget()
        if budget.exceeded:
            return True
        remaining = budget.remaining
        return self.metered and remaining is not None and self._spent >= remaining

    @property
    def enabled(self) -> bool:
        if not self.inner.enabled:
            return False
        if self.over_budget:
            self.refused = True
            return False
        return True

    def note(self) -> str:
        """Why the client is off, for a trace ("" while it is on)."""
        return self.budget().note(spent_since=self._spent) if self.over_budget else ""

    def complete_json(self, *, system: str, user: str, schema: dict, schema_name: str,
                      timeout: float | None = None) -> LLMReply:
        if self.over_budget:
            self.refused = True
            raise LLMBudgetReached(f"LLM budget reached: {self.note()}")
        try:
            reply = self.inner.complete_json(system=system, user=user, schema=schema, schema_name=schema_name,
                                             timeout=timeout)
        except LLMError as exc:
            self._spend(exc.usage)
            raise
        self._spend(reply.usage)
        return reply

    def _spend(self, usage: TokenUsage) -> None:
        with self._lock:
            self._spent += usage.total_tokens

    def __getattr__(self, name: str):  # what else the wrapped client offers (its mode, model, …)
        return getattr(self.inner, name)


def llm_off_reason(llm: LLMClient) -> str:
    """Why the work goes without `llm` (asked after `enabled` said False): `budget` when the
    agent's budget is spent, `no_llm` when none is configured."""
    return "budget" if getattr(llm, "over_budget", False) else "no_llm"


def annotated_llm_budget(agent, *, now: datetime) -> LLMBudget:
    """The budget of an agent read with `agents_with_llm_use` (memories/selectors/budgets.py)."""
    return LLMBudget.of(day_tokens=agent.llm_budget_day_tokens, month_tokens=agent.llm_budget_month_tokens,
                        used={name: getattr(agent, f"llm_tokens_{name}") for name in WINDOWS}, now=now)


def agents_llm_budgets(*, now: datetime | None = None) -> list[tuple[Agent, LLMBudget]]:
    """Every agent with its budget now, by slug (one statement)."""
    now = now or timezone.now()
    agents = agents_with_llm_use(Agent.objects.order_by("slug"), windows=budget_windows(now))
    return [(agent, annotated_llm_budget(agent, now=now)) for agent in agents]


def agent_llm_budget(*, agent, now: datetime | None = None) -> LLMBudget:
    """The agent's budget now: its own budgets as stored and what it spent (one statement)."""
    now = now or timezone.now()
    use = llm_tokens_used(agent_id=agent.id, windows=budget_windows(now))
    return LLMBudget.of(day_tokens=use.day_tokens, month_tokens=use.month_tokens, used=use.used, now=now)


def llm_within_budget(*, agent, llm: LLMClient, metered: bool = False) -> LLMClient:
    """The LLM client for work of `agent`: `llm` itself when nothing limits the agent (no query
    is made), else a BudgetedLLM reading the agent's budget when first asked."""
    if not llm.enabled or isinstance(llm, BudgetedLLM) or not agent_budget_limited(agent):
        return llm
    return BudgetedLLM(llm, budget=lambda: agent_llm_budget(agent=agent), metered=metered)
