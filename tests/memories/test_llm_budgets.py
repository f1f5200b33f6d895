"""LLM budgets per agent: what counts against them, and what a write or a background job does past
them. The local OpenAI-compatible server answers with scripted token counts, so each call's cost
is known."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import pytest

from memories.budgets import LLMBudget, agent_llm_budget, budget_windows
from memories.importers.locomo import Turn
from memories.jobs.runner import job_run
from memories.models import Entity, Event, PipelineRun, PipelineStep, RunKind, RunStatus
from memories.models.traces import job_pass_step_name
from memories.providers.llm import NoLLM
from memories.services.budgets import agent_llm_budget_set
from memories.services.entities import entity_get_or_create
from memories.services.facts import fact_add
from memories.services.imports import conversation_import
from memories.services.write import memory_write
from tests.support.fake_openai import Reply
from tests.support.scripts import by_schema, extraction

T0 = datetime(2024, 3, 1, 9, 0, tzinfo=UTC)
ACTOR = "user:olga"
CALL_TOKENS = 100  # every scripted answer: 90 in, 10 out

PEOPLE = [  # (who, what the message says, the fact the model extracts)
    ("Priya Natarajan", "Priya Natarajan adopted a greyhound called Biscuit.", "Priya Natarajan adopted a greyhound"),
    ("Tomasz Wierzbicki", "Tomasz Wierzbicki started a pottery class on Tuesdays.", "Tomasz Wierzbicki does pottery"),
    ("Ingrid Solberg", "Ingrid Solberg finished her first marathon in Oslo.", "Ingrid Solberg ran a marathon"),
    ("Kofi Mensah", "Kofi Mensah is learning to play the cello.", "Kofi Mensah plays the cello"),
    ("Lucia Ferraro", "Lucia Ferraro opened a bakery near the harbour.", "Lucia Ferraro opened a bakery"),
    ("Hiro Tanaka", "Hiro Tanaka moved his studio to a bigger loft.", "Hiro Tanaka moved his studio"),
]


def priced(answer):
    """A responder: `answer(request)` as content, every call costing CALL_TOKENS tokens."""
    return lambda request: Reply(content=answer(request), prompt_tokens=90, completion_tokens=10)


def extraction_of_the_message(request) -> str:
    content = request["messages"][-1]["content"].split("Existing knowledge:", 1)[0]
    for who, said, fact in PEOPLE:
        if said in content:
            return json.dumps(extraction(entities=[(who, "person")], facts=[(who, fact, "personal_preference")]))
    return json.dumps(extraction())


@pytest.fixture
def scripted(fake_llm):
    fake_llm.responder = priced(by_schema({"informed_extraction": extraction_of_the_message}))
    return fake_llm


def extraction_step(run: PipelineRun) -> PipelineStep:
    return PipelineStep.objects.get(run=run, name="extraction")


# --- what a budget is ----------------------------------------------------------------------------

def test_windows_are_the_current_utc_day_and_month():
    now = datetime(2024, 5, 15, 1, 30, tzinfo=UTC).astimezone(tz=None)
    assert budget_windows(now) == {"day": datetime(2024, 5, 15, tzinfo=UTC), "month": datetime(2024, 5, 1, tzinfo=UTC)}


def test_the_agents_own_budget_beats_the_default_and_none_gives_it_back(settings):
    settings.ANAMNESIS_LLM_BUDGET_DAY_TOKENS, settings.ANAMNESIS_LLM_BUDGET_MONTH_TOKENS = 1000, None
    now = datetime(2024, 5, 15, 12, 0, tzinfo=UTC)
    own = LLMBudget.of(day_tokens=5000, month_tokens=None, used={"day": 1200, "month": 9000}, now=now)
    assert (own.day.limit, own.day.source, own.day.exceeded) == (5000, "agent", False)
    assert (own.month.limit, own.month.source, own.exceeded, own.remaining) == (None, "unlimited", False, 3800)
    default = LLMBudget.of(day_tokens=None, month_tokens=None, used={"day": 1200, "month": 9000}, now=now)
    assert (default.day.limit, default.day.source, default.exceeded, default.remaining) == (1000, "default", True, 0)
    assert default.note() == "the day budget of 1,000 tokens is spent (1,200 used since 2024-05-15 00:00 UTC)"
    assert LLMBudget.of(day_tokens=0, month_tokens=None, used={}, now=now).exceeded  # 0: never the LLM


def test_use_counts_runs_of_the_current_day_and_month_and_the_agents_job_passes(agent, other_agent):
    now = datetime(2024, 5, 15, 12, 0, tzinfo=UTC)

    def run(who, at, tokens, kind=RunKind.WRITE):
        return PipelineRun.objects.create(agent=who, kind=kind, status=RunStatus.SUCCEEDED, finished_at=at,
                                          tokens_in=tokens - 10, tokens_out=10)

    run(agent, datetime(2024, 5, 15, 8, 0, tzinfo=UTC), 300)                   # today
    run(agent, datetime(2024, 5, 3, 8, 0, tzinfo=UTC), 2000, RunKind.RETRIEVE)  # this month
    run(agent, datetime(2024, 4, 30, 23, 59, tzinfo=UTC), 50000)                # last month: not counted
    run(other_agent, datetime(2024, 5, 15, 9, 0, tzinfo=UTC), 7000)             # another agent's
    PipelineRun.objects.create(agent=agent, kind=RunKind.WRITE, status=RunStatus.QUEUED)  # not finished
    every_agent = run(None, datetime(2024, 5, 15, 10, 0, tzinfo=UTC), 160, RunKind.JOB)  # a job over both
    for who, tokens in ((agent, 100), (other_agent, 60)):
        PipelineStep.objects.create(run=every_agent, order=1, name=job_pass_step_name(who.slug), tokens_in=tokens)

    budget = agent_llm_budget(agent=agent, now=now)
    assert (budget.day.used, budget.month.used) == (300 + 100, 300 + 2000 + 100)
    assert agent_llm_budget(agent=other_agent, now=now).day.used == 7000 + 60


# --- writes past the budget -------------------------------------------------------------------

def test_a_budget_crossed_mid_import_sends_the_later_writes_offline_and_loses_nothing(agent, scripted):
    agent_llm_budget_set(agent=agent, actor=ACTOR, day_tokens=250)
    turns = [Turn(dia_id=f"D1:{i}", speaker="Rafael", text=said, occurred_at=T0 + timedelta(minutes=i), session=1)
             for i, (_, said, _) in enumerate(PEOPLE)]

    stats = conversation_import(agent=agent, turns=turns)

    assert (stats.imported, stats.failed) == (6, 0)
    assert Event.objects.filter(agent=agent).count() == 6
    runs = list(PipelineRun.objects.filter(agent=agent, kind=RunKind.WRITE).order_by("event__occurred_at"))
    assert all(r.status == RunStatus.SUCCEEDED for r in runs)
    # 100 tokens a write: 0, 100 and 200 spent are under 250; at 300 the day's budget is spent
    assert [r.result["extraction_path"] for r in runs] == ["informed"] * 3 + ["offline"] * 3
    assert [r.tokens_in + r.tokens_out for r in runs] == [CALL_TOKENS] * 3 + [0] * 3
    assert len(scripted.chat_requests) == 3  # nothing was asked of the model past the budget
    for run in runs[3:]:
        step = extraction_step(run)
        assert step.data["path"] == "offline" and step.data["fallback"] == "budget"
        assert step.data["budget"].startswith("the day budget of 250 tokens is spent (300 used since")
        assert PipelineStep.objects.get(run=run, name="pre_retrieval").data["reason"].startswith(
            "the agent's LLM budget is spent")
    assert "fallback" not in extraction_step(runs[0]).data
    # the offline extractor still stored what those messages say
    assert Entity.objects.filter(agent=agent, display_name="Hiro Tanaka").exists()
    assert agent_llm_budget(agent=agent).day.used == 300


def test_an_agents_own_budget_beats_the_default(agent, other_agent, scripted, settings):
    settings.ANAMNESIS_LLM_BUDGET_DAY_TOKENS = 0  # by default no agent uses the LLM
    agent_llm_budget_set(agent=agent, actor=ACTOR, day_tokens=1_000_000)

    mine = memory_write(agent=agent, message=PEOPLE[0][1], speaker_name="Rafael", occurred_at=T0)
    theirs = memory_write(agent=other_agent, message=PEOPLE[1][1], speaker_name="Rafael", occurred_at=T0)
    assert (mine.extraction_path, theirs.extraction_path) == ("informed", "offline")
    assert next(s for s in theirs.trace if s["name"] == "extraction")["data"]["fallback"] == "budget"

    settings.ANAMNESIS_LLM_BUDGET_DAY_TOKENS = 1_000_000  # a generous default, and one agent kept off it
    agent_llm_budget_set(agent=agent, actor=ACTOR, day_tokens=0)
    assert memory_write(agent=agent, message=PEOPLE[2][1], speaker_name="Rafael",
                        occurred_at=T0).extraction_path == "offline"
    assert memory_write(agent=other_agent, message=PEOPLE[3][1], speaker_name="Rafael",
                        occurred_at=T0).extraction_path == "informed"

    agent_llm_budget_set(agent=agent, actor=ACTOR, day_tokens=None)  # the default again
    assert memory_write(agent=agent, message=PEOPLE[4][1], speaker_name="Rafael",
                        occurred_at=T0).extraction_path == "informed"


def test_a_month_budget_spent_stops_the_llm_though_the_day_is_fresh(agent, scripted, settings):
    settings.ANAMNESIS_LLM_BUDGET_MONTH_TOKENS = 150
    first = memory_write(agent=agent, message=PEOPLE[0][1], speaker_name="Rafael", occurred_at=T0)
    second = memory_write(agent=agent, message=PEOPLE[1][1], speaker_name="Rafael", occurred_at=T0)
    third = memory_write(agent=agent, message=PEOPLE[2][1], speaker_name="Rafael", occurred_at=T0)
    assert [first.extraction_path, second.extraction_path, third.extraction_path] == ["informed", "informed",
                                                                                       "offline"]
    note = next(s for s in third.trace if s["name"] == "extraction")["data"]["budget"]
    assert note.startswith("the month budget of 150 tokens is spent (200 used since")


def test_without_a_budget_nothing_is_counted_and_no_llm_says_so(agent, settings):
    result = memory_write(agent=agent, message=PEOPLE[0][1], speaker_name="Rafael", occurred_at=T0, llm=NoLLM())
    assert next(s for s in result.trace if s["name"] == "extraction")["data"]["fallback"] == "no_llm"


# --- background jobs past the budget ------------------------------------------------------------

def test_a_job_pass_stops_calling_the_llm_when_the_agent_budget_is_spent_and_its_use_counts(
        agent, other_agent, fake_llm, embedder):
    fake_llm.responder = priced(lambda request: json.dumps({"profile": "Written by the model."}))
    for who in (agent, other_agent):
        for name, text in (("Ana Duarte", "Ana Duarte is an architect"), ("Bruno Lima", "Bruno Lima sails")):
            entity = entity_get_or_create(agent=who, name=name, entity_type="person",
                                          name_embedding=embedder.embed([name])[0])
            fact_add(agent=who, entity=entity, text=text, embedding=embedder.embed([text])[0], valid_from=T0)
    agent_llm_budget_set(agent=agent, actor=ACTOR, day_tokens=50)  # one call spends it

    run = job_run(name="consolidate_profiles")  # every agent, as beat runs it

    assert run.agent is None
    mine = run.steps.get(name=job_pass_step_name(agent.slug))
    theirs = run.steps.get(name=job_pass_step_name(other_agent.slug))
    assert (mine.data["llm_profiles"], mine.data["profiles_written"]) == (1, 2)  # the second is deterministic
    assert mine.data["llm"] == "budget" and "day budget of 50 tokens is spent" in mine.data["budget"]
    assert (theirs.data["llm_profiles"], "llm" in theirs.data) == (2, False)
    assert len(fake_llm.chat_requests) == 3
    profiles = set(Entity.objects.filter(agent=agent).values_list("profile_text", flat=True))
    assert "Written by the model." in profiles and len(profiles) == 2
    # the pass's tokens count against the agent, though the run covered every agent
    assert agent_llm_budget(agent=agent).day.used == CALL_TOKENS
    assert agent_llm_budget(agent=other_agent).day.used == 2 * CALL_TOKENS
    fake_llm.clear()
    assert memory_write(agent=agent, message=PEOPLE[0][1], speaker_name="Rafael",
                        occurred_at=T0).extraction_path == "offline"
    assert fake_llm.chat_requests == []
