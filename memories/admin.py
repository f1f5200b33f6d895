"""Operator admin: every memory model, searchable and filterable.

Logs (events, pipeline runs and steps, audit entries) are read-only. Versioned rows are too:
a fact or relationship is never edited or deleted in place, and an entity's identity (key,
type, name, agent, merged_into) never changes here, and agents (the tenants) are only listed.
Corrections go through the same services the REST API calls (`memories.services.facts`,
`.entities`, `.forget`, `.budgets`), attributed to the logged-in user and audited by those services:
correct, retract or reinstate a fact, add an alias to, describe, merge or forget an entity, set an
agent's LLM budget."""

from __future__ import annotations

from django import forms
from django.contrib import admin, messages
from django.contrib.admin.utils import unquote
from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpResponseRedirect
from django.template.response import TemplateResponse
from django.urls import path, reverse
from django.utils import timezone
from django.utils.html import format_html, format_html_join

from memories import selectors
from memories.budgets import LLMBudget, annotated_llm_budget, budget_windows
from memories.errors import DomainError, NotFound
from memories.models import (
    Agent,
    ApiKey,
    AuditEntry,
    Entity,
    EntityAlias,
    ErasureReceipt,
    Event,
    Fact,
    FactAccess,
    FactEntityLink,
    PipelineRun,
    PipelineStep,
    Relationship,
)
from memories.selectors import facts as fact_selectors
from memories.selectors.budgets import agents_with_llm_use
from memories.services import entities as entity_services
from memories.services import facts as fact_services
from memories.services import forget as forget_services
from memories.services.budgets import MAX_TOKENS, agent_llm_budget_set

OPERATOR_FORM_TEMPLATE = "admin/memories/operator_form.html"


def operator_actor(request) -> str:
    """The audit-log actor for an admin user: the same `user:<username>` the REST API records
    for a session-authenticated user."""
    return f"user:{request.user.get_username()}"


class NoAddDeleteAdmin(admin.ModelAdmin):
    """Rows the admin never adds or deletes (not even in bulk): they come and go through services."""

    def has_add_permission(self, request):
        return False

    def has_delete_permission(self, request, obj=None):
        return False

    def get_actions(self, request):
        actions = super().get_actions(request)
        actions.pop("delete_selected", None)
        return actions


class ReadOnlyAdmin(NoAddDeleteAdmin):
    """Rows that are a log or a version: visible, never added, edited or deleted from the admin."""

    def has_change_permission(self, request, obj=None):
        return False


class ReadOnlyInline(admin.TabularInline):
    extra = 0
    can_delete = False

    def has_add_permission(self, request, obj=None):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False


class OperatorViewsMixin:
    """Admin pages (one object each) whose form calls an operator service. The model's own
    Django permissions decide who may use them: `change` to correct, `delete` to forget."""

    operator_views: tuple[str, ...] = ()

    def get_urls(self):
        custom = [
            path(f"<path:object_id>/{name}/", self.admin_site.admin_view(getattr(self, f"{name}_view")),
                 name=f"{self.opts.app_label}_{self.opts.model_name}_{name}")
            for name in self.operator_views
        ]
        return custom + super().get_urls()

    def has_operate_permission(self, request, obj=None) -> bool:
        """May correct through the services (the model's `change` permission, which the in-place
        change form never gets)."""
        return request.user.has_perm(f"{self.opts.app_label}.change_{self.opts.model_name}")

    def has_erase_permission(self, request, obj=None) -> bool:
        return request.user.has_perm(f"{self.opts.app_label}.delete_{self.opts.model_name}")

    def operator_object(self, request, object_id, *, erase: bool = False):
        allowed = self.has_erase_permission(request) if erase else self.has_operate_permission(request)
        if not allowed:
            raise PermissionDenied
        obj = self.get_object(request, unquote(object_id))
        if obj is None:
            raise Http404(f"{self.opts.verbose_name} {object_id} not found")
        return obj

    def change_url(self, obj) -> str:
        return reverse(f"admin:{obj._meta.app_label}_{obj._meta.model_name}_change", args=[obj.pk])

    def render_operator_form(self, request, *, title: str, form, obj=None, submit: str, intro: str = "",
                             template: str = OPERATOR_FORM_TEMPLATE, **context):
        return TemplateResponse(request, template, {
            **self.admin_site.each_context(request), "opts": self.opts, "title": title, "form": form,
            "original": obj, "submit_label": submit, "intro": intro, **context,
        })

    def change_view(self, request, object_id, form_url="", extra_context=None):
        extra = {"may_operate": self.has_operate_permission(request),
                 "may_erase": self.has_erase_permission(request), **(extra_context or {})}
        return super().change_view(request, object_id, form_url, extra_context=extra)


