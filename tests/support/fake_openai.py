"""A real local HTTP server speaking the OpenAI wire format, for tests.

Serves ``POST /v1/chat/completions`` (scripted replies) and ``POST /v1/embeddings`` (deterministic
vectors) on 127.0.0.1 with an ephemeral port::

    with FakeOpenAIServer() as server:
        server.script('{"facts": []}', {"status": 500}, Reply(content="{}", delay=2))
        server.reject("json_schema", status=500)  # as llama.cpp does
        client = OpenAICompatibleLLM(base_url=server.base_url, model="fake")

Each chat request is one of the structured-output ``FORMS`` (``chat_forms`` lists them in order);
``reject`` makes the server answer a form with an error before any scripted reply is used.
"""

from __future__ import annotations

import base64
import hashlib
import json
import math
import random
import struct
import threading
import time
import uuid
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, fields
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Self

FORMS = ("json_schema", "json_object+schema", "json_object", "text")
"""How a chat request asks for structured output: ``response_format`` json_schema, json_object with
a ``schema``, json_object alone, or none (text)."""


def request_form(body: dict) -> str:
    """The form of one chat request body (one of ``FORMS``; an unknown ``response_format`` type as is)."""
    fmt = body.get("response_format") or {}
    kind = fmt.get("type", "text")
    if kind == "json_object" and "schema" in fmt:
        return "json_object+schema"
    return kind


@dataclass
class Reply:
    """One scripted chat reply. ``status`` (if set) returns an OpenAI-style error instead of content."""

    content: str = "{}"
    status: int | None = None
    delay: float = 0.0
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    error_message: str | None = None

    @classmethod
    def coerce(cls, value: str | dict | Reply) -> Reply:
        if isinstance(value, Reply):
            return value
        if isinstance(value, str):
            return cls(content=value)
        if isinstance(value, dict):
            known = {f.name for f in fields(cls)}
            unknown = set(value) - known
            if unknown:
                raise ValueError(f"unknown Reply keys: {sorted(unknown)}")
            return cls(**value)
        raise TypeError(f"cannot use {type(value).__name__} as a reply")


def _count_words(text: Any) -> int:
    if isinstance(text, list):  # content parts
        return sum(_count_words(part.get("text", "") if isinstance(part, dict) else part) for part in text)
    return len(str(text or "").split())


def fake_embedding(text: str, dim: int = 384) -> list[float]:
    """Deterministic unit vector seeded from the text's hash."""
    rng = random.Random(hashlib.sha256(text.encode("utf-8")).digest())
    vec = [rng.gauss(0.0, 1.0) for _ in range(dim)]
    norm = math.sqrt(sum(v * v for v in vec)) or 1.0
    return [v / norm for v in vec]


