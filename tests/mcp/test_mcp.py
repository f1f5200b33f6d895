"""The MCP server through the SDK's own client, over stdio (a `manage.py mcp` subprocess) and
streamable HTTP (uvicorn serving the ASGI app on 127.0.0.1), with the API keys' scopes."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import time
from contextlib import asynccontextmanager
from datetime import UTC, datetime

import httpx
import httpx2
import pytest
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client

from memories.services.agents import agent_get_or_create
from memories.services.api_keys import api_key_create
from memories.services.write import memory_write
from tests.support.worker import ROOT, worker_env

PORT = 8043
TOOLS = {"remember", "recall", "fact_history", "search_entities", "correct_fact", "forget_entity"}
pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]


def key(agent, scope):
    return api_key_create(agent=agent, scope=scope)[1]


@pytest.fixture
def world(db):
    ana = agent_get_or_create(slug="mcp-agent")
    other = agent_get_or_create(slug="mcp-other")
    memory_write(agent=ana, message="Clara works at Orion Tech.", speaker_name="Rafael",
                 occurred_at=datetime(2024, 1, 5, 10, tzinfo=UTC))
    return ana, other


@pytest.fixture
def http_server(world):
    env = {**worker_env(), "DJANGO_ALLOWED_HOSTS": "127.0.0.1,localhost"}
    proc = subprocess.Popen(
        [str(os.path.join(os.path.dirname(sys.executable), "uvicorn")), "memory_project.asgi:application",
         "--host", "127.0.0.1", "--port", str(PORT), "--log-level", "warning"],
        cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True)
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"uvicorn exited: {proc.stderr.read().decode()[-2000:]}")
        try:
            if httpx.get(f"http://127.0.0.1:{PORT}/api/v1/health/", timeout=2).status_code == 200:
                break
        except httpx.HTTPError:
            time.sleep(0.5)
    yield f"http://127.0.0.1:{PORT}/mcp/"
    proc.terminate()
    try:
        proc.wait(timeout=15)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


@asynccontextmanager
async def http_session(url, api_key):
    headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
    async with httpx2.AsyncClient(headers=headers, timeout=60) as client, \
            streamable_http_client(url, http_client=client) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        yield session


@asynccontextmanager
async def stdio_session(env, api_key):
    """`env`: the test database's, computed outside the event loop (where Django's connection is
    the test run's)."""
    params = StdioServerParameters(command=sys.executable, args=["manage.py", "mcp"], cwd=str(ROOT),
                                   env={**env, "ANAMNESIS_MCP_KEY": api_key})
    with open(os.devnull, "w") as devnull:
        async with stdio_client(params, errlog=devnull) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            yield session


async def call(session, tool, **args):
    result = await session.call_tool(tool, args)
    text = "".join(getattr(c, "text", "") for c in result.content)
    if result.is_error:
        return {"error": text}
    data = result.structured_content
    if isinstance(data, dict) and set(data) == {"result"}:
        data = data["result"]
    return data if data is not None else json.loads(text)


async def exercise(open_session, keys, agents, *, stdio=False):
    ana, other = agents
    async with open_session(keys["read"]) as s:
        assert {t.name for t in (await s.list_tools()).tools} >= TOOLS
        found = await call(s, "search_entities", query="clara")
        assert [e["name"] for e in found] == ["Clara"]
        assert "write" in (await call(s, "remember", text="I like tea."))["error"]
        assert "not found" in (await call(s, "search_entities", query="clara", agent=other.slug))["error"]
        profile = await s.read_resource(f"anamnesis://agents/{ana.slug}/entities/{found[0]['key']}/profile")
        assert json.loads(profile.contents[0].text)["name"] == "Clara"
    async with open_session(keys["write"]) as s:
        added = await call(s, "remember", text="Clara moved to Lisbon.", occurred_at="2024-03-01T10:00:00Z")
        assert any("Lisbon" in f for f in added["facts_added"])
        now = await call(s, "recall", query="Where does Clara live?")
        assert "Lisbon" in now["context"]
        before = await call(s, "recall", query="Where does Clara live?", as_of="2024-02-01T00:00:00Z")
        assert "Lisbon" not in before["context"]
        fact_id = next(f["id"] for f in now["facts"] if "Lisbon" in f["text"])
        corrected = await call(s, "correct_fact", fact_id=fact_id, text="Clara lives in Porto", reason="misheard")
        history = await call(s, "fact_history", fact_id=corrected["id"])
        assert [h["text"] for h in history][-2:] == [next(f["text"] for f in now["facts"] if f["id"] == fact_id),
                                                      "Clara lives in Porto"]
        assert "admin" in (await call(s, "forget_entity", entity=found[0]["key"]))["error"]
    async with open_session(keys["admin"]) as s:
        report = await call(s, "forget_entity", entity=found[0]["key"], reason="asked to")
        assert report["entities_deleted"] == 1
        assert await call(s, "search_entities", query="clara") == []
    if stdio:  # the server refuses to start without a valid key
        with pytest.raises(BaseException, match="Connection closed|unhandled errors"):
            async with open_session("anm_not-a-key") as s:
                pass
    else:
        async with open_session("anm_not-a-key") as s:
            assert "unauthorized" in (await call(s, "search_entities", query="clara"))["error"]


def test_mcp_tools_over_streamable_http(world, http_server):
    ana, other = world
    keys = {scope: key(ana, scope) for scope in ("read", "write", "admin")}
    asyncio.run(exercise(lambda k: http_session(http_server, k), keys, world))


def test_an_all_agents_key_names_the_agent_over_http(world, http_server):
    ana, _ = world
    every = key(None, "read")

    async def run():
        async with http_session(http_server, every) as s:
            assert "agent is required" in (await call(s, "search_entities", query="clara"))["error"]
            assert len(await call(s, "search_entities", query="clara", agent=ana.slug)) == 1

    asyncio.run(run())


def test_mcp_tools_over_stdio(world):
    ana, other = world
    keys = {scope: key(ana, scope) for scope in ("read", "write", "admin")}
    env = worker_env()
    asyncio.run(exercise(lambda k: stdio_session(env, k), keys, world, stdio=True))
