"""`memory_write`: a message in, versioned entities / facts / relationships out.

Two entry points share one implementation:
- `memory_write(...)` runs everything in the caller's process and returns a WriteResult;
- `event_submit(...)` logs the event and queues the Celery job; the worker calls `event_process`.
"""

from __future__ import annotations

import hashlib
import json
import logging
import time
from contextlib import nullcontext
from datetime import datetime

from django.db import IntegrityError, transaction
from django.utils import timezone

from memories.budgets import llm_within_budget
from memories.config import WriteConfig, apply_overrides, overrides_within_ceilings
from memories.errors import ExternalIdConflict, IdempotencyConflict
from memories.extraction.offline import parse_ahead
from memories.live import live_notify
from memories.metrics import WRITE_SECONDS
from memories.models import Agent, Event, PipelineRun, RunStatus
from memories.pipeline import write as pipeline
from memories.pipeline.results import WriteResult
from memories.pipeline.trace import Tracer
from memories.pipeline.write.ahead import embed_ahead
from memories.providers.embeddings import CachingEmbedder, EmbedderClient, get_embedder
from memories.providers.llm import LLMClient, get_llm_client
from memories.redaction import REDACTED_KEY_PREFIX, request_key_digest
from memories.selectors.forget import forget_key
from memories.services.audit import audit_record
from memories.services.events import (
    EventToLog,
    event_embedding_text,
    event_log,
    events_log_batch,
    message_validate,
)
from memories.services.forget import event_forget_guard
from memories.services.leases import LeaseDecision, LeaseHeld, lease_kept, lease_owner_name, lease_take
from memories.services.traces import trace_steps_persist
from memories.services.write_jobs import PROCESS_EVENT_TASK, job_enqueue_on_commit  # noqa: F401

logger = logging.getLogger(__name__)



class _DryRunRollback(Exception):
    pass


def _params(recent_messages, config_overrides) -> dict:
    return {"recent_messages": list(recent_messages or ()), "config_overrides": config_overrides or {}}


def event_submit(
    *, agent: Agent, message: str, speaker_name: str, occurred_at: datetime | None = None,
    recent_messages=(), idempotency_key: str | None = None, external_id: str | None = None,
    config_overrides: dict | None = None, metadata: dict | None = None, enqueue: bool = True,
    embedder: EmbedderClient | None = None, actor: str | None = None,
) -> tuple[Event | None, PipelineRun | None, bool]:
    """Validate, log the event with a queued job and (on commit) enqueue the worker task.
    Returns (event, run, created); (None, None, False) for an empty message. With `actor`, a
    new event is audited as written by them."""
    request = write_request(message=message, speaker_name=speaker_name, occurred_at=occurred_at,
                            recent_messages=recent_messages, external_id=external_id,
                            config_overrides=config_overrides, metadata=metadata)
    if request is None:
        return None, None, False
    digest = request.params["request_digest"]
    event, run, matched = event_log(
        agent=agent, speaker=speaker_name, text=request.text, occurred_at=occurred_at,
        embedder=embedder or get_embedder(), idempotency_key=idempotency_key, external_id=external_id,
        metadata=metadata, params=request.params, start_now=not enqueue, embedding_text=request.embedding_text,
    )
    created = matched is None
    if created and actor:
        audit_record(agent=agent, actor=actor, action="event_write", obj=event,
                     after={"job": run.id, "speaker": event.speaker})
    if not created:
        _replay_check(run, digest=digest, matched=matched, idempotency_key=idempotency_key, external_id=external_id)
    if created and enqueue:
        job_enqueue_on_commit(run.id)
    if created:
        live_notify(agent=agent, kind="event", obj_id=event.id)
    return event, run, created


def write_request(*, message: str, speaker_name: str, occurred_at: datetime | None = None, recent_messages=(),
                  external_id: str | None = None, config_overrides: dict | None = None,
                  metadata: dict | None = None) -> EventToLog | None:
    """A write request checked (a 400 or 413 names what is wrong) and turned into the event to
    log: its text, its job's params with the request's fingerprint, the text its vector embeds.
    None for an empty message (nothing to store)."""
    overrides_within_ceilings(WriteConfig, config_overrides)
    config = apply_overrides(WriteConfig(), config_overrides)
    text = message_validate(message=message, speaker_name=speaker_name, max_bytes=config.max_message_bytes)
    if not text:
        return None
    digest = request_digest(speaker=speaker_name.strip(), text=text, occurred_at=occurred_at, external_id=external_id,
                            recent_messages=list(recent_messages or ()), config_overrides=config_overrides or {},
                            metadata=metadata or {})
    return EventToLog(
        speaker=speaker_name, text=text, occurred_at=occurred_at, external_id=external_id,
        params={**_params(recent_messages, config_overrides), "request_digest": digest},
        embedding_text=event_embedding_text(speaker=speaker_name, text=text, recent_messages=recent_messages or (),
                                            with_speaker=config.event_embedding_speaker,
                                            context=config.event_embedding_context))


