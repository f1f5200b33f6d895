import pytest

from tests.support.llm_fixtures import fake_llm  # noqa: F401


@pytest.fixture(autouse=True, scope="session")
def write_owner_watch():
    """Every save or delete of a Fact, Relationship, Entity, alias or fact link during the run
    comes from a service in memories/services/ (tests/test_write_owners.py has the static half)."""
    from tests.support.write_owners import watch_saves

    offenders, disconnect = watch_saves()
    yield offenders
    disconnect()
    assert not offenders, "saved outside memories/services/:\n" + "\n".join(sorted(set(offenders)))


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
