"""The MCP server (official `mcp` SDK): Anamnesis's memory as tools and resources for agents.

An interface, like the REST API, so it lives in the project package above the domain apps: its
tools call the services of `memories` (writes, corrections, forgetting) and `retrieval` (recall).
Two transports: stdio (`manage.py mcp`, memory_project/management/commands/mcp.py, the key from
ANAMNESIS_MCP_KEY or --key) and streamable HTTP mounted by the ASGI app at /mcp/ (the key in
`Authorization: Bearer <key>` of every request).

Like the REST API, operation for operation: the same keys and scopes — read (recall,
fact_history, search_entities, profiles, as REST's GETs and `retrieve/`), write (+ remember,
correct_fact), admin (+ forget_entity); a key bound to one agent sees only that agent, and `agent`
may then be omitted —; arguments checked by the REST operation's own serializer (characters
PostgreSQL cannot store, types, lengths, ranges: a tool error naming the argument, never a
traceback); `remember` audited as `event_write` with the key's actor. Over HTTP the key is
authenticated once per request, in front of the MCP app, and requests with an invalid key are
counted per client address by the REST API's own throttle (429 past ANAMNESIS_ANON_RATE).
"""

from __future__ import annotations

import json
import re
from types import SimpleNamespace
from typing import Annotated, Any

from asgiref.sync import sync_to_async
from django.conf import settings
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.transport_security import TransportSecuritySettings
from pydantic import Strict
from rest_framework import serializers

from memories import selectors
from memories.api.auth import Principal, invalid_key_attempt
from memories.api.fields import IdField
from memories.api.strict import StrictInputSerializer
from memories.api.views_base import SLUG_REGEX, pipeline_input_errors
from memories.api.views_entities import EntityForgetApi
from memories.api.views_events import WriteInputSerializer
from memories.api.views_facts import FactCorrectApi
from memories.errors import DomainError
from memories.filters import EntityFilterSet
from memories.models import Agent, ApiKeyScope
from memories.selectors import facts as fact_selectors
from memories.services import facts as fact_services
from memories.services import forget as forget_services
from memories.services.api_keys import api_key_authenticate
from memories.services.write import memory_write
from memory_project.api.errors import validation_message
from memory_project.api.parsers import find_unstorable
from retrieval.api.views import RetrieveApi
from retrieval.services import memory_retrieve

Int = Annotated[int, Strict()]  # JSON numbers only: "10" or true is a wrong type, as in the REST API

INSTRUCTIONS = (
    "Long-term memory. `remember` stores a message (facts are extracted from it); `recall` answers "
    "'what do I know that is relevant to this?' with a cited context, also as of a past moment "
    "(`as_of`, ISO 8601); `search_entities` finds people, places and things; `fact_history` shows "
    "every version of a fact; `correct_fact` supersedes one; `forget_entity` erases one (admin)."
)

server = MCPServer("anamnesis", instructions=INSTRUCTIONS)
_stdio_key: str | None = None  # set by `manage.py mcp` for the stdio transport
PRINCIPAL_STATE = "anamnesis_principal"  # over HTTP: the request's caller, in the ASGI scope's state


def stdio_key_set(key: str | None) -> None:
    global _stdio_key
    _stdio_key = key


def _principal(ctx: Context | None) -> Principal:
    """The caller of this tool call. Over HTTP, the principal the gate in front of the MCP app
    found for the request (`BearerKeyGate`: the key is authenticated once per request); over
    stdio, the key the process was started with."""
    request = None
    if ctx is not None:
        try:
            request = ctx.request_context.request
        except ValueError:  # no request under way
            request = None
    if hasattr(request, "scope"):
        principal = request.scope.get("state", {}).get(PRINCIPAL_STATE)
    else:
        key = api_key_authenticate(plaintext=_stdio_key or "")
        principal = Principal.of_key(key) if key is not None else None
    if principal is None:
        raise ToolError("unauthorized: send a valid API key (Authorization: Bearer <key>)")
    return principal


def _agent(principal: Principal, slug: str | None, needs: str) -> Agent:
    if not principal.allows(needs):
        raise ToolError(f"this tool needs the '{needs}' scope; your key has '{principal.scope}'")
    if not slug:
        if principal.agent_id is None:
            raise ToolError("agent is required (this key may use every agent)")
        return Agent.objects.get(pk=principal.agent_id)
    agent = selectors.agent_by_slug(slug=slug) if re.fullmatch(SLUG_REGEX, slug) and len(slug) <= 100 else None
    if agent is None or not principal.can_see(agent):
        raise ToolError(f"agent {slug[:100]!r} not found")
    return agent


class FactRef(StrictInputSerializer):
    fact_id = IdField()


class EntityRef(StrictInputSerializer):
    entity = serializers.CharField(max_length=255, help_text="an entity id or key")


def _checked(serializer_class: type[serializers.Serializer], **arguments) -> dict:
    """The tool's arguments checked as the REST operation checks the same fields, by its own
    serializer: characters PostgreSQL cannot store, types, lengths, ranges. A bad one is a tool
    error naming it (arguments left out or null take the operation's defaults)."""
    given = {name: value for name, value in arguments.items() if value is not None}
    found = find_unstorable(given)
    if found:
        raise ToolError(f"invalid input: {found[0]}: {found[1]}")
    checked = serializer_class(data=given)
    if not checked.is_valid():
        raise ToolError(validation_message(checked.errors))
    return checked.validated_data