class CorrectFactForm(forms.Form):
    text = forms.CharField(max_length=4000, widget=forms.Textarea(attrs={"rows": 3, "cols": 80}),
                           help_text="the corrected statement; it becomes a new version, known from now on")
    reason = forms.CharField(max_length=500, required=False)


class ReasonForm(forms.Form):
    reason = forms.CharField(max_length=500, required=False)


class AliasForm(forms.Form):
    alias = forms.CharField(max_length=255, help_text="another name for this entity")


class MergeForm(forms.Form):
    target = forms.IntegerField(min_value=1, label="Merge into entity id",
                                help_text="the surviving entity (same agent): this entity's facts, links, "
                                          "relationships and aliases move there")
    reason = forms.CharField(max_length=500, required=False)


class ForgetForm(forms.Form):
    reason = forms.CharField(max_length=500, required=False, help_text="not stored: the audit entry says [redacted]")
    confirm = forms.BooleanField(label="Yes, forget everything listed above")


class LLMBudgetForm(forms.Form):
    day_tokens = forms.IntegerField(
        min_value=0, max_value=MAX_TOKENS, required=False, label="Tokens per UTC day",
        help_text="empty: the server's default (ANAMNESIS_LLM_BUDGET_DAY_TOKENS); 0 keeps the agent off the LLM")
    month_tokens = forms.IntegerField(
        min_value=0, max_value=MAX_TOKENS, required=False, label="Tokens per UTC month",
        help_text="empty: the server's default (ANAMNESIS_LLM_BUDGET_MONTH_TOKENS); 0 keeps the agent off the LLM")
    reason = forms.CharField(max_length=500, required=False)


def budget_window_text(window) -> str:
    """"1,234 of 5,000 tokens (the agent's own)": one window's use against its budget."""
    source = {"agent": "the agent's own", "default": "the server's default"}.get(window.source)
    if window.limit is None:
        return f"{window.used:,} tokens (no budget)"
    return f"{window.used:,} of {window.limit:,} tokens ({source})" + (" — spent" if window.exceeded else "")


