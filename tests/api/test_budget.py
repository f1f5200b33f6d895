"""agents/{agent}/budget/: an agent's LLM token budgets and its use against them; set by whoever
may create agents, audited, validated field by field."""

from __future__ import annotations

import pytest

from memories.models import Agent, AuditEntry, PipelineRun, RunKind, RunStatus
from memories.services.budgets import agent_llm_budget_set
from tests.api.conftest import url

pytestmark = pytest.mark.django_db


@pytest.fixture
def operator_api(make_key, client_for):
    """An admin key of every agent: may create agents, and so set their budgets."""
    return client_for(make_key(None, "admin"))


def spent(agent, tokens):
    from django.utils import timezone

    PipelineRun.objects.create(agent=agent, kind=RunKind.WRITE, status=RunStatus.SUCCEEDED,
                               finished_at=timezone.now(), tokens_in=tokens, tokens_out=0)


def test_an_agents_budget_and_use_are_readable_by_its_own_keys(agent, api, settings):
    settings.ANAMNESIS_LLM_BUDGET_MONTH_TOKENS = 100_000
    spent(agent, 1234)
    body = api.get(url(agent, "budget")).json()
    assert (body["agent"], body["day_tokens"], body["month_tokens"], body["exceeded"]) == (agent.slug, None, None,
                                                                                          False)
    assert {k: body["day"][k] for k in ("budget", "source", "used", "exceeded")} == {
        "budget": None, "source": "unlimited", "used": 1234, "exceeded": False}
    assert {k: body["month"][k] for k in ("budget", "source", "used")} == {
        "budget": 100_000, "source": "default", "used": 1234}
    assert body["day"]["since"].endswith("T00:00:00Z")


def test_setting_a_budget_is_audited_and_takes_effect(agent, operator_api):
    spent(agent, 600)
    response = operator_api.patch(url(agent, "budget"), {"day_tokens": 500, "reason": "trial plan"}, format="json")

    assert response.status_code == 200, response.content
    body = response.json()
    assert (body["day_tokens"], body["day"]["budget"], body["day"]["source"]) == (500, 500, "agent")
    assert body["day"]["exceeded"] and body["exceeded"] and body["month_tokens"] is None
    agent.refresh_from_db()
    assert (agent.llm_budget_day_tokens, agent.llm_budget_month_tokens) == (500, None)
    entry = AuditEntry.objects.get(action="agent_llm_budget")
    assert (entry.agent_id, entry.object_type, entry.object_id, entry.reason) == (agent.id, "agent", str(agent.id),
                                                                                  "trial plan")
    assert entry.actor.startswith("key:")
    assert entry.before == {"day_tokens": None, "month_tokens": None}
    assert entry.after == {"day_tokens": 500, "month_tokens": None}

    # a window not named keeps its budget; null gives back the server's default
    operator_api.patch(url(agent, "budget"), {"month_tokens": 20_000}, format="json")
    assert operator_api.patch(url(agent, "budget"), {"day_tokens": None}, format="json").json()["day_tokens"] is None
    agent.refresh_from_db()
    assert (agent.llm_budget_day_tokens, agent.llm_budget_month_tokens) == (None, 20_000)
    assert AuditEntry.objects.filter(action="agent_llm_budget").count() == 3
    operator_api.patch(url(agent, "budget"), {"month_tokens": 20_000}, format="json")  # no change: no entry
    assert AuditEntry.objects.filter(action="agent_llm_budget").count() == 3


@pytest.mark.parametrize(("body", "field"), [
    ({"day_tokens": -1}, "day_tokens"),
    ({"month_tokens": 1.5}, "month_tokens"),
    ({"day_tokens": "1000"}, "day_tokens"),
    ({"day_tokens": True}, "day_tokens"),
    ({"month_tokens": 2**63}, "month_tokens"),
    ({"day_tokens": 10, "weekly_tokens": 5}, "weekly_tokens"),
])
def test_a_bad_budget_is_a_400_naming_the_field_and_changes_nothing(agent, operator_api, body, field):
    agent_llm_budget_set(agent=agent, actor="user:olga", day_tokens=700, month_tokens=9000)
    response = operator_api.patch(url(agent, "budget"), body, format="json")
    assert response.status_code == 400, response.content
    assert field in response.json()["error"]["fields"]
    agent.refresh_from_db()
    assert (agent.llm_budget_day_tokens, agent.llm_budget_month_tokens) == (700, 9000)
    assert AuditEntry.objects.filter(action="agent_llm_budget").count() == 1


def test_only_whoever_may_create_agents_sets_a_budget(agent, other_agent, make_key, client_for, admin_api, api):
    for client in (admin_api, api):  # the agent's own admin key cannot raise its own budget, nor a write key
        assert client.patch(url(agent, "budget"), {"day_tokens": 10**9}, format="json").status_code == 403
    assert admin_api.get(url(other_agent, "budget")).status_code == 404  # another agent's: not even seen
    agent.refresh_from_db()
    assert agent.llm_budget_day_tokens is None and not AuditEntry.objects.filter(action="agent_llm_budget").exists()
    assert not Agent.objects.filter(llm_budget_day_tokens__isnull=False).exists()