async def _call(ctx: Context | None, slug: str | None, needs: str, fn) -> Any:
    """Authenticate, resolve the agent, run `fn(agent, principal)` on Django's sync side; a
    domain error is the tool's error message."""

    def run():
        principal = _principal(ctx)
        agent = _agent(principal, slug, needs)
        try:
            return fn(agent, principal)
        except DomainError as exc:
            raise ToolError(exc.message) from exc

    return await sync_to_async(run, thread_sensitive=True)()


def _fact(fact) -> dict:
    return {"id": fact.id, "text": fact.text, "entity_id": fact.entity_id, "confidence": round(fact.confidence, 4),
            "valid_from": fact.valid_from.isoformat(), "valid_to": fact.valid_to and fact.valid_to.isoformat(),
            "recorded_at": fact.recorded_at.isoformat(),
            "invalidated_at": fact.invalidated_at and fact.invalidated_at.isoformat(),
            "reason": fact.invalidation_reason, "source_event_id": fact.source_event_id}


@server.tool()
async def remember(text: str, speaker: str = "user", occurred_at: str | None = None, agent: str | None = None,
                   ctx: Context = None) -> dict:
    """Store one message in long-term memory (facts, entities and relationships are extracted
    from it now). `speaker`: who said it (at most 200 characters). `occurred_at`: when it was said
    (ISO 8601, default now). Needs the write scope."""

    def run(a, principal):
        data = _checked(WriteInputSerializer, text=text, speaker=speaker, occurred_at=occurred_at)
        result = memory_write(agent=a, message=data["text"], speaker_name=data["speaker"],
                              occurred_at=data.get("occurred_at"), actor=principal.actor)
        return {"event_id": result.event_id, "facts_added": [f.text for f in result.facts_added],
                "facts_updated": [f.text for f in result.facts_updated],
                "facts_unchanged": len(result.facts_unchanged), "extraction_path": result.extraction_path}

    return await _call(ctx, agent, ApiKeyScope.WRITE, run)


@server.tool()
async def recall(query: str, limit: Int = 10, as_of: str | None = None, agent: str | None = None,
                 ctx: Context = None) -> dict:
    """What the memory knows that is relevant to `query`: a token-budgeted context plus the facts
    and messages behind it, with citations. `limit`: 1 to 100. `as_of` (ISO 8601) answers as the
    memory knew the world then. Needs the read scope (as the REST retrieve)."""

    def run(a, principal):
        data = _checked(RetrieveApi.InputSerializer, query=query, limit=limit, as_of=as_of)
        with pipeline_input_errors(overrides=None):
            result = memory_retrieve(agent=a, query=data["query"], limit=data["limit"], as_of=data.get("as_of"))
        return {"context": result.context, "trace_id": result.trace_id,
                "facts": [{"id": f.id, "text": f.text, "score": round(f.score, 4)} for f in result.facts],
                "events": [{"id": e.id, "speaker": e.speaker, "text": e.text, "occurred_at": str(e.occurred_at)}
                           for e in result.events]}

    return await _call(ctx, agent, ApiKeyScope.READ, run)


@server.tool()
async def fact_history(fact_id: Int, agent: str | None = None, ctx: Context = None) -> list[dict]:
    """Every version of a fact, oldest first, with its valid window (true in the world), its
    recorded window (known to the memory) and why it was closed. Needs the read scope."""

    def run(a, principal):
        fact = _checked(FactRef, fact_id=fact_id)["fact_id"]
        return [_fact(f) for f in fact_selectors.fact_history(agent=a, fact_id=fact)]

    return await _call(ctx, agent, ApiKeyScope.READ, run)


@server.tool()
async def search_entities(query: str, limit: Int = 20, agent: str | None = None, ctx: Context = None) -> list[dict]:
    """People, places, organizations and things whose name, alias or key contains `query` (as
    the REST `entities/?q=`), most important first; `limit` at most 100. Needs the read scope."""

    def run(a, principal):
        found = find_unstorable({"query": query})
        if found:
            raise ToolError(f"invalid input: {found[0]}: {found[1]}")
        filters = EntityFilterSet(data={"q": query}, queryset=selectors.entities_list(agent=a))
        if not filters.is_valid():
            raise ToolError(validation_message({"query": filters.errors.get("q", filters.errors)}))
        entities = filters.qs.order_by("-importance", "id")[: max(1, min(limit, 100))]
        return [{"id": e.id, "key": e.key, "type": e.type, "name": e.display_name,
                 "importance": round(e.importance, 4), "profile": e.profile_text} for e in entities]

    return await _call(ctx, agent, ApiKeyScope.READ, run)


