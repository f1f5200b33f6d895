from django.contrib import admin
from django.urls import include, path
from django.views.generic import RedirectView

urlpatterns = [
    path("", RedirectView.as_view(pattern_name="ui:overview"), name="home"),
    path("ui/", include("memory_project.ui_urls")),
    path("admin/", admin.site.urls),
    path("api/v1/", include("memory_project.api.urls")),
    path("metrics", include("memory_project.metrics")),
]
