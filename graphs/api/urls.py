"""The graph API's routes (wired under /api/v1/ by memory_project.api.urls)."""

from django.urls import re_path

from graphs.api.views import GraphApi
from memories.api.views_base import AGENT_PATH

urlpatterns = [
    re_path(rf"^{AGENT_PATH}/graph/$", GraphApi.as_view(), name="graph"),
]
