"""The queries of a write, pinned: a worker's write of a queued job and a synchronous write. A query
more on every write shows up here as a failing test (the counts include the savepoints that the
test's own transaction turns each inner transaction into)."""

from __future__ import annotations

import pytest

from memories.services.write import event_process, event_submit, memory_write

pytestmark = pytest.mark.django_db

# +1 each since the writer of a message that names no one of theirs is looked up (a group chat's writers
# are people the agent knows): 43 before a new fact and its links, and each new entity, were one statement
WORKER_WRITE_QUERIES = 39
SYNCHRONOUS_WRITE_QUERIES = 42  # "Faro" is in the gazetteer: no short-organization lookup


@pytest.fixture
def warm(agent):
    """One write first, so that what a process reads once (and caches) is read already."""
    memory_write(agent=agent, message="Ana lives in Lisbon.", speaker_name="Rafael")
    return agent


def test_the_queries_of_a_worker_write(warm, django_assert_num_queries):
    _, run, _ = event_submit(agent=warm, message="Bruno lives in Porto.", speaker_name="Rafael")
    with django_assert_num_queries(WORKER_WRITE_QUERIES):
        result = event_process(run_id=run.pk)
    assert [c.text for c in result.facts_added] == ["Bruno lives in Porto"]


def test_the_queries_of_a_synchronous_write(warm, django_assert_num_queries):
    with django_assert_num_queries(SYNCHRONOUS_WRITE_QUERIES):
        result = memory_write(agent=warm, message="Clara lives in Faro.", speaker_name="Rafael")
    assert [c.text for c in result.facts_added] == ["Clara lives in Faro"]
