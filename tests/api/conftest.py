"""Fixtures for the REST API tests: API keys, clients that send them, a seeded agent."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from rest_framework.test import APIClient

SEED_MESSAGES = [
    ("2024-01-05T10:00:00Z", "Ricardo Gomes lives in São Paulo."),
    ("2024-01-06T10:00:00Z", "My boss Marta prefers tea."),
    ("2024-01-07T10:00:00Z", "Clara works at Orion Tech."),
]


@pytest.fixture(autouse=True)
def _fresh_throttle_cache():
    """Throttle counters live in the default cache; each test starts from zero."""
    from django.core.cache import cache

    cache.clear()


@pytest.fixture
def make_key(db):
    """make_key(agent or None, scope) → the plaintext of a new key."""
    from memories.services.api_keys import api_key_create

    def make(agent=None, scope="admin", name="test"):
        return api_key_create(agent=agent, scope=scope, name=name)[1]

    return make


@pytest.fixture
def client_for():
    """client_for(key) → an APIClient sending `Authorization: Bearer <key>` (None: no header)."""

    def make(key: str | None) -> APIClient:
        client = APIClient()
        if key:
            client.credentials(HTTP_AUTHORIZATION=f"Bearer {key}")
        return client

    return make


@pytest.fixture
def api(agent, make_key, client_for) -> APIClient:
    """A write-scope client of the test agent."""
    return client_for(make_key(agent, "write"))


@pytest.fixture
def admin_api(agent, make_key, client_for) -> APIClient:
    return client_for(make_key(agent, "admin"))


def seed(agent) -> None:
    """Three messages through the real write pipeline (offline extractor): Ricardo lives in São
    Paulo, Marta is Rafael's boss, Clara works at Orion Tech — facts, entities, relationships."""
    from memories.services.write import memory_write

    for when, text in SEED_MESSAGES:
        memory_write(agent=agent, message=text, speaker_name="Rafael",
                     occurred_at=datetime.fromisoformat(when.replace("Z", "+00:00")).astimezone(UTC))


@pytest.fixture
def seeded(agent):
    seed(agent)
    return agent


def url(agent, *parts) -> str:
    slug = agent if isinstance(agent, str) else agent.slug
    return "/api/v1/agents/" + "/".join([slug, *[str(p) for p in parts]]) + "/"
