"""The entity graph explorer: a page that draws an entity's neighbourhood with cytoscape.js, the
JSON its clicks load to expand a node, and the side panel (an htmx fragment) of one entity."""

from __future__ import annotations

from django.http import Http404, JsonResponse
from django.views.decorators.http import require_GET

from dashboard import selectors as ui_reads
from dashboard.pages import or_404, render_page, ui_page
from graphs import selectors as graph_selectors
from memories import selectors as memory_selectors

PALETTE = ["#2f6fdf", "#1f8a4c", "#c2571f", "#8a3fc2", "#b8336a", "#0f8a8a", "#8a7a1f", "#5c6677"]
TYPE_COLOURS = {"person": PALETTE[0], "place": PALETTE[1], "organization": PALETTE[2], "event": PALETTE[3]}


def type_colours(types: list[str]) -> dict[str, str]:
    """A stable colour per entity type: the usual ones fixed, the others from the palette's rest."""
    rest = PALETTE[4:]
    return {t: TYPE_COLOURS.get(t) or rest[sum(map(ord, t)) % len(rest)] for t in types}


def _graph_params(request) -> dict:
    depth = request.GET.get("depth", "1")
    return {
        "depth": int(depth) if depth in {"1", "2", "3"} else 1,
        "rel_types": [t for t in request.GET.getlist("rel_type") if t][:50],
        "entity_ref": request.GET.get("entity", "").strip()[:255],
    }


UI_MAX_EDGES = 1500  # the explorer draws up to this many (a grid layout past 300 nodes keeps it responsive)


def _graph(agent, request, params) -> tuple[dict, object]:
    focus = ui_reads.entity_find(agent=agent, text=params["entity_ref"]) if params["entity_ref"] else None
    graph = graph_selectors.graph_around(agent=agent, entity=focus, depth=params["depth"],
                                         rel_types=params["rel_types"], as_of=request.moment,
                                         max_edges=UI_MAX_EDGES)
    if focus is not None and not graph["nodes"]:
        graph["nodes"] = [{"id": focus.id, "key": focus.key, "label": focus.display_name, "type": focus.type,
                           "importance": focus.importance}]
    return graph, focus


def _json_graph(graph: dict) -> dict:
    return {"nodes": graph["nodes"],
            "edges": [{**e, "valid_from": e["valid_from"].isoformat(),
                       "valid_to": e["valid_to"].isoformat() if e["valid_to"] else None} for e in graph["edges"]]}


@require_GET
@ui_page
def graph_page(request, agent):
    params = _graph_params(request)
    graph, focus = _graph(agent, request, params)
    types = graph_selectors.entity_types_of(agent=agent)
    keep = {k: v for k, v in {"entity": params["entity_ref"], "depth": params["depth"]}.items() if v}
    return render_page(request, "dashboard/graph.html", {
        "nav": "graph", "graph": _json_graph(graph), "focus": focus, "params": params,
        "colours": type_colours(types), "rel_types": graph_selectors.rel_types_of(agent=agent),
        "entity_names": ui_reads.entity_choices(agent=agent).values_list("display_name", flat=True)[:1000],
        "moments": ui_reads.knowledge_moments(agent=agent), "keep": keep,
    }, agent=agent)


@require_GET
@ui_page
def graph_data(request, agent):
    """The neighbourhood of `entity` (id) as JSON, for a click that expands a node."""
    params = _graph_params(request)
    graph, focus = _graph(agent, request, params)
    if params["entity_ref"] and focus is None:
        raise Http404("no such entity")
    return JsonResponse(_json_graph(graph))


@require_GET
@ui_page
def graph_panel(request, agent, entity_id: int):
    entity = or_404(memory_selectors.entity_get, agent=agent, entity_id=entity_id)
    page = ui_reads.entity_page(agent=agent, entity=entity, as_of=request.moment)
    return render_page(request, "dashboard/graph_panel.html", page, agent=agent)
