"""Output shapes of stored objects and pipeline results. Serializers hold no business logic;
operation inputs are nested in their views."""

from __future__ import annotations

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers
from rest_framework.reverse import reverse

from memories.api.fields import JsonObjectField, MomentField
from memories.models import Agent, Entity, Event, Fact, PipelineRun, PipelineStep, Relationship, RunStatus
from memories.models.visibility import Moment
from memories.pipeline.results import EXTRACTION_PATHS, WriteResult

# --- the three clocks as query parameters -----------------------------------------------------


class ClocksQuerySerializer(serializers.Serializer):
    """`as_of` (the agent's clock), `valid_at` (the world's, default as_of), `recorded_as_of`
    (the database's): see memories.models.visibility."""

    as_of = MomentField(required=False, help_text="what the agent knew at this moment")
    valid_at = MomentField(required=False, help_text="true in the world at this moment (default: as_of)")
    recorded_as_of = MomentField(required=False, help_text="as the database held it at this moment")

    @staticmethod
    def moment_of(data: dict) -> Moment:
        return Moment(as_of=data.get("as_of"), valid_at=data.get("valid_at"),
                      recorded_as_of=data.get("recorded_as_of"))


# --- pipeline results ----------------------------------------------------------------------------


class TokenUsageSerializer(serializers.Serializer):
    input_tokens = serializers.IntegerField()
    output_tokens = serializers.IntegerField()
    total_tokens = serializers.IntegerField()


class FactChangeSerializer(serializers.Serializer):
    fact_id = serializers.IntegerField(allow_null=True)
    text = serializers.CharField()
    entity = serializers.CharField(help_text="entity key")
    previous_fact_id = serializers.IntegerField(allow_null=True, help_text="the version this one superseded")
    reason = serializers.CharField(allow_blank=True)


class WriteResultSerializer(serializers.Serializer):
    success = serializers.BooleanField()
    error = serializers.CharField(allow_null=True)
    event_id = serializers.IntegerField(allow_null=True, help_text="null for an empty message or a dry run")
    run_id = serializers.IntegerField(allow_null=True, help_text="the job / trace id")
    dry_run = serializers.BooleanField()
    facts_added = FactChangeSerializer(many=True)
    facts_updated = FactChangeSerializer(many=True)
    facts_unchanged = FactChangeSerializer(many=True)
    facts_deleted = FactChangeSerializer(many=True)
    facts_skipped = serializers.ListField(
        child=serializers.DictField(child=serializers.CharField()), required=False,
        help_text="what could not be stored (e.g. a name over 200 characters), with the reason; the rest was")
    entities_resolved = serializers.ListField(child=serializers.DictField(child=serializers.JSONField()))
    relationships = serializers.ListField(child=serializers.DictField(child=serializers.JSONField()))
    duration_ms = serializers.FloatField()
    tokens_used = TokenUsageSerializer()
    extraction_path = serializers.ChoiceField(
        choices=["", *EXTRACTION_PATHS],
        help_text="informed (LLM with the entities' known facts), blind (LLM alone) or offline (no LLM); "
                  "empty for an empty message")
    trace = serializers.ListField(child=serializers.DictField(child=serializers.JSONField()))


# --- stored objects ------------------------------------------------------------------------------


class AgentSerializer(serializers.ModelSerializer):
    class Meta:
        model = Agent
        fields = ["slug", "name", "created_at"]


class BudgetWindowSerializer(serializers.Serializer):
    budget = serializers.IntegerField(allow_null=True, help_text="tokens the agent may spend in the window; "
                                                                 "null: unlimited")
    source = serializers.ChoiceField(choices=["agent", "default", "unlimited"],
                                     help_text="the agent's own budget, the server's default, or none")
    used = serializers.IntegerField(help_text="tokens its writes, retrievals and background jobs spent since `since`")
    since = serializers.DateTimeField(help_text="when the window began (UTC midnight, or the month's first day)")
    exceeded = serializers.BooleanField(help_text="spent: the LLM is not used until the window ends")


class AgentBudgetSerializer(serializers.Serializer):
    """An agent's LLM token budgets (README "LLM budgets") and its use against them."""

    agent = serializers.CharField(help_text="the agent's slug")
    day_tokens = serializers.IntegerField(allow_null=True, help_text="the agent's own budget per UTC day; "
                                                                     "null: the server's default")
    month_tokens = serializers.IntegerField(allow_null=True, help_text="the agent's own budget per UTC month; "
                                                                       "null: the server's default")
    day = BudgetWindowSerializer()
    month = BudgetWindowSerializer()
    exceeded = serializers.BooleanField(help_text="a window is spent: writes take the offline extractor, "
                                                  "retrievals skip the reranker, jobs their LLM calls")

    @classmethod
    def of(cls, agent: Agent, budget) -> dict:
        windows = {w.name: {"budget": w.limit, "source": w.source, "used": w.used, "since": w.since,
                            "exceeded": w.exceeded} for w in budget.windows}
        return cls({"agent": agent.slug, "day_tokens": agent.llm_budget_day_tokens,
                    "month_tokens": agent.llm_budget_month_tokens, **windows, "exceeded": budget.exceeded}).data


