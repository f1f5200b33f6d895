"""The three-clocks migration fills the agent's clock of rows written before it: learned when
their message was said, a superseded version's end learned when its successor was, an operator's
retraction unlearned when it was made."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

BEFORE = [("memories", "0004_keywordterm_version")]
AFTER = [("memories", "0005_three_clocks")]


def at(day: int) -> datetime:
    return datetime(2023, 1, day, 12, tzinfo=UTC)


@pytest.mark.django_db(transaction=True)
def test_existing_rows_get_the_agents_clock_from_their_messages():
    executor = MigrationExecutor(connection)
    executor.migrate(BEFORE)
    apps = executor.loader.project_state(BEFORE).apps
    Agent, Entity, Event, Fact, Relationship = (apps.get_model("memories", name) for name in
                                                ("Agent", "Entity", "Event", "Fact", "Relationship"))
    stored = datetime(2026, 1, 1, tzinfo=UTC)  # everything imported long after it was said
    agent = Agent.objects.create(slug="old", name="old")
    ana = Entity.objects.create(agent=agent, key="person:ana", type="person", display_name="Ana")
    porto = Entity.objects.create(agent=agent, key="place:porto", type="place", display_name="Porto")
    said = [Event.objects.create(agent=agent, speaker="Ana", text=t, occurred_at=at(d), recorded_at=stored)
            for d, t in ((2, "I live in Porto."), (9, "I moved to Braga."), (12, "I like chess."))]
    old = Fact.objects.create(agent=agent, entity=ana, text="Ana lives in Porto", valid_from=at(2),
                              valid_to=at(9), recorded_at=stored, invalidated_at=stored, source_event=said[0])
    new = Fact.objects.create(agent=agent, entity=ana, text="Ana lives in Braga", valid_from=at(9),
                              recorded_at=stored, source_event=said[1], supersedes=old)
    retracted = Fact.objects.create(agent=agent, entity=ana, text="Ana likes chess", valid_from=at(12),
                                    valid_to=stored, recorded_at=stored, invalidated_at=stored,
                                    invalidation_reason="retracted by user:olga: wrong person", source_event=said[2])
    edge = Relationship.objects.create(agent=agent, source=ana, target=porto, rel_type="lives_in", valid_from=at(2),
                                       valid_to=at(9), recorded_at=stored, invalidated_at=stored, evidence_fact=old,
                                       source_event=said[0])
    executor = MigrationExecutor(connection)
    executor.migrate(AFTER)
    apps = executor.loader.project_state(AFTER).apps
    Fact, Relationship = apps.get_model("memories", "Fact"), apps.get_model("memories", "Relationship")
    old, new, retracted = (Fact.objects.get(pk=f.pk) for f in (old, new, retracted))
    assert (old.learned_at, old.valid_to_learned_at, old.unlearned_at) == (at(2), at(9), None)
    assert (new.learned_at, new.valid_to_learned_at, new.unlearned_at) == (at(9), None, None)
    assert retracted.learned_at == at(12) and retracted.unlearned_at == stored
    edge = Relationship.objects.get(pk=edge.pk)
    assert (edge.learned_at, edge.valid_to_learned_at) == (at(2), at(9))
    MigrationExecutor(connection).migrate(MigrationExecutor(connection).loader.graph.leaf_nodes())
