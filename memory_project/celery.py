"""The Celery app, configured from Django settings (CELERY_* names)."""

import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "memory_project.settings.base")

app = Celery("anamnesis")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()
