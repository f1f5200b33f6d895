"""`Client` (blocking) and `AsyncClient` (asyncio): the same methods with the same arguments and
results, over the request/response layer in `_calls`. Each method builds its call there; the two
classes differ only in how they send, sleep and iterate."""

from __future__ import annotations

import asyncio
import copy
import os
import time
import uuid
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass, replace
from typing import Any, Literal, TypeVar, overload

import httpx

from anamnesis_client import _calls as calls
from anamnesis_client.errors import TransportError, WaitTimeout
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
)

T = TypeVar("T")
Moment = calls.Moment
RetryPolicy = calls.RetryPolicy
DEFAULT_URL = "http://127.0.0.1:8000"
USER_AGENT = "anamnesis-client/0.1"


def new_idempotency_key() -> str:
    """A fresh key for a write the caller gave none: the client's own retries of it are replays."""
    return f"anamnesis-client-{uuid.uuid4().hex}"


@dataclass(frozen=True)
class _Settings:
    """What both clients hold: the server, the key's headers, the agent, timeouts and retries."""

    base_url: str
    headers: dict[str, str]
    agent: str | None
    timeout: float
    retry: RetryPolicy

    @classmethod
    def of(cls, base_url: str | None, api_key: str | None, agent: str | None, timeout: float,
           retry: RetryPolicy | None) -> _Settings:
        """Unset arguments come from ANAMNESIS_URL, ANAMNESIS_KEY and ANAMNESIS_AGENT."""
        key = api_key or os.environ.get("ANAMNESIS_KEY")
        if not key:
            raise ValueError("no API key: pass api_key= or set ANAMNESIS_KEY (manage.py create_api_key prints one)")
        return cls(base_url=(base_url or os.environ.get("ANAMNESIS_URL") or DEFAULT_URL).rstrip("/"),
                   headers={"Authorization": f"Bearer {key}", "Accept": "application/json", "User-Agent": USER_AGENT},
                   agent=agent or os.environ.get("ANAMNESIS_AGENT") or None, timeout=timeout,
                   retry=retry or RetryPolicy())

    def request_args(self, call: calls.Call[Any]) -> dict[str, Any]:
        if call.path.startswith("/"):
            url = self.base_url + call.path
        else:  # a page's `next`: on this server, whatever host the server believed it had (a proxy's)
            base = httpx.URL(self.base_url)
            url = str(httpx.URL(call.path).copy_with(scheme=base.scheme, host=base.host, port=base.port))
        return {"method": call.method, "url": url, "params": call.params or None, "json": call.json,
                "headers": {**self.headers, **call.headers}, "timeout": max(call.timeout or 0.0, self.timeout)}


def _transport_error(exc: httpx.TransportError) -> TransportError:
    return TransportError(f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__)


