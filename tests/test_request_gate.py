"""A web process runs its HTTP requests in Django a few at a time (memory_project.asgi_guards.
RequestGate): the others wait on the event loop for their turn, a request that waited its patience
runs anyway, a streamed response gives its turn up once it starts, and websockets, lifespan and
/mcp/ never wait. Hand-made ASGI messages against an app that counts how many requests it runs at
once, so what overlapped is observed, not timed."""

from __future__ import annotations

import asyncio

import pytest
from django.core.exceptions import ImproperlyConfigured

from memory_project.asgi_guards import RequestGate
from memory_project.settings.base import env_number

FOREVER = 3600.0


class CountingApp:
    """An ASGI app that answers 200 and records how many requests it was running at once. A
    request to a path in `held` waits for that path's event before it answers (or, with
    `stream`, between its response's start and its body)."""

    def __init__(self, *, stream: bool = False):
        self.running = 0
        self.most = 0
        self.finished: list[str] = []
        self.held: dict[str, asyncio.Event] = {}
        self.stream = stream

    async def __call__(self, scope, receive, send):
        path = scope.get("path", scope["type"])
        self.running += 1
        self.most = max(self.most, self.running)
        try:
            await asyncio.sleep(0)  # let any other admitted request start meanwhile
            if scope["type"] == "http":
                if self.stream:
                    await send({"type": "http.response.start", "status": 200, "headers": []})
                if path in self.held:
                    await self.held[path].wait()
                if not self.stream:
                    await send({"type": "http.response.start", "status": 200, "headers": []})
                await send({"type": "http.response.body", "body": b"ok"})
            self.finished.append(path)
        finally:
            self.running -= 1


def http(path: str) -> dict:
    return {"type": "http", "path": path, "method": "GET", "headers": []}


async def call(gate: RequestGate, scope: dict) -> list[dict]:
    sent: list[dict] = []

    async def receive():
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message):
        sent.append(message)

    await gate(scope, receive, send)
    return sent


def bounded(coroutine) -> None:
    """Run a test's coroutine; a request left waiting for a turn fails it instead of hanging it."""
    asyncio.run(asyncio.wait_for(coroutine, 20))


async def wait_until(condition) -> None:
    while not condition():
        await asyncio.sleep(0.001)


def test_requests_take_turns_one_at_a_time():
    app = CountingApp()

    async def run():
        gate = RequestGate(app, limit=1, patience=FOREVER)
        answers = await asyncio.gather(*(call(gate, http(f"/r{i}")) for i in range(8)))
        assert all(a[0]["status"] == 200 and a[-1]["body"] == b"ok" for a in answers)

    bounded(run())
    assert app.most == 1
    assert sorted(app.finished) == sorted(f"/r{i}" for i in range(8))


def test_a_limit_of_two_runs_two_at_once_and_no_limit_runs_all():
    two, unlimited = CountingApp(), CountingApp()

    async def run():
        gate = RequestGate(two, limit=2, patience=FOREVER)
        await asyncio.gather(*(call(gate, http(f"/r{i}")) for i in range(6)))
        gate = RequestGate(unlimited, limit=0, patience=FOREVER)
        await asyncio.gather(*(call(gate, http(f"/r{i}")) for i in range(6)))

    bounded(run())
    assert two.most == 2
    assert unlimited.most == 6


def test_a_request_that_waited_its_patience_runs_beside_a_slow_one():
    app = CountingApp()
    app.held["/slow"] = asyncio.Event()

    async def run():
        gate = RequestGate(app, limit=1, patience=0.05)
        slow = asyncio.create_task(call(gate, http("/slow")))
        await wait_until(lambda: app.running == 1)
        answer = await call(gate, http("/quick"))  # would wait forever without its patience
        assert answer[0]["status"] == 200
        assert not slow.done()
        app.held["/slow"].set()
        await slow

    bounded(run())
    assert app.finished == ["/quick", "/slow"]


def test_a_streamed_response_gives_its_turn_up_once_it_starts():
    app = CountingApp(stream=True)
    app.held["/export"] = asyncio.Event()

    async def run():
        gate = RequestGate(app, limit=1, patience=FOREVER)
        export = asyncio.create_task(call(gate, http("/export")))
        await wait_until(lambda: app.running == 1)
        await call(gate, http("/next"))  # runs while the export still streams
        assert not export.done()
        app.held["/export"].set()
        sent = await export
        assert [m["type"] for m in sent] == ["http.response.start", "http.response.body"]

    bounded(run())
    assert app.finished == ["/next", "/export"]


