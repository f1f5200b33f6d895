"""The HTTP surface: one error shape for every 4xx, health, the OpenAPI schema and docs, traces,
and query counts of the list endpoints."""

from __future__ import annotations

import io

import pytest
import yaml
from django.core.management import call_command
from django.db import connection
from django.test.utils import CaptureQueriesContext

from memories.models import PipelineRun
from memories.services.write import memory_write
from tests.api.conftest import url
from tests.api.test_auth import assert_error

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize("raw,content_type,status,code", [
    ('{"speaker": "R", "text": ', "application/json", 400, "parse_error"),
    ("[1, 2]", "application/json", 400, "invalid"),
    ('"just a string"', "application/json", 400, "invalid"),
    ('{"speaker": "R", "text": NaN}', "application/json", 400, "parse_error"),
    ("[" * 5000 + "]" * 5000, "application/json", 400, "parse_error"),
    ("speaker=R&text=hi", "application/x-www-form-urlencoded", 415, "unsupported_media_type"),
    ("\xff\xfe", "application/json", 400, "parse_error"),
])
def test_malformed_bodies_get_the_error_shape(agent, api, raw, content_type, status, code):
    response = api.generic("POST", url(agent, "events"), raw.encode("latin-1"), content_type=content_type)
    assert_error(response, status, code)


def test_wrong_methods_and_unknown_urls_get_the_error_shape(agent, api):
    assert_error(api.put(url(agent, "facts"), {}, format="json"), 405, "method_not_allowed")
    assert_error(api.delete(url(agent, "events", 1)), 405, "method_not_allowed")
    assert_error(api.get("/api/v1/nothing/here/"), 404, "not_found")
    assert_error(api.get(url(agent, "facts", "1" * 25)), 404, "not_found")
    assert_error(api.get(url(agent, "facts", "-3")), 404, "not_found")
    assert_error(api.get(url("bad slug!", "facts")), 404, "not_found")
    assert_error(api.get(url(agent, "facts") + "?cursor=garbage"), 400, "invalid")  # bad input, not a page
    assert_error(api.get(url(agent, "facts") + "?cursor=cD1hYmM="), 400, "invalid")  # p=abc


def test_health_reports_each_dependency(client):
    response = client.get("/api/v1/health/")
    assert response.status_code == 200
    body = response.json()
    assert body["status"] == "ok"
    assert set(body["checks"]) == {"database", "broker", "embedding"}
    assert all(check["ok"] and check["error"] is None for check in body["checks"].values())


def test_health_is_503_when_the_broker_is_down(client, settings):
    settings.CELERY_BROKER_URL = "redis://127.0.0.1:1/0"  # nothing listens on port 1
    response = client.get("/api/v1/health/")
    assert response.status_code == 503
    body = response.json()
    assert body["status"] == "unavailable"
    assert body["checks"]["broker"]["ok"] is False and body["checks"]["broker"]["error"]
    assert body["checks"]["database"]["ok"] is True


def test_the_schema_is_served_and_validates(client):
    response = client.get("/api/v1/schema/")
    assert response.status_code == 200
    schema = yaml.safe_load(response.content)
    assert schema["openapi"].startswith("3.")
    assert schema["components"]["securitySchemes"]["apiKey"]["scheme"] == "bearer"
    paths = schema["paths"]
    assert "/api/v1/agents/{agent}/facts/{id}/history/" in paths
    write = paths["/api/v1/agents/{agent}/events/"]["post"]
    assert {"200", "202", "400", "401", "404", "413"} <= set(write["responses"])
    assert any(p["name"] == "Idempotency-Key" and p["in"] == "header" for p in write["parameters"])
    out = io.StringIO()
    call_command("spectacular", "--validate", "--fail-on-warn", "--file", "/dev/null", stdout=out, stderr=out)


def test_the_interactive_docs_are_served(client):
    response = client.get("/api/v1/docs/")
    assert response.status_code == 200 and b"swagger" in response.content.lower()


def test_traces_list_and_detail(seeded, api):
    runs = api.get(url(seeded, "traces") + "?kind=write&status=succeeded").json()["results"]
    assert len(runs) == 3 and all(r["step_count"] > 3 for r in runs)
    detail = api.get(url(seeded, "traces", runs[0]["id"])).json()
    assert detail["steps"] and detail["input_ref"].startswith("event:")
    assert_error(api.get(url(seeded, "traces") + "?kind=sleep"), 400, "invalid")
    assert_error(api.get(url(seeded, "traces", 999999)), 404, "not_found")
    assert PipelineRun.objects.filter(agent=seeded).count() == 3


@pytest.mark.parametrize("resource", ["facts", "events", "entities", "relationships", "traces", "jobs"])
def test_list_queries_do_not_grow_with_the_page(seeded, api, resource):
    def queries() -> int:
        with CaptureQueriesContext(connection) as ctx:
            assert api.get(url(seeded, resource)).status_code == 200
        return len(ctx.captured_queries)

    queries()  # the key's first use also notes last_used_at
    before = queries()
    memory_write(agent=seeded, message="Bruno Lima works at Vertex Labs.", speaker_name="Rafael")
    memory_write(agent=seeded, message="Julia Souza lives in Recife.", speaker_name="Rafael")
    assert queries() == before
