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


@pytest.fixture(autouse=True, scope="session")
def retrieval_pool_closed(django_db_setup):
    """The retrieval pool's threads keep database connections; closed before the test database
    is dropped (else dropping it fails with "being accessed by other users")."""
    yield
    from retrieval import concurrency

    concurrency.shutdown()


@pytest.fixture(autouse=True)
def forget_llm_modes():
    """Each test starts with no structured-output mode learned: the LLM client keeps what a server
    accepted per base URL for the whole process, and the scripted servers' ephemeral ports come
    round again in later tests."""
    from memories.providers.llm import forget_learned_modes

    forget_learned_modes()


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
