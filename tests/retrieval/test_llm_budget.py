"""A retrieval past the agent's LLM budget skips the reranker, and says so in its trace."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import pytest

from memories.budgets import agent_llm_budget
from memories.models import PipelineStep
from memories.providers.llm import NoLLM
from memories.services.budgets import agent_llm_budget_set
from memories.services.write import memory_write
from retrieval.services import memory_retrieve
from tests.api.conftest import client_for, make_key, url  # noqa: F401
from tests.support.fake_openai import Reply

T0 = datetime(2024, 2, 1, 9, 0, tzinfo=UTC)
QUERY = "Where does Marisol live?"


@pytest.fixture
def marisol(agent):
    for i, text in enumerate(("Marisol Vega lives in Valparaíso.", "Marisol Vega teaches chemistry.",
                              "Marisol Vega keeps bees on her roof.")):
        memory_write(agent=agent, message=text, speaker_name="Rafael", occurred_at=T0 + timedelta(days=i), llm=NoLLM())
    return agent


@pytest.fixture
def reranker(fake_llm):
    """Every reranking costs 200 tokens; the first item is scored most relevant."""
    fake_llm.responder = lambda request: Reply(content=json.dumps({"scores": [{"index": 0, "score": 0.9}]}),
                                               prompt_tokens=150, completion_tokens=50)
    return fake_llm


def rerank_step(result) -> dict:
    return next(s for s in result.trace if s["name"] == "rerank")


def test_the_reranker_is_skipped_once_the_budget_is_spent(marisol, reranker, make_key, client_for):  # noqa: F811
    agent_llm_budget_set(agent=marisol, actor="user:olga", day_tokens=300)

    first, second, third = (memory_retrieve(agent=marisol, query=QUERY) for _ in range(3))

    assert [rerank_step(r)["status"] for r in (first, second, third)] == ["ok", "ok", "skipped"]
    assert [r.tokens_used["total_tokens"] for r in (first, second, third)] == [200, 200, 0]
    assert len(reranker.chat_requests) == 2  # 0 and 200 spent were under 300; at 400 it is spent
    assert any("reranker" in item.scores for item in first.facts + first.events)
    assert third.facts and all("reranker" not in item.scores for item in third.facts + third.events)
    skipped = rerank_step(third)["data"]
    assert skipped["reason"] == "budget" and skipped["budget"].startswith("the day budget of 300 tokens is spent")
    assert agent_llm_budget(agent=marisol).day.used == 400  # retrievals count like writes

    trace = client_for(make_key(marisol, "read")).get(url(marisol, "traces", third.trace_id)).json()
    step = next(s for s in trace["steps"] if s["name"] == "rerank")
    assert (step["status"], step["data"]["reason"]) == ("skipped", "budget")
    assert PipelineStep.objects.get(run_id=second.trace_id, name="rerank").tokens_in == 150


def test_without_a_budget_the_reranker_is_asked_every_time(marisol, reranker):
    for _ in range(3):
        assert rerank_step(memory_retrieve(agent=marisol, query=QUERY))["status"] == "ok"
    assert len(reranker.chat_requests) == 3
