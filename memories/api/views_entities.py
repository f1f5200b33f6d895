"""agents/{agent}/entities/ and relationships/: browse, add aliases, merge, forget."""

from __future__ import annotations

from dataclasses import asdict

from drf_spectacular.utils import extend_schema, extend_schema_serializer
from rest_framework import serializers, status
from rest_framework.response import Response
from rest_framework.reverse import reverse
from rest_framework.views import APIView

from memories import selectors
from memories.api.fields import IdField
from memories.api.serializers import (
    ClocksQuerySerializer,
    EntityDetailSerializer,
    EntitySerializer,
    RelationshipSerializer,
)
from memories.api.strict import StrictInputSerializer
from memories.api.views_base import AgentScopedMixin, AgentScopedReadViewSet
from memories.api.views_erasures import ErasureReceiptSerializer
from memories.filters import EntityFilterSet, RelationshipFilterSet
from memories.models import ApiKeyScope, Entity, Relationship
from memories.services import entities as entity_services
from memories.services import forget as forget_services


class EntityViewSet(AgentScopedReadViewSet):
    """Entities; the detail adds aliases, active facts and active relationships."""

    queryset = Entity.objects.none()
    serializer_class = EntitySerializer
    filterset_class = EntityFilterSet

    def scoped_queryset(self, agent):
        return selectors.entities_list(agent=agent)

    @extend_schema(parameters=[ClocksQuerySerializer], responses={200: EntityDetailSerializer})
    def retrieve(self, request, *args, **kwargs):
        clocks = ClocksQuerySerializer(data=request.query_params)
        clocks.is_valid(raise_exception=True)
        detail = selectors.entity_detail(agent=self.agent, entity=self.get_object(),
                                         moment=ClocksQuerySerializer.moment_of(clocks.validated_data))
        return Response(EntityDetailSerializer(detail, context=self.get_serializer_context()).data)


class RelationshipViewSet(AgentScopedReadViewSet):
    """Relationship versions; the current ones unless `as_of`, `valid_at`, `recorded_as_of` or
    `include_superseded`."""

    queryset = Relationship.objects.none()
    serializer_class = RelationshipSerializer
    filterset_class = RelationshipFilterSet

    def scoped_queryset(self, agent):
        return selectors.relationships_list(agent=agent)


class EntityAliasApi(AgentScopedMixin, APIView):
    """Register another name for the entity (201 when new, 200 when it already had it); an
    alias that belongs to a different entity is a 400 unless `move` takes it from that one."""

    @extend_schema_serializer(component_name="EntityAliasInput")
    class InputSerializer(StrictInputSerializer):
        alias = serializers.CharField(max_length=255)
        move = serializers.BooleanField(required=False, default=False,
                                        help_text="take the alias from the entity that has it")

    @extend_schema_serializer(component_name="EntityAliases")
    class OutputSerializer(serializers.Serializer):
        created = serializers.BooleanField()
        aliases = serializers.ListField(child=serializers.CharField())

    @extend_schema(request=InputSerializer, responses={201: OutputSerializer, 200: OutputSerializer})
    def post(self, request, agent, pk):
        data = self.InputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        created = entity_services.entity_alias_add(
            agent=self.agent, entity_id=int(pk), alias=data.validated_data["alias"], actor=self.actor,
            move=data.validated_data["move"])
        entity = selectors.entity_get(agent=self.agent, entity_id=int(pk))
        aliases = selectors.entity_detail(agent=self.agent, entity=entity)["aliases"]
        return Response(self.OutputSerializer({"created": created, "aliases": aliases}).data,
                        status=status.HTTP_201_CREATED if created else status.HTTP_200_OK)


class EntityAliasDeleteApi(AgentScopedMixin, APIView):
    """The name no longer points at the entity (204); 404 when it is not one of its aliases."""

    scopes = {"DELETE": ApiKeyScope.WRITE}

    @extend_schema(responses={204: None})
    def delete(self, request, agent, pk, alias):
        entity_services.entity_alias_remove(agent=self.agent, entity_id=int(pk), alias=alias, actor=self.actor)
        return Response(status=status.HTTP_204_NO_CONTENT)


