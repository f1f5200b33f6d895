"""The event log: store a message (idempotently) together with its write job."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from django.db import IntegrityError, connection, transaction
from django.utils import timezone

from memories.errors import DomainError, PayloadTooLarge
from memories.models import Agent, Event, PipelineRun, RunKind, RunStatus
from memories.providers.embeddings import EmbedderClient
from memories.redaction import request_key_digest
from memories.selectors.forget import forget_key
from memories.services.keyword import keyword_stats_apply
from memories.services.leases import lease_fields


def message_validate(*, message: str, speaker_name: str, max_bytes: int) -> str:
    """Guard: returns the stripped message ("" means nothing to store); too large → 413."""
    if not isinstance(message, str):
        raise DomainError("message must be a string", {"message": "expected a string"})
    if not isinstance(speaker_name, str) or not speaker_name.strip():
        raise DomainError("speaker is required", {"speaker": "must be a non-empty string"})
    size = len(message.encode("utf-8"))
    if size > max_bytes:
        raise PayloadTooLarge(
            f"message is {size} bytes; the limit is {max_bytes} bytes", {"message": f"at most {max_bytes} bytes"}
        )
    return message.strip()


def event_embedding_text(*, speaker: str, text: str, recent_messages=(), with_speaker: bool = True,
                         context: int = 0) -> str:
    """The text an event's vector embeds: the last `context` recent messages, then the message
    itself (as "Speaker: text" with `with_speaker`)."""
    own = f"{speaker.strip()}: {text}" if with_speaker and speaker.strip() else text
    previous = [str(m) for m in list(recent_messages)[-context:]] if context > 0 else []
    return "\n".join([*previous, own])


def event_log(
    *, agent: Agent, speaker: str, text: str, occurred_at: datetime | None, embedder: EmbedderClient,
    idempotency_key: str | None = None, external_id: str | None = None, metadata: dict | None = None,
    params: dict | None = None, embedding_text: str | None = None, start_now: bool = False,
) -> tuple[Event, PipelineRun, str | None]:
    """Store the event and its queued write job in one transaction. A repeated idempotency key
    or external id returns the stored pair instead, with which of the two matched
    (`"idempotency_key"` / `"external_id"`; None: stored now). The vector embeds
    `embedding_text` (default: the text alone). A message with a key pays one indexed lookup
    first, which also finds a forgotten message that kept only the key's digest (a retry after a
    forget is still a replay): a repeat never reaches the database as a failed insert, which the
    server would log with the message's text. A concurrent repeat is still caught by the unique
    constraints. With `start_now` the job is stored as already running (its first attempt, leased to
    this thread), for a caller that processes it at once."""
    now = timezone.now()
    if idempotency_key or external_id:
        existing = _existing(agent, idempotency_key, external_id)
        if existing is not None:
            return existing
    vector = embedder.embed([embedding_text or text])[0]
    try:
        with transaction.atomic():
            event = Event.objects.create(
                agent=agent, speaker=speaker.strip(), text=text, occurred_at=occurred_at or now, recorded_at=now,
                embedding=vector, idempotency_key=idempotency_key or None, external_id=external_id or None,
                metadata=metadata or {},
            )
            keyword_stats_apply(agent_id=agent.id, kind="event", ids=[event.id])
            run = PipelineRun.objects.create(
                agent=agent, kind=RunKind.WRITE, name="write", event=event, input_ref=f"event:{event.id}",
                params=params or {}, **({"status": RunStatus.RUNNING, "started_at": now, "attempts": 1,
                                         **lease_fields(now)} if start_now else {"status": RunStatus.QUEUED}),
            )
    except IntegrityError:
        existing = _existing(agent, idempotency_key, external_id)
        if not existing:
            raise
        return existing
    return event, run, None


@dataclass(frozen=True)
class EventToLog:
    """A checked write request (see `write_request`): the event to store and its job's params."""

    speaker: str
    text: str
    occurred_at: datetime | None
    external_id: str | None
    params: dict
    embedding_text: str


def events_log_batch(*, agent: Agent, items: Sequence[EventToLog], embedder: EmbedderClient) -> list[PipelineRun]:
    """Store new events with their write jobs, running and leased to this thread (as `event_log`
    with `start_now` stores one), in one transaction: their vectors in one call, then one insert
    for the events, one for their keyword statistics and one for the jobs. Returns the jobs (each
    with its event) in order. A repeated external id raises IntegrityError and stores nothing."""
    now = timezone.now()
    vectors = embedder.embed([item.embedding_text or item.text for item in items])
    with transaction.atomic():
        events = Event.objects.bulk_create([
            Event(agent=agent, speaker=item.speaker.strip(), text=item.text, occurred_at=item.occurred_at or now,
                  recorded_at=now, embedding=vector, external_id=item.external_id or None, metadata={})
            for item, vector in zip(items, vectors, strict=True)])
        keyword_stats_apply(agent_id=agent.id, kind="event", ids=[event.id for event in events])
        lease = lease_fields(now)
        return PipelineRun.objects.bulk_create([
            PipelineRun(agent=agent, kind=RunKind.WRITE, name="write", event=event, input_ref=f"event:{event.id}",
                        params=item.params, status=RunStatus.RUNNING, started_at=now, attempts=1, **lease)
            for item, event in zip(items, events, strict=True)])


def stored_key_forms(value: str, *, field: str) -> list[str]:
    """How a message's `external_id` or `idempotency_key` (`field`) may be stored: as sent, or as
    the keyed digest a forget left in its place."""
    return [value, request_key_digest(value, key=forget_key(), field=field)]


def _existing(agent: Agent, idempotency_key: str | None, external_id: str | None):
    """The stored message (with its write job) that a key or an external id names; the
    idempotency key wins when the two name different messages. A new message costs one small
    statement on the event's two unique keys; the rows are read only for a repeat."""
    keys = stored_key_forms(idempotency_key, field="idempotency_key") if idempotency_key else []
    ids = stored_key_forms(external_id, field="external_id") if external_id else []
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT id, idempotency_key FROM {Event._meta.db_table} WHERE agent_id = %s "
            "AND (idempotency_key = ANY(%s) OR external_id = ANY(%s)) LIMIT 2", [agent.id, keys, ids])
        found = cursor.fetchall()
    if not found:
        return None
    event_id, key = next(((i, k) for i, k in found if k in keys), found[0])
    run = (PipelineRun.objects.filter(kind=RunKind.WRITE, event_id=event_id).select_related("event")
           .defer("event__embedding", "event__search_vector").first())
    return run.event, run, "idempotency_key" if key in keys else "external_id"

