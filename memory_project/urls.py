from django.contrib import admin
from django.urls import include, path, re_path

from memory_project.api.errors import not_found_view

urlpatterns = [
    path("admin/", admin.site.urls),
    path("api/v1/", include("memory_project.api.urls")),
    # /api/v1 without its slash (which APPEND_SLASH cannot redirect for a POST) and any other
    # /api… path: the API's JSON 404, for every method
    re_path(r"^api(?:/.*)?$", not_found_view),
]
