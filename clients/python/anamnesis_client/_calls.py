"""The request/response layer both clients share. Each operation is a `Call`: what to send and how
to read the answer, built by one function here. `Client` and `AsyncClient` only send calls, sleep
between retries (`RetryPolicy.delay` decides) and loop over pages; neither knows an endpoint.
"""

from __future__ import annotations

import email.utils
import json
import math
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any, Generic, TypeVar
from urllib.parse import quote

import httpx

from anamnesis_client import errors
from anamnesis_client.models import (
    Agent,
    Entity,
    EntityDetail,
    Fact,
    FactDetail,
    FactHistory,
    FactRetracted,
    ForgetPreview,
    ForgetReport,
    Job,
    Remembered,
    RetrieveResult,
    WriteResult,
    Written,
    decode,
)

T = TypeVar("T")
Moment = datetime | str  # an aware datetime, or ISO-8601 text (without an offset the API takes UTC)
API_WAIT_CAP = 30.0  # the server waits at most this long in one request (?wait=true&wait_timeout=…)


@dataclass(frozen=True)
class Call(Generic[T]):
    """One request and how to read its answer. `path` is under the base URL, or an absolute URL
    (a page's `next`)."""

    method: str
    path: str
    parse: Callable[[httpx.Response], T]
    params: dict[str, str] = field(default_factory=dict)
    json: Any = None
    headers: dict[str, str] = field(default_factory=dict)
    timeout: float | None = None  # this request's own read timeout (a server-side wait needs longer)

    def following(self, url: str) -> Call[T]:
        return replace(self, path=url, params={})


@dataclass(frozen=True)
class Page(Generic[T]):
    items: list[T]
    next: str | None


@dataclass(frozen=True)
class RetryPolicy:
    """429 and 503 are retried up to `max_retries` times, after the server's `Retry-After` (or
    `backoff` doubling per attempt when it gives none); a `Retry-After` over `max_wait` seconds is
    not waited for: the error is raised at once with its `retry_after`. Nothing else is retried.
    Writes are safe to retry: `remember` always sends an `Idempotency-Key`."""

    max_retries: int = 3
    max_wait: float = 30.0
    backoff: float = 0.5

    def delay(self, response: httpx.Response, attempt: int) -> float | None:
        """Seconds to sleep before retrying `response` (the `attempt`-th retry, from 0), or None."""
        if response.status_code not in (429, 503) or attempt >= self.max_retries:
            return None
        wait = retry_after(response.headers)
        if wait is None:
            wait = self.backoff * 2**attempt
        return wait if wait <= self.max_wait else None


def retry_after(headers: Mapping[str, str]) -> float | None:
    """`Retry-After` in seconds: a number, or an HTTP date (seconds from now, at least 0)."""
    value = (headers.get("Retry-After") or "").strip()
    if not value:
        return None
    try:
        seconds = float(value)
    except ValueError:
        try:
            when = email.utils.parsedate_to_datetime(value)
        except (TypeError, ValueError):
            return None
        return max(0.0, when.timestamp() - time.time())
    return max(0.0, seconds) if math.isfinite(seconds) else None


# --- errors ------------------------------------------------------------------------------------------

_BY_STATUS: dict[int, type[errors.APIError]] = {
    400: errors.ValidationError, 401: errors.AuthenticationError, 403: errors.PermissionDenied,
    404: errors.NotFound, 409: errors.Conflict, 413: errors.PayloadTooLarge, 422: errors.UnprocessableEntity,
    429: errors.RateLimited, 503: errors.ServiceUnavailable,
}


def error_of(response: httpx.Response) -> errors.AnamnesisError:
    """The exception for an error answer, from the API's body `{"error": {"code", "message", "fields"}}`
    (a body of another shape, from a proxy say, is kept whole in `body`)."""
    try:
        body = response.json()
    except ValueError:
        body = response.text
    detail = body.get("error") if isinstance(body, dict) else None
    if not isinstance(detail, dict):
        detail = {}
    code = str(detail.get("code") or "error")
    message = str(detail.get("message") or response.reason_phrase or "error")
    fields = detail.get("fields")
    if not isinstance(fields, dict):
        fields = {}
    if response.status_code == 422 and code == "job_failed":
        return errors.JobFailed(fields.get("job"), str(fields.get("error") or message), fields.get("job_url"))
    if response.status_code == 422 and code in ("idempotency_conflict", "external_id_conflict"):
        kind: type[errors.APIError] = errors.IdempotencyConflict
    elif response.status_code >= 500 and response.status_code != 503:
        kind = errors.ServerError
    else:
        kind = _BY_STATUS.get(response.status_code, errors.APIError)
    error = kind(response.status_code, code, message, fields, body, response.headers)
    if isinstance(error, errors.RateLimited | errors.ServiceUnavailable):
        error.retry_after = retry_after(response.headers)
    return error


