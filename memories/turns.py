"""A web request's turn, and how code about to wait on something slow gives it up.

A web process runs its HTTP requests in Django a few at a time (`memory_project.asgi_guards.
RequestGate`). A request that is about to wait without using the CPU — polling for its write job
(`?wait=true`), calling an LLM or an embeddings endpoint — calls `waiting()` first, and the next
request in line starts instead of waiting behind it. Outside a gated request (a worker, a command,
a test) `waiting()` does nothing.
"""

from __future__ import annotations

from collections.abc import Callable
from contextvars import ContextVar, Token

_give_up: ContextVar[Callable[[], None] | None] = ContextVar("request_turn_give_up", default=None)


def waiting() -> None:
    """The caller is about to wait on something slow: its request's turn goes to the next one."""
    give_up = _give_up.get()
    if give_up is not None:
        give_up()


def turn_held(give_up: Callable[[], None]) -> Token:
    """Called by the gate as a request starts: `waiting()` in this context (and in the threads
    Django runs the request on, which copy it) calls `give_up`, which may run on any thread."""
    return _give_up.set(give_up)


def turn_done(token: Token) -> None:
    _give_up.reset(token)
