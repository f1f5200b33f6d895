"""The UI's websocket routes (mounted by memory_project.asgi under Channels' AuthMiddlewareStack):
the overview listens to every agent, an agent's pages to that agent."""

from django.urls import path

from dashboard.consumers import LiveConsumer

websocket_urlpatterns = [
    path("ws/ui/", LiveConsumer.as_asgi()),
    path("ws/ui/agents/<slug:agent>/", LiveConsumer.as_asgi()),
]
