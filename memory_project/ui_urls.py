"""/ui/: login, then each app's pages (memories, graphs, retrieval) in one `ui` namespace."""

from django.contrib.auth import views as auth_views
from django.urls import include, path

app_name = "ui"

urlpatterns = [
    path("login/", auth_views.LoginView.as_view(template_name="ui/login.html", redirect_authenticated_user=True),
         name="login"),
    path("logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("", include("memories.ui_urls")),
    path("", include("graphs.ui_urls")),
    path("", include("retrieval.ui_urls")),
]
