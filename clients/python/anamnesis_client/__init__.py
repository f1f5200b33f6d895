"""A Python client for the Anamnesis memory service's REST API (`/api/v1/`): `Client` (blocking)
and `AsyncClient` (asyncio), typed results (`anamnesis_client.models`) and one exception family
(`anamnesis_client.errors`)."""

from anamnesis_client._calls import RetryPolicy
from anamnesis_client.client import AsyncClient, Client, new_idempotency_key
from anamnesis_client.errors import (
    AnamnesisError,
    APIError,
    AuthenticationError,
    Conflict,
    IdempotencyConflict,
    JobFailed,
    NotFound,
    PayloadTooLarge,
    PermissionDenied,
    RateLimited,
    ServerError,
    ServiceUnavailable,
    TransportError,
    UnprocessableEntity,
    ValidationError,
    WaitTimeout,
)
from anamnesis_client.models import (
    Agent,
    Entity,
    EntityDetail,
    Fact,
    FactDetail,
    FactHistory,
    FactVersion,
    ForgetPreview,
    ForgetReport,
    Job,
    Remembered,
    RetrieveResult,
    WriteResult,
    Written,
)

__version__ = "0.1.0"
__all__ = [
    "APIError", "Agent", "AnamnesisError", "AsyncClient", "AuthenticationError", "Client", "Conflict", "Entity",
    "EntityDetail", "Fact", "FactDetail", "FactHistory", "FactVersion", "ForgetPreview", "ForgetReport",
    "IdempotencyConflict", "Job", "JobFailed", "NotFound", "PayloadTooLarge", "PermissionDenied", "RateLimited",
    "Remembered", "RetrieveResult", "RetryPolicy", "ServerError", "ServiceUnavailable", "TransportError",
    "UnprocessableEntity", "ValidationError", "WaitTimeout", "WriteResult", "Written", "new_idempotency_key",
]
