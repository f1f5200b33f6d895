from django.apps import AppConfig


class DashboardConfig(AppConfig):
    """The HTML UI under /ui/ and its live-update websocket: pages over every domain app, no models."""

    default_auto_field = "django.db.models.BigAutoField"
    name = "dashboard"
    verbose_name = "Dashboard"
