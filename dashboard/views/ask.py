"""Ask: run a retrieval from the browser (preset, as_of, valid_at, limit) and show the context, each item's
score by signal and a link to the run's trace."""

from __future__ import annotations

from django.views.decorators.http import require_GET

from dashboard.pages import render_page, ui_page
from memories.errors import DomainError
from retrieval.config import PRESETS
from retrieval.services import MAX_QUERY_CHARS, memory_retrieve


@require_GET
@ui_page
def ask(request, agent):
    q = request.GET.get("q", "").strip()[:MAX_QUERY_CHARS]
    preset = request.GET.get("preset", "default")
    preset = preset if preset in PRESETS else "default"
    limit = request.GET.get("limit", "10")
    limit = int(limit) if limit.isdigit() and 1 <= int(limit) <= 100 else 10
    result, error = None, ""
    if q:
        try:
            result = memory_retrieve(agent=agent, query=q, as_of=request.as_of, valid_at=request.valid_at, limit=limit,
                                     preset=preset)
        except (DomainError, OverflowError) as exc:
            error = str(exc)
    items = []
    if result is not None:
        items = [("fact" if key.is_fact else "message", item, str(key)) for key, item in result.ranked_items()]
    return render_page(request, "dashboard/ask.html", {
        "nav": "ask", "q": q, "preset": preset, "presets": sorted(PRESETS), "limit": limit,
        "result": result, "items": items, "error": error,
    }, agent=agent)
