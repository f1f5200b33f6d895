"""The one domain error family. Services raise these; the API maps them to 4xx responses."""

from __future__ import annotations


class DomainError(Exception):
    code = "invalid"
    http_status = 400

    def __init__(self, message: str, extra: dict | None = None):
        super().__init__(message)
        self.message = message
        self.extra = extra or {}


class NotFound(DomainError):
    code = "not_found"
    http_status = 404


class Conflict(DomainError):
    """The operation does not apply to the object's current state (e.g. a closed version)."""

    code = "conflict"
    http_status = 409


class PayloadTooLarge(DomainError):
    code = "payload_too_large"
    http_status = 413


class ConfigError(DomainError):
    code = "invalid_config"


class IdempotencyConflict(DomainError):
    """An Idempotency-Key reused with a different request: the first one's job stands."""

    code = "idempotency_conflict"
    http_status = 422


class ExternalIdConflict(DomainError):
    """An external_id reused with a different request: the stored message stands."""

    code = "external_id_conflict"
    http_status = 422


class JobFailed(DomainError):
    """A write job the caller waited for failed (it can be retried)."""

    code = "job_failed"
    http_status = 422


class InvalidExportFile(DomainError):
    """An agent export that cannot be imported: which line, and what is wrong with it."""

    code = "invalid_export_file"

    def __init__(self, message: str, *, line: int | None = None, field: str | None = None):
        extra: dict = {"line": line}
        if field:
            extra["field"] = field
        super().__init__(f"line {line}: {message}" if line else message, extra)


class UnsupportedExportVersion(InvalidExportFile):
    code = "unsupported_export_version"