class EntityMergeApi(AgentScopedMixin, APIView):
    """Merge another entity into this one: its facts, links, relationships and aliases move
    here and it points to this entity from then on. An entity already merged can be neither
    side (400), so merges never form a cycle; `unmerge/` undoes one."""

    scopes = {"POST": ApiKeyScope.ADMIN}

    @extend_schema_serializer(component_name="EntityMergeInput")
    class InputSerializer(StrictInputSerializer):
        entity_id = IdField(help_text="the entity to merge into this one")
        reason = serializers.CharField(max_length=500, required=False, allow_blank=True, default="")

    @extend_schema_serializer(component_name="EntityMerged")
    class OutputSerializer(serializers.Serializer):
        entity = EntitySerializer(help_text="the survivor")
        merged = serializers.IntegerField(help_text="id of the merged entity")
        facts_moved = serializers.IntegerField()
        links_moved = serializers.IntegerField()
        relationships_moved = serializers.IntegerField()
        relationships_dropped = serializers.IntegerField()
        aliases_moved = serializers.IntegerField()

    @extend_schema(request=InputSerializer, responses={200: OutputSerializer})
    def post(self, request, agent, pk):
        data = self.InputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        merged_id = data.validated_data["entity_id"]
        report = entity_services.entity_merge(agent=self.agent, survivor_id=int(pk), merged_id=merged_id,
                                              actor=self.actor, reason=data.validated_data["reason"])
        survivor = selectors.entity_get(agent=self.agent, entity_id=int(pk))
        return Response(self.OutputSerializer({"entity": survivor, "merged": merged_id, **asdict(report)}).data)


class EntityUnmergeApi(AgentScopedMixin, APIView):
    """Undo the merge of this (merged) entity with what the merge recorded: its facts, links,
    relationships and aliases move back, and it stands on its own again."""

    scopes = {"POST": ApiKeyScope.ADMIN}

    @extend_schema_serializer(component_name="EntityUnmergeInput")
    class InputSerializer(StrictInputSerializer):
        reason = serializers.CharField(max_length=500, required=False, allow_blank=True, default="")

    @extend_schema_serializer(component_name="EntityUnmerged")
    class OutputSerializer(serializers.Serializer):
        entity = EntitySerializer(help_text="the entity standing on its own again")
        facts_moved = serializers.IntegerField()
        links_moved = serializers.IntegerField()
        relationships_moved = serializers.IntegerField()
        relationships_restored = serializers.IntegerField()
        aliases_moved = serializers.IntegerField()

    @extend_schema(request=InputSerializer, responses={200: OutputSerializer})
    def post(self, request, agent, pk):
        data = self.InputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        report = entity_services.entity_unmerge(agent=self.agent, entity_id=int(pk), actor=self.actor,
                                         reason=data.validated_data["reason"])
        entity = selectors.entity_get(agent=self.agent, entity_id=int(pk))
        return Response(self.OutputSerializer({"entity": entity, **asdict(report)}).data)


