"""Who is calling and what they may do.

Two ways in: an API key sent as `Authorization: Bearer <key>` (scope read / write / admin, bound
to one agent or to all), or a session of a UI user, whose rights are the UI's roles
(memories.services.roles) on every agent: `viewers` read, `operators` also write and do what the UI
lets them (correct, retract, reinstate, alias, merge, unmerge, forget), superusers everything,
creating agents included. `is_staff` alone grants nothing. Either way the request carries a
`Principal`; views ask it whether an agent is visible (invisible agents are a 404, never a 403, so
existence does not leak) and whether the scope allows the operation.
"""

from __future__ import annotations

from dataclasses import dataclass

from rest_framework import authentication, exceptions, permissions
from rest_framework.settings import api_settings
from rest_framework.throttling import SimpleRateThrottle

from memories.models import Agent, ApiKey, ApiKeyScope
from memories.services.api_keys import api_key_authenticate
from memories.services.roles import user_can_operate, user_can_view, user_is_superuser

SCOPE_RANK = {ApiKeyScope.READ: 1, ApiKeyScope.WRITE: 2, ApiKeyScope.ADMIN: 3}


@dataclass(frozen=True)
class Principal:
    """The caller: its scope, the one agent it is bound to (None: every agent), the name the
    audit log records (`key:<prefix>` / `user:<username>`), the throttling identity, and whether
    it may create agents (an admin key of all agents, or a superuser)."""

    scope: str
    agent_id: int | None
    actor: str
    ident: str
    creates_agents: bool = False

    @classmethod
    def of_key(cls, key: ApiKey) -> Principal:
        return cls(scope=key.scope, agent_id=key.agent_id, actor=f"key:{key.prefix}", ident=f"key:{key.pk}",
                   creates_agents=key.scope == ApiKeyScope.ADMIN and key.agent_id is None)

    @classmethod
    def of_user(cls, user) -> Principal | None:
        """A session's rights, from the UI's roles: viewers read; operators write and do the
        operator actions (merge, unmerge and forget included: the admin scope on every agent,
        without creating agents); superusers everything. None for a user without a role."""
        if user_is_superuser(user) or user_can_operate(user):
            scope = ApiKeyScope.ADMIN
        elif user_can_view(user):
            scope = ApiKeyScope.READ
        else:
            return None
        return cls(scope=scope, agent_id=None, actor=f"user:{user.get_username()}", ident=f"user:{user.pk}",
                   creates_agents=user_is_superuser(user))

    def can_see(self, agent: Agent) -> bool:
        return self.agent_id is None or self.agent_id == agent.id

    def allows(self, scope: str) -> bool:
        return SCOPE_RANK[self.scope] >= SCOPE_RANK[scope]


class ApiKeyUser:
    """request.user for a key-authenticated request (there is no Django user behind a key)."""

    is_authenticated = True
    is_active = True
    is_staff = False
    is_anonymous = False
    pk = None

    def __init__(self, key: ApiKey):
        self.key = key
        self.username = f"key:{key.prefix}"

    def __str__(self) -> str:
        return self.username


class InvalidKeyThrottle(SimpleRateThrottle):
    """Requests with an invalid key, per client address, at DEFAULT_THROTTLE_RATES["anon"]: past
    the rate they are a 429 instead of a 401, so keys cannot be guessed at full speed. DRF's
    cache-based throttle state, shared by the REST API and the MCP server's HTTP transport: one
    count per address for both. The address is the connection's (REMOTE_ADDR, which uvicorn sets
    from X-Forwarded-For only for its trusted proxies), never a header the client chose."""

    scope = "anon"
    cache_format = "throttle_invalid_key_%(ident)s"

    def get_rate(self):
        return api_settings.DEFAULT_THROTTLE_RATES.get(self.scope)

    def get_cache_key(self, request, view):
        return self.cache_format % {"ident": request.META.get("REMOTE_ADDR") or "unknown"}


def invalid_key_attempt(request) -> float | None:
    """Count one request with an invalid key from the request's address (anything with a `META`
    holding REMOTE_ADDR); the seconds to wait when it is over the rate, else None."""
    throttle = InvalidKeyThrottle()
    if throttle.allow_request(request, None):
        return None
    return max(1.0, throttle.wait() or 1.0)


class BearerKeyAuthentication(authentication.BaseAuthentication):
    """`Authorization: Bearer <key>`. No header: not this scheme (None). A header with a
    missing, unknown or revoked key: 401."""

    keyword = "bearer"

    def authenticate(self, request):
        header = authentication.get_authorization_header(request).split()
        if not header or header[0].lower() != self.keyword.encode():
            return None
        if len(header) != 2:
            raise exceptions.AuthenticationFailed("Authorization header must be 'Bearer <key>'")
        try:
            plaintext = header[1].decode("ascii")
        except UnicodeDecodeError as exc:
            raise exceptions.AuthenticationFailed("invalid API key") from exc
        key = api_key_authenticate(plaintext=plaintext)
        if key is None:
            wait = invalid_key_attempt(request)
            if wait is not None:
                raise exceptions.Throttled(wait=wait, detail="too many requests with an invalid API key")
            raise exceptions.AuthenticationFailed("invalid or revoked API key")
        return ApiKeyUser(key), key

    def authenticate_header(self, request):
        return 'Bearer realm="api"'


def principal_of(request) -> Principal | None:
    """The caller behind an authenticated request, or None (anonymous, or a user without a role)."""
    cached = getattr(request, "_anamnesis_principal", False)
    if cached is not False:
        return cached
    principal = None
    if isinstance(request.auth, ApiKey):
        principal = Principal.of_key(request.auth)
    elif getattr(request.user, "is_authenticated", False) and not isinstance(request.user, ApiKeyUser):
        principal = Principal.of_user(request.user)
    request._anamnesis_principal = principal
    return principal


def required_scope(request, view) -> str:
    """What the operation needs: the view's `scopes` by action (viewsets) or by HTTP method,
    else read for safe methods and write for the rest."""
    scopes = getattr(view, "scopes", {})
    action = getattr(view, "action", None)
    if action in scopes:
        return scopes[action]
    if request.method in scopes:
        return scopes[request.method]
    return ApiKeyScope.READ if request.method in permissions.SAFE_METHODS else ApiKeyScope.WRITE


class HasScope(permissions.BasePermission):
    """An authenticated principal whose scope covers the operation. Runs after the view has
    resolved its agent, so a foreign agent is a 404 even for an operation the scope forbids."""

    message = "your credentials do not allow this operation"

    def has_permission(self, request, view):
        principal = principal_of(request)
        if principal is None:
            if getattr(request.user, "is_authenticated", False):
                self.message = "your account has no role: ask an admin to add it to the viewers or operators group"
            return False
        resolve = getattr(view, "resolve_agent", None)
        if resolve is not None and "agent" in view.kwargs:
            resolve()
        needed = required_scope(request, view)
        if not principal.allows(needed):
            self.message = f"this operation needs the '{needed}' scope; your credentials have '{principal.scope}'"
            return False
        return True


class AddressRateThrottle(SimpleRateThrottle):
    """Per client address, at DEFAULT_THROTTLE_RATES["anon"]: the unauthenticated health check."""

    scope = "anon"

    def get_rate(self):
        return api_settings.DEFAULT_THROTTLE_RATES.get(self.scope)

    def get_cache_key(self, request, view):
        return self.cache_format % {"scope": self.scope, "ident": self.get_ident(request)}
