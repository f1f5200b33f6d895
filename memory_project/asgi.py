"""ASGI entry point: HTTP through Django and the UI's live-update websockets (/ws/ui/…) under
Channels' protocol router, and the MCP server's streamable HTTP transport at /mcp/; in front of
all of it the request-body size limit, in front of Django the turns its HTTP requests take, and
behind the websocket routes a refusal for unknown paths (memory_project.asgi_guards)."""

import os

from django.conf import settings
from django.core.asgi import get_asgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "memory_project.settings.base")
if not settings.configured:  # a web process (not a test run that imports this module): pooled connections
    os.environ.setdefault("ANAMNESIS_DB_POOL", "true")
django_asgi_app = get_asgi_application()

from channels.auth import AuthMiddlewareStack  # noqa: E402
from channels.routing import ProtocolTypeRouter, URLRouter  # noqa: E402
from channels.security.websocket import AllowedHostsOriginValidator  # noqa: E402
from django.urls import re_path  # noqa: E402

from dashboard.routing import websocket_urlpatterns  # noqa: E402
from memory_project.asgi_guards import BodySizeLimit, RequestGate, websocket_not_found  # noqa: E402
from memory_project.mcp import http_app as mcp_http_app  # noqa: E402

router = ProtocolTypeRouter({
    "http": django_asgi_app,
    "websocket": AllowedHostsOriginValidator(AuthMiddlewareStack(URLRouter([
        *websocket_urlpatterns, re_path(r"", websocket_not_found),  # any other path: refused, not an exception
    ]))),
})
# Django's HTTP requests take turns in this process (websockets and /mcp/ pass straight on)
django_turns = RequestGate(router, limit=settings.ANAMNESIS_WEB_CONCURRENCY,
                           patience=settings.ANAMNESIS_WEB_QUEUE_PATIENCE)
mcp_app = mcp_http_app()
MCP_PATHS = ("/mcp", "/mcp/")


async def dispatch(scope, receive, send):
    """/mcp/ to the MCP app (which also owns the lifespan: its session manager runs there),
    everything else (HTTP and websockets) to Channels' router."""
    if scope["type"] == "lifespan":
        return await mcp_app(scope, receive, send)
    if scope["type"] == "http" and scope["path"] in MCP_PATHS:
        return await mcp_app({**scope, "path": "/mcp/", "raw_path": b"/mcp/"}, receive, send)
    return await django_turns(scope, receive, send)


application = BodySizeLimit(dispatch)