class EntityForgetApi(AgentScopedMixin, APIView):
    """GET: what a forget would remove or redact (nothing changes). POST: forget the entity — it
    and everything derived from it (facts of every version, links, relationships, aliases,
    profile sentences naming it, the entities that carry only a shorter form of her name), her
    own messages whole and the mentions in others' — and store an erasure receipt."""

    scopes = {"POST": ApiKeyScope.ADMIN, "GET": ApiKeyScope.ADMIN}

    @extend_schema_serializer(component_name="EntityForgetInput")
    class InputSerializer(StrictInputSerializer):
        reason = serializers.CharField(max_length=500, required=False, allow_blank=True, default="")

    @extend_schema_serializer(component_name="ForgetReport")
    class OutputSerializer(serializers.Serializer):
        facts_deleted = serializers.IntegerField()
        relationships_deleted = serializers.IntegerField()
        aliases_deleted = serializers.IntegerField()
        links_deleted = serializers.IntegerField()
        events_redacted = serializers.IntegerField()
        profiles_scrubbed = serializers.IntegerField()
        entities_deleted = serializers.IntegerField()
        request_keys_redacted = serializers.IntegerField(
            help_text="external ids and idempotency keys replaced by keyed digests (a retry is still a replay)")
        opaque_key = serializers.CharField(help_text="what the entity's key became wherever it was stored")
        tables = serializers.DictField(
            child=serializers.DictField(child=serializers.IntegerField()),
            help_text="rows changed per table: deleted, redacted (whole), mentions_redacted, …")
        receipt = ErasureReceiptSerializer(help_text="the erasure receipt this forget stored")
        receipt_url = serializers.URLField()

    @extend_schema_serializer(component_name="ForgetPreview")
    class PreviewSerializer(serializers.Serializer):
        entities = serializers.ListField(child=serializers.DictField(), help_text=(
            "{id, key, display_name, type, why}: every entity that goes (the chosen one, those merged into it, "
            "those with one of her names, those named only by a form of her name that is hers)"))
        names = serializers.ListField(child=serializers.CharField(), help_text="her names and aliases")
        name_forms = serializers.ListField(child=serializers.DictField(), help_text=(
            "{kind, form, action: redacted | kept, reason, could_also_mean}: the shorter forms of her names "
            "(family name alone, with a title, initial and family name, given name). A form another known "
            "person could also go by is kept; add it as her alias first to forget it with her"))
        facts = serializers.IntegerField()
        relationships = serializers.IntegerField()
        own_messages = serializers.IntegerField(help_text="messages she said: redacted whole")
        mentioning_messages = serializers.IntegerField(help_text="others' messages naming her: names redacted")
        request_keys = serializers.IntegerField(help_text="messages whose external id / idempotency key is digested")
        profiles_scrubbed = serializers.IntegerField()
        entities_only_from_her_messages = serializers.IntegerField()

    @extend_schema(responses={200: PreviewSerializer})
    def get(self, request, agent, pk):
        preview = forget_services.entity_forget_preview(agent=self.agent, entity_id=int(pk))
        return Response(self.PreviewSerializer({
            "entities": [{"id": e.id, "key": e.key, "display_name": e.display_name, "type": e.type,
                          "why": preview.why.get(e.id, "")} for e in preview.entities],
            "names": preview.names,
            "name_forms": [{"kind": d.kind, "form": d.shown, "action": "redacted" if d.hers else "kept",
                            "reason": d.reason, "could_also_mean": d.also} for d in preview.forms],
            "facts": len(preview.facts), "relationships": len(preview.relationships),
            "own_messages": preview.own_events, "mentioning_messages": preview.mention_events,
            "request_keys": preview.request_keys, "profiles_scrubbed": len(preview.profiles_scrubbed),
            "entities_only_from_her_messages": preview.created_by_her,
        }).data)

    @extend_schema(request=InputSerializer, responses={200: OutputSerializer})
    def post(self, request, agent, pk):
        data = self.InputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        report = forget_services.entity_forget(agent=self.agent, entity_id=int(pk), actor=self.actor,
                                               reason=data.validated_data["reason"])
        receipt = selectors.erasure_receipt_get(agent=self.agent, receipt_id=report.receipt_id)
        receipt_url = reverse("api:erasure-detail", kwargs={"agent": self.agent.slug, "pk": receipt.pk},
                              request=request)
        return Response(self.OutputSerializer({
            **asdict(report), "tables": {table: dict(counts) for table, counts in report.tables.items()},
            "receipt": receipt, "receipt_url": receipt_url}, context={"request": request, "view": self}).data)
