"""Bulk import of historical conversations through the write pipeline."""

from __future__ import annotations

import logging
import multiprocessing
import os
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor, ThreadPoolExecutor, as_completed
from contextlib import closing, nullcontext
from dataclasses import dataclass

from django.db import connections

from memories.config import WriteConfig
from memories.errors import DomainError
from memories.extraction.offline.parse import ParserProcess, parse_many
from memories.extraction.offline.text import normalize_message, split_sentences
from memories.importers.locomo import Turn
from memories.models import Agent, Event, PipelineRun
from memories.pipeline.write.ahead import offline_texts
from memories.providers.embeddings import get_embedder
from memories.providers.llm import get_llm_client
from memories.services import import_processes
from memories.services.events import EventToLog, event_embedding_text, stored_key_forms
from memories.services.leases import lease_kept
from memories.services.write import event_process, events_submit_batch, memory_write, write_request

logger = logging.getLogger(__name__)
PRIME_BATCH = 64
PARSE_ELSEWHERE_MIN = 256  # turns: a smaller import spends less on parsing than the parser's process costs to start


def _recent(turns: Sequence[Turn], index: int, window: int) -> list[str]:
    return [f"{t.speaker}: {t.text}" for t in turns[max(0, index - window):index]]


def _prime(embedder, turns: Sequence[Turn], indexes: Sequence[int], recent_window: int,
           parser: ParserProcess | None = None) -> None:
    """Embed a batch of turns (as the event vectors will embed them, and the fact texts and names
    the offline extractor will produce) in one call, so the per-message pipeline mostly hits the
    embedder's cache."""
    config = WriteConfig()
    # the parser reads sentences one by one ~2.5x slower than in batches: parse the batch's
    # sentences together first, so the extractor (here and in the write) finds them cached
    sentences = (s for index in indexes for s in split_sentences(normalize_message(turns[index].text)))
    if parser is not None:
        parser.parse_many(sentences)
    else:
        parse_many(sentences)
    texts: list[str] = []
    for index in indexes:
        turn = turns[index]
        texts.append(event_embedding_text(speaker=turn.speaker, text=turn.text,
                                          recent_messages=_recent(turns, index, recent_window),
                                          with_speaker=config.event_embedding_speaker,
                                          context=config.event_embedding_context))
        texts += offline_texts(turn.text, speaker=turn.speaker, occurred_at=turn.occurred_at)
    if texts:
        embedder.embed(texts)


def _log_batch(agent: Agent, turns: Sequence[Turn], indexes: Sequence[int], recent_window: int,
               embedder) -> dict[int, PipelineRun]:
    """The write jobs of a batch's new turns, logged together (by turn index). A turn that is
    empty or fails the request's checks is left to `memory_write`, which answers it as a
    single write does; so is the whole batch when one of its turns is stored already."""
    requests: dict[int, EventToLog] = {}
    for index in indexes:
        turn = turns[index]
        try:
            request = write_request(message=turn.text, speaker_name=turn.speaker, occurred_at=turn.occurred_at,
                                    recent_messages=_recent(turns, index, recent_window), external_id=turn.dia_id)
        except DomainError:
            continue
        if request is not None:
            requests[index] = request
    runs = events_submit_batch(agent=agent, requests=list(requests.values()), embedder=embedder)
    return dict(zip(requests, runs, strict=True)) if runs else {}


