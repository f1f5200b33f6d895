"""POST agents/{agent}/retrieve/: context, facts with score breakdowns and citations, trace id."""

from __future__ import annotations

import pytest

from memories.models import Event
from tests.api.conftest import url
from tests.api.test_auth import assert_error

pytestmark = pytest.mark.django_db


def test_retrieve_returns_a_cited_scored_context_and_its_trace(seeded, api):
    response = api.post(url(seeded, "retrieve"), {"query": "Where does Ricardo Gomes live?", "limit": 5},
                        format="json")
    assert response.status_code == 200
    result = response.json()
    assert "Ricardo Gomes lives in São Paulo" in result["context"]
    fact = next(f for f in result["facts"] if f["text"] == "Ricardo Gomes lives in São Paulo")
    assert fact["entity"] == "person:ricardo_gomes" and fact["rank"] >= 1
    assert {"semantic", "final"} <= set(fact["scores"])
    source = Event.objects.get(text="Ricardo Gomes lives in São Paulo.")
    assert fact["citations"][0]["event_id"] == source.id
    assert len(result["ranking"]) <= 5 and result["trace_id"]
    trace = api.get(url(seeded, "traces", result["trace_id"])).json()
    assert trace["kind"] == "retrieve" and trace["steps"][0]["name"] == "plan"
    assert [s["order"] for s in trace["steps"]] == sorted(s["order"] for s in trace["steps"])
    retrievals = api.get(url(seeded, "traces") + "?kind=retrieve").json()["results"]
    assert [t["id"] for t in retrievals] == [result["trace_id"]] and retrievals[0]["step_count"] >= 1


def test_retrieve_returns_exactly_the_shape_its_schema_documents(seeded, api):
    # the view returns the result's own dict; the schema's serializer must read it back unchanged
    import json

    from retrieval.api.serializers import RetrieveResultSerializer

    response = api.post(url(seeded, "retrieve"), {"query": "Who prefers tea and where does Ricardo live?",
                                                  "as_of": "2024-02-01T00:00:00Z"}, format="json")
    result = response.json()
    assert result["facts"] and result["events"] and result["trace"]
    documented = json.loads(json.dumps(RetrieveResultSerializer(result).data))
    assert documented == result


def test_retrieve_as_of_sees_only_what_was_known_then(seeded, api):
    # Ricardo's city was said at 10:00 on 2024-01-05 (and stored today): before that, unknown
    result = api.post(url(seeded, "retrieve"), {"query": "Where does Ricardo Gomes live?",
                                                "as_of": "2024-01-05T09:00:00Z"}, format="json").json()
    assert result["facts"] == [] and result["as_of"] == "2024-01-05T09:00:00+00:00"
    result = api.post(url(seeded, "retrieve"), {"query": "Where does Ricardo Gomes live?",
                                                "as_of": "2024-01-05T11:00:00Z"}, format="json").json()
    assert "Ricardo Gomes lives in São Paulo" in [f["text"] for f in result["facts"]]


@pytest.mark.parametrize("body,field", [
    ({}, "query"), ({"query": ""}, "query"), ({"query": "x" * 4001}, "query"), ({"query": 7.5, "limit": 0}, "limit"),
    ({"query": "x", "limit": 101}, "limit"), ({"query": "x", "limit": 10**40}, "limit"),
    ({"query": "x", "as_of": "last week"}, "as_of"), ({"query": "x", "as_of": "2024-13-01T00:00:00Z"}, "as_of"),
    ({"query": "x", "entity_hints": "ana"}, "entity_hints"),
    ({"query": "x", "entity_hints": [{"a": 1}]}, "entity_hints"),
    ({"query": "x", "preset": "fastest"}, "preset"), ({"query": "x", "config_overrides": "fast"}, "config_overrides"),
])
def test_invalid_retrievals_are_400_naming_the_field(seeded, api, body, field):
    response = api.post(url(seeded, "retrieve"), body, format="json")
    assert_error(response, 400, "invalid")
    assert field in response.json()["error"]["fields"]
    assert field in response.json()["error"]["message"]


