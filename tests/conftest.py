import pytest

from tests.support.llm_fixtures import fake_llm  # noqa: F401


@pytest.fixture
def agent(db):
    from memories.services.agents import agent_get_or_create

    return agent_get_or_create(slug="test-agent", name="Test agent")


@pytest.fixture
def other_agent(db):
    from memories.services.agents import agent_get_or_create

    return agent_get_or_create(slug="other-agent", name="Other agent")


@pytest.fixture(scope="session")
def embedder():
    from memories.providers.embeddings import get_embedder

    return get_embedder()
