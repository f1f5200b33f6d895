"""The bookkeeping every operator change shares, done in one place: the audit entry (in the
change's transaction), and after the commit the agent's graph version (cached graphs rebuild)
and a live notification to the pages that show it."""

from __future__ import annotations

from memories.live import live_notify
from memories.models import Agent, AuditEntry
from memories.services.agents import agent_graph_bump_on_commit
from memories.services.audit import audit_record


def audited_change(*, agent: Agent, actor: str, action: str, obj, before: dict | None = None,
                   after: dict | None = None, reason: str = "", live: tuple[str, int | None] | None = None,
                   graph_changed: bool = True) -> AuditEntry:
    """Record `actor`'s `action` on `obj` (with its state `before` and `after`); on commit, move
    the agent's graph version when the change can alter the entity graph (`graph_changed`) and
    tell open pages (`live`: the kind and id of what changed, e.g. ("fact", 12))."""
    entry = audit_record(agent=agent, actor=actor, action=action, obj=obj, before=before, after=after,
                         reason=reason)
    if graph_changed:
        agent_graph_bump_on_commit(agent_id=agent.id)
    if live is not None:
        live_notify(agent=agent, kind=live[0], obj_id=live[1])
    return entry
