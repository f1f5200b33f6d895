"""The MCP server answers like the REST API, operation for operation: the same scopes (`recall`
takes a read key, as `retrieve/` does), the same audit entry for a write, the same checks of the
arguments (a tool error naming the argument, never a traceback or a database error), and invalid
keys over HTTP throttled per client address by the REST API's own throttle.

In-process: the streamable-HTTP app under httpx's ASGI transport with its lifespan running, and
the event loop driven by async_to_sync so the tools' database work runs in the test's thread
(inside its transaction)."""

from __future__ import annotations

import dataclasses
import json
import logging
from contextlib import asynccontextmanager
from datetime import UTC, datetime

import httpx2
import pytest
from asgiref.sync import async_to_sync, sync_to_async
from django.db import connection
from django.test.utils import CaptureQueriesContext
from mcp.client.session import ClientSession
from mcp.client.streamable_http import streamable_http_client
from rest_framework.test import APIClient

from memories.models import ApiKey, AuditEntry, Entity, ErasureReceipt, Event, Fact
from memories.services.api_keys import api_key_create
from memories.services.forget import ForgetReport
from memories.services.write import memory_write
from memory_project import mcp as mcp_server
from tests.api.conftest import url
from tests.faults.figures import record

pytestmark = pytest.mark.django_db
BASE = "http://127.0.0.1"


@pytest.fixture(autouse=True)
def _fresh_throttle_cache():
    from django.core.cache import cache

    cache.clear()
    yield
    cache.clear()


@pytest.fixture
def world(agent):
    memory_write(agent=agent, message="Clara works at Orion Tech.", speaker_name="Rafael",
                 occurred_at=datetime(2024, 1, 5, 10, tzinfo=UTC))
    return agent


def key(agent, scope):
    return api_key_create(agent=agent, scope=scope)[1]


@asynccontextmanager
async def mcp_app(address: str = "127.0.0.1"):
    """A fresh streamable-HTTP app (its session manager runs once) and an HTTP client from `address`."""
    app = mcp_server.http_app()
    starlette = app.app
    async with starlette.router.lifespan_context(starlette):
        transport = httpx2.ASGITransport(app=app, client=(address, 40000))
        async with httpx2.AsyncClient(transport=transport, base_url=BASE, timeout=60) as client:
            yield client


@asynccontextmanager
async def session(api_key: str, address: str = "127.0.0.1"):
    async with mcp_app(address) as client:
        client.headers["Authorization"] = f"Bearer {api_key}"
        async with streamable_http_client(f"{BASE}/mcp/", http_client=client) as (read, write), \
                ClientSession(read, write) as s:
            await s.initialize()
            yield s


async def call(s, tool, **args):
    result = await s.call_tool(tool, args)
    text = "".join(getattr(c, "text", "") for c in result.content)
    if result.is_error:
        return {"error": text}
    data = result.structured_content
    if isinstance(data, dict) and set(data) == {"result"}:
        data = data["result"]
    return data if data is not None else json.loads(text)


def run_tools(api_key: str, *calls: tuple[str, dict]) -> list:
    async def go():
        async with session(api_key) as s:
            return [await call(s, tool, **args) for tool, args in calls]

    return async_to_sync(go)()


def test_remember_writes_the_same_audit_entry_as_the_rest_write(world):
    writer = key(world, "write")
    [written] = run_tools(writer, ("remember", {"text": "Clara moved to Lisbon.", "speaker": "Rafael"}))
    assert "error" not in written, written
    entry = AuditEntry.objects.get(action="event_write", object_id=str(written["event_id"]))
    assert entry.actor == f"key:{writer[:8]}" and entry.agent == world

    rest = APIClient()
    rest.credentials(HTTP_AUTHORIZATION=f"Bearer {writer}")
    accepted = rest.post(url(world, "events"), {"speaker": "Rafael", "text": "Clara likes tea."}, format="json")
    over_rest = AuditEntry.objects.get(action="event_write", object_id=str(accepted.json()["job"]["event"]))
    assert (over_rest.actor, set(over_rest.after)) == (entry.actor, set(entry.after))


