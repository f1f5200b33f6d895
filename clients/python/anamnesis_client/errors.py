"""What can go wrong, as one exception family.

`AnamnesisError` is the root. `APIError` and its subclasses are answers of the server: they carry
the status code and the API's error body (`{"error": {"code", "message", "fields"}}`), so a 400
names the offending fields in `fields`. `JobFailed` and `WaitTimeout` concern a stored message's
write job; `TransportError` is a request that got no answer at all.
"""

from __future__ import annotations

from typing import Any

import httpx


class AnamnesisError(Exception):
    """Every error this client raises."""


class TransportError(AnamnesisError):
    """No answer: the connection failed or timed out (the cause is the httpx exception)."""


class APIError(AnamnesisError):
    """The server answered with an error status. `code` is the API's stable code (`invalid`,
    `not_found`, …), `fields` its details by field name, `body` the whole decoded body."""

    def __init__(self, status_code: int, code: str, message: str, fields: dict[str, Any] | None = None,
                 body: Any = None, headers: httpx.Headers | None = None):
        super().__init__(f"{status_code} {code}: {message}")
        self.status_code = status_code
        self.code = code
        self.message = message
        self.fields: dict[str, Any] = fields or {}
        self.body = body
        self.headers = headers if headers is not None else httpx.Headers()


class ValidationError(APIError):
    """400: the input is invalid; `fields` names each offending field (`{"limit": ["…"]}`)."""


class AuthenticationError(APIError):
    """401: missing, unknown or revoked API key."""


class PermissionDenied(APIError):
    """403: the key's scope does not allow the operation (`read` < `write` < `admin`)."""


class NotFound(APIError):
    """404: no such object for this key; another agent's objects are reported missing too."""


class Conflict(APIError):
    """409: the operation does not apply to the object's state (e.g. correcting a superseded
    version: `fields["current"]` names the current one)."""


class PayloadTooLarge(APIError):
    """413: the body or the message is over the server's limit."""


class UnprocessableEntity(APIError):
    """422: the request is well-formed but cannot be applied."""


class IdempotencyConflict(UnprocessableEntity):
    """422: an `Idempotency-Key` or `external_id` already used for a different message; the stored
    message stays as it was (`fields` names which one, and the stored job)."""


class RateLimited(APIError):
    """429 that the client did not (or no longer) retry: `retry_after` is the server's wait in
    seconds, when it gave one."""

    retry_after: float | None = None


class ServiceUnavailable(APIError):
    """503 that the client did not (or no longer) retry (the database restarting, say)."""

    retry_after: float | None = None


class ServerError(APIError):
    """Any other 5xx."""


class JobFailed(AnamnesisError):
    """A stored message's write job failed. The message is kept; `retry_job(job_id)` queues the
    job again."""

    def __init__(self, job_id: int | None, error: str, job_url: str | None = None):
        super().__init__(f"job {job_id} failed: {error}")
        self.job_id = job_id
        self.error = error
        self.job_url = job_url


class WaitTimeout(AnamnesisError):
    """The write job did not finish within the time given; the message is stored and the job goes
    on (`wait_for_job(job_id)` waits again)."""

    def __init__(self, job_id: int, status: str, waited: float):
        super().__init__(f"job {job_id} is still {status} after {waited:.0f} s")
        self.job_id = job_id
        self.status = status
        self.waited = waited
