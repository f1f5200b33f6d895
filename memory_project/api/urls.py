"""/api/v1/: each app's routes in one `api` namespace, the health check, the schema and its docs,
and a JSON 404 for anything else."""

from django.urls import path, re_path
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerView

from graphs.api.urls import urlpatterns as graph_urls
from memories.api.urls import urlpatterns as memory_urls
from memory_project.api import schema  # noqa: F401  (registers the bearer-key scheme)
from memory_project.api.errors import not_found_view
from memory_project.health import HealthApi
from retrieval.api.urls import urlpatterns as retrieval_urls

app_name = "api"

urlpatterns = [
    path("schema/", SpectacularAPIView.as_view(), name="schema"),
    path("docs/", SpectacularSwaggerView.as_view(url_name="api:schema"), name="docs"),
    path("health/", HealthApi.as_view(), name="health"),
    *retrieval_urls,
    *graph_urls,
    *memory_urls,
    # anything else under /api/v1/ is a JSON 404, not the HTML page
    re_path(r"^[\s\S]*$", not_found_view),
]