def test_every_tool_needs_the_scope_of_its_rest_operation(world):
    fact = Fact.objects.filter(agent=world).first()
    reader = key(world, "read")
    recalled, history, found, written, corrected = run_tools(
        reader, ("recall", {"query": "Where does Clara work?"}), ("fact_history", {"fact_id": fact.id}),
        ("search_entities", {"query": "clara"}), ("remember", {"text": "I like tea."}),
        ("correct_fact", {"fact_id": fact.id, "text": "Clara works at Vega", "reason": "x"}))
    assert "Orion" in recalled["context"]  # a read, as REST's retrieve/
    assert history[0]["id"] == fact.id and found[0]["name"] == "Clara"
    assert "'write' scope" in written["error"] and "'write' scope" in corrected["error"]
    [forgotten] = run_tools(key(world, "write"), ("forget_entity", {"entity": str(found[0]["id"])}))
    assert "'admin' scope" in forgotten["error"]


def test_a_tool_call_over_http_authenticates_its_key_once(world):
    """The gate in front of the MCP app authenticates the key; the tool uses what it found."""
    reader = key(world, "read")
    queries = CaptureQueriesContext(connection)

    def start_counting():  # in the test's thread, where the gate and the tools run their queries
        ApiKey.objects.update(last_used_at=None)  # so the call also notes the key's use: once
        queries.__enter__()

    async def go():
        async with mcp_app() as client:
            client.headers["Authorization"] = f"Bearer {reader}"
            async with streamable_http_client(f"{BASE}/mcp/", http_client=client) as (read, write), \
                    ClientSession(read, write) as s:
                await s.initialize()
                await s.list_tools()  # the client checks a tool's result against the schema listed
                await sync_to_async(start_counting)()
                found = await call(s, "search_entities", query="clara")
                await sync_to_async(queries.__exit__)(None, None, None)
        return found

    assert async_to_sync(go)()[0]["name"] == "Clara"
    on_keys = [q["sql"] for q in queries.captured_queries if ApiKey._meta.db_table in q["sql"]]
    assert [sql.split()[0] for sql in on_keys] == ["SELECT", "UPDATE"], [q[:60] for q in on_keys]


def test_forget_entity_answers_with_the_services_report_and_its_receipt(world):
    clara = Entity.objects.get(agent=world, display_name="Clara")
    [report] = run_tools(key(world, "admin"), ("forget_entity", {"entity": clara.key, "reason": "asked to"}))
    assert set(report) == {f.name for f in dataclasses.fields(ForgetReport)}
    assert report["entities_deleted"] == 1 and report["tables"]["memories_entity"]["deleted"] == 1
    assert ErasureReceipt.objects.get(pk=report["receipt_id"]).agent == world


HUGE = 10**30
BAD_ARGUMENTS = [
    ("remember", {"text": "Ana moved to Porto.\x00", "speaker": "Rafael"}, "text", "NUL"),
    ("remember", {"text": "Ana moved to Porto.", "speaker": "R" * 10_000}, "speaker", "200 characters"),
    ("remember", {"text": "Ana moved to Porto.", "speaker": "Ra\x00fael"}, "speaker", "NUL"),
    ("remember", {"text": 5, "speaker": "Rafael"}, "text", "valid string"),
    ("remember", {"text": "Ana moved to Porto.", "speaker": ["Rafael"]}, "speaker", "valid string"),
    ("remember", {"text": "Ana moved to Porto.", "occurred_at": "last tuesday"}, "occurred_at", "format"),
    ("remember", {"text": "Ana moved to Porto.", "occurred_at": "0001-01-01T00:00:00Z"}, "occurred_at", "1000"),
    ("remember", {"text": "Ana moved to Porto.", "agent": "test-agent\x00"}, "agent", "not found"),
    ("recall", {"query": "where?", "limit": "10"}, "limit", "valid integer"),
    ("recall", {"query": "where?", "limit": True}, "limit", "valid integer"),
    ("recall", {"query": "where?", "limit": HUGE}, "limit", "100"),
    ("recall", {"query": "where?", "limit": 0}, "limit", "1"),
    ("recall", {"query": "x" * 5000}, "query", "characters"),
    ("recall", {"query": "where\x00?"}, "query", "NUL"),
    ("fact_history", {"fact_id": HUGE}, "fact_id", "less than or equal"),
    ("fact_history", {"fact_id": "1"}, "fact_id", "valid integer"),
    ("search_entities", {"query": "cl\x00ara"}, "query", "NUL"),
    ("search_entities", {"query": "c" * 300}, "query", "200 characters"),
    ("correct_fact", {"fact_id": 1, "text": "t" * 5000, "reason": "r"}, "text", "4000 characters"),
    ("correct_fact", {"fact_id": 1, "text": "Clara works at Vega", "reason": "r" * 600}, "reason", "500"),
    ("forget_entity", {"entity": "person:cl\x00ara"}, "entity", "NUL"),
    ("forget_entity", {"entity": "p" * 1000}, "entity", "255 characters"),
]


