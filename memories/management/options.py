"""Helpers shared by the management commands."""

from django.core.management.base import CommandError

from memories import selectors
from memories.models import Agent


def agent_option(slug: str | None) -> Agent | None:
    """The agent an `--agent SLUG` option names (None when not given); a clear error if none has it."""
    if not slug:
        return None
    agent = selectors.agent_by_slug(slug=slug)
    if agent is None:
        raise CommandError(f"no agent with slug {slug!r}")
    return agent
