"""The retrieve API's routes (wired under /api/v1/ by memory_project.api.urls)."""

from django.urls import re_path

from memories.api.views_base import AGENT_PATH
from retrieval.api.views import RetrieveApi

urlpatterns = [
    re_path(rf"^{AGENT_PATH}/retrieve/$", RetrieveApi.as_view(), name="retrieve"),
]