class FakeOpenAIServer:
    """OpenAI-compatible test server running in a daemon thread; see the module docstring."""

    def __init__(self, *, embedding_dim: int = 384, model: str = "fake-model"):
        self.embedding_dim = embedding_dim
        self.model = model
        self.rejected_forms: dict[str, int] = {}
        self.default_reply: str | dict | Reply = "{}"
        self.responder: Callable[[dict], str | dict | Reply] | None = None
        self._queue: deque[Reply] = deque()
        self._requests: list[tuple[str, dict]] = []
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # -- lifecycle -------------------------------------------------------------------------------
    def start(self) -> FakeOpenAIServer:
        if self._httpd is not None:
            return self
        self._stopping.clear()
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), self._make_handler())
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05}, name="fake-openai", daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._httpd is None:
            return
        self._stopping.set()  # wakes handlers sleeping on a ``delay``
        self._httpd.shutdown()
        self._httpd.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)
        self._httpd = None
        self._thread = None

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    @property
    def port(self) -> int:
        if self._httpd is None:
            raise RuntimeError("server not started")
        return self._httpd.server_address[1]

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    # -- scripting and inspection ----------------------------------------------------------------
    def script(self, *replies: str | dict | Reply) -> None:
        """Queue chat replies, consumed in order by ``/v1/chat/completions``."""
        coerced = [Reply.coerce(r) for r in replies]
        with self._lock:
            self._queue.extend(coerced)

    def reject(self, *forms: str, status: int = 400) -> None:
        """Answer chat requests of these ``FORMS`` with ``status`` (400 or 422 as OpenAI-like servers
        do, 500 as llama.cpp does); ``accept`` undoes it."""
        unknown = set(forms) - set(FORMS)
        if unknown:
            raise ValueError(f"unknown forms {sorted(unknown)}: expected some of {FORMS}")
        with self._lock:
            self.rejected_forms.update(dict.fromkeys(forms, status))

    def accept(self, *forms: str) -> None:
        """Serve these forms again (all of them when none is named)."""
        with self._lock:
            for form in forms or FORMS:
                self.rejected_forms.pop(form, None)

    @property
    def pending(self) -> int:
        with self._lock:
            return len(self._queue)

    @property
    def requests(self) -> list[tuple[str, dict]]:
        """All recorded requests as ``(path, parsed JSON body)``, in arrival order."""
        with self._lock:
            return list(self._requests)

    @property
    def chat_requests(self) -> list[dict]:
        return [body for path, body in self.requests if path.endswith("/chat/completions")]

    @property
    def chat_forms(self) -> list[str]:
        """The form of every chat request so far, in arrival order."""
        return [request_form(body) for body in self.chat_requests]

    @property
    def embedding_requests(self) -> list[dict]:
        return [body for path, body in self.requests if path.endswith("/embeddings")]

    def clear(self) -> None:
        with self._lock:
            self._queue.clear()
            self._requests.clear()

    # -- request handling ------------------------------------------------------------------------
    def _next_reply(self, body: dict) -> Reply:
        with self._lock:
            if self._queue:
                return self._queue.popleft()
            responder = self.responder
        if responder is not None:
            return Reply.coerce(responder(body))
        return Reply.coerce(self.default_reply)

    def _chat(self, body: dict) -> tuple[int, dict]:
        form = request_form(body)
        with self._lock:
            status = self.rejected_forms.get(form)
        if status is not None:
            kind = "invalid_request_error" if status < 500 else "server_error"
            return status, _error(f"response_format {form} is not supported", kind=kind, param="response_format")
        reply = self._next_reply(body)
        if reply.delay:
            self._stopping.wait(reply.delay)
        if reply.status is not None and reply.status >= 400:
            message = reply.error_message or f"scripted error {reply.status}"
            kind = "invalid_request_error" if reply.status < 500 else "server_error"
            return reply.status, _error(message, kind=kind)
        prompt = reply.prompt_tokens
        if prompt is None:
            prompt = sum(_count_words(m.get("content")) for m in body.get("messages") or [])
        completion = (
            reply.completion_tokens if reply.completion_tokens is not None else _count_words(reply.content)
        )
        return 200, {
            "id": f"chatcmpl-{uuid.uuid4().hex[:24]}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": body.get("model") or self.model,
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": reply.content},
                    "finish_reason": "stop",
                }
            ],
            "usage": {
                "prompt_tokens": prompt,
                "completion_tokens": completion,
                "total_tokens": prompt + completion,
            },
        }

    def _embeddings(self, body: dict) -> tuple[int, dict]:
        inputs = body.get("input")
        if isinstance(inputs, str):
            inputs = [inputs]
        if not isinstance(inputs, list) or not inputs:
            return 400, _error("'input' must be a non-empty string or list of strings", param="input")
        texts = [x if isinstance(x, str) else json.dumps(x) for x in inputs]
        dim = int(body.get("dimensions") or self.embedding_dim)
        as_base64 = body.get("encoding_format") == "base64"
        data = []
        for i, text in enumerate(texts):
            vec = fake_embedding(text, dim)
            if as_base64:
                vec = base64.b64encode(struct.pack(f"<{dim}f", *vec)).decode("ascii")
            data.append({"object": "embedding", "index": i, "embedding": vec})
        tokens = sum(max(1, _count_words(t)) for t in texts)
        return 200, {
            "object": "list",
            "data": data,
            "model": body.get("model") or self.model,
            "usage": {"prompt_tokens": tokens, "total_tokens": tokens},
        }

    def _make_handler(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:  # silence per-request stderr logging
                pass

            def _send(self, status: int, payload: dict) -> None:
                data = json.dumps(payload).encode("utf-8")
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # client gave up (e.g. timeout tests)

            def do_GET(self) -> None:
                if self.path.rstrip("/").endswith("/v1/models"):
                    self._send(200, {"object": "list", "data": [{"id": server.model, "object": "model"}]})
                else:
                    self._send(404, _error(f"unknown path {self.path}", kind="not_found_error"))

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b""
                try:
                    body = json.loads(raw or b"{}")
                except ValueError:
                    self._send(400, _error("request body is not valid JSON"))
                    return
                path = self.path.split("?", 1)[0].rstrip("/")
                with server._lock:
                    server._requests.append((path, body))
                if path.endswith("/v1/chat/completions"):
                    status, payload = server._chat(body)
                elif path.endswith("/v1/embeddings"):
                    status, payload = server._embeddings(body)
                else:
                    status, payload = 404, _error(f"unknown path {path}", kind="not_found_error")
                self._send(status, payload)

        return Handler


def _error(message: str, *, kind: str = "invalid_request_error", param: str | None = None) -> dict:
    return {"error": {"message": message, "type": kind, "param": param, "code": None}}
