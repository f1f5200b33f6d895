"""What a write can compute before it reads the agent: its facts' and names' vectors.

The offline extractor reads a message the same way whatever the agent knows, up to the names it
resolves, so the fact texts and names it finds on the message alone are nearly always the ones
the write embeds later (`normalize`, `resolve_entities`). An import embeds them a batch at a time
(memories/services/imports.py); a single write starts them on another thread while its message
is embedded and logged: its Python runs while the main thread waits on the model and the database,
and the two embeddings run side by side. The embedder's cache then answers the write, or the write
waits for the computation under way instead of repeating it (memories/providers/embeddings.py:
CachingEmbedder). A text the write reads differently once it knows the agent (a name resolved) is
embedded by the write itself, as without this step. The worker's writes (logged by the API,
embedded there) only parse ahead: they have no embedding of their own to overlap with."""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from datetime import datetime

from memories.extraction.offline import extract_offline, parse_ahead
from memories.providers.embeddings import EmbedderClient

logger = logging.getLogger(__name__)

_pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="write-ahead")
_busy = threading.Semaphore(1)


def _after_fork() -> None:
    # a forked process has none of its parent's threads: a pool of its own, and a thread not busy
    global _pool, _busy
    _pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="write-ahead")
    _busy = threading.Semaphore(1)


os.register_at_fork(after_in_child=_after_fork)


def offline_texts(text: str, *, speaker: str, occurred_at: datetime | None = None,
                  recent_messages: Sequence[str] = ()) -> list[str]:
    """The fact texts and entity names the offline extractor finds in the message alone."""
    extraction = extract_offline(text, speaker=speaker, occurred_at=occurred_at, recent_messages=recent_messages)
    return [f.text for f in extraction.facts] + [e.name for e in extraction.entities]


def embed_ahead(embedder: EmbedderClient, *, text: str, speaker: str, occurred_at: datetime | None = None,
                recent_messages: Sequence[str] = ()) -> Future | None:
    """Parse the message and embed its offline facts and names on the write-ahead thread. None
    when that thread is still busy with another write's (this one is then computed in its
    steps, as without it): a crowd of writes never queues work that would come too late."""
    parse_ahead(text)
    if not _busy.acquire(blocking=False):
        return None

    def run() -> None:
        try:
            texts = offline_texts(text, speaker=speaker, occurred_at=occurred_at, recent_messages=recent_messages)
            if texts:
                embedder.embed(texts)
        except Exception:  # noqa: BLE001 - only a head start: the write computes what it needs itself
            logger.warning("computing a write's vectors ahead failed", exc_info=True)
        finally:
            _busy.release()

    try:
        return _pool.submit(run)
    except RuntimeError:  # the interpreter is shutting down
        _busy.release()
        return None
