"""GET agents/{agent}/export/ and POST agents/{agent}/import/: admin only (and creating an agent
needs the right to create agents), the export streamed as JSON Lines — also under the ASGI
server, chunk by chunk — and an import that stores everything or, for a bad file, nothing, with a
400 naming the line."""

from __future__ import annotations

import asyncio
import json
import warnings

import pytest
from asgiref.sync import async_to_sync
from django.core.signals import request_finished, request_started
from django.db import close_old_connections

from memories.models import Agent, Entity, Event, Fact, KeywordPosting, PipelineRun
from memories.portability.format import MEDIA_TYPE
from memories.services.api_keys import api_key_create
from memories.services.entities import entity_describe
from memory_project.asgi import application
from tests.api.conftest import url
from tests.test_asgi_guards import drive, http_scope

pytestmark = pytest.mark.django_db


def exported(api, agent) -> bytes:
    response = api.get(url(agent, "export"))
    assert response.status_code == 200, response.content
    return b"".join(response.streaming_content)


def post_file(api, slug: str, body: bytes):
    return api.post(url(slug, "import"), data=body, content_type=MEDIA_TYPE)


def test_only_the_admin_scope_exports_and_only_who_creates_agents_imports(seeded, other_agent, make_key, client_for):
    admin = client_for(make_key(None, "admin"))
    body = exported(admin, seeded)
    for scope in ("read", "write"):
        api = client_for(make_key(None, scope))
        for response in (api.get(url(seeded, "export")), post_file(api, "copy", body)):
            assert response.status_code == 403
            assert f"needs the 'admin' scope; your credentials have '{scope}'" in response.json()["error"]["message"]
    bound = client_for(make_key(seeded, "admin"))
    assert bound.get(url(seeded, "export")).status_code == 200  # its own agent
    assert bound.get(url(other_agent, "export")).status_code == 404  # another agent's does not exist for it
    refused = post_file(bound, "copy", body)
    assert refused.status_code == 403 and "create" in refused.json()["error"]["message"]
    assert not Agent.objects.filter(slug="copy").exists()


def test_the_export_is_streamed_json_lines(seeded, make_key, client_for):
    response = client_for(make_key(seeded, "admin")).get(url(seeded, "export"))
    assert response.status_code == 200 and response.streaming
    assert response["Content-Type"] == MEDIA_TYPE
    assert response["Content-Disposition"].startswith(f'attachment; filename="{seeded.slug}-')
    lines = b"".join(response.streaming_content).decode().splitlines()
    header = json.loads(lines[0])
    assert (header["format"], header["version"], header["agent"]["slug"]) == ("anamnesis-agent-export", 1,
                                                                             seeded.slug)
    rows = [json.loads(line) for line in lines[1:]]
    assert sum(header["counts"].values()) == len(rows)
    assert [r["text"] for r in rows if r["type"] == "event"] == list(
        Event.objects.filter(agent=seeded).order_by("id").values_list("text", flat=True))


def test_an_imported_agent_answers_like_the_original(seeded, make_key, client_for):
    admin = client_for(make_key(None, "admin"))
    response = post_file(admin, "copy", exported(admin, seeded))
    assert response.status_code == 201, response.content
    report = response.json()
    copy = Agent.objects.get(slug="copy")
    assert report["agent"]["slug"] == "copy" and response["Location"].endswith("/api/v1/agents/copy/")
    assert report["rows"]["fact"] == Fact.objects.filter(agent=copy).count() == Fact.objects.filter(
        agent=seeded).count()
    assert report["vectors"] > 0 and report["source"]["agent"]["slug"] == seeded.slug
    asked = {"query": "Where does Ricardo live?", "limit": 5, "as_of": "2024-01-06T00:00:00Z"}

    def texts(slug):
        answer = admin.post(url(slug, "retrieve"), asked, format="json").json()
        return [(f["text"], f["score"]) for f in answer["facts"]], [(e["text"], e["score"]) for e in answer["events"]]
    assert texts("copy") == texts(seeded.slug) and texts("copy")[0]
    again = post_file(admin, "copy", exported(admin, seeded))
    assert again.status_code == 409 and again.json()["error"]["code"] == "conflict"