@admin.register(Agent)
class AgentAdmin(OperatorViewsMixin, ReadOnlyAdmin):
    """Agents with what each holds and their LLM use against budget, read-only. An agent is
    created through the API (`POST /api/v1/agents/`, audited by `agent_create`) or by the
    commands that write to it; deleting one here would drop a whole tenant's memory in one
    unaudited cascade, so the admin never does. "Set LLM budget…" sets the agent's own token
    budgets (`agent_llm_budget_set`, audited), for users with the agent `change` permission."""

    list_display = ("slug", "name", "created_at", "event_count", "entity_count", "current_fact_count",
                    "llm_today", "llm_this_month")
    search_fields = ("slug", "name")
    fields = ("slug", "name", "created_at", "event_count", "entity_count", "current_fact_count",
              "llm_today", "llm_this_month")
    readonly_fields = fields
    operator_views = ("budget",)

    def get_queryset(self, request):
        return agents_with_llm_use(selectors.agents_with_counts(), windows=budget_windows(timezone.now()))

    @staticmethod
    def llm_budget(obj) -> LLMBudget:
        return annotated_llm_budget(obj, now=timezone.now())

    @admin.display(description="LLM tokens today (UTC)")
    def llm_today(self, obj):
        return budget_window_text(self.llm_budget(obj).day)

    @admin.display(description="LLM tokens this month (UTC)")
    def llm_this_month(self, obj):
        return budget_window_text(self.llm_budget(obj).month)

    def budget_view(self, request, object_id):
        agent = self.operator_object(request, object_id)
        form = LLMBudgetForm(request.POST or None, initial={"day_tokens": agent.llm_budget_day_tokens,
                                                            "month_tokens": agent.llm_budget_month_tokens})
        if request.method == "POST" and form.is_valid():
            try:
                agent_llm_budget_set(agent=agent, actor=operator_actor(request), reason=form.cleaned_data["reason"],
                                     day_tokens=form.cleaned_data["day_tokens"],
                                     month_tokens=form.cleaned_data["month_tokens"])
            except DomainError as exc:
                form.add_error(None, str(exc))
            else:
                budget = self.llm_budget(self.get_object(request, unquote(object_id)))
                self.message_user(request, f"LLM budget of {agent.slug} saved: today {budget_window_text(budget.day)}; "
                                           f"this month {budget_window_text(budget.month)}.")
                return HttpResponseRedirect(self.change_url(agent))
        budget = self.llm_budget(agent)
        return self.render_operator_form(
            request, title=f"LLM budget of {agent.slug}", form=form, obj=agent, submit="Save budget",
            intro=f"Used today: {budget_window_text(budget.day)}; this month: {budget_window_text(budget.month)}. "
                  "Past a budget, writes take the offline extractor, retrievals skip the reranker and background "
                  "jobs their LLM calls, until the UTC day (or month) ends.")

    @admin.display(description="messages", ordering="n_events")
    def event_count(self, obj):
        return obj.n_events

    @admin.display(description="entities", ordering="n_entities")
    def entity_count(self, obj):
        return obj.n_entities

    @admin.display(description="current facts", ordering="n_facts_current")
    def current_fact_count(self, obj):
        return obj.n_facts_current


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


class AliasInline(ReadOnlyInline):
    model = EntityAlias
    fields = ("alias", "created_at")
    readonly_fields = fields


class EntityForm(forms.ModelForm):
    class Meta:
        model = Entity
        fields = entity_services.ENTITY_DESCRIPTION_FIELDS

    def clean_importance(self):
        value = self.cleaned_data["importance"]
        if value is not None and not 0 <= value <= 1:
            raise forms.ValidationError("must be between 0 and 1")
        return value


