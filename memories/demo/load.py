"""Loading the demo: idempotent (messages by external id, operator changes by their audited
reason), through the same services as everything else."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime

from django.contrib.auth import get_user_model

from memories.demo.stories import DEMO_MESSAGES, STORIES, Correction, Story, conversation
from memories.importers.locomo import Turn
from memories.models import Agent, AuditEntry, Fact
from memories.selectors import facts as fact_selectors
from memories.services import facts as fact_services
from memories.services.agents import agent_get_or_create
from memories.services.imports import conversation_import
from memories.services.write import memory_write

DEMO_USER, DEMO_PASSWORD = "admin", "anamnesis-demo"
DEMO_OPERATOR = "user:admin"


def demo_user() -> None:
    user_model = get_user_model()
    if not user_model.objects.filter(username=DEMO_USER).exists():
        user_model.objects.create_superuser(DEMO_USER, "admin@example.com", DEMO_PASSWORD)


def demo_agent() -> Agent:
    agent = agent_get_or_create(slug="demo", name="Demo agent")
    for index, (at, speaker, text) in enumerate(DEMO_MESSAGES):
        memory_write(agent=agent, message=text, speaker_name=speaker, external_id=f"demo-{index}",
                     occurred_at=datetime.fromisoformat(at))
    return agent


def story_agent(story: Story) -> tuple[Agent, int]:
    agent = agent_get_or_create(slug=story.slug, name=story.name)
    turns = [Turn(dia_id=ext, speaker=speaker, text=text, occurred_at=at, session=0)
             for at, speaker, text, ext in conversation(story)]
    stats = conversation_import(agent=agent, turns=turns)
    for correction in story.corrections:
        apply_correction(agent, correction)
    return agent, stats.imported


def apply_correction(agent: Agent, c: Correction) -> bool:
    """The operator's change, once: skipped when the audit log already has it."""
    if AuditEntry.objects.filter(agent=agent, actor=DEMO_OPERATOR, reason=c.reason).exists():
        return False
    facts = Fact.objects.filter(agent=agent, text__icontains=c.find).order_by("id")
    if c.action == "reinstate":
        closed = facts.exclude(valid_to__isnull=True, invalidated_at__isnull=True).first()
        if closed is None or fact_selectors.fact_current_version(closed) and c.find.lower() in \
                fact_selectors.fact_current_version(closed).text.lower():
            return False
        fact_services.fact_reinstate(agent=agent, fact_id=closed.id, reason=c.reason, actor=DEMO_OPERATOR)
        return True
    fact = facts.current().first()
    if fact is None:
        return False
    if c.action == "correct":
        fact_services.fact_correct(agent=agent, fact_id=fact.id, text=c.text, reason=c.reason, actor=DEMO_OPERATOR,
                              valid_from=datetime.fromisoformat(c.valid_from + "T00:00:00+00:00")
                              if c.valid_from else None)
    else:
        fact_services.fact_retract(agent=agent, fact_id=fact.id, reason=c.reason, actor=DEMO_OPERATOR)
    return True


def demo_load(*, only: list[str] | None = None, say: Callable[[str], object] = print) -> list[Agent]:
    """The demo user and agents (all, or the slugs in `only`)."""
    demo_user()
    agents = []
    if not only or "demo" in only:
        agents.append(demo_agent())
        say(f"Demo agent 'demo' loaded ({len(DEMO_MESSAGES)} messages).")
    for story in STORIES:
        if only and story.slug not in only:
            continue
        agent, imported = story_agent(story)
        agents.append(agent)
        say(f"Demo agent '{story.slug}' loaded ({imported} new messages; {len(story.corrections)} operator changes).")
    return agents
