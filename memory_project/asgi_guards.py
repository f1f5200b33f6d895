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
- `websocket_not_found`: the last websocket route, so an upgrade to an unknown path is refused at
  the handshake (a close before accept: the server answers 403) instead of Channels' URLRouter
  raising (an HTTP 500 with a traceback).
"""

from __future__ import annotations

import json

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


async def websocket_not_found(scope, receive, send):
    """An upgrade to a path no websocket route serves: closed before it is accepted, which the
    server answers with a 403 at the handshake. (Not a 404 through the denial-response extension:
    uvicorn 0.54 sends it but then logs the app as having returned without a handshake.)"""
    await receive()  # websocket.connect
    await send({"type": "websocket.close", "code": 4404})
