"""What the ASGI entry point (memory_project.asgi) does before any app sees a connection.

- `BodySizeLimit`: a request body past the size limit (`max_body_bytes()`: DATA_UPLOAD_MAX_MEMORY_SIZE,
  the REST API's own limit; an agent import's is ANAMNESIS_IMPORT_MAX_BYTES) is a 413 before
  anything reads it. Django's ASGI handler reads the whole body into a temporary file before a
  view runs, and reads none without a Content-Length, so a declared Content-Length over the limit
  is refused at once, and a chunked body (no Content-Length) is read only up to the limit: past
  it, a 413 and nothing more is read; within it, it is handed on whole with its Content-Length,
  so Django parses it like any other. An agent import, whose limit is far larger, must declare
  its Content-Length (a 411 otherwise): Django then spools it to a temporary file instead of
  this guard holding it in memory.
- `RequestGate`: HTTP requests take turns in front of Django, `ANAMNESIS_WEB_CONCURRENCY` at a
  time in a web process; the others wait on the event loop, where waiting costs no thread. Django
  runs each request's synchronous part on a thread of its own (asgiref's `ThreadSensitiveContext`),
  so a process with twenty requests open ran twenty threads taking turns at the interpreter lock,
  and every request's CPU grew with the crowd (a retrieval over the API: 29 ms one at a time, 42 ms
  with twenty at once; README, "Measured"). A request takes its turn once its body has arrived
  (a slow upload holds none) and gives it up once its response starts (a streamed export does not
  hold it while it streams). Code about to wait on something slow or to run long (a write's
  `?wait=true`, an LLM call, an embeddings endpoint, an agent import) gives the turn up meanwhile
  (`memories.turns.turn_given_up`) and takes it back after. A request that waited
  `ANAMNESIS_WEB_QUEUE_PATIENCE` seconds for a turn runs without one, so a slow request that keeps
  its turn delays the others by at most that, and past that much queueing the limit no longer
  holds.
- `websocket_not_found`: the last websocket route, so an upgrade to an unknown path is refused at
  the handshake (a close before accept: the server answers 403) instead of Channels' URLRouter
  raising (an HTTP 500 with a traceback).
"""

from __future__ import annotations

import asyncio
import json
import threading
import weakref

from memories.turns import turn_done, turn_held
from memory_project.api.errors import error_body
from memory_project.api.parsers import max_body_bytes


def _header(scope, name: bytes) -> bytes | None:
    for key, value in scope.get("headers") or ():
        if key.lower() == name:
            return value
    return None


async def _too_large(send, message: str, limit: int) -> None:
    await _refuse(send, 413, "payload_too_large", message, limit)


async def _refuse(send, status: int, code: str, message: str, limit: int) -> None:
    body = json.dumps(error_body(code, message, {"body": f"at most {limit} bytes"})).encode()
    await send({"type": "http.response.start", "status": status, "headers": [
        (b"content-type", b"application/json"), (b"content-length", str(len(body)).encode()),
        (b"connection", b"close")]})
    await send({"type": "http.response.body", "body": body})


class BodySizeLimit:
    """ASGI middleware: HTTP request bodies within the size limit or a 413 (see the module)."""

    def __init__(self, app):
        self.app = app

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        limit = max_body_bytes(scope.get("path", ""))
        declared = _header(scope, b"content-length")
        if declared is not None:
            if declared.isdigit() and int(declared) > limit:
                return await _too_large(send, f"request body is {int(declared)} bytes; the limit is {limit} bytes",
                                        limit)
            return await self.app(scope, receive, send)
        if _header(scope, b"transfer-encoding") is None:
            return await self.app(scope, receive, send)  # no body
        if limit > max_body_bytes():
            return await _refuse(send, 411, "length_required",
                                 "send the file with a Content-Length (curl --data-binary @file does)", limit)
        body = bytearray()
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                return None
            body += message.get("body", b"")
            if len(body) > limit:
                return await _too_large(send, f"request body is over {limit} bytes; the limit is {limit} bytes", limit)
            if not message.get("more_body", False):
                break
        headers = [(k, v) for k, v in scope["headers"] if k.lower() != b"transfer-encoding"]
        headers.append((b"content-length", str(len(body)).encode()))
        return await self.app({**scope, "headers": headers}, _replay(bytes(body), receive), send)


