"""The MCP server (official `mcp` SDK): Anamnesis's memory as tools and resources for agents.

An interface, like the REST API, so it lives in the project package above the domain apps: its
tools call the services of `memories` (writes, corrections, forgetting) and `retrieval` (recall).
Two transports: stdio (`manage.py mcp`, memory_project/management/commands/mcp.py, the key from
ANAMNESIS_MCP_KEY or --key) and streamable HTTP mounted by the ASGI app at /mcp/ (the key in
`Authorization: Bearer <key>` of every request). Same keys and scopes as the REST API: read
(fact_history, search_entities, profiles), write (+ remember, recall, correct_fact), admin
(+ forget_entity); a key bound to one agent sees only that agent, and `agent` may then be omitted.
"""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

from asgiref.sync import sync_to_async
from django.conf import settings
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.transport_security import TransportSecuritySettings

from memories import selectors
from memories.api.auth import Principal
from memories.errors import DomainError
from memories.models import Agent, ApiKeyScope
from memories.selectors import facts as fact_selectors
from memories.services import facts as fact_services
from memories.services import forget as forget_services
from memories.services.api_keys import api_key_authenticate
from memories.services.write import memory_write
from retrieval.services import memory_retrieve

INSTRUCTIONS = (
    "Long-term memory. `remember` stores a message (facts are extracted from it); `recall` answers "
    "'what do I know that is relevant to this?' with a cited context, also as of a past moment "
    "(`as_of`, ISO 8601); `search_entities` finds people, places and things; `fact_history` shows "
    "every version of a fact; `correct_fact` supersedes one; `forget_entity` erases one (admin)."
)

server = MCPServer("anamnesis", instructions=INSTRUCTIONS)
_stdio_key: str | None = None  # set by `manage.py mcp` for the stdio transport


def stdio_key_set(key: str | None) -> None:
    global _stdio_key
    _stdio_key = key


def _plaintext_key(ctx: Context | None) -> str | None:
    headers = None
    if ctx is not None:
        try:
            headers = ctx.headers
        except ValueError:
            headers = None
    if headers is None:  # stdio: the key the process was started with
        return _stdio_key
    scheme, _, token = (headers.get("authorization") or "").partition(" ")
    return token.strip() if scheme.lower() == "bearer" else None


def _principal(ctx: Context | None) -> Principal:
    key = api_key_authenticate(plaintext=_plaintext_key(ctx) or "")
    if key is None:
        raise ToolError("unauthorized: send a valid API key (Authorization: Bearer <key>)")
    return Principal(scope=key.scope, agent_id=key.agent_id, actor=f"key:{key.prefix}", ident=f"key:{key.pk}")


def _agent(principal: Principal, slug: str | None, needs: str) -> Agent:
    if not principal.allows(needs):
        raise ToolError(f"this tool needs the '{needs}' scope; your key has '{principal.scope}'")
    if not slug:
        if principal.agent_id is None:
            raise ToolError("agent is required (this key may use every agent)")
        return Agent.objects.get(pk=principal.agent_id)
    agent = selectors.agent_by_slug(slug=slug)
    if agent is None or not principal.can_see(agent):
        raise ToolError(f"agent {slug!r} not found")
    return agent


