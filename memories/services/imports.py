"""Bulk import of historical conversations through the write pipeline."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

from memories.extraction.offline import extract_offline
from memories.importers.locomo import Turn
from memories.models import Agent, Event
from memories.providers.embeddings import get_embedder
from memories.services.write import memory_write

PRIME_BATCH = 64


def _prime(embedder, turns: Sequence[Turn]) -> None:
    """Embed a batch of turns (and the fact texts and names the offline extractor will produce
    for them) in one call, so the per-message pipeline mostly hits the embedder's cache."""
    texts: list[str] = []
    for turn in turns:
        texts.append(turn.text)
        extraction = extract_offline(turn.text, speaker=turn.speaker, occurred_at=turn.occurred_at)
        texts += [f.text for f in extraction.facts] + [e.name for e in extraction.entities]
    if texts:
        embedder.embed(texts)


@dataclass
class ImportStats:
    imported: int = 0
    skipped: int = 0
    failed: int = 0
    seconds: float = 0.0

    @property
    def per_second(self) -> float:
        return self.imported / self.seconds if self.seconds else 0.0


def conversation_import(*, agent: Agent, turns: Sequence[Turn], progress: Callable[[int], object] = lambda n: None,
                        recent_window: int = 3) -> ImportStats:
    """Write each turn in time order with its dia_id as external id and its own time as
    occurred_at; turns already stored are skipped, so an interrupted import resumes.

    The embeddings of the next batch are computed on a second thread while this batch is
    written (the model runs outside the GIL), so the two cores overlap model and database work."""
    stats = ImportStats()
    started = time.perf_counter()
    done = set(Event.objects.filter(agent=agent, external_id__isnull=False).values_list("external_id", flat=True))
    embedder = get_embedder()
    batches = [turns[i:i + PRIME_BATCH] for i in range(0, len(turns), PRIME_BATCH)]
    recent: list[str] = []
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="import-embed") as pool:
        primed = pool.submit(_prime, embedder, [t for t in batches[0] if t.dia_id not in done]) if batches else None
        for number, batch in enumerate(batches):
            primed.result()
            if number + 1 < len(batches):
                primed = pool.submit(_prime, embedder, [t for t in batches[number + 1] if t.dia_id not in done])
            for turn in batch:
                if turn.dia_id in done:
                    stats.skipped += 1
                else:
                    result = memory_write(agent=agent, message=turn.text, speaker_name=turn.speaker,
                                          occurred_at=turn.occurred_at, external_id=turn.dia_id,
                                          recent_messages=recent[-recent_window:])
                    if result.success:
                        stats.imported += 1
                    else:
                        stats.failed += 1
                recent.append(f"{turn.speaker}: {turn.text}")
                progress(1)
    stats.seconds = time.perf_counter() - started
    return stats
