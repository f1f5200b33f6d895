"""POST agents/{agent}/events/ (write a message) and the event log / job endpoints."""

from __future__ import annotations

import json

import pytest

from memories.models import AuditEntry, Event, Fact, PipelineRun
from tests.api.conftest import url
from tests.api.test_auth import assert_error

pytestmark = pytest.mark.django_db

MESSAGE = {"speaker": "Rafael", "text": "Ana lives in Lisbon.", "occurred_at": "2024-03-01T12:00:00Z"}


def test_a_write_is_accepted_with_its_job(agent, api):
    response = api.post(url(agent, "events"), MESSAGE, format="json")
    assert response.status_code == 202
    body = response.json()
    job = body["job"]
    assert job["status"] == "queued" and job["attempts"] == 0 and job["result"] is None
    assert body["job_url"].endswith(f"/api/v1/agents/test-agent/jobs/{job['id']}/")
    assert response["Location"] == body["job_url"]
    assert job["trace_url"].endswith(f"/traces/{job['id']}/")
    event = Event.objects.get(agent=agent)
    assert (event.speaker, event.text, event.occurred_at.isoformat()) == (
        "Rafael", "Ana lives in Lisbon.", "2024-03-01T12:00:00+00:00")
    assert job["event"] == event.id
    status = api.get(body["job_url"])
    assert status.status_code == 200 and status.json()["id"] == job["id"]
    audit = AuditEntry.objects.get(action="event_write")
    assert audit.actor.startswith("key:anm_") and audit.object_id == str(event.id)


def test_the_same_idempotency_key_returns_the_same_job_and_stores_one_event(agent, api):
    first = api.post(url(agent, "events"), MESSAGE, format="json", HTTP_IDEMPOTENCY_KEY="msg-1")
    second = api.post(url(agent, "events"), MESSAGE, format="json", HTTP_IDEMPOTENCY_KEY="msg-1")
    assert first.status_code == second.status_code == 202
    assert first.json()["job"]["id"] == second.json()["job"]["id"]
    assert second["Idempotent-Replayed"] == "true" and not first.has_header("Idempotent-Replayed")
    assert Event.objects.filter(agent=agent).count() == 1
    assert PipelineRun.objects.filter(agent=agent, kind="write").count() == 1
    assert AuditEntry.objects.filter(action="event_write").count() == 1
    other = api.post(url(agent, "events"), MESSAGE, format="json", HTTP_IDEMPOTENCY_KEY="msg-2")
    assert other.json()["job"]["id"] != first.json()["job"]["id"]


def test_a_repeated_external_id_returns_the_stored_job(agent, api):
    first = api.post(url(agent, "events"), {**MESSAGE, "external_id": "chat-7"}, format="json")
    second = api.post(url(agent, "events"), {**MESSAGE, "external_id": "chat-7"}, format="json")
    assert first.json()["job"]["id"] == second.json()["job"]["id"]
    assert Event.objects.filter(agent=agent).count() == 1


def test_idempotency_keys_are_validated(agent, api):
    response = api.post(url(agent, "events"), MESSAGE, format="json", HTTP_IDEMPOTENCY_KEY="k" * 201)
    assert_error(response, 400, "invalid")
    assert "Idempotency-Key" in response.json()["error"]["fields"]
    assert not Event.objects.exists()


def test_dry_run_returns_the_write_result_and_stores_nothing(agent, api):
    response = api.post(url(agent, "events"), {**MESSAGE, "dry_run": True}, format="json")
    assert response.status_code == 200
    result = response.json()
    assert result["dry_run"] is True and result["success"] is True and result["event_id"] is None
    assert [f["text"] for f in result["facts_added"]] == ["Ana lives in Lisbon"]
    assert {e["key"] for e in result["entities_resolved"]} >= {"person:ana", "place:lisbon"}
    assert not Event.objects.exists() and not Fact.objects.exists()


def test_an_empty_message_adds_nothing(agent, api):
    response = api.post(url(agent, "events"), {"speaker": "Rafael", "text": "   "}, format="json")
    assert response.status_code == 200
    result = response.json()
    assert result["success"] is True and result["event_id"] is None and result["facts_added"] == []
    assert not Event.objects.exists()


