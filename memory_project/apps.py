from django.apps import AppConfig


class ProjectConfig(AppConfig):
    """The project package as an app, so the interfaces that live here can have their management
    commands (`manage.py mcp`). It has no models."""

    name = "memory_project"
    verbose_name = "Anamnesis"
