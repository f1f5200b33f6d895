"""UI routes of the retrieval app (included under /ui/ in the `ui` namespace)."""

from django.urls import path

from retrieval import views

urlpatterns = [
    path("agents/<slug:agent>/ask/", views.ask, name="ask"),
]
