"""Celery tasks of the read side: thin wrappers that call services."""

from __future__ import annotations

from celery import shared_task

from retrieval.vector_indexes import agent_indexes_ensure


@shared_task(ignore_result=True)
def agent_indexes_ensure_task() -> dict:
    """Per-agent vector indexes for agents that grew past the threshold (beat, every 10 min)."""
    return agent_indexes_ensure()
