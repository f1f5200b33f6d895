"""An agent's pipeline runs (the API's trace filters) and one run's steps as a waterfall."""

from __future__ import annotations

from django.http import Http404
from django.views.decorators.http import require_GET

from dashboard import selectors as ui_reads
from dashboard.charts import waterfall
from dashboard.pages import render_page, ui_page
from memories import selectors
from memories.filters import PipelineRunFilterSet
from memories.models import RunKind, RunStatus


@require_GET
@ui_page
def traces(request, agent):
    """The latest 100 runs, narrowed by the API's trace filters (`kind`, `status`, `created_after`,
    `created_before`) read from the query string; a value that does not validate narrows nothing."""
    filterset = PipelineRunFilterSet(request.GET, queryset=selectors.runs_list(agent=agent).defer("result", "params"))
    runs = filterset.qs.order_by("-created_at", "-id")[:100]
    chosen = filterset.form.cleaned_data
    return render_page(request, "dashboard/traces.html", {
        "nav": "traces", "runs": runs, "kind": chosen.get("kind") or "", "status": chosen.get("status") or "",
        "kinds": RunKind.values, "statuses": RunStatus.values,
    }, agent=agent)


@require_GET
@ui_page
def trace_detail(request, agent, run_id: int):
    run = selectors.runs_with_steps(agent=agent).select_related("event").filter(pk=run_id).first()
    if run is None:
        raise Http404(f"no trace {run_id}")
    return render_page(request, "dashboard/trace.html", {
        "nav": "traces", "run": run, "rows": waterfall(list(run.steps.all())),
        "items": ui_reads.retrieval_items(agent=agent, run=run),
    }, agent=agent)

