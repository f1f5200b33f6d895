"""Pytest fixtures wiring Django settings to a local FakeOpenAIServer."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from memories.providers.llm import reset_llm_client
from tests.support.fake_openai import FakeOpenAIServer


@pytest.fixture
def fake_llm(settings) -> Iterator[FakeOpenAIServer]:
    """Start a fake OpenAI-compatible server and point ``get_llm_client()`` at it."""
    server = FakeOpenAIServer().start()
    try:
        settings.ANAMNESIS_LLM = "openai"
        settings.ANAMNESIS_LLM_BASE_URL = server.base_url
        settings.ANAMNESIS_LLM_TIMEOUT = 5
        reset_llm_client()
        yield server
    finally:
        reset_llm_client()
        server.stop()
