"""The three clocks through the REST API: `as_of` (what the agent knew then), `valid_at` (about
which moment of the world) and `recorded_as_of` (what the database held), on facts,
relationships, the graph and an entity's detail; and the operator's version operations
(correct with valid_from, retract and reopen, reinstate, merge / unmerge, aliases)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from django.utils import timezone

from memories.models import AuditEntry, Entity, EntityAlias, Fact, Relationship
from memories.services.write import memory_write
from tests.api.conftest import url


def at(text: str) -> datetime:
    return datetime.fromisoformat(text).replace(tzinfo=UTC)


def say(agent, when: str, text: str, speaker: str = "Leo"):
    return memory_write(agent=agent, message=text, speaker_name=speaker, occurred_at=at(when))


def cities(response) -> set[str]:
    """The lives_in values of a facts/ list."""
    assert response.status_code == 200, response.content[:300]
    return {f["slot_value"] for f in response.json()["results"] if f["slot"] == "lives_in"}


def edges(response) -> set[str]:
    assert response.status_code == 200, response.content[:300]
    return {r["target"]["display_name"] for r in response.json()["results"] if r["rel_type"] == "lives_in"}


@pytest.fixture
def imported(agent):
    """History imported today: Porto (said 2023-02-01), then the move to Madrid (said 2023-09-15)."""
    say(agent, "2023-02-01T10:00:00", "Ines Duarte lives in Porto.")
    say(agent, "2023-09-15T10:00:00", "Ines Duarte moved to Madrid.")
    return agent


def test_imported_history_answers_as_the_agent_knew_it_then(imported, api):
    facts = url(imported, "facts")
    assert cities(api.get(facts, {"as_of": "2023-05-01T00:00:00Z"})) == {"Porto"}
    assert cities(api.get(facts, {"as_of": "2023-10-01T00:00:00Z"})) == {"Madrid"}
    assert cities(api.get(facts)) == {"Madrid"}
    yesterday = (timezone.now() - timedelta(days=1)).isoformat()
    assert cities(api.get(facts, {"recorded_as_of": yesterday})) == set()
    rels = url(imported, "relationships")
    assert edges(api.get(rels, {"as_of": "2023-05-01T00:00:00Z"})) == {"Porto"}
    assert edges(api.get(rels, {"as_of": "2023-10-01T00:00:00Z"})) == {"Madrid"}
    assert edges(api.get(rels, {"recorded_as_of": yesterday})) == set()


def test_the_graph_and_an_entity_show_the_moment_asked_for(imported, api):
    ines = Entity.objects.get(agent=imported, display_name="Ines Duarte")
    graph = api.get(url(imported, "graph"), {"entity": ines.id, "as_of": "2023-05-01T00:00:00Z"}).json()
    assert {n["label"] for n in graph["nodes"]} == {"Ines Duarte", "Porto"}
    graph = api.get(url(imported, "graph"), {"entity": ines.id}).json()
    assert {n["label"] for n in graph["nodes"]} == {"Ines Duarte", "Madrid"}
    detail = api.get(url(imported, "entities", ines.id), {"as_of": "2023-05-01T00:00:00Z"}).json()
    assert [f["slot_value"] for f in detail["facts"] if f["slot"] == "lives_in"] == ["Porto"]


def test_late_news_is_not_known_before_it_was_said(agent, api):
    say(agent, "2023-02-01T10:00:00", "Ines Duarte lives in Porto.")
    say(agent, "2024-01-10T10:00:00", "Ines Duarte moved to Madrid in September.")
    facts = url(agent, "facts")
    madrid = Fact.objects.get(agent=agent, slot_value="Madrid")
    assert madrid.valid_from == at("2023-09-01T00:00:00")  # "in September", said in January 2024
    assert madrid.learned_at == at("2024-01-10T10:00:00")
    assert cities(api.get(facts, {"as_of": "2023-11-01T00:00:00Z"})) == {"Porto"}  # not known yet
    assert cities(api.get(facts, {"as_of": "2024-02-01T00:00:00Z", "valid_at": "2023-11-01T00:00:00Z"})) == {
        "Madrid"}
    assert cities(api.get(facts, {"as_of": "2024-02-01T00:00:00Z", "valid_at": "2023-05-01T00:00:00Z"})) == {
        "Porto"}
    assert cities(api.get(facts, {"as_of": "2024-02-01T00:00:00Z"})) == {"Madrid"}


def test_between_two_live_writes_the_first_state_is_what_was_known(agent, api):
    now = timezone.now().replace(microsecond=0) - timedelta(minutes=5)
    memory_write(agent=agent, message="Ines Duarte lives in Porto.", speaker_name="Leo", occurred_at=now)
    memory_write(agent=agent, message="Ines Duarte moved to Madrid.", speaker_name="Leo",
                 occurred_at=now + timedelta(minutes=1))
    between = (now + timedelta(seconds=30)).isoformat()
    assert cities(api.get(url(agent, "facts"), {"as_of": between})) == {"Porto"}
    assert edges(api.get(url(agent, "relationships"), {"as_of": between})) == {"Porto"}


def test_a_correction_is_known_from_when_it_was_made_and_true_from_its_valid_from(imported, api):
    madrid = Fact.objects.get(agent=imported, slot_value="Madrid")
    before_correction = timezone.now()
    response = api.post(url(imported, "facts", madrid.id, "correct"),
                        {"text": "Ines Duarte lives in Valencia.", "valid_from": "2023-09-20T00:00:00Z"},
                        format="json")
    assert response.status_code == 201, response.content
    corrected = Fact.objects.get(pk=response.json()["id"])
    assert corrected.source_event_id is None and corrected.source_context == "operator"
    assert corrected.learned_at >= before_correction and corrected.valid_from == at("2023-09-20T00:00:00")
    texts = {f["text"] for f in api.get(url(imported, "facts"), {
        "as_of": (before_correction - timedelta(seconds=1)).isoformat(), "valid_at": "2023-10-01T00:00:00Z",
    }).json()["results"]}
    assert texts == {"Ines Duarte moved to Madrid"}  # before the correction: what was believed
    texts = {f["text"] for f in api.get(url(imported, "facts"), {"valid_at": "2023-10-01T00:00:00Z"}).json()[
        "results"]}
    assert texts == {"Ines Duarte lives in Valencia."}  # now: the world from valid_from reads as corrected
    texts = {f["text"] for f in api.get(url(imported, "facts"), {"valid_at": "2023-09-17T00:00:00Z"}).json()[
        "results"]}
    assert texts == {"Ines Duarte moved to Madrid"}  # before valid_from the old text still holds


def test_correcting_or_retracting_a_closed_version_is_a_409_naming_the_current_one(imported, api):
    porto = Fact.objects.get(agent=imported, slot_value="Porto")
    madrid = Fact.objects.get(agent=imported, slot_value="Madrid")
    for op, body in (("correct", {"text": "Ines lives in Lisbon."}), ("retract", {})):
        response = api.post(url(imported, "facts", porto.id, op), body, format="json")
        assert response.status_code == 409, response.content
        assert response.json()["error"]["fields"]["current"] == madrid.id
        assert str(madrid.id) in response.json()["error"]["message"]


def test_every_version_answers_its_detail_with_a_link_to_the_current_one(imported, api):
    porto = Fact.objects.get(agent=imported, slot_value="Porto")
    madrid = Fact.objects.get(agent=imported, slot_value="Madrid")
    body = api.get(url(imported, "facts", porto.id)).json()
    assert body["is_current"] is False and body["current_version"] == madrid.id
    assert body["current_url"].endswith(url(imported, "facts", madrid.id))
    body = api.get(url(imported, "facts", madrid.id)).json()
    assert body["is_current"] is True and body["current_version"] == madrid.id
    listed = api.get(url(imported, "facts"), {"include_superseded": "true"}).json()["results"]
    assert {porto.id, madrid.id} <= {f["id"] for f in listed}


def test_reinstating_undoes_a_wrong_supersession_with_its_relationships(imported, api):
    porto = Fact.objects.get(agent=imported, slot_value="Porto")
    madrid = Fact.objects.get(agent=imported, slot_value="Madrid")
    response = api.post(url(imported, "facts", porto.id, "reinstate"), {"reason": "the move was a typo"},
                        format="json")
    assert response.status_code == 201, response.content
    new = Fact.objects.get(pk=response.json()["id"])
    assert new.text == porto.text and new.supersedes_id == madrid.id and new.is_active
    madrid.refresh_from_db()
    assert madrid.unlearned_at is not None and not madrid.is_active
    assert cities(api.get(url(imported, "facts"))) == {"Porto"}
    assert edges(api.get(url(imported, "relationships"))) == {"Porto"}
    chain = api.get(url(imported, "facts", porto.id, "history")).json()["versions"]
    assert [v["id"] for v in chain] == [porto.id, madrid.id, new.id]
    assert AuditEntry.objects.filter(action="fact_reinstate", object_id=str(porto.id)).exists()
    assert api.post(url(imported, "facts", new.id, "reinstate"), {}, format="json").status_code == 409


def test_retracting_with_reopen_previous_brings_the_predecessor_back(imported, api):
    madrid = Fact.objects.get(agent=imported, slot_value="Madrid")
    response = api.post(url(imported, "facts", madrid.id, "retract"), {"reopen_previous": True}, format="json")
    assert response.status_code == 200, response.content
    assert response.json()["reinstated"]["text"] == "Ines Duarte lives in Porto"
    assert cities(api.get(url(imported, "facts"))) == {"Porto"}
    # what the agent knew before the retraction is unchanged
    assert cities(api.get(url(imported, "facts"), {"as_of": "2023-10-01T00:00:00Z"})) == {"Madrid"}


def test_a_retraction_is_known_from_when_it_was_made(imported, api):
    madrid = Fact.objects.get(agent=imported, slot_value="Madrid")
    before = timezone.now() - timedelta(seconds=1)
    assert api.post(url(imported, "facts", madrid.id, "retract"), {}, format="json").status_code == 200
    assert cities(api.get(url(imported, "facts"))) == set()
    assert cities(api.get(url(imported, "facts"), {"as_of": before.isoformat()})) == {"Madrid"}
    assert edges(api.get(url(imported, "relationships"), {"as_of": before.isoformat()})) == {"Madrid"}
    assert edges(api.get(url(imported, "relationships"))) == set()


def _people(agent):
    say(agent, "2024-03-01T10:00:00", "Bruno Lima lives in Recife.")
    say(agent, "2024-03-02T10:00:00", "Carla Souza works at Atlas Corp.")
    bruno = Entity.objects.get(agent=agent, display_name="Bruno Lima")
    nick = Entity.objects.get(agent=agent, display_name="Carla Souza")
    return bruno, nick


def test_merge_refuses_a_merged_survivor_and_never_forms_a_cycle(agent, make_key, client_for):
    api = client_for(make_key(agent, "admin"))
    bruno, nick = _people(agent)
    assert api.post(url(agent, "entities", bruno.id, "merge"), {"entity_id": nick.id},
                    format="json").status_code == 200
    response = api.post(url(agent, "entities", nick.id, "merge"), {"entity_id": bruno.id}, format="json")
    assert response.status_code == 400, response.content
    bruno.refresh_from_db()
    nick.refresh_from_db()
    assert bruno.merged_into_id is None and nick.merged_into_id == bruno.id
    other = Entity.objects.create(agent=agent, key="person:carla", type="person", display_name="Carla")
    response = api.post(url(agent, "entities", nick.id, "merge"), {"entity_id": other.id}, format="json")
    assert response.status_code == 400  # into a merged entity: refused, it names the survivor
    assert response.json()["error"]["fields"]["merged_into"] == bruno.id


def _current_edges(entity) -> set[tuple]:
    return {(r.rel_type, r.target_id, r.valid_from, r.strength)
            for r in Relationship.objects.current().filter(source=entity)}


def test_unmerge_puts_back_what_the_merge_moved(agent, make_key, client_for):
    api = client_for(make_key(agent, "admin"))
    bruno, nick = _people(agent)
    nick_facts = set(Fact.objects.filter(entity=nick).values_list("id", flat=True))
    nick_rels = set(Relationship.objects.filter(source=nick).values_list("id", flat=True))
    nick_edges = _current_edges(nick)
    nick_aliases = set(EntityAlias.objects.filter(entity=nick).values_list("alias", flat=True))
    assert nick_facts and nick_rels and nick_aliases
    api.post(url(agent, "entities", bruno.id, "merge"), {"entity_id": nick.id}, format="json")
    assert not Fact.objects.filter(entity=nick).exists()
    response = api.post(url(agent, "entities", nick.id, "unmerge"), {"reason": "not the same person"},
                        format="json")
    assert response.status_code == 200, response.content
    nick.refresh_from_db()
    assert nick.merged_into_id is None
    assert set(Fact.objects.filter(entity=nick).values_list("id", flat=True)) == nick_facts
    # the same current edges (as new versions); the versions of before keep their ends throughout
    assert _current_edges(nick) == nick_edges
    assert set(Relationship.objects.filter(id__in=nick_rels).values_list("source_id", flat=True)) == {nick.id}
    assert set(EntityAlias.objects.filter(entity=nick).values_list("alias", flat=True)) == nick_aliases
    assert AuditEntry.objects.filter(action="entity_unmerge", object_id=str(nick.id)).exists()
    assert api.post(url(agent, "entities", nick.id, "unmerge"), {}, format="json").status_code == 400


def test_an_alias_can_be_removed_and_moved(agent, api):
    bruno, nick = _people(agent)
    assert api.post(url(agent, "entities", bruno.id, "aliases"), {"alias": "Bruno L."},
                    format="json").status_code == 201
    response = api.delete(url(agent, "entities", bruno.id, "aliases", "bruno l"))
    assert response.status_code == 204, response.content
    assert not EntityAlias.objects.filter(agent=agent, alias="bruno l").exists()
    assert api.delete(url(agent, "entities", bruno.id, "aliases", "bruno l")).status_code == 404
    taken = api.post(url(agent, "entities", bruno.id, "aliases"), {"alias": "Carla Souza"}, format="json")
    assert taken.status_code == 400
    moved = api.post(url(agent, "entities", bruno.id, "aliases"), {"alias": "Carla Souza", "move": True},
                     format="json")
    assert moved.status_code == 201 and "carla souza" in moved.json()["aliases"]
    assert EntityAlias.objects.get(agent=agent, alias="carla souza").entity_id == bruno.id
    assert {e.action for e in AuditEntry.objects.filter(agent=agent)} >= {"alias_add", "alias_remove", "alias_move"}


# --- retrieval and the CLI ------------------------------------------------------------------------

def _found(api, agent, **clocks) -> set[str]:
    body = {"query": "Where does Ines Duarte live?", **clocks}
    response = api.post(url(agent, "retrieve"), body, format="json")
    assert response.status_code == 200, response.content[:300]
    return {f["text"] for f in response.json()["facts"]}


def test_retrieval_answers_on_every_clock(agent, api):
    say(agent, "2023-02-01T10:00:00", "Ines Duarte lives in Porto.")
    say(agent, "2024-01-10T10:00:00", "Ines Duarte moved to Madrid in September.")
    porto, madrid = "Ines Duarte lives in Porto", "Ines Duarte moved to Madrid in September"
    then = _found(agent=agent, api=api, as_of="2023-11-01T00:00:00Z")
    assert porto in then and madrid not in then
    later = _found(agent=agent, api=api, as_of="2024-02-01T00:00:00Z", valid_at="2023-11-01T00:00:00Z")
    assert madrid in later and porto not in later
    before_move = _found(agent=agent, api=api, as_of="2024-02-01T00:00:00Z", valid_at="2023-05-01T00:00:00Z")
    assert porto in before_move and madrid not in before_move
    now = _found(agent=agent, api=api)
    assert madrid in now and porto not in now
    yesterday = (timezone.now() - timedelta(days=1)).isoformat()
    assert _found(agent=agent, api=api, recorded_as_of=yesterday) == set()
    response = api.post(url(agent, "retrieve"), {"query": "x", "valid_at": "soon"}, format="json")
    assert response.status_code == 400 and "valid_at" in response.json()["error"]["fields"]


def test_recall_takes_the_three_clocks(imported, capsys):
    import json

    from django.core.management import call_command
    from django.core.management.base import CommandError

    def recall(*flags) -> set[str]:
        call_command("recall", "Where does Ines Duarte live?", "--json", *flags, agent=imported.slug)
        return {f["text"] for f in json.loads(capsys.readouterr().out)["facts"]}

    assert recall("--as-of", "2023-05-01T00:00:00Z") == {"Ines Duarte lives in Porto"}
    assert recall("--as-of", "2023-10-01T00:00:00Z") == {"Ines Duarte moved to Madrid"}
    assert recall("--as-of", "2023-10-01T00:00:00Z", "--valid-at", "2023-05-01T00:00:00Z") == {
        "Ines Duarte lives in Porto"}
    yesterday = (timezone.now() - timedelta(days=1)).isoformat()
    assert recall("--recorded-as-of", yesterday) == set()
    with pytest.raises(CommandError, match="--valid-at must be ISO-8601"):
        recall("--valid-at", "tomorrow")
