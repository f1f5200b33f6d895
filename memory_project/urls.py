from django.contrib import admin
from django.http import JsonResponse
from django.urls import include, path, re_path
from django.views.decorators.csrf import csrf_exempt
from django.views.generic import RedirectView


@csrf_exempt
def api_not_found(request, *args, **kwargs):
    """The API's JSON 404 (memory_project.api.errors shape) for /api paths outside /api/v1/."""
    hint = "" if request.path.endswith("/") else " (API paths end with '/')"
    return JsonResponse({"error": {"code": "not_found", "message": f"no API endpoint at {request.path}{hint}",
                                   "fields": {}}}, status=404)


urlpatterns = [
    path("", RedirectView.as_view(pattern_name="ui:overview"), name="home"),
    path("ui/", include("dashboard.urls")),
    path("admin/", admin.site.urls),
    path("api/v1/", include("memory_project.api.urls")),
    path("metrics", include("memory_project.metrics")),
    # /api/v1 without its slash (which APPEND_SLASH cannot redirect for a POST) and any other
    # /api… path: the API's JSON 404, for every method
    re_path(r"^api(?:/.*)?$", api_not_found),
]
