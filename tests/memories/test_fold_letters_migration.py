"""Names stored before "ł", "ø", "æ" folded like accents are folded by the migration, so a writer
who types "Lukasz" or "Soren" still finds the person stored earlier; a folded alias another entity
already owns stays with its first owner."""

from __future__ import annotations

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

from memories.naming import normalize_alias, unfolded_alias
from memories.redaction import NameMatcher, name_digest

BEFORE = [("memories", "0008_forget_tombstone")]
AFTER = [("memories", "0009_fold_letters")]


@pytest.mark.django_db(transaction=True)
def test_stored_aliases_and_keys_are_folded():
    executor = MigrationExecutor(connection)
    executor.migrate(BEFORE)
    apps = executor.loader.project_state(BEFORE).apps
    Agent, Entity, EntityAlias = (apps.get_model("memories", n) for n in ("Agent", "Entity", "EntityAlias"))
    agent = Agent.objects.create(slug="old", name="old")
    piotr = Entity.objects.create(agent=agent, key="person:piotr_białek", type="person", display_name="Piotr Białek")
    soren = Entity.objects.create(agent=agent, key="person:søren", type="person", display_name="Søren")
    other = Entity.objects.create(agent=agent, key="person:soren_dahl", type="person", display_name="Soren Dahl")
    EntityAlias.objects.create(agent=agent, entity=piotr, alias="piotr białek")
    EntityAlias.objects.create(agent=agent, entity=other, alias="soren")
    EntityAlias.objects.create(agent=agent, entity=soren, alias="søren")
    executor = MigrationExecutor(connection)
    executor.migrate(AFTER)
    apps = executor.loader.project_state(AFTER).apps
    Entity, EntityAlias = apps.get_model("memories", "Entity"), apps.get_model("memories", "EntityAlias")
    assert Entity.objects.get(pk=piotr.pk).key == "person:piotr_bialek" == "person:" + normalize_alias(
        "Piotr Białek").replace(" ", "_")
    assert Entity.objects.get(pk=soren.pk).key == "person:soren"
    owners = dict(EntityAlias.objects.filter(agent_id=agent.pk).values_list("alias", "entity_id"))
    assert owners == {"piotr bialek": piotr.pk, "soren": other.pk}
    MigrationExecutor(connection).migrate(MigrationExecutor(connection).loader.graph.leaf_nodes())


def test_a_tombstone_digested_before_folding_still_matches():
    key = b"k" * 32
    # what forgetting "Piotr Białek" stored before "ł" folded to "l"
    tomb = NameMatcher.from_digests({name_digest(unfolded_alias("Piotr Białek"), key=key)}, key=key, max_words=2)
    assert tomb.redact("Then Piotr Białek called.") == "Then [redacted] called."
    today = NameMatcher.from_names(["Piotr Białek"], key=key)
    assert today.redact("Then Piotr Bialek called.") == "Then [redacted] called."
