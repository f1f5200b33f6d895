"""What a spawned import process runs. Imported by the process before Django is set up, so
nothing here imports a model at module level (see `conversations_import`)."""

from __future__ import annotations


def worker_setup(database: str) -> None:
    """Django on the parent's database (a test run's too)."""
    import django

    django.setup()
    from django.db import connections

    connections["default"].settings_dict["NAME"] = database


def import_group(group, recent_window: int):
    """A group of one agent's conversations, one after the other; their ImportStats."""
    from django.db import connections

    from memories.models import Agent
    from memories.services.imports import conversation_import

    try:
        # the parse stays in this process: the import's processes already keep the cores busy
        return [conversation_import(agent=Agent.objects.get(slug=job.slug), turns=job.turns,
                                    recent_window=recent_window, parse_elsewhere=False) for job in group]
    finally:
        connections.close_all()
