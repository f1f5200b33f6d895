"""A web request's turn, and how code about to wait on something slow gives it up meanwhile.

A web process runs its HTTP requests in Django a few at a time (`memory_project.asgi_guards.
RequestGate`). Code that is about to wait without using the CPU — polling for a write's job
(`?wait=true`), calling an LLM or an embeddings endpoint — or to run a long job (an agent import)
does it `with turn_given_up():`. The next request in line starts meanwhile, and this one takes its
turn back afterwards (waiting for it at most the gate's patience). Outside a gated request (a
worker, a command, a test, a pool thread) the block just runs.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar, Token
from typing import Protocol


class Turn(Protocol):
    def give_up(self) -> None:
        """Let the next request in line run (callable from any thread)."""

    def take_back(self) -> None:
        """Wait for a turn again, at most the gate's patience (from the request's own thread)."""


_turn: ContextVar[Turn | None] = ContextVar("request_turn", default=None)


@contextmanager
def turn_given_up() -> Iterator[None]:
    """The block waits on something slow or runs long: its request's turn goes to the next one."""
    turn = _turn.get()
    if turn is None:
        yield
        return
    turn.give_up()
    try:
        yield
    finally:
        turn.take_back()


def turn_held(turn: Turn) -> Token:
    """Called by the gate as a request starts: `turn_given_up()` in this context, and in the
    threads Django runs the request on (which copy it), gives `turn` up."""
    return _turn.set(turn)


def turn_done(token: Token) -> None:
    _turn.reset(token)
