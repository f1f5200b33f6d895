"""A web process runs its HTTP requests in Django a few at a time (memory_project.asgi_guards.
RequestGate): the others wait on the event loop for their turn, which a request takes once its body
has arrived; a request that waited its patience runs anyway; a streamed response gives its turn up
once it starts; code waiting on something slow gives it up meanwhile and takes it back after; and
websockets, lifespan and /mcp/ never wait. Hand-made ASGI messages against an app that reads its
body as Django does and counts how many requests it runs at once, so what overlapped is observed,
not timed."""

from __future__ import annotations

import asyncio
import threading

import pytest
from django.core.exceptions import ImproperlyConfigured

from memories.turns import turn_given_up
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
        if scope["type"] == "http":
            while (await receive()).get("more_body"):  # the body first, as Django reads it
                pass
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


async def running(gate, app: CountingApp, path: str) -> asyncio.Task:
    """Send a request that `app` holds (its path in `app.held`) and wait until it runs alone."""
    task = asyncio.create_task(call(gate, http(path)))
    await wait_until(lambda: app.running == 1)
    return task


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
        slow = await running(gate, app, "/slow")
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
        export = await running(gate, app, "/export")
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
        slow = await running(gate, app, "/slow")
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
        slow = await running(gate, app, "/slow")
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
    monkeypatch.setattr(asgi, "mcp_app", mcp)

    async def run():
        slow = await running(asgi.application, django_app, "/api/v1/slow/")
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


def test_a_request_waiting_on_something_slow_lets_the_next_run_then_takes_its_turn_back():
    app = CountingApp()
    app.held["/next"] = asyncio.Event()
    slow_started, slow_done = threading.Event(), threading.Event()
    seen: list[str] = []

    class Polling:
        """A request whose view (on a thread, as Django runs it) waits on something slow."""

        async def __call__(self, scope, receive, send):
            if scope["path"] != "/polls":
                return await app(scope, receive, send)
            await receive()

            def view():
                with turn_given_up():
                    slow_started.set()
                    slow_done.wait(20)
                seen.append("turn back")  # after the block: the turn is this request's again

            await asyncio.to_thread(view)
            await app(scope, receive, send)

    async def run():
        gate = RequestGate(Polling(), limit=1, patience=FOREVER)
        polls = asyncio.create_task(call(gate, http("/polls")))
        await asyncio.to_thread(slow_started.wait, 20)
        following = asyncio.create_task(call(gate, http("/next")))
        await wait_until(lambda: app.running == 1)  # runs while the first request waits
        slow_done.set()
        await asyncio.sleep(0.05)
        assert seen == [], "the first request went on while the next one held the turn"
        app.held["/next"].set()
        await asyncio.gather(following, polls)

    bounded(run())
    assert seen == ["turn back"]
    assert app.finished == ["/next", "/polls"] and app.most == 1


def test_a_request_holds_no_turn_until_its_body_has_arrived():
    app = CountingApp()
    rest_of_body = asyncio.Event()

    async def run():
        gate = RequestGate(app, limit=1, patience=FOREVER)
        pieces = iter([{"type": "http.request", "body": b"a", "more_body": True}, None,
                       {"type": "http.request", "body": b"b", "more_body": False}])

        async def slow_upload():
            piece = next(pieces)
            if piece is None:
                await rest_of_body.wait()
                piece = next(pieces)
            return piece

        async def ignore(message):
            pass

        upload = asyncio.create_task(gate(http("/upload"), slow_upload, ignore))
        await asyncio.sleep(0.01)
        await call(gate, http("/quick"))  # not behind the upload still arriving
        assert not upload.done()
        rest_of_body.set()
        await upload

    bounded(run())
    assert app.finished == ["/quick", "/upload"]


def test_a_request_that_fails_gives_its_turn_back():
    app = CountingApp()

    class Failing:
        async def __call__(self, scope, receive, send):
            if scope["path"] == "/fails":
                await receive()
                raise RuntimeError("the view failed")
            return await app(scope, receive, send)

    async def run():
        gate = RequestGate(Failing(), limit=1, patience=FOREVER)
        with pytest.raises(RuntimeError):
            await call(gate, http("/fails"))
        await call(gate, http("/next"))  # would wait forever for a turn the failure kept

    bounded(run())
    assert app.finished == ["/next"]


def test_turns_follow_the_event_loop_they_were_taken_in():
    app = CountingApp()
    gate = RequestGate(app, limit=1, patience=FOREVER)

    async def three():
        await asyncio.gather(*(call(gate, http(f"/r{i}")) for i in range(3)))

    for _ in range(2):  # a second loop (a test server after another) gets turns of its own
        bounded(three())
    assert app.most == 1 and len(app.finished) == 6


class RecordingTurn:
    """A turn as the gate hands it to a request's code: records when it was given up and taken back."""

    def __init__(self):
        self.log: list[str] = []

    def give_up(self):
        self.log.append("given up")

    def take_back(self):
        self.log.append("taken back")


def _with_turn(call_remote):
    """Run `call_remote(log)` inside a request holding a RecordingTurn; the turn's log."""
    from memories.turns import turn_done, turn_held

    turn = RecordingTurn()
    token = turn_held(turn)
    try:
        call_remote(turn.log)
    finally:
        turn_done(token)
    return turn.log


def test_an_llm_call_and_an_embeddings_call_give_the_turn_up_while_the_server_answers():
    from types import SimpleNamespace

    from memories.providers.embeddings import OpenAICompatibleEmbedder
    from memories.providers.llm import OpenAICompatibleLLM

    def llm_call(log):
        llm = OpenAICompatibleLLM(base_url="http://127.0.0.1:9/v1", model="m")
        reply = SimpleNamespace(usage=None, choices=[SimpleNamespace(message=SimpleNamespace(content='{"a": 1}'))])
        llm._client = SimpleNamespace(chat=SimpleNamespace(completions=SimpleNamespace(
            create=lambda **kw: log.append("model answers") or reply)))
        assert llm.complete_json(system="s", user="u", schema={"type": "object"}, schema_name="x").data == {"a": 1}

    def embeddings_call(log):
        embedder = OpenAICompatibleEmbedder(base_url="http://127.0.0.1:9/v1", model="e", dimensions=2)
        data = [SimpleNamespace(index=0, embedding=[3.0, 4.0])]
        embedder.client = SimpleNamespace(embeddings=SimpleNamespace(
            create=lambda **kw: log.append("endpoint answers") or SimpleNamespace(data=data)))
        assert [round(float(x), 2) for x in embedder.embed(["hello"])[0]] == [0.6, 0.8]

    assert _with_turn(llm_call) == ["given up", "model answers", "taken back"]
    assert _with_turn(embeddings_call) == ["given up", "endpoint answers", "taken back"]
