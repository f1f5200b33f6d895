"""Operator admin: every memory model, searchable and filterable; the event log is read-only."""

from django.contrib import admin
from django.utils.html import format_html

from memories.models import (
    Agent,
    ApiKey,
    AuditEntry,
    Entity,
    EntityAlias,
    Event,
    Fact,
    FactEntityLink,
    PipelineRun,
    PipelineStep,
    Relationship,
)


class ReadOnlyAdmin(admin.ModelAdmin):
    """Rows that are a log: visible, never edited or deleted from the admin."""

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False


@admin.register(Agent)
class AgentAdmin(admin.ModelAdmin):
    list_display = ("slug", "name", "created_at")
    search_fields = ("slug", "name")


@admin.register(Event)
class EventAdmin(ReadOnlyAdmin):
    list_display = ("id", "agent", "speaker", "short_text", "occurred_at", "recorded_at", "external_id")
    list_filter = ("agent", "speaker")
    search_fields = ("text", "speaker", "external_id", "idempotency_key")
    date_hierarchy = "occurred_at"
    exclude = ("embedding",)
    list_select_related = ("agent",)

    @admin.display(description="text")
    def short_text(self, obj):
        return obj.text[:80]


class AliasInline(admin.TabularInline):
    model = EntityAlias
    extra = 0
    fields = ("alias", "created_at")
    readonly_fields = ("created_at",)


@admin.register(Entity)
class EntityAdmin(admin.ModelAdmin):
    list_display = ("display_name", "key", "type", "agent", "importance", "merged_into", "updated_at")
    list_filter = ("agent", "type")
    search_fields = ("display_name", "key", "aliases__alias")
    readonly_fields = ("key", "created_at", "updated_at", "profile_refreshed_at")
    exclude = ("name_embedding",)
    raw_id_fields = ("merged_into",)
    inlines = [AliasInline]
    list_select_related = ("agent", "merged_into")


@admin.register(EntityAlias)
class EntityAliasAdmin(admin.ModelAdmin):
    list_display = ("alias", "entity", "agent", "created_at")
    list_filter = ("agent",)
    search_fields = ("alias", "entity__display_name")
    raw_id_fields = ("entity",)
    list_select_related = ("entity", "agent")


class LinkInline(admin.TabularInline):
    model = FactEntityLink
    extra = 0
    raw_id_fields = ("entity",)


@admin.register(Fact)
class FactAdmin(admin.ModelAdmin):
    list_display = ("id", "text", "entity", "agent", "status", "confidence", "valid_from", "valid_to",
                    "recorded_at", "invalidated_at", "source_context")
    list_filter = ("agent", "source_context", "importance_category", ("invalidated_at", admin.EmptyFieldListFilter))
    search_fields = ("text", "entity__display_name", "slot_value")
    readonly_fields = ("search_vector", "recorded_at", "source_event_link", "supersedes", "reinforcement_count",
                       "last_confirmed_at", "access_count", "last_accessed_at")
    exclude = ("embedding",)
    raw_id_fields = ("entity", "source_event")
    inlines = [LinkInline]
    list_select_related = ("entity", "agent")
    date_hierarchy = "valid_from"

    @admin.display(description="status")
    def status(self, obj):
        return "active" if obj.is_active else "closed"

    @admin.display(description="source event")
    def source_event_link(self, obj):
        if not obj.source_event_id:
            return "—"
        return format_html('<a href="../../../event/{}/change/">event {}</a>', obj.source_event_id,
                           obj.source_event_id)


@admin.register(Relationship)
class RelationshipAdmin(admin.ModelAdmin):
    list_display = ("source", "rel_type", "target", "strength", "agent", "valid_from", "valid_to", "invalidated_at")
    list_filter = ("agent", "rel_type")
    search_fields = ("source__display_name", "target__display_name", "rel_type")
    raw_id_fields = ("source", "target", "evidence_fact", "source_event")
    list_select_related = ("source", "target", "agent")


class StepInline(admin.TabularInline):
    model = PipelineStep
    extra = 0
    fields = ("attempt", "order", "name", "status", "duration_ms", "candidates_in", "candidates_out",
              "tokens_in", "tokens_out", "data")
    readonly_fields = fields
    can_delete = False

    def has_add_permission(self, request, obj=None):
        return False


@admin.register(PipelineRun)
class PipelineRunAdmin(ReadOnlyAdmin):
    list_display = ("id", "kind", "name", "status", "agent", "attempts", "duration_ms", "tokens_in", "tokens_out",
                    "created_at")
    list_filter = ("kind", "status", "agent")
    search_fields = ("input_ref", "error")
    inlines = [StepInline]


@admin.register(AuditEntry)
class AuditEntryAdmin(ReadOnlyAdmin):
    list_display = ("created_at", "actor", "action", "object_type", "object_id", "agent")
    list_filter = ("action", "object_type", "agent")
    search_fields = ("actor", "object_id", "reason")


@admin.register(ApiKey)
class ApiKeyAdmin(admin.ModelAdmin):
    """Keys are created with `manage.py create_api_key` (the secret is shown once); here they are
    listed and revoked."""

    list_display = ("name", "prefix", "agent", "scope", "created_at", "last_used_at", "revoked_at")
    list_filter = ("scope", "agent", ("revoked_at", admin.EmptyFieldListFilter))
    search_fields = ("name", "prefix")
    readonly_fields = [f.name for f in ApiKey._meta.fields]
    actions = ["revoke"]

    def has_add_permission(self, request):
        return False

    @admin.action(description="Revoke the selected keys")
    def revoke(self, request, queryset):
        from memories.services.api_keys import api_key_revoke

        for key in queryset.filter(revoked_at__isnull=True):
            api_key_revoke(key_id=key.pk, actor=f"user:{request.user.get_username()}")
        self.message_user(request, "Revoked.")
