"""agents/{agent}/graph/: the entity graph around an entity, as nodes and edges."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework.response import Response
from rest_framework.views import APIView

from graphs import selectors as graph_selectors
from graphs.api.serializers import GraphQuerySerializer, GraphSerializer
from memories import selectors as memory_selectors
from memories.api.views_base import AgentScopedMixin


class GraphApi(AgentScopedMixin, APIView):
    """Nodes and edges around an entity (breadth-first to `depth` over the relationships
    visible at `as_of` / `valid_at` / `recorded_as_of`), ready for a graph view; without
    `entity`, the strongest edges."""

    @extend_schema(parameters=[GraphQuerySerializer], responses={200: GraphSerializer})
    def get(self, request, agent):
        query = GraphQuerySerializer(data=request.query_params)
        query.is_valid(raise_exception=True)
        params = query.validated_data
        entity = None
        if params.get("entity"):
            entity = memory_selectors.entity_by_ref(agent=self.agent, ref=params["entity"])
        rel_types = [t.strip() for t in params.get("rel_types", "").split(",") if t.strip()]
        graph = graph_selectors.graph_around(agent=self.agent, entity=entity, depth=params["depth"],
                                             rel_types=rel_types, as_of=GraphQuerySerializer.moment_of(params))
        return Response(GraphSerializer(graph).data)
