"""WebSocket routes (live updates for the dashboards)."""

websocket_urlpatterns: list = []
