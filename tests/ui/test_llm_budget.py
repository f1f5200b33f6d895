"""The overview shows each agent's LLM use against its budget; a write's trace page says when the
budget sent it to the offline extractor."""

from __future__ import annotations

import re
from datetime import UTC, datetime

import pytest
from django.urls import reverse
from django.utils import timezone

from memories.models import PipelineRun, RunKind, RunStatus
from memories.services.budgets import agent_llm_budget_set
from memories.services.write import memory_write
from tests.support.fake_openai import Reply

pytestmark = pytest.mark.django_db


def spent(agent, tokens):
    PipelineRun.objects.create(agent=agent, kind=RunKind.WRITE, status=RunStatus.SUCCEEDED,
                               finished_at=timezone.now(), tokens_in=tokens, tokens_out=0)


def row_of(html: str, name: str) -> str:
    return re.search(rf"<tr>\s*<td><a [^>]*>{name}</a></td>(.*?)</tr>", html, re.S).group(1)


def text_of(fragment: str) -> str:
    return " ".join(re.sub(r"<[^>]+>", " ", fragment).split())


def test_the_overview_shows_use_against_budget_per_agent(viewer_client, agent, other_agent, settings):
    settings.ANAMNESIS_LLM_BUDGET_MONTH_TOKENS = 1_000_000
    agent_llm_budget_set(agent=agent, actor="user:olga", day_tokens=5000)
    spent(agent, 6200)
    spent(other_agent, 1234)

    response = viewer_client.get(reverse("ui:overview"))

    html = response.content.decode()
    assert "LLM tokens against budget" in html
    mine, theirs = text_of(row_of(html, "Test agent")), text_of(row_of(html, "Other agent"))
    assert mine == "6,200 / 5,000 its own 6,200 / 1,000,000 default spent: LLM off"
    assert theirs == "1,234 no budget 1,234 / 1,000,000 default"
    assert 'class="meter spent"' in row_of(html, "Test agent")
    fragment = viewer_client.get(reverse("ui:overview"), HTTP_HX_REQUEST="true").content.decode()
    assert "6,200 / 5,000" in text_of(fragment)  # the live refresh carries it too


def test_without_use_or_budget_the_overview_says_so(viewer_client, agent):
    html = viewer_client.get(reverse("ui:overview")).content.decode()
    assert "No LLM tokens spent this month and no budget set" in html


def test_a_writes_trace_page_says_the_budget_sent_it_offline(viewer_client, agent, fake_llm):
    fake_llm.responder = lambda request: Reply(content="{}", prompt_tokens=10, completion_tokens=0)
    agent_llm_budget_set(agent=agent, actor="user:olga", day_tokens=0)
    result = memory_write(agent=agent, message="Dalia Rossi plays the oboe.", speaker_name="Rafael",
                          occurred_at=datetime(2024, 1, 5, tzinfo=UTC))
    assert result.extraction_path == "offline" and fake_llm.chat_requests == []

    html = viewer_client.get(reverse("ui:trace", args=[agent.slug, result.run_id])).content.decode()
    assert "&#x27;fallback&#x27;: &#x27;budget&#x27;" in html
    assert "the day budget of 0 tokens is spent" in html
