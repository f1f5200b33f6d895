"""An agent's own LLM token budgets (memories/budgets.py), set by an operator and audited."""

from __future__ import annotations

from django.db import transaction

from memories.errors import DomainError
from memories.models import Agent
from memories.services.changes import audited_change

KEEP = object()  # a window not named keeps its budget
MAX_TOKENS = 2**63 - 1  # the column's range


def _tokens(name: str, value) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        raise DomainError(f"{name} must be a whole number of tokens, or null for the server's default",
                          {name: "a whole number of tokens, or null"})
    if not 0 <= value <= MAX_TOKENS:
        raise DomainError(f"{name} must be between 0 and {MAX_TOKENS}", {name: f"between 0 and {MAX_TOKENS}"})
    return value


@transaction.atomic
def agent_llm_budget_set(*, agent: Agent, actor: str, day_tokens=KEEP, month_tokens=KEEP, reason: str = "") -> Agent:
    """Set the agent's own budget for the UTC day and/or month, in tokens: a number replaces the
    server's default (0 keeps the agent off the LLM), None gives the default back; a window not
    named keeps its budget. Audited (before and after) when something changed. Returns the agent
    as stored; the `agent` passed in is updated too."""
    wanted = {name: _tokens(f"{name}_tokens", value)
              for name, value in (("day", day_tokens), ("month", month_tokens)) if value is not KEEP}
    locked = Agent.objects.select_for_update().get(pk=agent.pk)
    before = {"day_tokens": locked.llm_budget_day_tokens, "month_tokens": locked.llm_budget_month_tokens}
    for name, value in wanted.items():
        setattr(locked, f"llm_budget_{name}_tokens", value)
    after = {"day_tokens": locked.llm_budget_day_tokens, "month_tokens": locked.llm_budget_month_tokens}
    if after != before:
        locked.save(update_fields=["llm_budget_day_tokens", "llm_budget_month_tokens"])
        audited_change(agent=locked, actor=actor, action="agent_llm_budget", obj=locked, before=before, after=after,
                       reason=reason, graph_changed=False)
    for name in ("day", "month"):
        field = f"llm_budget_{name}_tokens"
        setattr(agent, field, getattr(locked, field))
    return locked