@pytest.mark.parametrize("body,fields", [
    ({}, {"speaker", "text"}),
    ({"speaker": "", "text": "x"}, {"speaker"}),
    ({"speaker": "R", "text": 5}, {"text"}),  # never coerced
    ({"speaker": "R", "text": ["x"]}, {"text"}),
    ({"speaker": "R", "text": "x", "occurred_at": "yesterday"}, {"occurred_at"}),
    ({"speaker": "R", "text": "x", "occurred_at": "0001-01-01T00:00:00Z"}, {"occurred_at"}),
    ({"speaker": "R", "text": "x", "recent_messages": "not a list"}, {"recent_messages"}),
    ({"speaker": "R", "text": "x", "recent_messages": ["m"] * 21}, {"recent_messages"}),
    ({"speaker": "R", "text": "x", "config_overrides": []}, {"config_overrides"}),
    ({"speaker": "R", "text": "x", "config_overrides": {"x": 10**30}}, {"config_overrides"}),
    ({"speaker": "R" * 201, "text": "x"}, {"speaker"}),
    ({"speaker": "R", "text": "x", "external_id": "e" * 201}, {"external_id"}),
])
def test_invalid_writes_are_400_naming_the_field(agent, api, body, fields):
    response = api.post(url(agent, "events"), body, format="json")
    if not fields:
        assert response.status_code == 202
        return
    assert_error(response, 400, "invalid")
    error = response.json()["error"]
    assert set(error["fields"]) == fields
    for name in fields:
        assert name in error["message"]


@pytest.mark.parametrize("text,field", [("a\u0000b", "text"), ("\ud800", "text")])
def test_text_postgres_cannot_store_is_a_400(agent, api, text, field):
    raw = json.dumps({"speaker": "R", "text": text})  # json.dumps escapes them as \\u0000 / \\ud800
    response = api.generic("POST", url(agent, "events"), raw, content_type="application/json")
    assert_error(response, 400, "invalid")
    assert field in response.json()["error"]["fields"]


def test_unknown_config_overrides_are_a_400(agent, api):
    response = api.post(url(agent, "events"), {**MESSAGE, "config_overrides": {"nope": 1}}, format="json")
    assert_error(response, 400, "invalid_config")
    assert response.json()["error"]["fields"]["unknown"] == ["nope"]
    assert not Event.objects.exists()


def test_a_message_over_the_limit_is_413(agent, api):
    response = api.post(url(agent, "events"), {"speaker": "R", "text": "x" * 40_000}, format="json")
    assert_error(response, 413, "payload_too_large")
    assert "32768" in response.json()["error"]["message"]
    assert not Event.objects.exists()


def test_a_body_over_256_kib_is_413_before_parsing(agent, api):
    body = '{"speaker": "R", "text": "' + "x" * (300 * 1024) + '"'  # not even valid JSON
    response = api.generic("POST", url(agent, "events"), body, content_type="application/json")
    assert_error(response, 413, "payload_too_large")


def test_the_event_log_is_filtered_and_paginated(seeded, api):
    api.post(url(seeded, "events"), {**MESSAGE, "speaker": "Ana", "external_id": "x-1"}, format="json")
    everything = api.get(url(seeded, "events")).json()["results"]
    assert len(everything) == 4 and everything[0]["speaker"] == "Ana"  # newest first
    assert everything[0]["job"] == PipelineRun.objects.get(event_id=everything[0]["id"]).id
    assert [e["speaker"] for e in api.get(url(seeded, "events") + "?speaker=Ana").json()["results"]] == ["Ana"]
    assert len(api.get(url(seeded, "events") + "?external_id=x-1").json()["results"]) == 1
    window = api.get(url(seeded, "events"), {"occurred_after": "2024-01-06T00:00:00Z",
                                             "occurred_before": "2024-01-07T00:00:00Z"})
    assert [e["text"] for e in window.json()["results"]] == ["My boss Marta prefers tea."]
    bad = api.get(url(seeded, "events") + "?occurred_after=soon")
    assert_error(bad, 400, "invalid")
    assert "occurred_after" in bad.json()["error"]["fields"]

    page = api.get(url(seeded, "events") + "?page_size=3").json()
    assert len(page["results"]) == 3 and page["next"]
    rest = api.get(page["next"]).json()
    assert len(rest["results"]) == 1 and rest["previous"]
    assert {e["id"] for e in page["results"]}.isdisjoint({e["id"] for e in rest["results"]})


def test_jobs_are_listed_with_results(seeded, api):
    jobs = api.get(url(seeded, "jobs") + "?status=succeeded").json()["results"]
    assert len(jobs) == 3
    assert all(j["result"]["success"] and j["duration_ms"] > 0 and j["attempts"] == 1 for j in jobs)
    assert {f["text"] for j in jobs for f in j["result"]["facts_added"]} >= {"Ricardo Gomes lives in São Paulo"}
    assert api.get(url(seeded, "jobs") + "?status=queued").json()["results"] == []
    assert_error(api.get(url(seeded, "jobs") + "?status=lost"), 400, "invalid")
    assert_error(api.get(url(seeded, "jobs", 999999)), 404, "not_found")


def test_wait_without_a_worker_gives_up_with_the_job(agent, api, settings):
    settings.ANAMNESIS_API_MAX_WAIT_SECONDS = 0.3
    response = api.post(url(agent, "events") + "?wait=true&wait_timeout=30", MESSAGE, format="json")
    assert response.status_code == 202 and response.json()["job"]["status"] == "queued"
    assert_error(api.post(url(agent, "events") + "?wait_timeout=31", MESSAGE, format="json"), 400, "invalid")
