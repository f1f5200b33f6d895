"""What the ASGI entry point refuses before any app runs (memory_project.asgi_guards): request
bodies past the size limit — a chunked one read only up to it, a chunked one within it parsed like
any other — and websocket upgrades to unknown paths, refused at the handshake without a traceback.

In-process through `memory_project.asgi.application` (hand-made ASGI messages, so what was read
is counted exactly), and under uvicorn in a thread of this process for what a real client sees."""

from __future__ import annotations

import asyncio
import json
import logging
import socket
import threading
import time

import httpx
import pytest
from asgiref.sync import async_to_sync
from asgiref.testing import ApplicationCommunicator
from django.core.signals import request_finished, request_started
from django.db import close_old_connections
from websockets.exceptions import InvalidStatus
from websockets.sync.client import connect as websocket_connect

from memories.models import Event
from memories.services.api_keys import api_key_create
from memory_project.api.parsers import max_body_bytes
from memory_project.asgi import application
from tests.faults.figures import record

MiB = 1024 * 1024


def http_scope(method: str, path: str, headers: list[tuple[bytes, bytes]]) -> dict:
    return {"type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1", "method": method, "scheme": "http",
            "path": path, "raw_path": path.encode(), "query_string": b"", "root_path": "",
            "headers": [(b"host", b"127.0.0.1"), *headers], "client": ("127.0.0.1", 50000),
            "server": ("127.0.0.1", 8000)}


def drive(scope: dict, chunks) -> tuple[int, dict, bytes, int]:
    """Run the application on one request whose body arrives as `chunks` (an iterator of bytes);
    returns the status, headers, body and how many body bytes the application took."""
    taken = 0
    chunks = iter(chunks)
    pending = next(chunks, None)
    answer: dict = {"status": None, "headers": {}, "body": b""}

    async def receive():
        nonlocal taken, pending
        if pending is None:
            await asyncio.sleep(3600)  # nothing more: wait as a quiet client would
        piece, pending = pending, next(chunks, None)
        taken += len(piece)
        return {"type": "http.request", "body": piece, "more_body": pending is not None}

    async def send(message):
        if message["type"] == "http.response.start":
            answer["status"] = message["status"]
            answer["headers"] = {k.decode().lower(): v.decode() for k, v in message.get("headers", [])}
        elif message["type"] == "http.response.body":
            answer["body"] += message.get("body", b"")

    # as Django's test clients do: the request's signals must not close the test's connection
    for signal in (request_started, request_finished):
        signal.disconnect(close_old_connections)
    try:
        async_to_sync(application)(scope, receive, send)
    finally:
        for signal in (request_started, request_finished):
            signal.connect(close_old_connections)
    return answer["status"], answer["headers"], answer["body"], taken


def pieces(total: int, size: int = 64 * 1024):
    sent = 0
    while sent < total:
        n = min(size, total - sent)
        sent += n
        yield b"x" * n


# --- request bodies --------------------------------------------------------------------------------

@pytest.mark.django_db
def test_a_chunked_json_body_is_parsed_like_any_other(agent):
    key = api_key_create(agent=agent, scope="write")[1]
    body = json.dumps({"speaker": "Rafael", "text": "Marta prefers tea."}).encode()
    scope = http_scope("POST", f"/api/v1/agents/{agent.slug}/events/", [
        (b"authorization", f"Bearer {key}".encode()), (b"content-type", b"application/json"),
        (b"transfer-encoding", b"chunked")])
    status, _, answer, taken = drive(scope, [body[:10], body[10:25], body[25:]])
    assert status == 202, answer[:300]
    assert taken == len(body)
    assert Event.objects.get(agent=agent).text == "Marta prefers tea."


def test_a_100_mb_chunked_body_is_refused_without_being_read(db):
    limit = max_body_bytes()
    scope = http_scope("POST", "/api/v1/agents/test-agent/events/", [
        (b"content-type", b"application/json"), (b"transfer-encoding", b"chunked")])
    status, headers, answer, taken = drive(scope, pieces(100 * MiB))
    assert status == 413
    error = json.loads(answer)["error"]
    assert error["code"] == "payload_too_large" and "body" in error["fields"]
    assert limit < taken <= limit + 64 * 1024  # one piece past the limit, then nothing more
    assert headers["connection"] == "close"
    record("attack_chunked_body", title="A 100 MB chunked request body (no Content-Length)", passed=True,
           figures={"answer": status, "bytes read before refusing": taken, "limit": limit})


def test_a_declared_length_over_the_limit_is_refused_before_any_byte_is_read(db):
    scope = http_scope("POST", "/ui/login/", [(b"content-type", b"application/x-www-form-urlencoded"),
                                              (b"content-length", str(100 * MiB).encode())])
    status, _, _, taken = drive(scope, pieces(100 * MiB))
    assert (status, taken) == (413, 0)


@pytest.mark.django_db
def test_bodies_within_the_limit_pass_unchanged(agent):
    key = api_key_create(agent=agent, scope="write")[1]
    body = json.dumps({"speaker": "Rafael", "text": "Clara works at Orion Tech."}).encode()
    scope = http_scope("POST", f"/api/v1/agents/{agent.slug}/events/", [
        (b"authorization", f"Bearer {key}".encode()), (b"content-type", b"application/json"),
        (b"content-length", str(len(body)).encode())])
    status, _, _, taken = drive(scope, [body])
    assert (status, taken) == (202, len(body))