@pytest.mark.parametrize(("overrides", "field"), [
    ({"topk_facts": "many"}, "topk_facts"), ({"rrf_k": -1}, "rrf_k"), ({"ppr_alpha": 1.0}, "ppr_alpha"),
    ({"fusion": "borda"}, "fusion"), ({"signal_weights": {"graph": 101}}, "signal_weights"),
    ({"signal_weights": {"gossip": 1}}, "signal_weights"), ({"context_tiers": "thirds"}, "context_tiers"),
])
def test_bad_config_overrides_are_a_400_naming_the_setting(seeded, api, overrides, field):
    response = api.post(url(seeded, "retrieve"), {"query": "Ricardo?", "config_overrides": overrides}, format="json")
    assert_error(response, 400, "invalid_config")
    assert field in response.json()["error"]["fields"] and f"'{field}'" in response.json()["error"]["message"]


def test_an_unknown_setting_is_a_400_listing_the_allowed_ones(seeded, api):
    response = api.post(url(seeded, "retrieve"), {"query": "Ricardo?", "config_overrides": {"nope": 1}},
                        format="json")
    assert_error(response, 400, "invalid_config")
    fields = response.json()["error"]["fields"]
    assert fields["unknown"] == ["nope"] and "nope" in response.json()["error"]["message"]
    assert {"topk_facts", "fusion", "signal_weights", "context_max_tokens"} <= set(fields["allowed"])


def test_config_overrides_name_settings_flat(seeded, api):
    """Settings live in typed sections (`RetrievalConfig.scoring.fusion`, ...), but a caller names
    them as ever: one flat object, a mapping changing only the keys it names."""
    overrides = {"topk_facts": 10, "fusion": "rrf", "signal_weights": {"keyword": 0, "event_keyword": 0},
                 "context_max_tokens": 60}
    response = api.post(url(seeded, "retrieve"), {"query": "Where does Ricardo Gomes live?", "preset": "fast",
                                                  "config_overrides": overrides}, format="json")
    assert response.status_code == 200, response.content
    result = response.json()
    steps = {step["name"]: step for step in result["trace"]}
    assert steps["fusion"]["data"]["fusion"] == "rrf"
    assert "keyword" not in steps["signals"]["data"] and {"semantic", "event_semantic"} <= set(steps["signals"]["data"])
    assert 0 < result["context_tokens"] <= 60


@pytest.mark.parametrize("query", ["what happened 3000 years ago?", "what happened in december 9999?",
                                   "december 31, 9999"])
def test_dates_out_of_the_calendar_are_just_words(seeded, api, query):
    response = api.post(url(seeded, "retrieve"), {"query": query}, format="json")
    assert response.status_code == 200
    assert response.json()["trace"][0]["data"]["window"] is None


def test_retrieve_is_a_read(seeded, make_key, client_for):
    reader = client_for(make_key(seeded, "read"))
    assert reader.post(url(seeded, "retrieve"), {"query": "x"}, format="json").status_code == 200


def test_moments_with_offsets_postgres_cannot_store_are_taken_in_utc(seeded, api):
    """ISO-8601 allows offsets up to ±23:59, PostgreSQL only ±15:59: found by schemathesis as a
    500 on the trace filters. Both body fields and query filters now mean the same instant in UTC."""
    result = api.post(url(seeded, "retrieve"), {"query": "Where does Ricardo Gomes live?",
                                                "as_of": "2024-01-05T23:30:00+19:19"}, format="json")
    assert result.status_code == 200
    assert result.json()["as_of"] == "2024-01-05T04:11:00+00:00"
    traces = api.get(url(seeded, "traces") + "?created_after=2693-05-06T04:24:06%2B19:19")
    assert traces.status_code == 200 and traces.json()["results"] == []
    events = api.get(url(seeded, "events") + "?occurred_before=2000-01-01T00:00:00-19:59")
    assert events.status_code == 200 and events.json()["results"] == []