def events_submit_batch(*, agent: Agent, requests: list[EventToLog],
                        embedder: EmbedderClient | None = None) -> list[PipelineRun] | None:
    """Log several new messages of an import at once, each with its write job leased to this
    thread (to run next with `event_process(started=True)`), in one transaction: one statement
    each for the events, their keyword statistics and the jobs. None when one of them is stored
    already (a concurrent import of the same turns): nothing is logged, and the caller writes
    them one by one, where a repeat is recognized."""
    if not requests:
        return []
    try:
        runs = events_log_batch(agent=agent, items=requests, embedder=embedder or get_embedder())
    except IntegrityError:
        return None
    for run in runs:
        live_notify(agent=agent, kind="event", obj_id=run.event_id)
    return runs


def _replay_check(run: PipelineRun | None, *, digest: str, matched: str, idempotency_key: str | None,
                  external_id: str | None) -> None:
    """A repeat is a replay only with the same body; otherwise the field that matched the stored
    message is blamed (422) and the stored message stays as it was."""
    stored = (run.params or {}).get("request_digest") if run is not None else None
    if not stored or request_digest_matches(stored, digest):
        return
    if matched == "idempotency_key":
        raise IdempotencyConflict(
            f"Idempotency-Key {idempotency_key!r} was used for a different request (job {run.id}); "
            "use a new key for a new message",
            {"Idempotency-Key": "reused with a different body", "job": run.id})
    raise ExternalIdConflict(
        f"external_id {external_id!r} belongs to a stored message with a different body (job {run.id}); "
        "use a new external_id for a new message",
        {"external_id": "reused with a different body", "job": run.id})


def request_digest(**fields) -> str:
    """A fingerprint of a write request: a reused Idempotency-Key must come with the same one."""
    return hashlib.sha256(json.dumps(fields, sort_keys=True, default=str).encode()).hexdigest()


def request_digest_matches(stored: str, digest: str) -> bool:
    """The stored fingerprint is this request's: as computed, or keyed by a forget (which keeps
    only a keyed digest of a forgotten message's fingerprint)."""
    if stored.startswith(REDACTED_KEY_PREFIX):
        return stored == request_key_digest(digest, key=forget_key(), field="request")
    return stored == digest


def memory_write(
    *, agent: Agent, message: str, speaker_name: str, occurred_at: datetime | None = None,
    recent_messages=(), idempotency_key: str | None = None, external_id: str | None = None,
    dry_run: bool = False, config_overrides: dict | None = None,
    llm: LLMClient | None = None, embedder: EmbedderClient | None = None, actor: str | None = None,
) -> WriteResult:
    """Run the whole write pipeline now. A repeated idempotency key returns the first result.
    With `actor`, a new event is audited as written by them (as `event_submit` does)."""
    started = time.perf_counter()
    if dry_run:
        return _dry_run(agent=agent, message=message, speaker_name=speaker_name, occurred_at=occurred_at,
                        recent_messages=recent_messages, config_overrides=config_overrides, llm=llm,
                        embedder=embedder, started=started)
    llm = llm or get_llm_client()
    if not llm.enabled and isinstance(message, str) and len(message) <= WriteConfig().max_message_bytes:
        # the offline extractor's parse, and its facts' and names' vectors, while the message is
        # embedded and logged (at the time it is logged with, which dates what it says)
        _ahead(embedder, text=message, speaker=speaker_name, occurred_at=occurred_at or timezone.now(),
               recent=recent_messages)
    event, run, created = event_submit(
        agent=agent, message=message, speaker_name=speaker_name, occurred_at=occurred_at,
        recent_messages=recent_messages, idempotency_key=idempotency_key, external_id=external_id,
        config_overrides=config_overrides, enqueue=False, embedder=embedder, actor=actor,
    )
    if event is None:
        return WriteResult(success=True, duration_ms=_ms(started))
    if not created and run.status == RunStatus.SUCCEEDED:
        return WriteResult.from_dict(run.result)
    result = event_process(run_id=run.id, llm=llm, embedder=embedder, started=created, skip_held=False,
                           logged=run if created else None)
    result.duration_ms = _ms(started)
    return result