def test_a_truncated_file_is_a_400_naming_the_line_and_nothing_is_created(seeded, make_key, client_for):
    admin = client_for(make_key(None, "admin"))
    body = exported(admin, seeded)
    lines = body.splitlines(keepends=True)
    cut = b"".join(lines[:6]) + lines[6][: len(lines[6]) // 2]  # the file ends inside line 7
    before = [model.objects.count() for model in (Agent, Event, Fact, KeywordPosting, PipelineRun)]
    response = post_file(admin, "copy", cut)
    assert response.status_code == 400
    error = response.json()["error"]
    assert error["code"] == "invalid_export_file" and error["fields"]["line"] == 7
    assert error["message"].startswith("line 7: not a complete JSON object")
    assert [model.objects.count() for model in (Agent, Event, Fact, KeywordPosting, PipelineRun)] == before
    # cut between two lines: the header's counts tell
    response = post_file(admin, "copy", b"".join(lines[:-2]))
    assert response.status_code == 400 and "truncated" in response.json()["error"]["message"]
    header = json.loads(lines[0])
    response = post_file(admin, "copy", json.dumps({**header, "version": 9}).encode() + b"\n" + b"".join(lines[1:]))
    assert response.status_code == 400 and response.json()["error"]["code"] == "unsupported_export_version"
    assert post_file(admin, "copy", b"").json()["error"]["message"].startswith("the file is empty")
    assert not Agent.objects.filter(slug="copy").exists()


def test_an_import_over_its_size_limit_is_refused(seeded, make_key, client_for, settings):
    admin = client_for(make_key(None, "admin"))
    body = exported(admin, seeded)
    settings.ANAMNESIS_IMPORT_MAX_BYTES = len(body) - 1
    response = post_file(admin, "copy", body)
    assert response.status_code == 413 and response.json()["error"]["code"] == "payload_too_large"


def _asgi_get(path: str, key: str) -> list[bytes]:
    """The body messages the application sends for a GET, in order."""
    scope = http_scope("GET", path, [(b"authorization", f"Bearer {key}".encode())])
    sent: list[dict] = []
    requested = []

    async def receive():
        if not requested:
            requested.append(True)
            return {"type": "http.request", "body": b"", "more_body": False}
        await asyncio.sleep(3600)  # a client that stays connected

    async def send(message):
        sent.append(message)

    for signal in (request_started, request_finished):
        signal.disconnect(close_old_connections)
    try:
        async_to_sync(application)(scope, receive, send)
    finally:
        for signal in (request_started, request_finished):
            signal.connect(close_old_connections)
    assert sent[0]["status"] == 200
    return [m.get("body", b"") for m in sent if m["type"] == "http.response.body"]


def test_under_the_asgi_server_the_export_streams_and_a_large_import_passes(seeded, monkeypatch):
    from memories.api import views_portability

    monkeypatch.setattr(views_portability, "CHUNK_BYTES", 1024)
    key = api_key_create(agent=None, scope="admin")[1]
    ricardo = Entity.objects.get(agent=seeded, display_name="Ricardo Gomes")
    notes = " ".join(f"Ricardo mentioned his cousin number {n} lives near the river." for n in range(3000))
    entity_describe(agent=seeded, entity_id=ricardo.id, actor="user:op", profile_text=notes)  # a long profile
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # Django warns when it must gather a response before sending it
        pieces = _asgi_get(f"/api/v1/agents/{seeded.slug}/export/", key)
    body = b"".join(pieces)
    assert len([p for p in pieces if p]) > 3 and json.loads(body.splitlines()[0])["agent"]["slug"] == seeded.slug
    assert len(body) > 256 * 1024  # over the API's body limit: the import path has its own
    headers = [(b"authorization", f"Bearer {key}".encode()), (b"content-type", MEDIA_TYPE.encode())]
    status, _, answer, taken = drive(http_scope("POST", "/api/v1/agents/copy/import/", [
        *headers, (b"content-length", str(len(body)).encode())]), [body[i:i + 65536]
                                                                   for i in range(0, len(body), 65536)])
    assert status == 201, answer[:300]
    assert taken == len(body) and Fact.objects.filter(agent__slug="copy").count() == Fact.objects.filter(
        agent=seeded).count()
    # a chunked import is refused before it is read: it would have to be held in memory
    status, _, answer, taken = drive(http_scope("POST", "/api/v1/agents/copy2/import/", [
        *headers, (b"transfer-encoding", b"chunked")]), [body])
    assert (status, taken) == (411, 0) and json.loads(answer)["error"]["code"] == "length_required"