class Client:
    """A blocking client of one Anamnesis server, for one agent (`with_agent` switches).

    >>> with Client("http://127.0.0.1:8000", api_key="anm_…", agent="demo") as memory:
    ...     memory.remember("I moved to Austin.", speaker="Rafael", wait=True).result.facts_added
    """

    def __init__(self, base_url: str | None = None, api_key: str | None = None, *, agent: str | None = None,
                 timeout: float = 30.0, retry: RetryPolicy | None = None, http_client: httpx.Client | None = None):
        self._settings = _Settings.of(base_url, api_key, agent, timeout, retry)
        self._owns_http = http_client is None
        self._http = http_client or httpx.Client()

    @property
    def agent(self) -> str | None:
        return self._settings.agent

    def with_agent(self, agent: str) -> Client:
        """The same client (connection pool, key, settings) for another agent."""
        other = copy.copy(self)
        other._settings = replace(self._settings, agent=agent)
        other._owns_http = False
        return other

    def close(self) -> None:
        if self._owns_http:
            self._http.close()

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    # --- sending -------------------------------------------------------------------------------------

    def _send(self, call: calls.Call[T]) -> T:
        attempt = 0
        while True:
            try:
                response = self._http.request(**self._settings.request_args(call))
            except httpx.TransportError as exc:
                raise _transport_error(exc) from exc
            delay = self._settings.retry.delay(response, attempt)
            if delay is None:
                return call.parse(response)
            time.sleep(delay)
            attempt += 1

    def _iterate(self, call: calls.Call[calls.Page[T]]) -> Iterator[T]:
        while True:
            page = self._send(call)
            yield from page.items
            if not page.next:
                return
            call = call.following(page.next)

    @contextmanager
    def _stream(self, call: calls.Call[None]) -> Iterator[httpx.Response]:
        attempt = 0
        while True:
            try:
                response = self._http.send(self._http.build_request(**self._settings.request_args(call)), stream=True)
            except httpx.TransportError as exc:
                raise _transport_error(exc) from exc
            delay = self._settings.retry.delay(response, attempt)
            if delay is None:
                break
            response.close()
            time.sleep(delay)
            attempt += 1
        try:
            if response.status_code != 200:
                response.read()
            call.parse(response)
            yield response
        finally:
            response.close()

    # --- operations ----------------------------------------------------------------------------------

    def agents(self) -> Iterator[Agent]:
        """The agents this key may use."""
        return self._iterate(calls.agents())

    @overload
    def remember(self, text: str, *, speaker: str, occurred_at: Moment | None = None, external_id: str | None = None,
                 recent_messages: list[str] | None = None, idempotency_key: str | None = None,
                 wait: Literal[True], timeout: float = 60.0) -> Written: ...

    @overload
    def remember(self, text: str, *, speaker: str, occurred_at: Moment | None = None, external_id: str | None = None,
                 recent_messages: list[str] | None = None, idempotency_key: str | None = None,
                 wait: bool = False, timeout: float = 60.0) -> Remembered: ...

    def remember(self, text: str, *, speaker: str, occurred_at: Moment | None = None, external_id: str | None = None,
                 recent_messages: list[str] | None = None, idempotency_key: str | None = None, wait: bool = False,
                 timeout: float = 60.0) -> Remembered:
        """Store a message; its facts are extracted by a write job. Sending the same
        `idempotency_key` (or `external_id`) with the same message again stores nothing new and
        answers the first job (`replayed`); without a key the client makes one, so its own retries
        are safe. `wait=True` returns once the job succeeded (`Written`, `result` set), raising
        `JobFailed` if it failed, or `WaitTimeout` after `timeout` seconds."""
        started = time.monotonic()
        done = self._send(calls.remember(
            self.agent, text=text, speaker=speaker, occurred_at=occurred_at, external_id=external_id,
            recent_messages=recent_messages, idempotency_key=idempotency_key or new_idempotency_key(),
            wait=timeout if wait else None))
        if not wait or isinstance(done, Written) or done.job_id is None:
            return done
        result = self.wait_for_job(done.job_id, timeout=max(0.0, timeout - (time.monotonic() - started)))
        return calls.written(done, result)

    def job(self, job_id: int) -> Job:
        return self._send(calls.job(self.agent, job_id))

    def wait_for_job(self, job_id: int, *, timeout: float = 60.0, poll_interval: float = 0.5) -> WriteResult:
        """The job's WriteResult once it succeeded; `JobFailed` if it failed, `WaitTimeout` if it
        has not finished after `timeout` seconds."""
        deadline = time.monotonic() + timeout
        while True:
            job = self.job(job_id)
            result = calls.job_outcome(job)
            if result is not None:
                return result
            if time.monotonic() >= deadline:
                raise WaitTimeout(job_id, job.status, timeout)
            time.sleep(min(poll_interval, max(0.0, deadline - time.monotonic())))

    def retry_job(self, job_id: int) -> Job:
        """Queue a failed job again (or a running one whose worker died)."""
        return self._send(calls.retry_job(self.agent, job_id))

    def retrieve(self, query: str, *, as_of: Moment | None = None, valid_at: Moment | None = None,
                 recorded_as_of: Moment | None = None, limit: int | None = None,
                 entity_hints: list[str] | None = None, preset: str | None = None,
                 config_overrides: dict[str, Any] | None = None) -> RetrieveResult:
        """The context for `query`: ranked facts and events with citations. `as_of` answers with
        what the agent knew at that moment, `valid_at` about another moment of the world (default:
        as_of), `recorded_as_of` with what the database held then."""
        return self._send(calls.retrieve(
            self.agent, query=query, as_of=as_of, valid_at=valid_at, recorded_as_of=recorded_as_of, limit=limit,
            entity_hints=entity_hints, preset=preset, config_overrides=config_overrides))

    recall = retrieve

    def entities(self, *, q: str | None = None, type: str | None = None, include_merged: bool | None = None,
                 page_size: int | None = None) -> Iterator[Entity]:
        """Entities (name, key or alias containing `q`), every page."""
        return self._iterate(calls.entities(self.agent, q=q, type=type, include_merged=include_merged,
                                            page_size=page_size))

    def entity(self, entity_id: int, *, as_of: Moment | None = None, valid_at: Moment | None = None,
               recorded_as_of: Moment | None = None) -> EntityDetail:
        return self._send(calls.entity(self.agent, entity_id, as_of=as_of, valid_at=valid_at,
                                       recorded_as_of=recorded_as_of))

    def facts(self, *, entity: int | None = None, q: str | None = None, as_of: Moment | None = None,
              valid_at: Moment | None = None, recorded_as_of: Moment | None = None,
              include_superseded: bool | None = None, page_size: int | None = None) -> Iterator[Fact]:
        """Fact versions, every page: the current ones unless a clock or `include_superseded` is given."""
        return self._iterate(calls.facts(self.agent, entity=entity, q=q, as_of=as_of, valid_at=valid_at,
                                         recorded_as_of=recorded_as_of, include_superseded=include_superseded,
                                         page_size=page_size))

    def fact(self, fact_id: int) -> FactDetail:
        return self._send(calls.fact(self.agent, fact_id))

    def fact_history(self, fact_id: int) -> FactHistory:
        return self._send(calls.fact_history(self.agent, fact_id))

    def correct_fact(self, fact_id: int, text: str, *, reason: str = "", valid_from: Moment | None = None) -> Fact:
        """Replace a wrong statement: the new version supersedes `fact_id` (409 `Conflict` if that
        version is no longer current)."""
        return self._send(calls.correct_fact(self.agent, fact_id, text=text, reason=reason, valid_from=valid_from))

    def retract_fact(self, fact_id: int, *, reason: str = "", reopen_previous: bool = False) -> FactRetracted:
        return self._send(calls.retract_fact(self.agent, fact_id, reason=reason, reopen_previous=reopen_previous))

    def forget_preview(self, entity_id: int) -> ForgetPreview:
        """What `forget(entity_id)` would remove or redact (admin scope); nothing changes."""
        return self._send(calls.forget_preview(self.agent, entity_id))

    def forget(self, entity_id: int, *, reason: str = "") -> ForgetReport:
        """Erase the person and everything derived from them (admin scope); returns the receipt."""
        return self._send(calls.forget(self.agent, entity_id, reason=reason))

    def export(self) -> Iterator[dict[str, Any]]:
        """The agent's memory as JSON Lines records, streamed (admin scope), header first."""
        with self._stream(calls.export(self.agent)) as response:
            try:
                for line in response.iter_lines():
                    record = calls.export_line(line)
                    if record is not None:
                        yield record
            except httpx.TransportError as exc:
                raise _transport_error(exc) from exc


