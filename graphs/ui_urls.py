"""UI routes of the graphs app (included under /ui/ in the `ui` namespace)."""

from django.urls import path

from graphs import views

A = "agents/<slug:agent>/"

urlpatterns = [
    path(A + "graph/", views.graph_page, name="graph"),
    path(A + "graph/data/", views.graph_data, name="graph_data"),
    path(A + "graph/entities/<int:entity_id>/", views.graph_panel, name="graph_panel"),
]
