"""FilterSets for browsing stored objects, shared by the API's lists and the dashboard's list pages
(bound to the request's query string either way). Querysets come in already scoped to one agent
(memories.selectors); filters only narrow them."""

from __future__ import annotations

import django_filters as filters
from django import forms
from django.contrib.postgres.search import SearchQuery
from django.db.models import Q
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema_field

from memories.form_fields import MAX_ID, MomentFormField, StrictBooleanFormField
from memories.models import (
    Entity,
    EntityAlias,
    Event,
    Fact,
    ImportanceCategory,
    PipelineRun,
    Relationship,
    RunKind,
    RunStatus,
    SourceContext,
)
from memories.models.visibility import Moment, version_visible
from memories.naming import normalize_alias


class MomentFilter(filters.IsoDateTimeFilter):
    field_class = MomentFormField


@extend_schema_field(OpenApiTypes.INT64)
class IdFilter(filters.Filter):
    field_class = forms.IntegerField

    def __init__(self, *args, **kwargs):
        kwargs.setdefault("min_value", 1)
        kwargs.setdefault("max_value", MAX_ID)
        super().__init__(*args, **kwargs)


class BooleanFilter(filters.BooleanFilter):
    """true/false (1/0, yes/no) or absent; `maybe` is a 400, not "no"."""

    field_class = StrictBooleanFormField


def _noop(queryset, name, value):
    return queryset


class BitemporalFilterSet(filters.FilterSet):
    """The three clocks (memories.models.visibility): `as_of` shows what the agent knew at that
    moment, `valid_at` which of it was true at another moment of the world, `recorded_as_of`
    what the database held then. Without them only the current versions are listed unless
    `include_superseded` is set."""

    as_of = MomentFilter(method=_noop, help_text="what the agent knew at this moment (its clock)")
    valid_at = MomentFilter(method=_noop, help_text="true in the world at this moment (default: as_of)")
    recorded_as_of = MomentFilter(method=_noop, help_text="as the database held it at this moment")
    include_superseded = BooleanFilter(method=_noop,
                                               help_text="also list superseded and retracted versions")

    def moment(self) -> Moment:
        data = self.form.cleaned_data
        return Moment(as_of=data.get("as_of"), valid_at=data.get("valid_at"),
                      recorded_as_of=data.get("recorded_as_of"))

    def filter_queryset(self, queryset):
        queryset = super().filter_queryset(queryset)
        moment = self.moment()
        if not moment.is_now:
            return queryset.filter(version_visible(moment))
        if self._include_superseded():
            return queryset
        return queryset.filter(version_visible(None))

    def _include_superseded(self) -> bool:
        return bool(self.form.cleaned_data.get("include_superseded"))


class EventFilterSet(filters.FilterSet):
    speaker = filters.CharFilter(max_length=200)
    external_id = filters.CharFilter(max_length=200)
    occurred_after = MomentFilter(field_name="occurred_at", lookup_expr="gte")
    occurred_before = MomentFilter(field_name="occurred_at", lookup_expr="lt")

    class Meta:
        model = Event
        fields = ["speaker", "external_id", "occurred_after", "occurred_before"]


class FactFilterSet(BitemporalFilterSet):
    entity = IdFilter(method="filter_entity", help_text="facts about or mentioning this entity id")
    q = filters.CharFilter(method="filter_text", max_length=500, help_text="text search")
    confidence_min = filters.NumberFilter(field_name="confidence", lookup_expr="gte", min_value=0, max_value=1)
    confidence_max = filters.NumberFilter(field_name="confidence", lookup_expr="lte", min_value=0, max_value=1)
    source_context = filters.ChoiceFilter(choices=SourceContext.choices)
    importance_category = filters.ChoiceFilter(choices=ImportanceCategory.choices)

    class Meta:
        model = Fact
        fields = ["entity", "q", "confidence_min", "confidence_max", "source_context", "importance_category",
                  "as_of", "valid_at", "recorded_as_of", "include_superseded"]

    def filter_entity(self, queryset, name, value):
        return queryset.about(value)

    def filter_text(self, queryset, name, value):
        value = value.strip()
        if not value:
            return queryset
        search = SearchQuery(value, config="english", search_type="websearch")
        return queryset.filter(Q(search_vector=search) | Q(text__icontains=value))


class EntityFilterSet(filters.FilterSet):
    q = filters.CharFilter(method="filter_text", max_length=200, help_text="name, key or alias contains")
    type = filters.CharFilter(max_length=64)
    include_merged = BooleanFilter(method=_noop, help_text="also list entities merged into others")

    class Meta:
        model = Entity
        fields = ["q", "type", "include_merged"]

    def filter_queryset(self, queryset):
        queryset = super().filter_queryset(queryset)
        if not self.form.cleaned_data.get("include_merged"):
            queryset = queryset.filter(merged_into__isnull=True)
        return queryset

    def filter_text(self, queryset, name, value):
        value = value.strip()
        if not value:
            return queryset
        aliased = EntityAlias.objects.filter(alias__icontains=normalize_alias(value) or value).values("entity_id")
        return queryset.filter(Q(display_name__icontains=value) | Q(key__icontains=value) | Q(id__in=aliased))


class RelationshipFilterSet(BitemporalFilterSet):
    rel_type = filters.CharFilter(max_length=100)
    entity = IdFilter(method="filter_entity", help_text="relationships from or to this entity id")
    source = IdFilter(field_name="source_id")
    target = IdFilter(field_name="target_id")

    include_closed = BooleanFilter(method=_noop, help_text="the former name of include_superseded")

    class Meta:
        model = Relationship
        fields = ["rel_type", "entity", "source", "target", "as_of", "valid_at", "recorded_as_of",
                  "include_superseded", "include_closed"]

    def _include_superseded(self) -> bool:
        return super()._include_superseded() or bool(self.form.cleaned_data.get("include_closed"))

    def filter_entity(self, queryset, name, value):
        return queryset.filter(Q(source_id=value) | Q(target_id=value))


class PipelineRunFilterSet(filters.FilterSet):
    kind = filters.ChoiceFilter(choices=RunKind.choices)
    status = filters.ChoiceFilter(choices=RunStatus.choices)
    created_after = MomentFilter(field_name="created_at", lookup_expr="gte")
    created_before = MomentFilter(field_name="created_at", lookup_expr="lt")

    class Meta:
        model = PipelineRun
        fields = ["kind", "status", "created_after", "created_before"]


class JobFilterSet(PipelineRunFilterSet):
    kind = None  # jobs are write runs

    class Meta:
        model = PipelineRun
        fields = ["status", "created_after", "created_before"]
