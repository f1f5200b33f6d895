"""The memories API's routes: browsing viewsets on a router, one APIView per operation
(wired under /api/v1/ by memory_project.api.urls)."""

from django.urls import re_path
from rest_framework.routers import SimpleRouter

from memories.api.views_agents import AgentViewSet
from memories.api.views_base import AGENT_PATH, ID_REGEX
from memories.api.views_entities import (
    EntityAliasApi,
    EntityAliasDeleteApi,
    EntityForgetApi,
    EntityMergeApi,
    EntityUnmergeApi,
    EntityViewSet,
    RelationshipViewSet,
)
from memories.api.views_erasures import ErasureReceiptViewSet
from memories.api.views_events import EventViewSet, JobViewSet
from memories.api.views_facts import FactCorrectApi, FactHistoryApi, FactReinstateApi, FactRetractApi, FactViewSet
from memories.api.views_merge import MergeSuggestionViewSet
from memories.api.views_portability import AgentExportApi, AgentImportApi
from memories.api.views_traces import TraceViewSet

router = SimpleRouter()
router.register("agents", AgentViewSet, basename="agent")
router.register(f"{AGENT_PATH}/events", EventViewSet, basename="event")
router.register(f"{AGENT_PATH}/jobs", JobViewSet, basename="job")
router.register(f"{AGENT_PATH}/facts", FactViewSet, basename="fact")
router.register(f"{AGENT_PATH}/entities", EntityViewSet, basename="entity")
router.register(f"{AGENT_PATH}/relationships", RelationshipViewSet, basename="relationship")
router.register(f"{AGENT_PATH}/traces", TraceViewSet, basename="trace")
router.register(f"{AGENT_PATH}/merge-suggestions", MergeSuggestionViewSet, basename="merge-suggestion")
router.register(f"{AGENT_PATH}/erasures", ErasureReceiptViewSet, basename="erasure")

FACT = rf"^{AGENT_PATH}/facts/(?P<pk>{ID_REGEX})"
ENTITY = rf"^{AGENT_PATH}/entities/(?P<pk>{ID_REGEX})"
operations = [
    re_path(rf"^{AGENT_PATH}/export/$", AgentExportApi.as_view(), name="agent-export"),
    re_path(rf"^{AGENT_PATH}/import/$", AgentImportApi.as_view(), name="agent-import"),
    re_path(rf"{FACT}/history/$", FactHistoryApi.as_view(), name="fact-history"),
    re_path(rf"{FACT}/correct/$", FactCorrectApi.as_view(), name="fact-correct"),
    re_path(rf"{FACT}/retract/$", FactRetractApi.as_view(), name="fact-retract"),
    re_path(rf"{FACT}/reinstate/$", FactReinstateApi.as_view(), name="fact-reinstate"),
    re_path(rf"{ENTITY}/aliases/$", EntityAliasApi.as_view(), name="entity-aliases"),
    re_path(rf"{ENTITY}/aliases/(?P<alias>[^/]{{1,255}})/$", EntityAliasDeleteApi.as_view(), name="entity-alias"),
    re_path(rf"{ENTITY}/merge/$", EntityMergeApi.as_view(), name="entity-merge"),
    re_path(rf"{ENTITY}/unmerge/$", EntityUnmergeApi.as_view(), name="entity-unmerge"),
    re_path(rf"{ENTITY}/forget/$", EntityForgetApi.as_view(), name="entity-forget"),
]

urlpatterns = [
    *operations,
    *router.urls,
]
