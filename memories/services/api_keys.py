"""API keys: create (the plaintext is returned once, only its hash is stored), revoke,
authenticate."""

from __future__ import annotations

import hashlib
import secrets
from datetime import timedelta

from django.db import transaction
from django.utils import timezone

from memories.errors import DomainError, NotFound
from memories.models import Agent, ApiKey, ApiKeyScope
from memories.services.audit import audit_record

KEY_PREFIX = "anm_"
# last_used_at is a hint for operators, not an access log: refresh it at most this often.
LAST_USED_RESOLUTION = timedelta(minutes=1)


def api_key_hash(plaintext: str) -> str:
    return hashlib.sha256(plaintext.encode("utf-8")).hexdigest()


@transaction.atomic
def api_key_create(*, agent: Agent | None, scope: str, name: str = "", actor: str = "system") -> tuple[ApiKey, str]:
    """A new key for one agent (or every agent when `agent` is None). Returns the row and the
    plaintext key, which is not stored anywhere and cannot be shown again."""
    if scope not in ApiKeyScope.values:
        raise DomainError(f"scope must be one of {', '.join(ApiKeyScope.values)}", {"scope": scope})
    plaintext = KEY_PREFIX + secrets.token_urlsafe(32)
    key = ApiKey.objects.create(agent=agent, name=name[:200], prefix=plaintext[:8], key_hash=api_key_hash(plaintext),
                                scope=scope)
    audit_record(agent=agent, actor=actor, action="api_key_create", obj=key,
                 after={"prefix": key.prefix, "scope": scope, "name": key.name})
    return key, plaintext


@transaction.atomic
def api_key_revoke(*, key_id: int, actor: str = "system") -> ApiKey:
    """Revoke a key from now on (idempotent: revoking twice keeps the first time)."""
    key = ApiKey.objects.select_for_update().filter(pk=key_id).first()
    if key is None:
        raise NotFound(f"API key {key_id} not found")
    if key.revoked_at is None:
        key.revoked_at = timezone.now()
        key.save(update_fields=["revoked_at"])
        audit_record(agent=key.agent, actor=actor, action="api_key_revoke", obj=key, after={"prefix": key.prefix})
    return key


def api_key_authenticate(*, plaintext: str) -> ApiKey | None:
    """The active key with this plaintext, or None. Notes when it was last used."""
    if not plaintext or not plaintext.startswith(KEY_PREFIX) or len(plaintext) > 200:
        return None
    key = ApiKey.objects.select_related("agent").filter(key_hash=api_key_hash(plaintext),
                                                        revoked_at__isnull=True).first()
    if key is None:
        return None
    now = timezone.now()
    if key.last_used_at is None or now - key.last_used_at > LAST_USED_RESOLUTION:
        ApiKey.objects.filter(pk=key.pk).update(last_used_at=now)
        key.last_used_at = now
    return key