@admin.register(Entity)
class EntityAdmin(OperatorViewsMixin, NoAddDeleteAdmin):
    """Importance, profile and summary are edited here (through `entity_describe`, audited); the
    identity only changes by merging or forgetting, from the buttons on the change page."""

    form = EntityForm
    list_display = ("display_name", "key", "type", "agent", "importance", "merged_into", "updated_at")
    list_filter = ("agent", "type")
    search_fields = ("display_name", "key", "aliases__alias")
    fields = ("agent", "key", "type", "display_name", "merged_into", "importance", "profile_text",
              "profile_refreshed_at", "summary_text", "created_at", "updated_at")
    readonly_fields = ("agent", "key", "type", "display_name", "merged_into", "profile_refreshed_at",
                       "created_at", "updated_at")
    inlines = [AliasInline]
    list_select_related = ("agent", "merged_into")
    operator_views = ("alias", "merge", "forget")

    def save_model(self, request, obj, form, change):
        changes = {name: form.cleaned_data[name] for name in form.changed_data
                   if name in entity_services.ENTITY_DESCRIPTION_FIELDS}
        if changes:
            entity_services.entity_describe(agent=obj.agent, entity_id=obj.pk, actor=operator_actor(request), **changes)
        obj.refresh_from_db()

    def alias_view(self, request, object_id):
        entity = self.operator_object(request, object_id)
        form = AliasForm(request.POST or None)
        if request.method == "POST" and form.is_valid():
            try:
                created = entity_services.entity_alias_add(agent=entity.agent, entity_id=entity.pk,
                                                    alias=form.cleaned_data["alias"], actor=operator_actor(request))
            except (DomainError, NotFound) as exc:
                form.add_error(None, str(exc))
            else:
                self.message_user(request, "Alias added." if created else "The entity already had this alias.")
                return HttpResponseRedirect(self.change_url(entity))
        return self.render_operator_form(request, title=f"Add an alias to {entity.display_name}", form=form,
                                         obj=entity, submit="Add alias")

    def merge_view(self, request, object_id):
        entity = self.operator_object(request, object_id)
        form = MergeForm(request.POST or None)
        if request.method == "POST" and form.is_valid():
            try:
                report = entity_services.entity_merge(agent=entity.agent, survivor_id=form.cleaned_data["target"],
                                               merged_id=entity.pk, actor=operator_actor(request),
                                               reason=form.cleaned_data["reason"])
            except (DomainError, NotFound) as exc:
                form.add_error("target" if isinstance(exc, NotFound) else None, str(exc))
            else:
                survivor = Entity.objects.get(pk=form.cleaned_data["target"])
                self.message_user(request, f"{entity.display_name} merged into {survivor.display_name}: "
                                           f"{report.facts_moved} facts, {report.relationships_moved} relationships "
                                           f"and {report.aliases_moved} aliases moved.")
                return HttpResponseRedirect(self.change_url(survivor))
        return self.render_operator_form(
            request, title=f"Merge {entity.display_name} into another entity", form=form, obj=entity,
            submit="Merge", intro=f"{entity.display_name} ({entity.key}) will point at the entity you name.")

    def forget_view(self, request, object_id):
        entity = self.operator_object(request, object_id, erase=True)
        form = ForgetForm(request.POST or None)
        if request.method == "POST" and form.is_valid():
            try:
                report = forget_services.entity_forget(agent=entity.agent, entity_id=entity.pk,
                                                actor=operator_actor(request), reason=form.cleaned_data["reason"])
            except (DomainError, NotFound) as exc:
                form.add_error(None, str(exc))
            else:
                self.message_user(request, f"Forgotten: {report.entities_deleted} entities, {report.facts_deleted} "
                                           f"facts, {report.relationships_deleted} relationships; "
                                           f"{report.events_redacted} events redacted. This is the erasure receipt.")
                return HttpResponseRedirect(reverse("admin:memories_erasurereceipt_change", args=[report.receipt_id]))
        preview = forget_services.entity_forget_preview(agent=entity.agent, entity_id=entity.pk)
        return self.render_operator_form(
            request, title=f"Forget {entity.display_name}", form=form, obj=entity, submit="Forget",
            template="admin/memories/entity/forget.html", preview=preview)


@admin.register(EntityAlias)
class EntityAliasAdmin(ReadOnlyAdmin):
    """Aliases are added from their entity's page (Add alias)."""

    list_display = ("alias", "entity", "agent", "created_at")
    list_filter = ("agent",)
    search_fields = ("alias", "entity__display_name")
    list_select_related = ("entity", "agent")


class LinkInline(ReadOnlyInline):
    model = FactEntityLink
    fields = ("entity", "is_primary")
    readonly_fields = fields


