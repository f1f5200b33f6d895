"""What every UI page shares: login and role checks, the agent from the URL, the `as_of` moment
kept across navigation, the actor name for the audit log, and "one URL renders the full page, or
only its fragment for an htmx request"."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime, time
from functools import wraps
from urllib.parse import urlencode

from django.contrib.auth.views import redirect_to_login
from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render
from django.utils.dateparse import parse_date, parse_datetime

from memories import selectors
from memories.errors import NotFound
from memories.models import Agent
from memories.models.visibility import Moment
from memories.services.roles import user_can_operate as can_operate
from memories.services.roles import user_can_view as can_view


def actor_of(request: HttpRequest) -> str:
    """The audit log's name for the logged-in user, as the API writes it for a session."""
    return f"user:{request.user.get_username()}"


def parse_moment(value: str | None) -> datetime | None:
    """An ISO date or date-time from a query string (a naive one is UTC; a date alone means the
    end of that day: what was known by then). Anything else is None."""
    value = (value or "").strip()
    if not value:
        return None
    try:
        day = parse_date(value) if len(value) == 10 else None
        moment = datetime.combine(day, time.max) if day else parse_datetime(value)
    except ValueError:
        return None
    if moment is None:
        return None
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def ui_page(view: Callable | None = None, *, operate: bool = False):
    """Login required (anonymous → login page), the `viewers` permission to read, the `operators`
    ones for a POST or when `operate`; resolves `agent` (slug) from the URL into an Agent."""

    def decorate(fn):
        @wraps(fn)
        def wrapper(request: HttpRequest, *args, **kwargs):
            if not request.user.is_authenticated:
                return redirect_to_login(request.get_full_path())
            if not can_view(request.user):
                raise PermissionDenied("your account has no role: ask an admin for viewers or operators")
            if (operate or request.method == "POST") and not can_operate(request.user):
                raise PermissionDenied("only operators may change memory")
            if "agent" in kwargs:
                agent = selectors.agent_by_slug(slug=kwargs["agent"])
                if agent is None:
                    raise Http404(f"no agent {kwargs['agent']!r}")
                kwargs["agent"] = agent
            request.as_of = parse_moment(request.GET.get("as_of"))
            request.valid_at = parse_moment(request.GET.get("valid_at"))
            # what the agent knew at as_of (its clock) about the world at valid_at (default: as_of)
            request.moment = Moment(as_of=request.as_of, valid_at=request.valid_at)
            return fn(request, *args, **kwargs)

        return wrapper

    return decorate(view) if view is not None else decorate


def or_404(read: Callable, **kwargs):
    """`read(**kwargs)`, a selector or a service's preview; its NotFound (an id of another agent,
    or gone) is the page's 404."""
    try:
        return read(**kwargs)
    except NotFound as exc:
        raise Http404(str(exc)) from exc


def moment_value(as_of: datetime | None) -> str:
    """The moment as a datetime-local field shows it: UTC, to the millisecond."""
    return as_of.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] if as_of else ""


def as_of_query(as_of: datetime | None, valid_at: datetime | None = None, **extra) -> str:
    """"?as_of=…&valid_at=…&…" for links that keep the chosen moment; "" when there is nothing to keep."""
    params = {k: v for k, v in {"as_of": moment_value(as_of) or None, "valid_at": moment_value(valid_at) or None,
                                **extra}.items() if v}
    return "?" + urlencode(params) if params else ""


def moment_keep(request: HttpRequest) -> dict[str, str]:
    """The chosen clocks as query parameters, for forms and links that keep them."""
    return {k: v for k, v in (("as_of", moment_value(getattr(request, "as_of", None))),
                              ("valid_at", moment_value(getattr(request, "valid_at", None)))) if v}


def render_page(request: HttpRequest, template: str, context: dict, *, agent: Agent | None = None,
                status: int = 200) -> HttpResponse:
    """The full page, or for an htmx request (not boosted) only the fragment: `template` is the
    page; its fragment is the same name under `htmx/` (dashboard/entity.html → dashboard/htmx/entity.html)."""
    as_of, valid_at = getattr(request, "as_of", None), getattr(request, "valid_at", None)
    context = {
        "agent": agent, "as_of": as_of, "as_of_value": moment_value(as_of), "valid_at": valid_at,
        "valid_at_value": moment_value(valid_at), "as_of_qs": as_of_query(as_of, valid_at),
        "moment_keep": moment_keep(request), "can_operate": can_operate(request.user), **context,
    }
    if request.htmx and not request.htmx.boosted:
        app, _, name = template.rpartition("/")
        template = f"{app}/htmx/{name}"
    return render(request, template, context, status=status)
