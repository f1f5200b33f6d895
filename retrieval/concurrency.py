"""A small thread pool for concurrent signals and off-the-hot-path side effects.

Work runs inline when the caller is inside a transaction (other connections could not see its
uncommitted rows) or when there's nothing to gain: a retrieval's signals run side by side only
while it is the process's one retrieval under way. When several run at once (a loaded web
process) the cores are busy with them already, and spreading each over threads only adds the
threads' switching to every request's CPU. Pool threads keep their own database connections,
closed by `shutdown()`.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import contextmanager

from django.db import connection, connections

_pool: ThreadPoolExecutor | None = None
_lock = threading.Lock()
_running = 0  # retrievals under way in this process


def _executor() -> ThreadPoolExecutor:
    global _pool
    with _lock:
        if _pool is None:
            _pool = ThreadPoolExecutor(max_workers=6, thread_name_prefix="retrieval")
        return _pool


def can_offload() -> bool:
    return not connection.in_atomic_block


@contextmanager
def retrieval_running() -> Iterator[None]:
    """Counts a retrieval under way in this process while the block runs (the whole pipeline:
    one waiting on an LLM reranker counts too, so others then run their signals themselves)."""
    global _running
    with _lock:
        _running += 1
    try:
        yield
    finally:
        with _lock:
            _running -= 1


def alone() -> bool:
    """At most one retrieval is under way in this process (the caller's)."""
    return _running <= 1


def start_all(tasks: dict[str, Callable[[], object]], *, parallel: bool = True) -> dict[str, Future]:
    """Start named callables on the pool when allowed and the caller's retrieval is the only
    one under way (else run them now); collect the results with `collect`. Exceptions surface
    there."""
    if not parallel or not can_offload() or not alone():
        return {name: _done(fn) for name, fn in tasks.items()}
    return {name: _executor().submit(fn) for name, fn in tasks.items()}


def collect(futures: dict[str, Future]) -> dict[str, object]:
    return {name: future.result() for name, future in futures.items()}


def _done(fn: Callable[[], object]) -> Future:
    future: Future = Future()
    try:
        future.set_result(fn())
    except Exception as exc:
        future.set_exception(exc)
    return future


def fire_and_forget(fn: Callable[[], object]) -> None:
    """Side effects the caller shouldn't wait for (inline inside a transaction)."""
    if not can_offload():
        fn()
        return
    _executor().submit(_logged, fn)


def _logged(fn: Callable[[], object]) -> None:
    import logging

    try:
        fn()
    except Exception:  # a side effect must never break retrieval
        logging.getLogger(__name__).exception("retrieval side effect failed")


def shutdown() -> None:
    """Wait for pending work and close the pool threads' database connections."""
    global _pool
    with _lock:
        pool, _pool = _pool, None
    if pool is None:
        return
    barrier = threading.Barrier(pool._max_workers + 1, timeout=10)

    def close():
        connections.close_all()
        try:
            barrier.wait()
        except threading.BrokenBarrierError:
            pass

    for _ in range(pool._max_workers):
        pool.submit(close)
    try:
        barrier.wait()
    except threading.BrokenBarrierError:
        pass
    pool.shutdown(wait=True)