@admin.register(Fact)
class FactAdmin(OperatorViewsMixin, ReadOnlyAdmin):
    """Fact versions, read-only. "Correct" writes a new version superseding this one, "Retract"
    closes it and "Reinstate" makes a closed version current again (fact_correct / fact_retract /
    fact_reinstate); the change page shows the version chain."""

    list_display = ("id", "text", "entity", "agent", "status", "confidence", "valid_from", "valid_to",
                    "recorded_at", "invalidated_at", "source_context")
    list_filter = ("agent", "source_context", "importance_category", ("invalidated_at", admin.EmptyFieldListFilter))
    search_fields = ("text", "entity__display_name", "slot_value")
    fieldsets = (
        (None, {"fields": ("agent", "entity", "text", "confidence", "importance", "importance_category",
                           "source_context", "speaker", "source_event_link", "slot", "slot_value")}),
        ("Time", {"fields": ("valid_from", "valid_to", "recorded_at", "invalidated_at", "invalidation_reason")}),
        ("Versions", {"fields": ("version_chain",)}),
        ("Use", {"fields": ("reinforcement_count", "last_confirmed_at", "access_count", "last_accessed_at",
                            "retrievals_pending")}),
    )
    readonly_fields = ("version_chain", "source_event_link", "retrievals_pending")
    inlines = [LinkInline]
    list_select_related = ("entity", "agent")
    date_hierarchy = "valid_from"
    actions = ["retract_selected"]
    operator_views = ("correct", "retract", "reinstate")

    @admin.display(description="retrievals not yet in access count")
    def retrievals_pending(self, obj: Fact) -> int:
        """Counted by retrievals since the last fold (the importance, decay and dedupe jobs)."""
        return FactAccess.objects.filter(fact=obj).values_list("count", flat=True).first() or 0

    @admin.display(description="status")
    def status(self, obj):
        return "active" if obj.is_active else "closed"

    @admin.display(description="source event")
    def source_event_link(self, obj):
        if not obj.source_event_id:
            return "—"
        return format_html('<a href="{}">event {}</a>', reverse("admin:memories_event_change",
                                                                  args=[obj.source_event_id]), obj.source_event_id)

    @admin.display(description="version chain (oldest first)")
    def version_chain(self, obj):
        if obj is None or obj.pk is None:
            return "—"
        chain = fact_selectors.fact_history(agent=obj.agent, fact_id=obj.pk)
        rows = format_html_join("", "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td>"
                                    "<td>{}</td><td>{}</td></tr>", (
            (format_html('<a href="{}">{}</a>', self.change_url(f), f.pk) if f.pk != obj.pk else f"{f.pk} (this)",
             f.text, f.get_source_context_display(), f.speaker or "—", f.valid_from, f.valid_to or "—",
             f.invalidated_at or "—", f.invalidation_reason or ("current" if f.is_active else "—"))
            for f in chain))
        return format_html(
            '<table class="version-chain"><thead><tr><th>id</th><th>text</th><th>source</th><th>speaker</th>'
            "<th>valid from</th><th>valid to</th><th>invalidated at</th><th>why closed</th></tr></thead>"
            "<tbody>{}</tbody></table>", rows)

    def correct_view(self, request, object_id):
        fact = self.operator_object(request, object_id)
        form = CorrectFactForm(request.POST or None, initial={"text": fact.text})
        if request.method == "POST" and form.is_valid():
            try:
                new = fact_services.fact_correct(agent=fact.agent, fact_id=fact.pk, text=form.cleaned_data["text"],
                                            reason=form.cleaned_data["reason"], actor=operator_actor(request))
            except (DomainError, NotFound) as exc:
                form.add_error(None, str(exc))
            else:
                self.message_user(request, f"Fact {fact.pk} corrected: version {new.pk} supersedes it.")
                return HttpResponseRedirect(self.change_url(new))
        return self.render_operator_form(
            request, title=f"Correct fact {fact.pk}", form=form, obj=fact, submit="Correct",
            intro=f"Now: “{fact.text}”. The correction becomes a new version, known from now on and true from where "
                  "this one started (its text was never true); this one closes.")

    def retract_view(self, request, object_id):
        fact = self.operator_object(request, object_id)
        form = ReasonForm(request.POST or None)
        if request.method == "POST" and form.is_valid():
            try:
                closed = fact_services.fact_retract(
                    agent=fact.agent, fact_id=fact.pk, reason=form.cleaned_data["reason"],
                    actor=operator_actor(request)).relationships_closed
            except (DomainError, NotFound) as exc:
                form.add_error(None, str(exc))
            else:
                self.message_user(request, f"Fact {fact.pk} retracted ({closed} relationships closed).")
                return HttpResponseRedirect(self.change_url(fact))
        return self.render_operator_form(
            request, title=f"Retract fact {fact.pk}", form=form, obj=fact, submit="Retract",
            intro=f"“{fact.text}” stops being believed from now on; relationships it evidences close too.")

    def reinstate_view(self, request, object_id):
        fact = self.operator_object(request, object_id)
        form = ReasonForm(request.POST or None)
        if request.method == "POST" and form.is_valid():
            try:
                new = fact_services.fact_reinstate(
                    agent=fact.agent, fact_id=fact.pk, reason=form.cleaned_data["reason"],
                    actor=operator_actor(request))
            except (DomainError, NotFound) as exc:
                form.add_error(None, str(exc))
            else:
                self.message_user(request, f"Fact {fact.pk} reinstated: version {new.pk} states it again, current.")
                return HttpResponseRedirect(self.change_url(new))
        current = fact_selectors.fact_current_version(fact)
        return self.render_operator_form(
            request, title=f"Reinstate fact {fact.pk}", form=form, obj=fact, submit="Reinstate",
            intro=f"“{fact.text}” becomes current again as a new version (known from now, true from "
                  f"{fact.valid_from:%Y-%m-%d})" + (f"; the current version {current.pk} (“{current.text}”) "
                                                     "stops being believed." if current else "."))

    @admin.action(description="Retract the selected facts…", permissions=["operate"])
    def retract_selected(self, request, queryset):
        form = ReasonForm(request.POST if request.POST.get("apply") else None)
        if form.is_bound and form.is_valid():
            retracted, skipped = 0, []
            for fact in queryset.select_related("agent").order_by("id"):
                try:
                    fact_services.fact_retract(agent=fact.agent, fact_id=fact.pk, reason=form.cleaned_data["reason"],
                                          actor=operator_actor(request))
                    retracted += 1
                except (DomainError, NotFound):
                    skipped.append(fact.pk)
            self.message_user(request, f"{retracted} facts retracted.")
            if skipped:
                self.message_user(request, f"Not active, left as they were: {skipped}.", messages.WARNING)
            return None
        return self.render_operator_form(
            request, title="Retract facts", form=form, submit="Retract", queryset=queryset,
            action="retract_selected", action_checkbox_name=admin.helpers.ACTION_CHECKBOX_NAME,
            intro="These facts stop being true and known from now on; relationships they evidence close too.")


