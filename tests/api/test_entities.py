"""Entities, relationships and the graph: detail, aliases, merge, forget — and what a merge or a
forget does to facts, the graph and retrieval, as of any date."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import pytest

from memories.models import AuditEntry, Entity, Fact
from tests.api.conftest import url
from tests.api.test_auth import assert_error

pytestmark = pytest.mark.django_db


def entity(agent, key) -> Entity:
    return Entity.objects.get(agent=agent, key=key)


def iso(moment: datetime) -> str:
    return moment.isoformat().replace("+00:00", "Z")


def test_entities_are_listed_searched_and_detailed(seeded, api):
    keys = [e["key"] for e in api.get(url(seeded, "entities")).json()["results"]]
    assert set(keys) == {"person:ricardo_gomes", "place:sao_paulo", "person:marta", "person:rafael", "person:clara",
                         "organization:orion_tech"}
    assert [e["key"] for e in api.get(url(seeded, "entities") + "?q=orion").json()["results"]] == [
        "organization:orion_tech"]
    assert len(api.get(url(seeded, "entities") + "?type=person").json()["results"]) == 4

    ricardo = entity(seeded, "person:ricardo_gomes")
    detail = api.get(url(seeded, "entities", ricardo.id)).json()
    assert detail["entity"]["display_name"] == "Ricardo Gomes"
    assert "ricardo gomes" in detail["aliases"]
    assert [f["text"] for f in detail["facts"]] == ["Ricardo Gomes lives in São Paulo"]
    assert [(r["source"]["key"], r["rel_type"], r["target"]["key"]) for r in detail["relationships"]] == [
        ("person:ricardo_gomes", "lives_in", "place:sao_paulo")]
    # relationships in both directions, facts that only mention the entity too
    sao_paulo = api.get(url(seeded, "entities", entity(seeded, "place:sao_paulo").id)).json()
    assert len(sao_paulo["relationships"]) == 1 and len(sao_paulo["facts"]) == 1


def test_aliases_are_added_once_and_never_stolen(seeded, api):
    ricardo, clara = entity(seeded, "person:ricardo_gomes"), entity(seeded, "person:clara")
    first = api.post(url(seeded, "entities", ricardo.id, "aliases"), {"alias": "Rico"}, format="json")
    assert first.status_code == 201 and first.json() == {"created": True, "aliases": ["ricardo gomes", "rico"]}
    again = api.post(url(seeded, "entities", ricardo.id, "aliases"), {"alias": "RICO!"}, format="json")
    assert again.status_code == 200 and again.json()["created"] is False
    stolen = api.post(url(seeded, "entities", clara.id, "aliases"), {"alias": "rico"}, format="json")
    assert_error(stolen, 400, "invalid")
    assert stolen.json()["error"]["fields"]["entity_id"] == ricardo.id
    assert_error(api.post(url(seeded, "entities", ricardo.id, "aliases"), {"alias": "!!"}, format="json"),
                 400, "invalid")
    missing = api.post(url(seeded, "entities", ricardo.id, "aliases"), {}, format="json")
    assert "alias" in missing.json()["error"]["fields"]
    # the new alias finds the entity in retrieval
    found = api.post(url(seeded, "retrieve"), {"query": "where does Rico live?"}, format="json").json()
    assert "Ricardo Gomes lives in São Paulo" in [f["text"] for f in found["facts"]]


def test_an_alias_with_accents_or_a_hyphen_is_listed_as_written_and_removed_whole(seeded, api):
    ricardo = entity(seeded, "person:ricardo_gomes")
    added = api.post(url(seeded, "entities", ricardo.id, "aliases"), {"alias": "Zé-Ri"}, format="json")
    # matched in its plain form, shown as it was written (in lower case) to whoever reads the names
    assert added.status_code == 201 and {"ze ri", "zé-ri"} <= set(added.json()["aliases"])
    assert api.get(url(seeded, "entities") + "?q=Zé-Ri").json()["results"][0]["id"] == ricardo.id
    assert api.post(url(seeded, "entities", ricardo.id, "aliases"), {"alias": "ze ri"},
                    format="json").json()["created"] is False
    assert api.delete(url(seeded, "entities", ricardo.id, "aliases", "ze ri")).status_code == 204
    assert api.get(url(seeded, "entities", ricardo.id)).json()["aliases"] == ["ricardo gomes"]


def test_a_written_form_stays_with_its_plain_form(seeded, api):
    ricardo, clara = entity(seeded, "person:ricardo_gomes"), entity(seeded, "person:clara")
    assert api.post(url(seeded, "entities", clara.id, "aliases"), {"alias": "ze"}, format="json").status_code == 201
    # "ze" is Clara's: Ricardo gets no "zé" beside it that a lookup as written would find
    taken = api.post(url(seeded, "entities", ricardo.id, "aliases"), {"alias": "Zé"}, format="json")
    assert taken.status_code == 400
    assert "zé" not in api.get(url(seeded, "entities", ricardo.id)).json()["aliases"]
    # moved, the alias takes its written form along
    api.post(url(seeded, "entities", clara.id, "aliases"), {"alias": "Ló-Ri"}, format="json")
    moved = api.post(url(seeded, "entities", ricardo.id, "aliases"), {"alias": "lo ri", "move": True}, format="json")
    assert moved.status_code == 201
    assert {"lo ri", "ló-ri"} <= set(api.get(url(seeded, "entities", ricardo.id)).json()["aliases"])
    assert not {"lo ri", "ló-ri"} & set(api.get(url(seeded, "entities", clara.id)).json()["aliases"])


def test_merge_moves_everything_to_the_survivor(seeded, admin_api, api):
    ricardo, clara = entity(seeded, "person:ricardo_gomes"), entity(seeded, "person:clara")
    assert_error(api.post(url(seeded, "entities", ricardo.id, "merge"), {"entity_id": clara.id}, format="json"),
                 403, "permission_denied")
    response = admin_api.post(url(seeded, "entities", ricardo.id, "merge"), {"entity_id": clara.id, "reason": "same"},
                              format="json")
    assert response.status_code == 200
    report = response.json()
    assert report["entity"]["id"] == ricardo.id and report["merged"] == clara.id
    assert report["facts_moved"] == 1 and report["relationships_moved"] == 1 and report["aliases_moved"] >= 1

    assert Entity.objects.get(pk=clara.id).merged_into_id == ricardo.id
    listed = [e["id"] for e in admin_api.get(url(seeded, "entities")).json()["results"]]
    assert clara.id not in listed
    assert clara.id in [e["id"] for e in admin_api.get(url(seeded, "entities") + "?include_merged=true").json()[
        "results"]]
    detail = admin_api.get(url(seeded, "entities", ricardo.id)).json()
    assert {f["text"] for f in detail["facts"]} == {"Ricardo Gomes lives in São Paulo", "Clara works at Orion Tech"}
    assert "clara" in detail["aliases"]
    # the graph around the survivor has both edges; the merged id resolves to the survivor
    graph = admin_api.get(url(seeded, "graph") + f"?entity={clara.id}").json()
    assert {n["key"] for n in graph["nodes"]} == {"person:ricardo_gomes", "place:sao_paulo",
                                                  "organization:orion_tech"}
    assert {e["rel_type"] for e in graph["edges"]} == {"lives_in", "works_at"}
    assert AuditEntry.objects.get(action="entity_merge").actor.startswith("key:anm_")

    assert_error(admin_api.post(url(seeded, "entities", ricardo.id, "merge"), {"entity_id": ricardo.id},
                                format="json"), 400, "invalid")
    assert_error(admin_api.post(url(seeded, "entities", ricardo.id, "merge"), {"entity_id": 999999},
                                format="json"), 404, "not_found")
    assert "entity_id" in admin_api.post(url(seeded, "entities", ricardo.id, "merge"), {"entity_id": "x"},
                                         format="json").json()["error"]["fields"]


def test_a_forgotten_entity_never_appears_again_as_of_any_date(seeded, admin_api):
    ricardo = entity(seeded, "person:ricardo_gomes")
    fact = Fact.objects.get(agent=seeded, entity=ricardo)
    after_seed = iso(datetime.now(UTC))
    corrected = admin_api.post(url(seeded, "facts", fact.id, "correct"), {"text": "Ricardo Gomes lives in Austin"},
                               format="json").json()
    after_correction = iso(datetime.now(UTC))
    moments = ["2024-01-05T12:00:00Z", after_seed, after_correction, None]

    response = admin_api.post(url(seeded, "entities", ricardo.id, "forget"), {"reason": "privacy request"},
                              format="json")
    assert response.status_code == 200
    report = response.json()
    assert report["entities_deleted"] == 1 and report["facts_deleted"] == 2
    # the São Paulo edge, and the Austin one the correction derived from its text
    assert report["relationships_deleted"] == 2 and report["events_redacted"] == 1
    assert "names" not in report

    def mentions_ricardo(payload) -> bool:
        return "ricardo" in json.dumps(payload, ensure_ascii=False).lower()

    for moment in moments:
        suffix = f"as_of={moment}" if moment else "include_superseded=true"
        facts = admin_api.get(url(seeded, "facts") + "?" + suffix).json()
        assert not mentions_ricardo(facts), moment
        graph = admin_api.get(url(seeded, "graph") + (f"?as_of={moment}" if moment else "")).json()
        assert not mentions_ricardo(graph), moment
        assert graph["nodes"] or moment == moments[0]  # nothing was recorded yet in 2024
        rels = admin_api.get(url(seeded, "relationships") + ("?" + suffix if moment else "?include_closed=true"))
        assert not mentions_ricardo(rels.json())
        query = {"query": "Where does Ricardo Gomes live?", "entity_hints": ["person:ricardo_gomes"]}
        found = admin_api.post(url(seeded, "retrieve"), {**query, "as_of": moment}, format="json")
        assert found.status_code == 200
        assert not mentions_ricardo({k: found.json()[k] for k in ("context", "facts", "events")}), moment

    assert not mentions_ricardo(admin_api.get(url(seeded, "entities") + "?include_merged=true").json())
    assert admin_api.get(url(seeded, "entities") + "?q=ricardo").json()["results"] == []
    assert not mentions_ricardo(admin_api.get(url(seeded, "events")).json())
    for path in [("entities", ricardo.id), ("facts", fact.id), ("facts", corrected["id"], "history")]:
        assert_error(admin_api.get(url(seeded, *path)), 404, "not_found")
    assert_error(admin_api.get(url(seeded, "graph") + f"?entity={ricardo.id}"), 404, "not_found")
    assert_error(admin_api.get(url(seeded, "graph") + "?entity=person:ricardo_gomes"), 404, "not_found")
    # the audit log records who forgot, without repeating what was forgotten
    entry = AuditEntry.objects.get(action="entity_forget")
    assert entry.actor.startswith("key:anm_") and not mentions_ricardo([entry.before, entry.after, entry.reason])


def test_forget_needs_an_admin_key(seeded, api):
    ricardo = entity(seeded, "person:ricardo_gomes")
    assert_error(api.post(url(seeded, "entities", ricardo.id, "forget"), {}, format="json"), 403, "permission_denied")
    assert Entity.objects.filter(pk=ricardo.id).exists()


def test_the_graph_is_ready_to_draw(seeded, api):
    marta = entity(seeded, "person:marta")
    graph = api.get(url(seeded, "graph") + f"?entity={marta.key}&depth=2").json()
    nodes = {n["id"]: n for n in graph["nodes"]}
    assert {n["label"] for n in nodes.values()} == {"Marta", "Rafael"}
    for edge in graph["edges"]:
        assert edge["source"] in nodes and edge["target"] in nodes
        assert set(edge) == {"id", "source", "target", "rel_type", "strength", "valid_from", "valid_to"}
    everything = api.get(url(seeded, "graph")).json()
    assert len(everything["edges"]) == 3 and len(everything["nodes"]) == 6
    only = api.get(url(seeded, "graph") + "?rel_types=works_at,lives_in").json()
    assert {e["rel_type"] for e in only["edges"]} == {"works_at", "lives_in"}
    # as of before anything was said, there was no graph; an hour after the first message, its edge
    assert api.get(url(seeded, "graph") + "?as_of=2024-01-05T09:00:00Z").json() == {"nodes": [], "edges": []}
    first = api.get(url(seeded, "graph") + "?as_of=2024-01-05T11:00:00Z").json()
    assert [e["rel_type"] for e in first["edges"]] == ["lives_in"]
    for query, field in [("depth=4", "depth"), ("depth=x", "depth"), ("as_of=never", "as_of")]:
        response = api.get(url(seeded, "graph") + "?" + query)
        assert_error(response, 400, "invalid")
        assert field in response.json()["error"]["fields"]
    assert_error(api.get(url(seeded, "graph") + "?entity=nobody"), 404, "not_found")


def test_relationships_are_listed_with_filters(seeded, api):
    ricardo = entity(seeded, "person:ricardo_gomes")
    rels = api.get(url(seeded, "relationships")).json()["results"]
    assert len(rels) == 3
    mine = api.get(url(seeded, "relationships") + f"?entity={ricardo.id}").json()["results"]
    assert [r["rel_type"] for r in mine] == ["lives_in"]
    assert len(api.get(url(seeded, "relationships") + "?rel_type=works_at").json()["results"]) == 1
    assert api.get(url(seeded, "relationships") + "?as_of=2023-01-01T00:00:00Z").json()["results"] == []
    detail = api.get(url(seeded, "relationships", mine[0]["id"])).json()
    assert detail["source"]["key"] == "person:ricardo_gomes" and detail["is_active"]
