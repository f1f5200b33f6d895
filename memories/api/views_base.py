"""What every view under agents/{agent}/ shares: the agent resolved for the caller, the actor
name for the audit log, and read-only browsing of one agent's rows."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager

from rest_framework import serializers, viewsets

from memories import selectors
from memories.api.auth import principal_of
from memories.errors import ConfigError, DomainError, NotFound
from memories.models import Agent, ApiKey

logger = logging.getLogger(__name__)
ID_REGEX = r"[0-9]{1,18}"
SLUG_REGEX = r"[-a-zA-Z0-9_]+"
AGENT_PATH = rf"agents/(?P<agent>{SLUG_REGEX})"  # the prefix of every agent-scoped route


class AgentScopedMixin:
    """Resolves `{agent}` from the URL for the caller: an agent the caller may not see is
    indistinguishable from one that does not exist (404)."""

    _agent: Agent | None = None

    def resolve_agent(self) -> Agent:
        if self._agent is None:
            slug = self.kwargs.get("agent", "")
            principal = principal_of(self.request)
            # a key bound to this agent brought its row with it (read with the key, this request)
            key = getattr(self.request, "auth", None)
            bound = (key.agent if isinstance(key, ApiKey) and key.agent_id is not None and ApiKey.agent.is_cached(key)
                     else None)
            agent = bound if bound is not None and bound.slug == slug else selectors.agent_by_slug(slug=slug)
            if agent is None or principal is None or not principal.can_see(agent):
                raise NotFound(f"agent {slug!r} not found")
            self._agent = agent
        return self._agent

    @property
    def agent(self) -> Agent:
        return self.resolve_agent()

    @property
    def actor(self) -> str:
        return principal_of(self.request).actor

    def context(self) -> dict:
        return {"request": self.request, "agent": self.agent, "view": self}


class AgentScopedReadViewSet(AgentScopedMixin, viewsets.ReadOnlyModelViewSet):
    """List (filtered, cursor-paginated) and detail of one kind of row of one agent. Subclasses
    set `queryset` to `Model.objects.none()` (for the schema) and implement `scoped_queryset`."""

    lookup_value_regex = ID_REGEX

    # query parameters every list understands besides its filters
    LIST_PARAMETERS = frozenset({"cursor", "page_size", "format"})

    def list(self, request, *args, **kwargs):
        """A query parameter the list does not know (`limit=-1`, a misspelled filter) is a 400
        naming it, not silently ignored."""
        known = set(self.LIST_PARAMETERS)
        filterset_class = getattr(self, "filterset_class", None)
        if filterset_class is not None:
            known |= set(filterset_class.base_filters)
        unknown = sorted(set(request.query_params) - known)
        if unknown:
            raise serializers.ValidationError({name: [f"unknown query parameter; known: {', '.join(sorted(known))}"]
                                               for name in unknown})
        return super().list(request, *args, **kwargs)

    def get_queryset(self):
        if getattr(self, "swagger_fake_view", False):
            return self.queryset
        return self.scoped_queryset(self.agent)

    def scoped_queryset(self, agent: Agent):
        raise NotImplementedError

    def get_serializer_context(self):
        context = super().get_serializer_context()
        if not getattr(self, "swagger_fake_view", False):
            context["agent"] = self.agent
        return context


@contextmanager
def pipeline_input_errors(*, overrides: dict | None) -> Iterator[None]:
    """Pipelines validate override names and types but not ranges, and date arithmetic on a
    query like "3000 years ago" can leave the calendar: such failures are the caller's input,
    so they answer 400 instead of 500."""
    try:
        yield
    except OverflowError as exc:
        raise DomainError("a date in the request is out of range", {"query": str(exc)}) from exc
    except ValueError as exc:
        if "out of range" not in str(exc):
            raise
        raise DomainError("a date in the request is out of range", {"query": str(exc)}) from exc
    except (ArithmeticError, RecursionError) as exc:
        if not overrides:
            raise
        logger.warning("pipeline failed with config_overrides %r", overrides, exc_info=True)
        raise ConfigError("the pipeline cannot run with these config_overrides (a value is out of range)",
                          {"config_overrides": f"{type(exc).__name__}: {exc}"[:300]}) from exc
