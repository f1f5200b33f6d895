"""/ui/ (included by memory_project.urls): login, then every page, in the `ui` namespace."""

from django.contrib.auth import views as auth_views
from django.urls import path

from dashboard.views import agents, ask, entities, erasures, facts, graph, merge_suggestions, traces

app_name = "ui"

A = "agents/<slug:agent>/"

urlpatterns = [
    path("login/", auth_views.LoginView.as_view(template_name="dashboard/login.html", redirect_authenticated_user=True),
         name="login"),
    path("logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("", agents.overview, name="overview"),
    path(A, agents.agent_home, name="agent_home"),
    path(A + "entities/<int:entity_id>/", entities.entity_detail, name="entity"),
    path(A + "entities/<int:entity_id>/aliases/", entities.entity_alias_add, name="entity_alias_add"),
    path(A + "entities/<int:entity_id>/aliases/remove/", entities.entity_alias_remove, name="entity_alias_remove"),
    path(A + "entities/<int:entity_id>/merge/", entities.entity_merge, name="entity_merge"),
    path(A + "entities/<int:entity_id>/unmerge/", entities.entity_unmerge, name="entity_unmerge"),
    path(A + "entities/<int:entity_id>/forget/", entities.entity_forget, name="entity_forget"),
    path(A + "erasures/", erasures.erasures, name="erasures"),
    path(A + "erasures/<int:receipt_id>/", erasures.erasure_detail, name="erasure"),
    path(A + "facts/<int:fact_id>/", facts.fact_detail, name="fact"),
    path(A + "facts/<int:fact_id>/correct/", facts.fact_correct, name="fact_correct"),
    path(A + "facts/<int:fact_id>/retract/", facts.fact_retract, name="fact_retract"),
    path(A + "facts/<int:fact_id>/reinstate/", facts.fact_reinstate, name="fact_reinstate"),
    path(A + "traces/", traces.traces, name="traces"),
    path(A + "traces/<int:run_id>/", traces.trace_detail, name="trace"),
    path(A + "time-travel/", agents.time_travel, name="time_travel"),
    path(A + "merge-suggestions/", merge_suggestions.merge_suggestions, name="merge_suggestions"),
    path(A + "merge-suggestions/<int:suggestion_id>/merge/", merge_suggestions.merge_suggestion_merge,
         name="merge_suggestion_merge"),
    path(A + "merge-suggestions/<int:suggestion_id>/dismiss/", merge_suggestions.merge_suggestion_dismiss,
         name="merge_suggestion_dismiss"),
    path(A + "graph/", graph.graph_page, name="graph"),
    path(A + "graph/data/", graph.graph_data, name="graph_data"),
    path(A + "graph/entities/<int:entity_id>/", graph.graph_panel, name="graph_panel"),
    path(A + "ask/", ask.ask, name="ask"),
]