def _ms(started: float) -> float:
    return round((time.perf_counter() - started) * 1000, 3)


def _dry_run(*, agent, message, speaker_name, occurred_at, recent_messages, config_overrides, llm, embedder,
             started) -> WriteResult:
    """Everything a write would do, inside a transaction that is then rolled back."""
    holder: dict = {}
    try:
        with transaction.atomic():
            event, run, _ = event_submit(
                agent=agent, message=message, speaker_name=speaker_name, occurred_at=occurred_at,
                recent_messages=recent_messages, config_overrides=config_overrides, enqueue=False,
                embedder=embedder,
            )
            if event is not None:
                holder["result"] = _process_locked(run, llm=llm_within_budget(agent=agent, llm=llm or get_llm_client()),
                                                   embedder=embedder or get_embedder(), persist_trace=False)
            raise _DryRunRollback
    except _DryRunRollback:
        pass
    result = holder.get("result") or WriteResult(success=True)
    result.dry_run, result.event_id, result.run_id = True, None, None
    result.duration_ms = _ms(started)
    return result


def event_process(*, run_id: int, llm: LLMClient | None = None, embedder: EmbedderClient | None = None,
                  started: bool = False, skip_held: bool = True, logged: PipelineRun | None = None) -> WriteResult:
    """Run the pipeline for a logged event. Idempotent: the facts, links, relationships and the
    job's `succeeded` status commit together, so a re-run after a crash starts clean and a
    re-run after success returns the stored result. `started`: the job was stored as running
    (its first attempt), leased to this thread, by the caller that logged it.

    The job is leased to this thread while it runs (memories/services/leases.py). A job another
    live process holds is not run: LeaseHeld says until when it is held (the worker's task tries
    again then; the sweeper re-queues the job too once the lease expired) — unless `skip_held` is
    off: a caller that waits for the result then runs it alongside, and the locked store keeps
    one outcome. `logged`: the job row (with its event) as the caller that just logged it holds it,
    so it is not read again before the read steps.

    What only reads — the alias lookup, the extraction with its LLM calls, the embeddings — runs
    before the transaction; the transaction locks the job, checks that the message is still as
    it was read (a forget may have redacted it meanwhile: then it is read again) and stores."""
    leased = started
    if not started:
        taken = lease_take(run_id=run_id)
        if taken.decision is LeaseDecision.HELD and skip_held:
            logger.info("job %s not run: another process holds its lease until %s", run_id, taken.held_until)
            raise LeaseHeld(run_id=run_id, until=taken.held_until)
        leased = taken.decision is LeaseDecision.TAKE
    with lease_kept(run_id) if leased else nullcontext():
        try:
            return _process(run_id, llm=llm or get_llm_client(), embedder=embedder or get_embedder(), run=logged)
        except Exception as exc:
            _fail(run_id, exc, leased=leased)
            raise


def _process(run_id: int, *, llm: LLMClient, embedder: EmbedderClient, run: PipelineRun | None) -> WriteResult:
    run = run or _run_with_event(PipelineRun.objects.filter(pk=run_id)).get()
    if run.status == RunStatus.SUCCEEDED:
        return WriteResult.from_dict(run.result)
    if not llm.enabled and run.event.redacted_at is None:
        parse_ahead(run.event.text)  # the offline extractor's parse, while the names it holds are looked up
    llm = llm_within_budget(agent=run.agent, llm=llm)  # past the agent's budget: the offline path
    # the read steps run on the message as stored; the forget guard runs with the job locked (a
    # message it redacts since is read again there, and a redacted one is not stored at all)
    tracer, read = Tracer(), _message(run)
    prepared = None
    if run.event.redacted_at is None:
        prepared = pipeline.prepare(read, llm=llm, embedder=embedder, tracer=tracer)
    with transaction.atomic():
        run = _run_with_event(PipelineRun.objects.select_for_update(of=("self",)).filter(pk=run_id)).get()
        if run.status == RunStatus.SUCCEEDED:
            return WriteResult.from_dict(run.result)
        return _process_locked(run, llm=llm, embedder=embedder, persist_trace=True, tracer=tracer,
                               prepared=prepared, read=read)


