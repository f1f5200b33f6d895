"""/api/v1/: browsing viewsets on a router, one APIView per operation, health and the schema."""

from django.urls import path, re_path
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerView
from rest_framework.routers import SimpleRouter

from memories.api import schema  # noqa: F401  (registers the bearer-key scheme)
from memories.api.errors import not_found_view
from memories.api.views_agents import AgentViewSet, HealthApi
from memories.api.views_base import ID_REGEX, SLUG_REGEX
from memories.api.views_entities import (
    EntityAliasApi,
    EntityForgetApi,
    EntityMergeApi,
    EntityViewSet,
    GraphApi,
    RelationshipViewSet,
)
from memories.api.views_events import EventViewSet, JobViewSet
from memories.api.views_facts import FactCorrectApi, FactHistoryApi, FactRetractApi, FactViewSet
from memories.api.views_retrieve import RetrieveApi
from memories.api.views_traces import TraceViewSet

app_name = "api"
AGENT = rf"agents/(?P<agent>{SLUG_REGEX})"

router = SimpleRouter()
router.register("agents", AgentViewSet, basename="agent")
router.register(f"{AGENT}/events", EventViewSet, basename="event")
router.register(f"{AGENT}/jobs", JobViewSet, basename="job")
router.register(f"{AGENT}/facts", FactViewSet, basename="fact")
router.register(f"{AGENT}/entities", EntityViewSet, basename="entity")
router.register(f"{AGENT}/relationships", RelationshipViewSet, basename="relationship")
router.register(f"{AGENT}/traces", TraceViewSet, basename="trace")

operations = [
    re_path(rf"^{AGENT}/retrieve/$", RetrieveApi.as_view(), name="retrieve"),
    re_path(rf"^{AGENT}/graph/$", GraphApi.as_view(), name="graph"),
    re_path(rf"^{AGENT}/facts/(?P<pk>{ID_REGEX})/history/$", FactHistoryApi.as_view(), name="fact-history"),
    re_path(rf"^{AGENT}/facts/(?P<pk>{ID_REGEX})/correct/$", FactCorrectApi.as_view(), name="fact-correct"),
    re_path(rf"^{AGENT}/facts/(?P<pk>{ID_REGEX})/retract/$", FactRetractApi.as_view(), name="fact-retract"),
    re_path(rf"^{AGENT}/entities/(?P<pk>{ID_REGEX})/aliases/$", EntityAliasApi.as_view(), name="entity-aliases"),
    re_path(rf"^{AGENT}/entities/(?P<pk>{ID_REGEX})/merge/$", EntityMergeApi.as_view(), name="entity-merge"),
    re_path(rf"^{AGENT}/entities/(?P<pk>{ID_REGEX})/forget/$", EntityForgetApi.as_view(), name="entity-forget"),
]

urlpatterns = [
    path("health/", HealthApi.as_view(), name="health"),
    path("schema/", SpectacularAPIView.as_view(), name="schema"),
    path("docs/", SpectacularSwaggerView.as_view(url_name="api:schema"), name="docs"),
    *operations,
    *router.urls,
    # anything else under /api/v1/ is a JSON 404, not the HTML page
    re_path(r"^[\s\S]*$", not_found_view),
]
