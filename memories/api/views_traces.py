"""agents/{agent}/traces/: pipeline runs (writes, retrievals, jobs) with their timed steps."""

from __future__ import annotations

from memories import selectors
from memories.api.serializers import TraceDetailSerializer, TraceSerializer
from memories.api.views_base import AgentScopedReadViewSet
from memories.filters import PipelineRunFilterSet
from memories.models import PipelineRun


class TraceViewSet(AgentScopedReadViewSet):
    queryset = PipelineRun.objects.none()
    filterset_class = PipelineRunFilterSet

    def scoped_queryset(self, agent):
        if self.action == "retrieve":
            return selectors.runs_with_steps(agent=agent)
        return selectors.runs_list(agent=agent)

    def get_serializer_class(self):
        return TraceDetailSerializer if self.action == "retrieve" else TraceSerializer