def _ahead(embedder: EmbedderClient | None, *, text: str, speaker, occurred_at: datetime, recent) -> None:
    """Start the offline extraction's parse and its vectors on other threads (the vectors only
    where the embedder keeps them for the write to find, and for a request that names its writer:
    one that does not is answered with a 400 by `event_submit`)."""
    embedder = embedder or get_embedder()
    if isinstance(embedder, CachingEmbedder) and isinstance(speaker, str) and speaker.strip():
        recent = tuple(m for m in recent if isinstance(m, str)) if isinstance(recent, list | tuple) else ()
        embed_ahead(embedder, text=text, speaker=speaker, occurred_at=occurred_at, recent_messages=recent)
    else:
        parse_ahead(text)


def _fail(run_id: int, exc: Exception, *, leased: bool) -> None:
    """Store the failure — only while this thread holds the job: a job re-queued after its lease
    expired belongs to whoever took it since."""
    if not leased:
        return
    failed = PipelineRun.objects.filter(pk=run_id, status=RunStatus.RUNNING, lease_owner=lease_owner_name()).update(
        status=RunStatus.FAILED, error=f"{type(exc).__name__}: {exc}"[:2000], finished_at=timezone.now(),
        lease_expires_at=None,
    )
    failed_run = PipelineRun.objects.select_related("agent").filter(pk=run_id).first() if failed else None
    if failed_run is not None and failed_run.agent is not None:
        live_notify(agent=failed_run.agent, kind="run", obj_id=run_id)


def _run_with_event(runs):
    return runs.select_related("event", "agent").defer("event__embedding", "event__search_vector")


def _forget_guard(run: PipelineRun, embedder: EmbedderClient) -> bool:
    """Whether the event is to be processed: not when it was said by a person forgotten since.
    A message naming a forgotten person is redacted first (its params with it)."""
    guard = event_forget_guard(event=run.event, embedder=embedder)
    if guard == "mentions":
        run.refresh_from_db(fields=["params"])
    return guard != "redacted"


def _message(run: PipelineRun) -> pipeline.Message:
    params = run.params or {}
    return pipeline.Message(
        agent=run.agent, event=run.event, speaker=run.event.speaker,
        config=apply_overrides(WriteConfig(), params.get("config_overrides")),
        recent=tuple(params.get("recent_messages") or ()),
    )


def _process_locked(run: PipelineRun, *, llm, embedder, persist_trace: bool, tracer: Tracer | None = None,
                    prepared: pipeline.Prepared | None = None, read: pipeline.Message | None = None) -> WriteResult:
    """The pipeline with the job locked: the storing steps over what `prepared` found when it
    `read` the message, or over the read steps run again when the message changed since."""
    started = time.perf_counter()
    if not _forget_guard(run, embedder):  # said by a person forgotten since: nothing of it is kept
        return _finish(run, WriteResult(success=True), started=started, tokens=(0, 0))
    message = _message(run)
    if prepared is None or read is None or (read.text, read.speaker, read.recent) != (
            message.text, message.speaker, message.recent):
        tracer = Tracer()
        prepared = pipeline.prepare(message, llm=llm, embedder=embedder, tracer=tracer)
    result = pipeline.store(prepared, llm=llm, embedder=embedder, tracer=tracer)
    result.success, result.event_id, result.run_id = True, run.event_id, run.id
    result.tokens_used = tracer.usage.as_dict()
    result.trace = [s.as_dict() for s in tracer.steps]
    _finish(run, result, started=started, tokens=(tracer.usage.input_tokens, tracer.usage.output_tokens))
    if persist_trace:
        trace_steps_persist(run=run, steps=tracer.steps, attempt=run.attempts)
        live_notify(agent=run.agent, kind="run", obj_id=run.id)  # its facts commit with it
    WRITE_SECONDS.observe(result.duration_ms / 1000)
    return result


def _finish(run: PipelineRun, result: WriteResult, *, started: float, tokens: tuple[int, int]) -> WriteResult:
    result.success, result.event_id, result.run_id = True, run.event_id, run.id
    result.duration_ms = _ms(started)
    run.status, run.finished_at, run.error = RunStatus.SUCCEEDED, timezone.now(), ""
    run.lease_expires_at = None  # the lease is given up with the job's outcome
    run.duration_ms = result.duration_ms
    run.tokens_in, run.tokens_out = tokens
    run.result = result.as_dict()
    run.save(update_fields=["status", "finished_at", "error", "lease_expires_at", "duration_ms", "tokens_in",
                            "tokens_out", "result"])
    return result
