"""UI routes of the memories app (included under /ui/ in the `ui` namespace)."""

from django.urls import path

from memories import views

A = "agents/<slug:agent>/"

urlpatterns = [
    path("", views.overview, name="overview"),
    path(A, views.agent_home, name="agent_home"),
    path(A + "entities/<int:entity_id>/", views.entity_detail, name="entity"),
    path(A + "entities/<int:entity_id>/aliases/", views.entity_alias_add, name="entity_alias_add"),
    path(A + "entities/<int:entity_id>/aliases/remove/", views.entity_alias_remove, name="entity_alias_remove"),
    path(A + "entities/<int:entity_id>/merge/", views.entity_merge, name="entity_merge"),
    path(A + "entities/<int:entity_id>/unmerge/", views.entity_unmerge, name="entity_unmerge"),
    path(A + "entities/<int:entity_id>/forget/", views.entity_forget, name="entity_forget"),
    path(A + "facts/<int:fact_id>/", views.fact_detail, name="fact"),
    path(A + "facts/<int:fact_id>/correct/", views.fact_correct, name="fact_correct"),
    path(A + "facts/<int:fact_id>/retract/", views.fact_retract, name="fact_retract"),
    path(A + "facts/<int:fact_id>/reinstate/", views.fact_reinstate, name="fact_reinstate"),
    path(A + "traces/", views.traces, name="traces"),
    path(A + "traces/<int:run_id>/", views.trace_detail, name="trace"),
    path(A + "time-travel/", views.time_travel, name="time_travel"),
    path(A + "merge-suggestions/", views.merge_suggestions, name="merge_suggestions"),
    path(A + "merge-suggestions/<int:suggestion_id>/merge/", views.merge_suggestion_merge,
         name="merge_suggestion_merge"),
    path(A + "merge-suggestions/<int:suggestion_id>/dismiss/", views.merge_suggestion_dismiss,
         name="merge_suggestion_dismiss"),
]
