"""An agent's pipeline runs and one run's steps as a waterfall."""

from __future__ import annotations

from django.http import Http404
from django.views.decorators.http import require_GET

from dashboard import selectors as ui_reads
from dashboard.charts import waterfall
from dashboard.pages import render_page, ui_page
from memories import selectors
from memories.models import RunKind, RunStatus


@require_GET
@ui_page
def traces(request, agent):
    kind, status = request.GET.get("kind", ""), request.GET.get("status", "")
    runs = selectors.runs_list(agent=agent).defer("result", "params").order_by("-created_at", "-id")
    if kind in RunKind.values:
        runs = runs.filter(kind=kind)
    if status in RunStatus.values:
        runs = runs.filter(status=status)
    return render_page(request, "dashboard/traces.html", {
        "nav": "traces", "runs": runs[:100], "kind": kind, "status": status,
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

