from django.contrib import admin
from django.urls import include, path

urlpatterns = [
    path("admin/", admin.site.urls),
    path("api/v1/", include("memory_project.api.urls")),
    path("metrics", include("memory_project.metrics")),
]