def _parse_time(value: str | None, field: str) -> datetime | None:
    if not value:
        return None
    try:
        moment = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError as exc:
        raise ToolError(f"{field} must be an ISO 8601 date-time") from exc
    if moment.tzinfo is None:
        raise ToolError(f"{field} needs a time zone (e.g. 2024-08-01T00:00:00Z)")
    return moment


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
    from it now). `occurred_at`: when it was said (ISO 8601, default now). Needs the write scope."""
    when = _parse_time(occurred_at, "occurred_at")

    def run(a, principal):
        result = memory_write(agent=a, message=text, speaker_name=speaker, occurred_at=when)
        return {"event_id": result.event_id, "facts_added": [f.text for f in result.facts_added],
                "facts_updated": [f.text for f in result.facts_updated],
                "facts_unchanged": len(result.facts_unchanged), "extraction_path": result.extraction_path}

    return await _call(ctx, agent, ApiKeyScope.WRITE, run)


@server.tool()
async def recall(query: str, limit: int = 10, as_of: str | None = None, agent: str | None = None,
                 ctx: Context = None) -> dict:
    """What the memory knows that is relevant to `query`: a token-budgeted context plus the facts
    and messages behind it, with citations. `as_of` (ISO 8601) answers as the memory knew the
    world then. Needs the write scope (as the REST retrieve)."""
    moment = _parse_time(as_of, "as_of")

    def run(a, principal):
        result = memory_retrieve(agent=a, query=query, limit=limit, as_of=moment)
        return {"context": result.context, "trace_id": result.trace_id,
                "facts": [{"id": f.id, "text": f.text, "score": round(f.score, 4)} for f in result.facts],
                "events": [{"id": e.id, "speaker": e.speaker, "text": e.text, "occurred_at": str(e.occurred_at)}
                           for e in result.events]}

    return await _call(ctx, agent, ApiKeyScope.WRITE, run)


@server.tool()
async def fact_history(fact_id: int, agent: str | None = None, ctx: Context = None) -> list[dict]:
    """Every version of a fact, oldest first, with its valid window (true in the world), its
    recorded window (known to the memory) and why it was closed. Needs the read scope."""
    return await _call(ctx, agent, ApiKeyScope.READ,
                       lambda a, p: [_fact(f) for f in fact_selectors.fact_history(agent=a, fact_id=fact_id)])


@server.tool()
async def search_entities(query: str, limit: int = 20, agent: str | None = None, ctx: Context = None) -> list[dict]:
    """People, places, organizations and things whose name, alias or key contains `query`.
    Needs the read scope."""

    def run(a, principal):
        from django.db.models import Q

        found = selectors.entities_list(agent=a).filter(merged_into__isnull=True).filter(
            Q(display_name__icontains=query) | Q(key__icontains=query) | Q(aliases__alias__icontains=query)
        ).distinct().order_by("-importance", "id")[: max(1, min(limit, 100))]
        return [{"id": e.id, "key": e.key, "type": e.type, "name": e.display_name,
                 "importance": round(e.importance, 4), "profile": e.profile_text} for e in found]

    return await _call(ctx, agent, ApiKeyScope.READ, run)


@server.tool()
async def correct_fact(fact_id: int, text: str, reason: str, agent: str | None = None, ctx: Context = None) -> dict:
    """Replace an active fact with corrected text: a new version supersedes it (the old one stays
    in its history) and the change is audited. Needs the write scope."""
    return await _call(ctx, agent, ApiKeyScope.WRITE, lambda a, p: _fact(
        fact_services.fact_correct(agent=a, fact_id=fact_id, text=text, reason=reason, actor=p.actor)))


@server.tool()
async def forget_entity(entity: str, reason: str = "", agent: str | None = None, ctx: Context = None) -> dict:
    """Erase an entity (id or key like person:ana) and everything derived from it: facts of every
    version, relationships, aliases, and the text of messages that mention it. Irreversible.
    Needs the admin scope."""

    def run(a, principal):
        target = selectors.entity_by_ref(agent=a, ref=entity)
        report = forget_services.entity_forget(agent=a, entity_id=target.id, actor=principal.actor, reason=reason)
        return {k: v for k, v in report.__dict__.items() if k != "names"}

    return await _call(ctx, agent, ApiKeyScope.ADMIN, run)


@server.resource("anamnesis://agents/{agent}/entities/{entity}/profile", mime_type="application/json")
async def entity_profile(agent: str, entity: str, ctx: Context = None) -> str:
    """An entity's profile (rewritten from all its current facts by the consolidate_profiles job),
    aliases and current facts. `entity`: id or key. Needs the read scope."""

    def run(a, principal):
        target = selectors.entity_by_ref(agent=a, ref=entity)
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


def http_app():
    """The streamable-HTTP ASGI app, serving POST/GET/DELETE at /mcp/ (stateless: any web process
    can answer any request, so it scales out like the REST API)."""
    return server.streamable_http_app(streamable_http_path="/mcp/", stateless_http=True, json_response=True,
                                      transport_security=_transport_security())
