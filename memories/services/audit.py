"""The audit log: one append-only row per change an operator (or API key) makes. Written only
by the service that makes the change, in the change's transaction."""

from __future__ import annotations

from memories.models import Agent, AuditEntry


def audit_record(*, agent: Agent | None, actor: str, action: str, obj, before: dict | None = None,
                 after: dict | None = None, reason: str = "") -> AuditEntry:
    return AuditEntry.objects.create(
        agent=agent, actor=actor[:200], action=action, object_type=type(obj).__name__.lower(),
        object_id=str(obj.pk), before=before or {}, after=after or {}, reason=reason,
    )