def _reader(kind: type[T], *ok: int) -> Callable[[httpx.Response], T]:
    """Decode a success answer (one of `ok`) as `kind`; raise the error of any other."""

    def parse(response: httpx.Response) -> T:
        if response.status_code not in ok:
            raise error_of(response)
        return decode(kind, response.json())  # type: ignore[no-any-return]

    return parse


def _page_reader(kind: type[T]) -> Callable[[httpx.Response], Page[T]]:
    def parse(response: httpx.Response) -> Page[T]:
        if response.status_code != 200:
            raise error_of(response)
        body = response.json()
        return Page(items=[decode(kind, item) for item in body["results"]], next=body.get("next"))

    return parse


# --- building requests -----------------------------------------------------------------------------


def moment(value: Moment | None) -> str | None:
    return value.isoformat() if isinstance(value, datetime) else value


def _query(**values: Any) -> dict[str, str]:
    """Query parameters without the unset ones; booleans as the API spells them."""
    out = {}
    for name, value in values.items():
        if value is None:
            continue
        if isinstance(value, bool):
            out[name] = "true" if value else "false"
        elif isinstance(value, datetime):
            out[name] = value.isoformat()
        else:
            out[name] = str(value)
    return out


def _body(**values: Any) -> dict[str, Any]:
    """A JSON body without the unset fields (the API's defaults apply), date-times as ISO-8601."""
    return {name: moment(value) if isinstance(value, datetime) else value
            for name, value in values.items() if value is not None}


def agent_path(agent: str | None, *parts: object) -> str:
    if not agent:
        raise ValueError("this operation needs an agent: Client(..., agent='slug') or client.with_agent('slug')")
    tail = "".join(f"{quote(str(part), safe='')}/" for part in parts)
    return f"/api/v1/agents/{quote(agent, safe='')}/{tail}"


def clocks(as_of: Moment | None, valid_at: Moment | None, recorded_as_of: Moment | None) -> dict[str, str]:
    return _query(as_of=moment(as_of), valid_at=moment(valid_at), recorded_as_of=moment(recorded_as_of))


# --- the operations ---------------------------------------------------------------------------------


def agents() -> Call[Page[Agent]]:
    return Call("GET", "/api/v1/agents/", _page_reader(Agent))


def remember(agent: str | None, *, text: str, speaker: str, occurred_at: Moment | None, external_id: str | None,
             recent_messages: list[str] | None, idempotency_key: str, wait: float | None) -> Call[Remembered]:
    """POST events/. With `wait` (seconds), the server holds the answer until the job finished or
    min(wait, 30 s) passed."""
    params = _query(wait=True, wait_timeout=min(wait, API_WAIT_CAP)) if wait else {}
    body = _body(speaker=speaker, text=text, occurred_at=occurred_at, external_id=external_id,
                 recent_messages=recent_messages)
    return Call("POST", agent_path(agent, "events"), _read_remembered, params=params, json=body,
                headers={"Idempotency-Key": idempotency_key},
                timeout=min(wait, API_WAIT_CAP) + 30 if wait else None)


def _read_remembered(response: httpx.Response) -> Remembered:
    replayed = response.headers.get("Idempotent-Replayed", "").lower() == "true"
    if response.status_code == 200:  # the job finished while the server waited, or an empty text
        result = decode(WriteResult, response.json())
        if not result.success:
            raise errors.JobFailed(result.run_id, result.error or "unknown error")
        return Written(job_id=result.run_id, status="succeeded", result=result, replayed=replayed)
    if response.status_code != 202:
        raise error_of(response)
    body = response.json()
    job = decode(Job, body["job"])
    pending = Remembered(job_id=job.id, status=job.status, result=None, replayed=replayed, job_url=body.get("job_url"))
    if job.status == "succeeded" and job.result is not None:  # a replay of a finished job
        return written(pending, job.result)
    return pending


def written(pending: Remembered, result: WriteResult) -> Written:
    """`pending` once its job succeeded with `result`."""
    return Written(job_id=pending.job_id, status="succeeded", result=result, replayed=pending.replayed,
                   job_url=pending.job_url)


def job(agent: str | None, job_id: int) -> Call[Job]:
    return Call("GET", agent_path(agent, "jobs", job_id), _reader(Job, 200))


