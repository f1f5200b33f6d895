"""Strict input: unknown fields, wrong JSON types, bad booleans, unknown query parameters and
invalid cursors are a 400 naming them; nothing is coerced or silently ignored."""

from __future__ import annotations

import pytest

from memories.models import Entity, Event
from tests.api.conftest import url

pytestmark = pytest.mark.django_db
MESSAGE = {"speaker": "Rafael", "text": "Marta prefers tea."}


@pytest.mark.parametrize(("body", "field", "problem"), [
    ({**MESSAGE, "text": 5}, "text", "string"),
    ({**MESSAGE, "speaker": ["Rafael"]}, "speaker", "string"),
    ({**MESSAGE, "occured_at": "2024-01-05T10:00:00Z"}, "occured_at", "unknown"),
    ({**MESSAGE, "dry_run": "yes"}, "dry_run", "true or false"),
    ({**MESSAGE, "recent_messages": ["hi", 3]}, "recent_messages", "string"),
    ({**MESSAGE, "occurred_at": 1704448800}, "occurred_at", "string"),
])
def test_a_write_with_an_unknown_field_or_a_wrong_type_is_a_400_naming_it(agent, api, body, field, problem):
    response = api.post(url(agent, "events"), body, format="json")
    assert response.status_code == 400, response.content
    assert field in response.json()["error"]["fields"] and problem in response.json()["error"]["message"]
    assert not Event.objects.exists()


def test_operations_are_strict_too(seeded, admin_api):
    entity = Entity.objects.filter(agent=seeded).first()
    alias = admin_api.post(url(seeded, "entities", entity.id, "aliases"), {"alias": 12}, format="json")
    assert alias.status_code == 400 and "alias" in alias.json()["error"]["fields"]
    found = admin_api.post(url(seeded, "retrieve"), {"query": "tea?", "limt": 3}, format="json")
    assert found.status_code == 400 and "limt" in found.json()["error"]["fields"]
    found = admin_api.post(url(seeded, "retrieve"), {"query": "tea?", "limit": "3"}, format="json")
    assert found.status_code == 400 and "limit" in found.json()["error"]["fields"]


@pytest.mark.parametrize(("query", "field"), [
    ("include_superseded=maybe", "include_superseded"), ("limit=-1", "limit"), ("page_size=-1", "page_size"),
    ("page_size=abc", "page_size"), ("cursor=bm90LWEtY3Vyc29y", "cursor"), ("cursor=%%%", "cursor"),
])
def test_bad_query_parameters_are_a_400(seeded, api, query, field):
    response = api.get(url(seeded, "facts") + "?" + query)
    assert response.status_code == 400, (query, response.status_code)
    assert field in response.json()["error"]["fields"]


def test_good_query_parameters_still_work(seeded, api):
    assert api.get(url(seeded, "facts") + "?include_superseded=true&page_size=1").status_code == 200
    first = api.get(url(seeded, "facts") + "?page_size=1").json()
    assert api.get(first["next"]).status_code == 200
    assert api.get(url(seeded, "relationships") + "?include_closed=false").status_code == 200
