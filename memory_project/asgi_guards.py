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
- `RequestGate`: at most `ANAMNESIS_WEB_CONCURRENCY` HTTP requests run in Django at once in a
  web process; the others wait on the event loop, where waiting costs no thread. Django runs each
  request's synchronous part on a thread of its own (asgiref's `ThreadSensitiveContext`), so a
  process with twenty requests open ran twenty threads taking turns at the interpreter lock, and
  every request's CPU grew with the crowd (a retrieval over the API: 29 ms one at a time, 42 ms
  with twenty at once; README, "Measured"). A request that waited `ANAMNESIS_WEB_QUEUE_PATIENCE`
  seconds runs anyway, so one slow request delays the others by at most that. A request gives
  its turn up before it waits on something slow (`memories.turns.waiting()`: the job a write
  waits for, an LLM call, an embeddings endpoint), and once its response starts, so a streamed
  export does not hold it while it streams.
- `websocket_not_found`: the last websocket route, so an upgrade to an unknown path is refused at
  the handshake (a close before accept: the server answers 403) instead of Channels' URLRouter
  raising (an HTTP 500 with a traceback).
"""

from __future__ import annotations

import asyncio
import json

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


class RequestGate:
    """ASGI middleware: HTTP requests take turns, `limit` at a time (0: no limit), each waiting at
    most `patience` seconds for its turn (see the module). Other connections pass straight on."""

    def __init__(self, app, *, limit: int, patience: float):
        self.app = app
        self.limit = limit
        self.patience = patience
        self._turns: asyncio.Semaphore | None = None  # made in the server's event loop, on first use

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http" or self.limit <= 0:
            return await self.app(scope, receive, send)
        if self._turns is None:
            self._turns = asyncio.Semaphore(self.limit)
        turns = self._turns
        try:
            await asyncio.wait_for(turns.acquire(), self.patience)
            holding = True
        except TimeoutError:
            holding = False  # the turns are held by slow requests: this one runs beside them

        def give_up() -> None:
            nonlocal holding
            if holding:
                holding = False
                turns.release()

        loop = asyncio.get_running_loop()
        # a request about to wait on something slow gives its turn up (memories.turns), from the
        # thread Django runs it on: the release is handed to the event loop
        token = turn_held(lambda: loop.call_soon_threadsafe(give_up))

        async def send_then_give_up(message):
            await send(message)
            if message["type"] == "http.response.start":
                give_up()

        try:
            return await self.app(scope, receive, send_then_give_up)
        finally:
            turn_done(token)
            give_up()


async def websocket_not_found(scope, receive, send):
    """An upgrade to a path no websocket route serves: closed before it is accepted, which the
    server answers with a 403 at the handshake. (Not a 404 through the denial-response extension:
    uvicorn 0.54 sends it but then logs the app as having returned without a handshake.)"""
    await receive()  # websocket.connect
    await send({"type": "websocket.close", "code": 4404})
