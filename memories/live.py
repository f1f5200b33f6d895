"""Live updates for open UI pages: after a change commits, a small notification (agent slug,
kind, id) goes to the channel layer, to the agent's group and to the all-agents group. The
consumers that forward it to browsers live in dashboard (the top layer); this module only
sends, and never lets a failure to notify break the write that caused it.

With the in-memory layer (no REDIS_URL) only changes made in the web process itself reach its
pages (API writes, UI actions, MCP); the Celery worker's writes need the Redis layer."""

from __future__ import annotations

import logging

from asgiref.sync import async_to_sync
from django.conf import settings
from django.db import transaction

log = logging.getLogger(__name__)

ALL_AGENTS_GROUP = "ui.agents"
MESSAGE_TYPE = "memory.changed"  # handled by the consumer's memory_changed()


def agent_group(slug: str) -> str:
    return f"ui.agent.{slug}"[:99]


def live_notify(*, agent, kind: str, obj_id: int | None) -> None:
    """On commit (at once outside a transaction), tell open pages that `agent` has a new `kind`
    ("event", "run", "fact", "entity") with this id."""
    if not getattr(settings, "LIVE_UPDATES", True):
        return
    message = {"type": MESSAGE_TYPE, "agent": agent.slug, "kind": kind, "id": obj_id}
    transaction.on_commit(lambda: _send(message))


def _send(message: dict) -> None:
    from channels.layers import get_channel_layer

    try:
        layer = get_channel_layer()
        if layer is None:
            return
        groups = [ALL_AGENTS_GROUP, agent_group(message["agent"])]
        known = getattr(layer, "groups", None)  # the in-memory layer: skip groups nobody listens to
        if isinstance(known, dict):
            groups = [g for g in groups if known.get(g)]
        for group in groups:
            async_to_sync(layer.group_send)(group, message)
    except Exception:  # a page missing one refresh is better than a write failing
        log.warning("live update not sent", exc_info=True)