@admin.register(Relationship)
class RelationshipAdmin(ReadOnlyAdmin):
    """Relationship versions, read-only: they close with the fact that evidences them."""

    list_display = ("source", "rel_type", "target", "strength", "agent", "valid_from", "valid_to", "invalidated_at")
    list_filter = ("agent", "rel_type")
    search_fields = ("source__display_name", "target__display_name", "rel_type")
    list_select_related = ("source", "target", "agent")


class StepInline(ReadOnlyInline):
    model = PipelineStep
    fields = ("attempt", "order", "name", "status", "duration_ms", "candidates_in", "candidates_out",
              "tokens_in", "tokens_out", "data")
    readonly_fields = fields


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


@admin.register(ErasureReceipt)
class ErasureReceiptAdmin(ReadOnlyAdmin):
    """What each forget removed or redacted, counted per table, when and by whom (no personal data
    of the person forgotten). Written only by the forget."""

    list_display = ("id", "created_at", "actor", "opaque_key", "agent", "vacuumed_at")
    list_filter = ("agent",)
    search_fields = ("actor", "opaque_key")
    fields = ("agent", "created_at", "actor", "opaque_key", "opaque_keys", "reason_given", "totals", "tables",
              "name_forms", "vacuum_tables", "vacuumed_at", "vacuum_seconds", "vacuum_error")
    readonly_fields = fields


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
            api_key_revoke(key_id=key.pk, actor=operator_actor(request))
        self.message_user(request, "Revoked.")
