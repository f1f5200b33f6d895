"""An entity's page and its operator actions: add, remove or move an alias, merge a duplicate
into it, unmerge, and forget (a preview of exactly what goes, then the removal and its receipt)."""

from __future__ import annotations

from django.contrib import messages
from django.shortcuts import redirect
from django.urls import reverse
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from dashboard import selectors as ui_reads
from dashboard.forms import AliasAddForm, AliasRemoveForm, EntityForgetForm, EntityMergeForm, EntityUnmergeForm
from dashboard.pages import actor_of, or_404, render_page, ui_page
from memories import selectors
from memories.errors import DomainError
from memories.services import entities as entity_services
from memories.services import forget as forget_services


@require_GET
@ui_page
def entity_detail(request, agent, entity_id: int):
    entity = or_404(selectors.entity_get, agent=agent, entity_id=entity_id)
    page = ui_reads.entity_page(agent=agent, entity=entity, as_of=request.moment)
    return render_page(request, "dashboard/entity.html", {
        **page, "alias_form": AliasAddForm(),
        "merge_form": EntityMergeForm(choices=ui_reads.entity_choices(agent=agent, exclude=entity)),
    }, agent=agent)


def _entity_url(agent, entity_id) -> str:
    return reverse("ui:entity", args=[agent.slug, entity_id])


@require_POST
@ui_page
def entity_alias_add(request, agent, entity_id: int):
    form = AliasAddForm(request.POST)
    if form.is_valid():
        try:
            created = entity_services.entity_alias_add(
                agent=agent, entity_id=entity_id, alias=form.cleaned_data["alias"], actor=actor_of(request),
                move=form.cleaned_data["move"])
            verb = ("moved here" if form.cleaned_data["move"] and created
                    else "added" if created else "was already there")
            messages.success(request, f"Alias “{form.cleaned_data['alias']}” {verb}.")
        except DomainError as exc:
            messages.error(request, str(exc))
    else:
        messages.error(request, "Give the alias some letters or digits.")
    return redirect(_entity_url(agent, entity_id))


@require_POST
@ui_page
def entity_alias_remove(request, agent, entity_id: int):
    form = AliasRemoveForm(request.POST)
    if form.is_valid():
        try:
            entity_services.entity_alias_remove(agent=agent, entity_id=entity_id, alias=form.cleaned_data["alias"],
                                                actor=actor_of(request), reason=form.cleaned_data["reason"])
            messages.success(request, f"Alias “{form.cleaned_data['alias']}” removed.")
        except DomainError as exc:
            messages.error(request, str(exc))
    else:
        messages.error(request, "Which alias?")
    return redirect(_entity_url(agent, entity_id))


@require_POST
@ui_page
def entity_unmerge(request, agent, entity_id: int):
    """Undo the merge of `merged` (an entity merged into this one); back to its own page."""
    form = EntityUnmergeForm(request.POST)
    if not form.is_valid():
        messages.error(request, "Which merged entity?")
        return redirect(_entity_url(agent, entity_id))
    merged_id = form.cleaned_data["merged"]
    if not selectors.entities_list(agent=agent).filter(pk=merged_id, merged_into_id=entity_id).exists():
        messages.error(request, f"Entity {merged_id} is not merged into this one.")
        return redirect(_entity_url(agent, entity_id))
    try:
        report = entity_services.entity_unmerge(agent=agent, entity_id=merged_id, actor=actor_of(request),
                                                reason=form.cleaned_data["reason"])
    except DomainError as exc:
        messages.error(request, str(exc))
        return redirect(_entity_url(agent, entity_id))
    messages.success(request, f"Unmerged: {report.facts_moved} facts, {report.relationships_moved} relationships "
                              f"and {report.aliases_moved} aliases went back "
                              f"({report.relationships_restored} relationships re-opened).")
    return redirect(_entity_url(agent, merged_id))


@require_POST
@ui_page
def entity_merge(request, agent, entity_id: int):
    entity = or_404(selectors.entity_get, agent=agent, entity_id=entity_id)
    form = EntityMergeForm(request.POST, choices=ui_reads.entity_choices(agent=agent, exclude=entity))
    if not form.is_valid():
        messages.error(request, "Choose the entity to merge into this one.")
        return redirect(_entity_url(agent, entity_id))
    try:
        report = entity_services.entity_merge(agent=agent, survivor_id=entity.id, merged_id=form.cleaned_data["merged"],
                                              actor=actor_of(request), reason=form.cleaned_data["reason"])
        messages.success(request, f"Merged: {report.facts_moved} facts, {report.relationships_moved} relationships "
                                  f"and {report.aliases_moved} aliases moved here "
                                  f"({report.relationships_dropped} duplicate relationships dropped).")
    except DomainError as exc:
        messages.error(request, str(exc))
    return redirect(_entity_url(agent, entity_id))


@require_http_methods(["GET", "POST"])
@ui_page(operate=True)
def entity_forget(request, agent, entity_id: int):
    """GET: exactly what would be removed; POST with the box ticked: remove it."""
    preview = or_404(forget_services.entity_forget_preview, agent=agent, entity_id=entity_id)
    form = EntityForgetForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        report = forget_services.entity_forget(agent=agent, entity_id=entity_id, actor=actor_of(request),
                                               reason=form.cleaned_data["reason"])
        messages.success(request, f"Forgotten: {report.entities_deleted} entities, {report.facts_deleted} facts, "
                                  f"{report.relationships_deleted} relationships, {report.aliases_deleted} aliases; "
                                  f"{report.events_redacted} messages redacted. This is the erasure receipt.")
        return redirect("ui:erasure", agent.slug, report.receipt_id)
    return render_page(request, "dashboard/forget.html", {
        "entity": preview.entities[0] if preview.entities else None, "preview": preview, "form": form,
    }, agent=agent)

