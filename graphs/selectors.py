"""Agent-scoped reads of the entity graph for the API and the UI."""

from __future__ import annotations

from datetime import datetime

from django.db.models import Q

from memories import selectors as memory_selectors
from memories.models import Agent, Entity, Relationship
from memories.models.visibility import Moment

MAX_GRAPH_EDGES = 500


def graph_around(*, agent: Agent, entity: Entity | None = None, depth: int = 1, rel_types: list[str] | None = None,
                 as_of: Moment | datetime | None = None, max_edges: int = MAX_GRAPH_EDGES) -> dict:
    """Nodes and edges a graph view can draw: the visible relationships within `depth` hops of
    `entity` (breadth-first), or the strongest visible ones of the agent when no entity is given."""
    rels = Relationship.objects.visible(as_of).filter(agent=agent)
    if rel_types:
        rels = rels.filter(rel_type__in=rel_types)
    edges: dict[int, Relationship] = {}
    node_ids: set[int] = set()
    if entity is None:
        for rel in rels.order_by("-strength", "id")[:max_edges]:
            edges[rel.id] = rel
            node_ids |= {rel.source_id, rel.target_id}
    else:
        node_ids.add(entity.id)
        frontier = {entity.id}
        for _ in range(depth):
            found = rels.filter(Q(source_id__in=frontier) | Q(target_id__in=frontier)).exclude(id__in=list(edges))
            for rel in found.order_by("-strength", "id")[: max_edges - len(edges)]:
                edges[rel.id] = rel
            reached = {end for rel in edges.values() for end in (rel.source_id, rel.target_id)}
            frontier = reached - node_ids
            node_ids |= reached
            if not frontier or len(edges) >= max_edges:
                break
    nodes = memory_selectors.entities_list(agent=agent).filter(id__in=node_ids).order_by("id")
    return {
        "nodes": [{"id": n.id, "key": n.key, "label": n.display_name, "type": n.type, "importance": n.importance}
                  for n in nodes],
        "edges": [{"id": r.id, "source": r.source_id, "target": r.target_id, "rel_type": r.rel_type,
                   "strength": r.strength, "valid_from": r.valid_from, "valid_to": r.valid_to}
                  for r in sorted(edges.values(), key=lambda r: r.id)],
    }


def rel_types_of(*, agent: Agent) -> list[str]:
    """The relationship types the agent has ever recorded, for a graph filter."""
    return list(Relationship.objects.filter(agent=agent).order_by("rel_type").values_list("rel_type", flat=True)
                .distinct())


def entity_types_of(*, agent: Agent) -> list[str]:
    return list(memory_selectors.entities_list(agent=agent).order_by("type").values_list("type", flat=True).distinct())
