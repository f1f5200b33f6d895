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


class _GraphBump:
    """The callback `agent_graph_bump_on_commit` leaves with the transaction: which agent's graph
    moves once it commits."""

    __slots__ = ("agent_id",)

    def __init__(self, agent_id: int):
        self.agent_id = agent_id

    def __call__(self) -> None:
        agent_graph_bump(agent_id=self.agent_id)


def agent_graph_bump_on_commit(*, agent_id: int) -> None:
    """`agent_graph_bump` once the current transaction commits (at once outside one), once per
    transaction and agent: a bump already waiting for the commit stands for this one, unless it
    was asked for inside a savepoint this one is outside of (rolling that savepoint back drops
    the waiting bump, and this one must still happen)."""
    connection = transaction.get_connection()
    if connection.in_atomic_block:
        here = set(connection.savepoint_ids)
        if any(isinstance(func, _GraphBump) and func.agent_id == agent_id and sids <= here
               for sids, func, _ in connection.run_on_commit):
            return
    transaction.on_commit(_GraphBump(agent_id))
