"""Facts: filtered lists (active, superseded, as_of), history, correct, retract — and what a
correction or retraction does to history, the graph and retrieval."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from memories.models import AuditEntry, Fact, Relationship
from tests.api.conftest import url
from tests.api.test_auth import assert_error

pytestmark = pytest.mark.django_db


def ricardo_fact(agent) -> Fact:
    return Fact.objects.get(agent=agent, text="Ricardo Gomes lives in São Paulo")


def texts(response) -> list[str]:
    assert response.status_code == 200, response.json()
    return sorted(f["text"] for f in response.json()["results"])


def test_the_fact_list_shows_active_versions_and_filters(seeded, api):
    everything = texts(api.get(url(seeded, "facts")))
    assert "Ricardo Gomes lives in São Paulo" in everything and len(everything) == 4
    ricardo = ricardo_fact(seeded).entity_id
    assert texts(api.get(url(seeded, "facts") + f"?entity={ricardo}")) == ["Ricardo Gomes lives in São Paulo"]
    assert texts(api.get(url(seeded, "facts") + "?q=tea")) == ["Rafael's boss Marta prefers tea"]
    assert texts(api.get(url(seeded, "facts") + "?source_context=operator")) == []
    assert len(texts(api.get(url(seeded, "facts") + "?confidence_min=0.9&confidence_max=1"))) == 4
    assert texts(api.get(url(seeded, "facts") + "?confidence_min=0.99")) == []
    assert texts(api.get(url(seeded, "facts") + "?as_of=2020-01-01T00:00:00Z")) == []


@pytest.mark.parametrize("query,field", [("confidence_min=2", "confidence_min"), ("as_of=tomorrow", "as_of"),
                                         ("entity=abc", "entity"), ("entity=0", "entity"),
                                         ("source_context=guess", "source_context"), ("q=%00", "q")])
def test_bad_fact_filters_are_400_naming_the_filter(seeded, api, query, field):
    response = api.get(url(seeded, "facts") + "?" + query)
    assert_error(response, 400, "invalid")
    assert field in response.json()["error"]["fields"]


def test_a_correction_supersedes_the_fact_and_shows_everywhere(seeded, api):
    old = ricardo_fact(seeded)
    before = datetime.now(UTC)
    response = api.post(url(seeded, "facts", old.id, "correct"),
                        {"text": "Ricardo Gomes lives in Austin", "reason": "he moved"}, format="json")
    assert response.status_code == 201
    new = response.json()
    assert new["supersedes"] == old.id and new["source_context"] == "operator" and new["is_active"]
    assert new["speaker"].startswith("key:anm_") and new["entity"]["key"] == "person:ricardo_gomes"

    # history: both versions in order, with their windows and source event
    history = api.get(url(seeded, "facts", new["id"], "history")).json()
    assert history == api.get(url(seeded, "facts", old.id, "history")).json() | {"fact_id": new["id"]}
    first, second = history["versions"]
    assert (first["id"], second["id"]) == (old.id, new["id"])
    assert first["valid_to"] == second["valid_from"] and first["invalidated_at"] and second["valid_to"] is None
    assert first["source_event"]["text"] == "Ricardo Gomes lives in São Paulo."
    assert "he moved" in first["invalidation_reason"]

    # the list shows the new version; superseded ones on request; the past as it was
    assert "Ricardo Gomes lives in Austin" in texts(api.get(url(seeded, "facts")))
    assert "Ricardo Gomes lives in São Paulo" not in texts(api.get(url(seeded, "facts")))
    assert {"Ricardo Gomes lives in São Paulo", "Ricardo Gomes lives in Austin"} <= set(
        texts(api.get(url(seeded, "facts") + "?include_superseded=true")))
    past = before.isoformat().replace("+00:00", "Z")
    assert "Ricardo Gomes lives in São Paulo" in texts(api.get(url(seeded, "facts") + f"?as_of={past}"))

    # retrieval sees the correction
    found = api.post(url(seeded, "retrieve"), {"query": "Where does Ricardo Gomes live?"}, format="json").json()
    assert "Ricardo Gomes lives in Austin" in found["context"]
    assert "Ricardo Gomes lives in São Paulo" not in [f["text"] for f in found["facts"]]

    audit = AuditEntry.objects.get(action="fact_correct")
    assert audit.actor == new["speaker"] and audit.reason == "he moved"

    # the closed version cannot be corrected again: a conflict naming the current version
    stale = api.post(url(seeded, "facts", old.id, "correct"), {"text": "Ricardo lives in Rio"}, format="json")
    assert_error(stale, 409, "conflict")
    assert stale.json()["error"]["fields"]["current"] == new["id"]


def test_a_retraction_closes_the_fact_and_the_relationship_it_evidences(seeded, api):
    fact = ricardo_fact(seeded)
    edge = Relationship.objects.get(agent=seeded, evidence_fact=fact)
    ricardo = fact.entity_id
    before = datetime.now(UTC).isoformat().replace("+00:00", "Z")
    response = api.post(url(seeded, "facts", fact.id, "retract"), {"reason": "not true"}, format="json")
    assert response.status_code == 200
    body = response.json()
    assert body["relationships_closed"] == 1 and body["fact"]["is_active"] is False

    assert "Ricardo Gomes lives in São Paulo" not in texts(api.get(url(seeded, "facts")))
    active_edges = api.get(url(seeded, "relationships")).json()["results"]
    assert edge.id not in [r["id"] for r in active_edges]
    graph = api.get(url(seeded, "graph") + f"?entity={ricardo}").json()
    assert graph["edges"] == []
    # as of before the retraction, the fact and the edge were there
    assert "Ricardo Gomes lives in São Paulo" in texts(api.get(url(seeded, "facts") + f"?as_of={before}"))
    old_graph = api.get(url(seeded, "graph") + f"?entity={ricardo}&as_of={before}").json()
    assert [e["id"] for e in old_graph["edges"]] == [edge.id]
    closed = api.get(url(seeded, "relationships") + "?include_closed=true").json()["results"]
    assert edge.id in [r["id"] for r in closed]

    found = api.post(url(seeded, "retrieve"), {"query": "Where does Ricardo Gomes live?"}, format="json").json()
    assert fact.id not in [f["id"] for f in found["facts"]]
    assert_error(api.post(url(seeded, "facts", fact.id, "retract"), {}, format="json"), 409, "conflict")


@pytest.mark.parametrize("body,field", [({}, "text"), ({"text": ""}, "text"), ({"text": "x" * 4001}, "text"),
                                        ({"text": "ok", "reason": ["x"]}, "reason")])
def test_invalid_corrections_are_400_naming_the_field(seeded, api, body, field):
    response = api.post(url(seeded, "facts", ricardo_fact(seeded).id, "correct"), body, format="json")
    assert_error(response, 400, "invalid")
    assert field in response.json()["error"]["fields"]


def test_unknown_facts_are_404(seeded, api):
    for path in [("facts", 999999), ("facts", 999999, "history")]:
        assert_error(api.get(url(seeded, *path)), 404, "not_found")
    for action in ("correct", "retract"):
        response = api.post(url(seeded, "facts", 999999, action), {"text": "x"} if action == "correct" else {},
                            format="json")
        assert_error(response, 404, "not_found")
