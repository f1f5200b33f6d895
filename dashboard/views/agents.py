"""The agents overview, an agent's home (search, recent changes, operator changes, runs) and its
time travel page."""

from __future__ import annotations

from django.views.decorators.http import require_GET

from dashboard import selectors as ui_reads
from dashboard.charts import latency_chart
from dashboard.pages import render_page, ui_page


@require_GET
@ui_page
def overview(request):
    series = ui_reads.latency_last_day()
    llm_use = ui_reads.llm_use_overview()
    return render_page(request, "dashboard/overview.html", {
        "nav": "overview", "agents": ui_reads.agents_overview(), "runs": ui_reads.runs_recent(limit=15),
        "chart": latency_chart(series), "series": series, "llm_use": llm_use,
        "llm_use_shown": any(row.budget.month.used or any(w.limit is not None for w in row.budget.windows)
                             for row in llm_use),
    })


@require_GET
@ui_page
def agent_home(request, agent):
    q = request.GET.get("q", "")
    return render_page(request, "dashboard/agent_home.html", {
        "nav": "home", "q": q, "results": ui_reads.search(agent=agent, q=q, as_of=request.moment),
        "recent_facts": ui_reads.facts_recent(agent=agent), "audit": ui_reads.audit_recent(agent=agent),
        "runs": ui_reads.runs_recent(agent=agent, limit=8),
    }, agent=agent)


@require_GET
@ui_page
def time_travel(request, agent):
    """What the agent knew at `as_of` (its own clock; about the world at `valid_at`, by default
    the same moment) beside what it knows now."""
    moment = request.moment
    diff = None if moment.is_now else ui_reads.knowledge_diff(agent=agent, then=moment)
    return render_page(request, "dashboard/time_travel.html", {
        "nav": "time", "diff": diff, "moments": ui_reads.knowledge_moments(agent=agent), "with_valid_at": True,
    }, agent=agent)
