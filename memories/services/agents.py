from django.db import IntegrityError, transaction
from django.db.models import F
from django.utils.text import slugify

from memories.errors import DomainError
from memories.models import Agent
from memories.services.audit import audit_record


def agent_get_or_create(*, slug: str, name: str = "") -> Agent:
    """The agent with this slug, created if it doesn't exist (safe under concurrent callers)."""
    clean = slugify(slug)
    if not clean or clean != slug:
        raise DomainError(f"agent slug {slug!r} must be lower-case letters, digits, '-' or '_'", {"slug": slug})
    agent = Agent.objects.filter(slug=slug).first()
    if agent:
        return agent
    try:
        with transaction.atomic():
            return Agent.objects.create(slug=slug, name=name or slug)
    except IntegrityError:
        return Agent.objects.get(slug=slug)


@transaction.atomic
def agent_create(*, slug: str, name: str = "", actor: str) -> Agent:
    """A new agent, audited as created by `actor` (callers check that the slug is free)."""
    agent = agent_get_or_create(slug=slug, name=name)
    audit_record(agent=agent, actor=actor, action="agent_create", obj=agent,
                 after={"slug": agent.slug, "name": agent.name})
    return agent


def agent_graph_bump(*, agent_id: int) -> None:
    """Mark the agent's entity graph as changed, so cached graphs rebuild on next use."""
    Agent.objects.filter(pk=agent_id).update(graph_version=F("graph_version") + 1)


def agent_graph_bump_on_commit(*, agent_id: int) -> None:
    """`agent_graph_bump` once the current transaction commits (at once outside one)."""
    transaction.on_commit(lambda: agent_graph_bump(agent_id=agent_id))