class AsyncClient:
    """The asyncio twin of `Client`: the same methods, awaited (lists and export are `async for`)."""

    def __init__(self, base_url: str | None = None, api_key: str | None = None, *, agent: str | None = None,
                 timeout: float = 30.0, retry: RetryPolicy | None = None,
                 http_client: httpx.AsyncClient | None = None):
        self._settings = _Settings.of(base_url, api_key, agent, timeout, retry)
        self._owns_http = http_client is None
        self._http = http_client or httpx.AsyncClient()

    @property
    def agent(self) -> str | None:
        return self._settings.agent

    def with_agent(self, agent: str) -> AsyncClient:
        other = copy.copy(self)
        other._settings = replace(self._settings, agent=agent)
        other._owns_http = False
        return other

    async def aclose(self) -> None:
        if self._owns_http:
            await self._http.aclose()

    async def __aenter__(self) -> AsyncClient:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()

    # --- sending -------------------------------------------------------------------------------------

    async def _send(self, call: calls.Call[T]) -> T:
        attempt = 0
        while True:
            try:
                response = await self._http.request(**self._settings.request_args(call))
            except httpx.TransportError as exc:
                raise _transport_error(exc) from exc
            delay = self._settings.retry.delay(response, attempt)
            if delay is None:
                return call.parse(response)
            await asyncio.sleep(delay)
            attempt += 1

    async def _iterate(self, call: calls.Call[calls.Page[T]]) -> AsyncIterator[T]:
        while True:
            page = await self._send(call)
            for item in page.items:
                yield item
            if not page.next:
                return
            call = call.following(page.next)

    @asynccontextmanager
    async def _stream(self, call: calls.Call[None]) -> AsyncIterator[httpx.Response]:
        attempt = 0
        while True:
            try:
                request = self._http.build_request(**self._settings.request_args(call))
                response = await self._http.send(request, stream=True)
            except httpx.TransportError as exc:
                raise _transport_error(exc) from exc
            delay = self._settings.retry.delay(response, attempt)
            if delay is None:
                break
            await response.aclose()
            await asyncio.sleep(delay)
            attempt += 1
        try:
            if response.status_code != 200:
                await response.aread()
            call.parse(response)
            yield response
        finally:
            await response.aclose()

    # --- operations (documented on Client) ---------------------------------------------------------------

    def agents(self) -> AsyncIterator[Agent]:
        return self._iterate(calls.agents())

    @overload
    async def remember(self, text: str, *, speaker: str, occurred_at: Moment | None = None,
                       external_id: str | None = None, recent_messages: list[str] | None = None,
                       idempotency_key: str | None = None, wait: Literal[True], timeout: float = 60.0) -> Written: ...

    @overload
    async def remember(self, text: str, *, speaker: str, occurred_at: Moment | None = None,
                       external_id: str | None = None, recent_messages: list[str] | None = None,
                       idempotency_key: str | None = None, wait: bool = False, timeout: float = 60.0) -> Remembered: ...

    async def remember(self, text: str, *, speaker: str, occurred_at: Moment | None = None,
                       external_id: str | None = None, recent_messages: list[str] | None = None,
                       idempotency_key: str | None = None, wait: bool = False, timeout: float = 60.0) -> Remembered:
        started = time.monotonic()
        done = await self._send(calls.remember(
            self.agent, text=text, speaker=speaker, occurred_at=occurred_at, external_id=external_id,
            recent_messages=recent_messages, idempotency_key=idempotency_key or new_idempotency_key(),
            wait=timeout if wait else None))
        if not wait or isinstance(done, Written) or done.job_id is None:
            return done
        result = await self.wait_for_job(done.job_id, timeout=max(0.0, timeout - (time.monotonic() - started)))
        return calls.written(done, result)

    async def job(self, job_id: int) -> Job:
        return await self._send(calls.job(self.agent, job_id))

    async def wait_for_job(self, job_id: int, *, timeout: float = 60.0, poll_interval: float = 0.5) -> WriteResult:
        deadline = time.monotonic() + timeout
        while True:
            job = await self.job(job_id)
            result = calls.job_outcome(job)
            if result is not None:
                return result
            if time.monotonic() >= deadline:
                raise WaitTimeout(job_id, job.status, timeout)
            await asyncio.sleep(min(poll_interval, max(0.0, deadline - time.monotonic())))

    async def retry_job(self, job_id: int) -> Job:
        return await self._send(calls.retry_job(self.agent, job_id))

    async def retrieve(self, query: str, *, as_of: Moment | None = None, valid_at: Moment | None = None,
                       recorded_as_of: Moment | None = None, limit: int | None = None,
                       entity_hints: list[str] | None = None, preset: str | None = None,
                       config_overrides: dict[str, Any] | None = None) -> RetrieveResult:
        return await self._send(calls.retrieve(
            self.agent, query=query, as_of=as_of, valid_at=valid_at, recorded_as_of=recorded_as_of, limit=limit,
            entity_hints=entity_hints, preset=preset, config_overrides=config_overrides))

    recall = retrieve

    def entities(self, *, q: str | None = None, type: str | None = None, include_merged: bool | None = None,
                 page_size: int | None = None) -> AsyncIterator[Entity]:
        return self._iterate(calls.entities(self.agent, q=q, type=type, include_merged=include_merged,
                                            page_size=page_size))

    async def entity(self, entity_id: int, *, as_of: Moment | None = None, valid_at: Moment | None = None,
                     recorded_as_of: Moment | None = None) -> EntityDetail:
        return await self._send(calls.entity(self.agent, entity_id, as_of=as_of, valid_at=valid_at,
                                             recorded_as_of=recorded_as_of))

    def facts(self, *, entity: int | None = None, q: str | None = None, as_of: Moment | None = None,
              valid_at: Moment | None = None, recorded_as_of: Moment | None = None,
              include_superseded: bool | None = None, page_size: int | None = None) -> AsyncIterator[Fact]:
        return self._iterate(calls.facts(self.agent, entity=entity, q=q, as_of=as_of, valid_at=valid_at,
                                         recorded_as_of=recorded_as_of, include_superseded=include_superseded,
                                         page_size=page_size))

    async def fact(self, fact_id: int) -> FactDetail:
        return await self._send(calls.fact(self.agent, fact_id))

    async def fact_history(self, fact_id: int) -> FactHistory:
        return await self._send(calls.fact_history(self.agent, fact_id))

    async def correct_fact(self, fact_id: int, text: str, *, reason: str = "",
                           valid_from: Moment | None = None) -> Fact:
        return await self._send(calls.correct_fact(self.agent, fact_id, text=text, reason=reason,
                                                   valid_from=valid_from))

    async def retract_fact(self, fact_id: int, *, reason: str = "", reopen_previous: bool = False) -> FactRetracted:
        return await self._send(calls.retract_fact(self.agent, fact_id, reason=reason,
                                                   reopen_previous=reopen_previous))

    async def forget_preview(self, entity_id: int) -> ForgetPreview:
        return await self._send(calls.forget_preview(self.agent, entity_id))

    async def forget(self, entity_id: int, *, reason: str = "") -> ForgetReport:
        return await self._send(calls.forget(self.agent, entity_id, reason=reason))

    async def export(self) -> AsyncIterator[dict[str, Any]]:
        async with self._stream(calls.export(self.agent)) as response:
            try:
                async for line in response.aiter_lines():
                    record = calls.export_line(line)
                    if record is not None:
                        yield record
            except httpx.TransportError as exc:
                raise _transport_error(exc) from exc