def parser_process() -> ParserProcess | None:
    """A parser process for an import, or None where it cannot help (one core) or cannot start."""
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    if cores < 2:
        return None
    try:
        return ParserProcess()
    except Exception:  # noqa: BLE001 - the import parses in its own process then
        logger.warning("the parser process did not start; the import parses in its own process", exc_info=True)
        return None


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
                        recent_window: int = 3, parse_elsewhere: bool = True,
                        parser: ParserProcess | None = None) -> ImportStats:
    """Write each turn in time order with its dia_id as external id and its own time as
    occurred_at; turns already stored are skipped, so an interrupted import resumes.

    The embeddings of the next batch are computed on a second thread while this batch is
    written (the model runs outside the GIL), so the two cores overlap model and database work.
    With `parse_elsewhere`, an import of more than `PARSE_ELSEWHERE_MIN` turns parses them in a
    process of its own (`ParserProcess`; `parser`: one the caller keeps for several imports), so
    the parse does not hold this one's interpreter lock while it writes (an import in several
    processes keeps its parses each in its own)."""
    stats = ImportStats()
    started = time.perf_counter()
    stored = set(Event.objects.filter(agent=agent, external_id__isnull=False).values_list("external_id", flat=True))
    # a turn forgotten since keeps only a keyed digest of its id: it is done too
    done = {t.dia_id for t in turns
            if t.dia_id and any(f in stored for f in stored_key_forms(t.dia_id, field="external_id"))}
    embedder = get_embedder()
    batches = [range(i, min(i + PRIME_BATCH, len(turns))) for i in range(0, len(turns), PRIME_BATCH)]

    def prime(batch: range):
        return pool.submit(_prime, embedder, turns, [i for i in batch if turns[i].dia_id not in done], recent_window,
                           parser)

    # offline, a batch's messages are logged together first (an LLM's calls would outlast the
    # later messages' leases, and cost far more than the statements saved)
    in_bulk = not get_llm_client().enabled
    own = (parser_process() if parser is None and parse_elsewhere and in_bulk
           and len(turns) - len(done) > PARSE_ELSEWHERE_MIN else None)
    parser = parser or own
    with closing(own) if own is not None else nullcontext(), \
            ThreadPoolExecutor(max_workers=1, thread_name_prefix="import-embed") as pool:
        primed = prime(batches[0]) if batches else None
        for number, batch in enumerate(batches):
            primed.result()
            if number + 1 < len(batches):
                primed = prime(batches[number + 1])
            logged = _log_batch(agent, turns, [i for i in batch if turns[i].dia_id not in done], recent_window,
                                embedder) if in_bulk else {}
            with lease_kept([run.id for run in logged.values()]) if logged else nullcontext():
                for index in batch:
                    turn = turns[index]
                    if turn.dia_id in done:
                        stats.skipped += 1
                    else:
                        run = logged.get(index)
                        if run is not None:
                            result = event_process(run_id=run.id, embedder=embedder, started=True, skip_held=False,
                                                   logged=run)
                        else:
                            result = memory_write(agent=agent, message=turn.text, speaker_name=turn.speaker,
                                                  occurred_at=turn.occurred_at, external_id=turn.dia_id,
                                                  recent_messages=_recent(turns, index, recent_window))
                        if result.success:
                            stats.imported += 1
                        else:
                            stats.failed += 1
                    progress(1)
    stats.seconds = time.perf_counter() - started
    return stats


@dataclass(frozen=True)
class ConversationJob:
    """One conversation's turns, in time order, for the agent `slug` (which exists)."""

    slug: str
    turns: Sequence[Turn]


def default_import_workers() -> int:
    return max(1, os.cpu_count() or 1)


def conversations_import(jobs: Sequence[ConversationJob], *, workers: int | None = None,
                         progress: Callable[[int], object] = lambda n: None,
                         done: Callable[[ConversationJob, ImportStats], object] = lambda job, stats: None,
                         recent_window: int = 3) -> dict[str, ImportStats]:
    """Several conversations, each imported by `conversation_import` in its own time order,
    in up to `workers` processes (default: one per core): a conversation goes whole to one
    process, so each agent's messages are stored in the order they were said, and a process
    embeds, parses and stores while the others do. Two conversations for one agent run one
    after the other in the same process. `progress` counts turns (per conversation when in
    processes); `done` is called as each conversation finishes. Returns the stats by slug."""
    workers = min(workers or default_import_workers(), len({job.slug for job in jobs}))
    results: dict[str, ImportStats] = {}
    if workers <= 1:
        # one parser process for all of them (each conversation starting its own would load the model again)
        large = sum(len(job.turns) for job in jobs) > PARSE_ELSEWHERE_MIN and not get_llm_client().enabled
        parser = parser_process() if large else None
        with closing(parser) if parser is not None else nullcontext():
            for job in jobs:
                stats = conversation_import(agent=Agent.objects.get(slug=job.slug), turns=job.turns,
                                            progress=progress, recent_window=recent_window,
                                            parse_elsewhere=parser is not None, parser=parser)
                results[job.slug] = _added(results.get(job.slug), stats)
                done(job, stats)
        return results
    by_agent: dict[str, list[ConversationJob]] = {}
    for job in jobs:
        by_agent.setdefault(job.slug, []).append(job)
    database = connections["default"].settings_dict["NAME"]
    connections.close_all()  # a child process opens its own; none is shared across the fork
    # spawned, not forked: the model runtime's threads and the database connection do not survive a fork
    context = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(max_workers=workers, mp_context=context, initializer=import_processes.worker_setup,
                             initargs=(database,)) as pool:
        futures = {pool.submit(import_processes.import_group, group, recent_window): group
                   for group in by_agent.values()}
        for future in as_completed(futures):
            for job, stats in zip(futures[future], future.result(), strict=True):
                results[job.slug] = _added(results.get(job.slug), stats)
                progress(len(job.turns))
                done(job, stats)
    return results


def _added(total: ImportStats | None, stats: ImportStats) -> ImportStats:
    if total is None:
        return stats
    return ImportStats(total.imported + stats.imported, total.skipped + stats.skipped,
                       total.failed + stats.failed, total.seconds + stats.seconds)