def retry_job(agent: str | None, job_id: int) -> Call[Job]:
    return Call("POST", agent_path(agent, "jobs", job_id, "retry"), _read_job_accepted)


def _read_job_accepted(response: httpx.Response) -> Job:
    if response.status_code != 202:
        raise error_of(response)
    return decode(Job, response.json()["job"])  # type: ignore[no-any-return]


def job_outcome(job: Job) -> WriteResult | None:
    """A finished job's WriteResult (JobFailed for a failed one); None while it runs."""
    if job.status == "failed":
        raise errors.JobFailed(job.id, job.error or "unknown error", job.url or None)
    if job.status == "succeeded":
        return job.result if job.result is not None else WriteResult(success=True, run_id=job.id)
    return None


def retrieve(agent: str | None, *, query: str, as_of: Moment | None, valid_at: Moment | None,
             recorded_as_of: Moment | None, limit: int | None, entity_hints: list[str] | None, preset: str | None,
             config_overrides: dict[str, Any] | None) -> Call[RetrieveResult]:
    body = _body(query=query, as_of=as_of, valid_at=valid_at, recorded_as_of=recorded_as_of, limit=limit,
                 entity_hints=entity_hints, preset=preset, config_overrides=config_overrides)
    return Call("POST", agent_path(agent, "retrieve"), _reader(RetrieveResult, 200), json=body)


def entities(agent: str | None, *, q: str | None, type: str | None, include_merged: bool | None,
             page_size: int | None) -> Call[Page[Entity]]:
    params = _query(q=q, type=type, include_merged=include_merged, page_size=page_size)
    return Call("GET", agent_path(agent, "entities"), _page_reader(Entity), params=params)


def entity(agent: str | None, entity_id: int, *, as_of: Moment | None, valid_at: Moment | None,
           recorded_as_of: Moment | None) -> Call[EntityDetail]:
    return Call("GET", agent_path(agent, "entities", entity_id), _reader(EntityDetail, 200),
                params=clocks(as_of, valid_at, recorded_as_of))


def facts(agent: str | None, *, entity: int | None, q: str | None, as_of: Moment | None, valid_at: Moment | None,
          recorded_as_of: Moment | None, include_superseded: bool | None, page_size: int | None) -> Call[Page[Fact]]:
    params = {**_query(entity=entity, q=q, include_superseded=include_superseded, page_size=page_size),
              **clocks(as_of, valid_at, recorded_as_of)}
    return Call("GET", agent_path(agent, "facts"), _page_reader(Fact), params=params)


def fact(agent: str | None, fact_id: int) -> Call[FactDetail]:
    return Call("GET", agent_path(agent, "facts", fact_id), _reader(FactDetail, 200))


def fact_history(agent: str | None, fact_id: int) -> Call[FactHistory]:
    return Call("GET", agent_path(agent, "facts", fact_id, "history"), _reader(FactHistory, 200))


def correct_fact(agent: str | None, fact_id: int, *, text: str, reason: str, valid_from: Moment | None) -> Call[Fact]:
    body = _body(text=text, reason=reason, valid_from=valid_from)
    return Call("POST", agent_path(agent, "facts", fact_id, "correct"), _reader(Fact, 201), json=body)


def retract_fact(agent: str | None, fact_id: int, *, reason: str, reopen_previous: bool) -> Call[FactRetracted]:
    body = _body(reason=reason, reopen_previous=reopen_previous)
    return Call("POST", agent_path(agent, "facts", fact_id, "retract"), _reader(FactRetracted, 200), json=body)


def forget_preview(agent: str | None, entity_id: int) -> Call[ForgetPreview]:
    return Call("GET", agent_path(agent, "entities", entity_id, "forget"), _reader(ForgetPreview, 200))


def forget(agent: str | None, entity_id: int, *, reason: str) -> Call[ForgetReport]:
    return Call("POST", agent_path(agent, "entities", entity_id, "forget"), _reader(ForgetReport, 200),
                json=_body(reason=reason))


def export(agent: str | None) -> Call[None]:
    """GET export/: JSON Lines, streamed (the clients read it line by line, `export_line`)."""
    return Call("GET", agent_path(agent, "export"), _check_ok, headers={"Accept": "application/x-ndjson, */*"})


def _check_ok(response: httpx.Response) -> None:
    """(The clients read an error answer's body before this.)"""
    if response.status_code != 200:
        raise error_of(response)


def export_line(line: str) -> dict[str, Any] | None:
    """One exported record; None for a blank line."""
    line = line.strip()
    return json.loads(line) if line else None