# --- websockets ------------------------------------------------------------------------------------

@pytest.mark.parametrize("path", ["/ws/nope/", "/ws/ui/agents/not a slug/", "/", "/api/v1/"])
def test_an_upgrade_to_an_unknown_path_is_refused_without_a_traceback(db, caplog, path):
    caplog.set_level(logging.INFO)
    socket_ = ApplicationCommunicator(application, {
        "type": "websocket", "path": path, "raw_path": path.encode(), "query_string": b"",
        "headers": [(b"host", b"127.0.0.1"), (b"origin", b"http://127.0.0.1")], "subprotocols": [],
        "client": ("127.0.0.1", 50000), "server": ("127.0.0.1", 8000)})

    async def handshake():
        await socket_.send_input({"type": "websocket.connect"})
        answer = await socket_.receive_output(5)
        await socket_.wait(5)
        return answer

    answer = async_to_sync(handshake)()
    assert answer == {"type": "websocket.close", "code": 4404}
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR or r.exc_info]


# --- under a real server ---------------------------------------------------------------------------

@pytest.fixture
def live_server_url(transactional_db, monkeypatch):
    """The project's ASGI application under uvicorn in a thread of this process; its requests
    close their database connections when they finish, so none outlives the test."""
    import uvicorn
    from django.db import connection

    monkeypatch.setitem(connection.settings_dict, "CONN_MAX_AGE", 0)

    port = next(p for p in range(8091, 8099) if socket.socket().connect_ex(("127.0.0.1", p)) != 0)
    server = uvicorn.Server(uvicorn.Config(application, host="127.0.0.1", port=port, lifespan="off",
                                           log_level="info"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started and time.monotonic() < deadline:
        time.sleep(0.05)
    assert server.started, "uvicorn did not start"
    yield f"127.0.0.1:{port}"
    server.should_exit = True
    thread.join(15)


def test_a_real_client_gets_a_403_for_an_unknown_websocket_and_its_chunked_post_parsed(agent, live_server_url,
                                                                                       caplog):
    caplog.set_level(logging.INFO)
    with pytest.raises(InvalidStatus) as refused:
        websocket_connect(f"ws://{live_server_url}/ws/nope/", origin="http://127.0.0.1", open_timeout=10)
    assert refused.value.response.status_code == 403

    key = api_key_create(agent=agent, scope="write")[1]
    body = json.dumps({"speaker": "Rafael", "text": "Marta prefers tea."}).encode()

    def chunked():  # a generator body: httpx sends it chunked, without a Content-Length
        yield body[:7]
        yield body[7:]

    response = httpx.post(f"http://{live_server_url}/api/v1/agents/{agent.slug}/events/", content=chunked(),
                          headers={"Authorization": f"Bearer {key}", "Content-Type": "application/json"},
                          timeout=30)
    assert response.request.headers.get("transfer-encoding") == "chunked"
    assert response.status_code == 202, response.text
    assert Event.objects.get(agent=agent).text == "Marta prefers tea."
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR or r.exc_info]
    record("attack_websocket_unknown_path", title="A websocket upgrade to an unknown path", passed=True,
           figures={"answer": refused.value.response.status_code, "tracebacks": 0})


def test_a_write_waiting_for_its_job_lets_the_next_request_run_meanwhile(agent, live_server_url, monkeypatch,
                                                                         settings):
    """One request at a time, and a patience no request reaches: a GET sent while a write waits
    for its job (`?wait=true`, and no worker runs here) is answered while the write still waits,
    because the write gave its turn up (memories.turns.waiting)."""
    from memory_project import asgi

    monkeypatch.setattr(asgi.django_turns, "limit", 1)
    monkeypatch.setattr(asgi.django_turns, "patience", 600.0)
    settings.ANAMNESIS_API_MAX_WAIT_SECONDS = 8
    key = api_key_create(agent=agent, scope="write")[1]
    headers = {"Authorization": f"Bearer {key}"}
    base = f"http://{live_server_url}/api/v1/agents/{agent.slug}/"
    answers: dict = {}

    def write():
        answers["write"] = httpx.post(base + "events/?wait=true&wait_timeout=8", headers=headers, timeout=60,
                                      json={"speaker": "Rafael", "text": "Marta moved to Braga."})

    writer = threading.Thread(target=write)
    writer.start()
    deadline = time.monotonic() + 20
    while not Event.objects.filter(agent=agent).exists() and time.monotonic() < deadline:
        time.sleep(0.05)  # stored: the write is waiting for its job now
    answer = httpx.get(base, headers=headers, timeout=60)
    still_waiting = writer.is_alive()
    writer.join(60)
    assert answer.status_code == 200 and answer.json()["slug"] == agent.slug
    assert still_waiting, "the GET was answered only after the write had stopped waiting"
    assert answers["write"].status_code == 202 and answers["write"].json()["job"]["status"] == "queued"