@server.tool()
async def correct_fact(fact_id: Int, text: str, reason: str, agent: str | None = None, ctx: Context = None) -> dict:
    """Replace an active fact with corrected text: a new version supersedes it (the old one stays
    in its history) and the change is audited. Needs the write scope."""

    def run(a, principal):
        fact = _checked(FactRef, fact_id=fact_id)["fact_id"]
        data = _checked(FactCorrectApi.InputSerializer, text=text, reason=reason)
        return _fact(fact_services.fact_correct(agent=a, fact_id=fact, text=data["text"], reason=data["reason"],
                                                actor=principal.actor))

    return await _call(ctx, agent, ApiKeyScope.WRITE, run)


@server.tool()
async def forget_entity(entity: str, reason: str = "", agent: str | None = None, ctx: Context = None) -> dict:
    """Erase an entity (id or key like person:ana) and everything derived from it: facts of every
    version, relationships, aliases, and the text of messages that mention it. Irreversible.
    Needs the admin scope."""

    def run(a, principal):
        ref = _checked(EntityRef, entity=entity)["entity"]
        data = _checked(EntityForgetApi.InputSerializer, reason=reason)
        target = selectors.entity_by_ref(agent=a, ref=ref)
        report = forget_services.entity_forget(agent=a, entity_id=target.id, actor=principal.actor,
                                               reason=data["reason"])
        return vars(report)

    return await _call(ctx, agent, ApiKeyScope.ADMIN, run)


@server.resource("anamnesis://agents/{agent}/entities/{entity}/profile", mime_type="application/json")
async def entity_profile(agent: str, entity: str, ctx: Context = None) -> str:
    """An entity's profile (rewritten from all its current facts by the consolidate_profiles job),
    aliases and current facts. `entity`: id or key. Needs the read scope."""

    def run(a, principal):
        target = selectors.entity_by_ref(agent=a, ref=_checked(EntityRef, entity=entity)["entity"])
        detail = selectors.entity_detail(agent=a, entity=target)
        refreshed = target.profile_refreshed_at
        return json.dumps({"id": target.id, "key": target.key, "name": target.display_name, "type": target.type,
                           "profile": target.profile_text, "profile_refreshed_at": refreshed and refreshed.isoformat(),
                           "aliases": detail["aliases"], "facts": [f.text for f in detail["facts"]]})

    return await _call(ctx, agent, ApiKeyScope.READ, run)


def _transport_security() -> TransportSecuritySettings:
    hosts = [h for h in settings.ALLOWED_HOSTS if h]
    if not hosts or "*" in hosts:
        return TransportSecuritySettings(enable_dns_rebinding_protection=False)
    hosts = [h.lstrip(".") for h in hosts]
    return TransportSecuritySettings(
        enable_dns_rebinding_protection=True, allowed_hosts=[v for h in hosts for v in (h, f"{h}:*")],
        allowed_origins=[f"{s}://{h}{p}" for h in hosts for s in ("http", "https") for p in ("", ":*")])


def _bearer_principal(scope) -> tuple[Principal | None, float | None]:
    """(principal, None) for a request with a valid bearer key. For an invalid key: (None, the
    seconds to wait when over the rate, else None), the request counted against the client's
    address by the REST API's own throttle. No key sent is not a guess: (None, None), not counted
    (the tools answer "unauthorized")."""
    headers = dict(scope.get("headers") or ())
    scheme, _, token = headers.get(b"authorization", b"").decode("latin-1").partition(" ")
    if scheme.lower() != "bearer":
        return None, None
    key = api_key_authenticate(plaintext=token.strip())
    if key is not None:
        return Principal.of_key(key), None
    address = (scope.get("client") or ("unknown", 0))[0]
    return None, invalid_key_attempt(SimpleNamespace(META={"REMOTE_ADDR": address}))


class BearerKeyGate:
    """ASGI middleware before the MCP app: authenticates the request's bearer key once and passes
    the principal to the tools in the scope's state (`PRINCIPAL_STATE`). Requests with an invalid
    key count per client address as the REST API's do (one count for both); past
    ANAMNESIS_ANON_RATE they are a 429 with Retry-After, before the MCP app reads the request."""

    def __init__(self, app):
        self.app = app

    async def __call__(self, scope, receive, send):
        if scope["type"] == "http":
            principal, wait = await sync_to_async(_bearer_principal, thread_sensitive=True)(scope)
            if wait is not None:
                body = json.dumps({"jsonrpc": "2.0", "id": None, "error": {
                    "code": -32000, "message": f"too many requests with an invalid API key; retry in {wait:.0f} s"}})
                await send({"type": "http.response.start", "status": 429, "headers": [
                    (b"content-type", b"application/json"), (b"retry-after", str(round(wait)).encode())]})
                await send({"type": "http.response.body", "body": body.encode()})
                return
            scope = {**scope, "state": {**scope.get("state", {}), PRINCIPAL_STATE: principal}}
        await self.app(scope, receive, send)


def http_app():
    """The streamable-HTTP ASGI app, serving POST/GET/DELETE at /mcp/ (stateless: any web process
    can answer any request, so it scales out like the REST API), behind the key's gate."""
    return BearerKeyGate(server.streamable_http_app(
        streamable_http_path="/mcp/", stateless_http=True, json_response=True,
        transport_security=_transport_security()))