def test_turns_are_not_lost_when_waiting_requests_give_up_waiting():
    app = CountingApp()
    app.held["/slow"] = asyncio.Event()

    async def run():
        gate = RequestGate(app, limit=1, patience=0.02)
        slow = asyncio.create_task(call(gate, http("/slow")))
        await wait_until(lambda: app.running == 1)
        await asyncio.gather(*(call(gate, http(f"/impatient{i}")) for i in range(5)))
        app.held["/slow"].set()
        await slow
        app.most = 0
        gate.patience = FOREVER  # from now on nobody gives up: the one turn is all there is
        await asyncio.gather(*(call(gate, http(f"/later{i}")) for i in range(5)))

    bounded(run())
    assert app.most == 1
    assert len(app.finished) == 11


def test_websockets_and_lifespan_never_wait_for_a_turn():
    app = CountingApp()
    app.held["/slow"] = asyncio.Event()

    async def run():
        gate = RequestGate(app, limit=1, patience=FOREVER)
        slow = asyncio.create_task(call(gate, http("/slow")))
        await wait_until(lambda: app.running == 1)
        await gate({"type": "websocket", "path": "/ws/ui/x/"}, None, None)
        await gate({"type": "lifespan"}, None, None)
        app.held["/slow"].set()
        await slow

    bounded(run())
    assert app.finished == ["/ws/ui/x/", "lifespan", "/slow"]


def test_the_web_application_gates_django_but_not_mcp(monkeypatch):
    """The project's ASGI application: Django's HTTP requests take turns, /mcp/ passes beside them."""
    from memory_project import asgi

    django_app, mcp = CountingApp(), CountingApp()
    django_app.held["/api/v1/slow/"] = asyncio.Event()
    monkeypatch.setattr(asgi.django_turns, "app", django_app)
    monkeypatch.setattr(asgi.django_turns, "limit", 1)
    monkeypatch.setattr(asgi.django_turns, "patience", FOREVER)
    monkeypatch.setattr(asgi.django_turns, "_turns", None)
    monkeypatch.setattr(asgi, "mcp_app", mcp)

    async def run():
        slow = asyncio.create_task(call(asgi.application, http("/api/v1/slow/")))
        await wait_until(lambda: django_app.running == 1)
        waiting = asyncio.create_task(call(asgi.application, http("/ui/")))
        await call(asgi.application, http("/mcp/"))  # not queued behind the slow request
        await asyncio.sleep(0.01)
        assert not waiting.done() and django_app.most == 1
        django_app.held["/api/v1/slow/"].set()
        await asyncio.gather(slow, waiting)

    bounded(run())
    assert mcp.finished == ["/mcp/"]
    assert django_app.finished == ["/api/v1/slow/", "/ui/"]


@pytest.mark.parametrize("value", ["many", "-1", "1.5"])
def test_a_bad_concurrency_setting_is_refused_with_its_name(monkeypatch, value):
    monkeypatch.setenv("ANAMNESIS_WEB_CONCURRENCY", value)
    with pytest.raises(ImproperlyConfigured, match="ANAMNESIS_WEB_CONCURRENCY"):
        env_number("ANAMNESIS_WEB_CONCURRENCY", "1", int)


def test_a_fractional_patience_is_accepted(monkeypatch):
    monkeypatch.setenv("ANAMNESIS_WEB_QUEUE_PATIENCE", "0.5")
    assert env_number("ANAMNESIS_WEB_QUEUE_PATIENCE", "2", float) == 0.5


def test_a_request_about_to_wait_gives_its_turn_to_the_next():
    from memories.turns import waiting

    app = CountingApp()
    app.held["/polls"] = asyncio.Event()

    class Polling(CountingApp):
        async def __call__(self, scope, receive, send):
            if scope["path"] == "/polls":
                waiting()  # as a write waiting for its job does, before it waits
            await app(scope, receive, send)

    async def run():
        gate = RequestGate(Polling(), limit=1, patience=FOREVER)
        polls = asyncio.create_task(call(gate, http("/polls")))
        await wait_until(lambda: app.running == 1)
        await call(gate, http("/next"))  # not behind the waiting request
        assert not polls.done()
        app.held["/polls"].set()
        await polls

    bounded(run())
    assert app.finished == ["/next", "/polls"]