def _replay(body: bytes, receive):
    """A `receive` that hands the buffered body over once, then waits on the real connection
    (for its disconnect)."""
    sent = False

    async def replay():
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()

    return replay


class _Turn:
    """One request's turn in its process (RequestGate). Its state changes on the event loop's
    thread only; the request's own thread gives it up and takes it back through the loop."""

    def __init__(self, gate: RequestGate, loop: asyncio.AbstractEventLoop):
        self.gate = gate
        self.loop = loop
        self.loop_thread = threading.get_ident()
        self.holding = False

    async def take(self) -> None:
        if self.holding:
            return
        turns = self.gate.turns(self.loop)
        try:
            await asyncio.wait_for(turns.acquire(), self.gate.patience)
        except TimeoutError:
            return  # the turns are held by slow requests: this one runs beside them
        self.holding = True

    def release(self) -> None:
        if self.holding:
            self.holding = False
            self.gate.turns(self.loop).release()

    def give_up(self) -> None:
        if threading.get_ident() == self.loop_thread:
            self.release()
        else:
            try:
                self.loop.call_soon_threadsafe(self.release)
            except RuntimeError:
                pass  # the loop is closed (the server stopped): there are no turns left to hand on

    def take_back(self) -> None:
        if threading.get_ident() == self.loop_thread:  # the loop's own thread must not block on it
            return
        try:  # bounded: a loop that stops meanwhile (the server shutting down) never answers
            asyncio.run_coroutine_threadsafe(self.take(), self.loop).result(timeout=self.gate.patience + 5)
        except (TimeoutError, RuntimeError):
            pass  # no turn: the request finishes beside the others


class RequestGate:
    """ASGI middleware: HTTP requests take turns, `limit` at a time (0: no limit), each waiting at
    most `patience` seconds for its turn (see the module). A request takes its turn once its body
    has arrived, so a slow upload holds none. Other connections pass straight on."""

    def __init__(self, app, *, limit: int, patience: float):
        self.app = app
        self.limit = limit
        self.patience = patience
        # one set of turns per event loop (a server runs one; tests may run several, one after another)
        self._turns: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, asyncio.Semaphore] = (
            weakref.WeakKeyDictionary())

    def turns(self, loop: asyncio.AbstractEventLoop) -> asyncio.Semaphore:
        turns = self._turns.get(loop)
        if turns is None:
            turns = self._turns[loop] = asyncio.Semaphore(self.limit)
        return turns

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http" or self.limit <= 0:
            return await self.app(scope, receive, send)
        turn = _Turn(self, asyncio.get_running_loop())
        body_read = False

        async def receive_then_take_turn():
            nonlocal body_read
            message = await receive()
            if not body_read and (message["type"] != "http.request" or not message.get("more_body", False)):
                body_read = True
                if message["type"] == "http.request":
                    await turn.take()  # the whole body is here: the request waits for its turn
            return message

        async def send_then_give_up(message):
            await send(message)
            if message["type"] == "http.response.start":
                turn.release()

        token = turn_held(turn)  # memories.turns.turn_given_up() gives it up while the request waits
        try:
            return await self.app(scope, receive_then_take_turn, send_then_give_up)
        finally:
            turn_done(token)
            turn.release()


async def websocket_not_found(scope, receive, send):
    """An upgrade to a path no websocket route serves: closed before it is accepted, which the
    server answers with a 403 at the handshake. (Not a 404 through the denial-response extension:
    uvicorn 0.54 sends it but then logs the app as having returned without a handshake.)"""
    await receive()  # websocket.connect
    await send({"type": "websocket.close", "code": 4404})