class JobSerializer(serializers.ModelSerializer):
    """A write job: one per event. A running job is held by its worker until `held_until` (its
    lease, renewed while it works); a running job past it lost its worker and can be retried."""

    url = serializers.SerializerMethodField()
    trace_url = serializers.SerializerMethodField()
    result = serializers.SerializerMethodField()
    held_until = serializers.SerializerMethodField()

    class Meta:
        model = PipelineRun
        fields = ["id", "status", "event", "attempts", "created_at", "started_at", "finished_at", "duration_ms",
                  "tokens_in", "tokens_out", "error", "result", "held_until", "url", "trace_url"]

    def _url(self, name: str, run: PipelineRun) -> str:
        kwargs = {"agent": self.context["agent"].slug, "pk": run.pk}
        return reverse(name, kwargs=kwargs, request=self.context.get("request"))

    @extend_schema_field(OpenApiTypes.URI)
    def get_url(self, run) -> str:
        return self._url("api:job-detail", run)

    @extend_schema_field(OpenApiTypes.URI)
    def get_trace_url(self, run) -> str:
        return self._url("api:trace-detail", run)

    @extend_schema_field(serializers.DateTimeField(allow_null=True))
    def get_held_until(self, run) -> str | None:
        if run.status != RunStatus.RUNNING or run.lease_expires_at is None:
            return None
        return serializers.DateTimeField().to_representation(run.lease_expires_at)

    @extend_schema_field(WriteResultSerializer(allow_null=True))
    def get_result(self, run):
        if run.status != RunStatus.SUCCEEDED or not run.result:
            return None
        return WriteResultSerializer(WriteResult.from_dict(run.result).as_dict()).data


class WriteAcceptedSerializer(serializers.Serializer):
    job = JobSerializer()
    job_url = serializers.URLField()


class EventSerializer(serializers.ModelSerializer):
    job = serializers.IntegerField(source="job_id", allow_null=True, read_only=True, help_text="write job id")
    metadata = JsonObjectField(read_only=True, help_text="what the writer attached to the message")

    class Meta:
        model = Event
        fields = ["id", "speaker", "text", "occurred_at", "recorded_at", "external_id", "metadata", "redacted_at",
                  "imported_at", "job"]


class EntityRefSerializer(serializers.ModelSerializer):
    class Meta:
        model = Entity
        fields = ["id", "key", "display_name", "type"]


class FactSerializer(serializers.ModelSerializer):
    entity = EntityRefSerializer()
    is_active = serializers.BooleanField(read_only=True)

    class Meta:
        model = Fact
        fields = ["id", "text", "entity", "confidence", "importance", "importance_category", "source_context",
                  "speaker", "source_event", "supersedes", "valid_from", "valid_to", "learned_at",
                  "valid_to_learned_at", "unlearned_at", "recorded_at", "invalidated_at", "imported_at",
                  "invalidation_reason", "is_active", "reinforcement_count", "last_confirmed_at", "slot", "slot_value"]


class FactDetailSerializer(FactSerializer):
    """One version, current or not, with the chain's current version."""

    is_current = serializers.BooleanField(source="is_active", read_only=True,
                                          help_text="this version is the chain's current one")
    current_version = serializers.IntegerField(allow_null=True, read_only=True,
                                               help_text="id of the chain's current version (null: none is)")
    current_url = serializers.CharField(allow_null=True, read_only=True)

    class Meta(FactSerializer.Meta):
        fields = [*FactSerializer.Meta.fields, "is_current", "current_version", "current_url"]


class SourceEventSerializer(serializers.ModelSerializer):
    class Meta:
        model = Event
        fields = ["id", "speaker", "text", "occurred_at", "recorded_at", "external_id", "redacted_at"]


class FactVersionSerializer(FactSerializer):
    """One version in a history: its valid and recorded windows and the event it came from."""

    source_event = SourceEventSerializer(allow_null=True)


class RelationshipSerializer(serializers.ModelSerializer):
    source = EntityRefSerializer()
    target = EntityRefSerializer()
    is_active = serializers.BooleanField(read_only=True)

    class Meta:
        model = Relationship
        fields = ["id", "source", "rel_type", "target", "strength", "evidence_fact", "source_event", "valid_from",
                  "valid_to", "learned_at", "valid_to_learned_at", "unlearned_at", "recorded_at", "invalidated_at",
                  "imported_at", "is_active"]


class EntitySerializer(serializers.ModelSerializer):
    class Meta:
        model = Entity
        fields = ["id", "key", "type", "display_name", "importance", "merged_into", "created_at", "updated_at",
                  "imported_at"]


class EntityDetailSerializer(serializers.Serializer):
    """Built from memories.selectors.entity_detail."""

    entity = EntitySerializer()
    profile_text = serializers.CharField(source="entity.profile_text", allow_blank=True)
    summary_text = serializers.CharField(source="entity.summary_text", allow_blank=True)
    aliases = serializers.ListField(child=serializers.CharField())
    facts = FactSerializer(many=True, help_text="active facts about or mentioning the entity")
    relationships = RelationshipSerializer(many=True, help_text="active relationships in both directions")


class StepSerializer(serializers.ModelSerializer):
    data = JsonObjectField(read_only=True, help_text="what the step decided (e.g. reconciliation decisions)")
    class Meta:
        model = PipelineStep
        fields = ["attempt", "order", "name", "status", "duration_ms", "candidates_in", "candidates_out",
                  "tokens_in", "tokens_out", "data"]


class TraceSerializer(serializers.ModelSerializer):
    step_count = serializers.IntegerField(read_only=True)

    class Meta:
        model = PipelineRun
        fields = ["id", "kind", "name", "status", "event", "input_ref", "created_at", "started_at", "finished_at",
                  "duration_ms", "tokens_in", "tokens_out", "attempts", "error", "step_count"]


class TraceDetailSerializer(TraceSerializer):
    params = JsonObjectField(read_only=True, help_text="the run's inputs (overrides, as_of, limit, …)")
    result = JsonObjectField(read_only=True, help_text="a write's WriteResult, or a retrieval's ranking summary")
    steps = StepSerializer(many=True, read_only=True)

    class Meta(TraceSerializer.Meta):
        fields = [f for f in TraceSerializer.Meta.fields if f != "step_count"] + ["params", "result", "steps"]
