from django.db import IntegrityError, transaction
from django.db.models import F
from django.utils.text import slugify

from memories.errors import DomainError
from memories.models import Agent


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


def agent_graph_bump(*, agent_id: int) -> None:
    """Mark the agent's entity graph as changed, so cached graphs rebuild on next use."""
    Agent.objects.filter(pk=agent_id).update(graph_version=F("graph_version") + 1)