@pytest.mark.parametrize(("tool", "args", "argument", "says"), BAD_ARGUMENTS,
                         ids=[f"{t}-{a}-{i}" for i, (t, _, a, _) in enumerate(BAD_ARGUMENTS)])
def test_a_bad_argument_is_a_clear_tool_error_naming_it(world, caplog, tool, args, argument, says):
    events = Event.objects.count()
    caplog.set_level(logging.INFO)
    [answer] = run_tools(key(world, "admin"), (tool, args))
    message = answer["error"]
    assert argument in message and says in message, message
    assert "Traceback" not in message and "DataError" not in message
    logged = [r for r in caplog.records if r.levelno >= logging.ERROR or "DataError" in r.getMessage()
              or r.exc_info]
    assert not logged, [r.getMessage() for r in logged]
    assert Event.objects.count() == events


def test_invalid_keys_are_throttled_per_client_like_rest_and_share_its_count(world, settings):
    settings.REST_FRAMEWORK = {**settings.REST_FRAMEWORK,
                               "DEFAULT_THROTTLE_RATES": {"api": "1200/min", "anon": "3/min"}}
    from rest_framework.settings import api_settings

    api_settings.reload()
    good = key(world, "read")
    ping = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
    accept = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}

    async def go():
        statuses = {}
        async with mcp_app("127.0.0.1") as client:
            bad = {**accept, "Authorization": "Bearer anm_guessed-key"}
            statuses["mcp_bad"] = [(await client.post("/mcp/", json=ping, headers=bad)).status_code for _ in range(2)]
            statuses["rest_bad"] = await sync_rest_bad()  # the third failure from this address, then a fourth
            throttled = await client.post("/mcp/", json=ping, headers=bad)
            statuses["mcp_after"] = (throttled.status_code, throttled.headers.get("retry-after"),
                                     throttled.json()["error"]["message"])
            statuses["mcp_good"] = (await client.post("/mcp/", json=ping, headers={
                **accept, "Authorization": f"Bearer {good}"})).status_code
        async with mcp_app("198.51.100.4") as elsewhere:
            statuses["other_address"] = (await elsewhere.post("/mcp/", json=ping, headers=bad)).status_code
        return statuses

    def rest_bad():
        client = APIClient(REMOTE_ADDR="127.0.0.1")
        client.credentials(HTTP_AUTHORIZATION="Bearer anm_guessed-key")
        return [client.get(url(world, "facts")).status_code for _ in range(2)]

    sync_rest_bad = sync_to_async(rest_bad, thread_sensitive=True)
    try:
        statuses = async_to_sync(go)()
    finally:
        api_settings.reload()
    assert statuses["mcp_bad"] == [200, 200]  # under the rate: the request goes on (its tools say unauthorized)
    assert statuses["rest_bad"] == [401, 429]  # REST counts the MCP failures: one count per address
    code, retry_after, message = statuses["mcp_after"]
    assert code == 429 and int(retry_after) > 0 and "invalid API key" in message
    assert statuses["mcp_good"] == 200  # a valid key from the same address is not held back
    assert statuses["other_address"] == 200
    answered = [*statuses["mcp_bad"], *statuses["rest_bad"]]
    record("attack_mcp_invalid_keys", title="MCP over HTTP: invalid keys from one address (rate 3/min in the test)",
           passed=True, figures={"requests answered before the 429": answered.index(429),
                                 "REST and MCP share the count": statuses["rest_bad"] == [401, 429],
                                 "other addresses unaffected": statuses["other_address"] == 200})
