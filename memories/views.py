"""The UI pages of the memories app: agents overview, agent home, entity, fact chain, traces,
time travel, merge suggestions; and the operator actions, each a POST that calls one service as the logged-in user.
Every page is one URL: the full page, or its fragment for an htmx request (memories.ui)."""

from __future__ import annotations

from django.contrib import messages
from django.http import Http404
from django.shortcuts import redirect
from django.urls import reverse
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from memories import selectors
from memories import ui_selectors as ui_reads
from memories.errors import DomainError, NotFound
from memories.forms import (
    AliasAddForm,
    AliasRemoveForm,
    EntityForgetForm,
    EntityMergeForm,
    EntityUnmergeForm,
    FactCorrectForm,
    FactReinstateForm,
    FactRetractForm,
    MergeSuggestionDecisionForm,
)
from memories.models import RunKind, RunStatus
from memories.services import entities as entity_services
from memories.services import facts as fact_services
from memories.services import forget as forget_services
from memories.services import maintenance
from memories.ui import actor_of, render_page, ui_page
from memories.ui_charts import latency_chart, waterfall


def _or_404(fn, **kwargs):
    try:
        return fn(**kwargs)
    except NotFound as exc:
        raise Http404(str(exc)) from exc


@require_GET
@ui_page
def overview(request):
    series = ui_reads.latency_last_day()
    return render_page(request, "memories/overview.html", {
        "nav": "overview", "agents": ui_reads.agents_overview(), "runs": ui_reads.runs_recent(limit=15),
        "chart": latency_chart(series), "series": series,
    })


@require_GET
@ui_page
def agent_home(request, agent):
    q = request.GET.get("q", "")
    return render_page(request, "memories/agent_home.html", {
        "nav": "home", "q": q, "results": ui_reads.search(agent=agent, q=q, as_of=request.moment),
        "recent_facts": ui_reads.facts_recent(agent=agent), "audit": ui_reads.audit_recent(agent=agent),
        "runs": ui_reads.runs_recent(agent=agent, limit=8),
    }, agent=agent)


@require_GET
@ui_page
def entity_detail(request, agent, entity_id: int):
    entity = _or_404(selectors.entity_get, agent=agent, entity_id=entity_id)
    page = ui_reads.entity_page(agent=agent, entity=entity, as_of=request.moment)
    return render_page(request, "memories/entity.html", {
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
    entity = _or_404(selectors.entity_get, agent=agent, entity_id=entity_id)
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
    preview = _or_404(forget_services.entity_forget_preview, agent=agent, entity_id=entity_id)
    form = EntityForgetForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        report = forget_services.entity_forget(agent=agent, entity_id=entity_id, actor=actor_of(request),
                                        reason=form.cleaned_data["reason"])
        messages.success(request, f"Forgotten: {report.entities_deleted} entities, {report.facts_deleted} facts, "
                                  f"{report.relationships_deleted} relationships, {report.aliases_deleted} aliases; "
                                  f"{report.events_redacted} messages redacted.")
        return redirect("ui:agent_home", agent.slug)
    return render_page(request, "memories/forget.html", {
        "entity": preview.entities[0] if preview.entities else None, "preview": preview, "form": form,
    }, agent=agent)


@require_GET
@ui_page
def fact_detail(request, agent, fact_id: int):
    versions = _or_404(ui_reads.fact_chain, agent=agent, fact_id=fact_id)
    latest = versions[-1].fact
    return render_page(request, "memories/fact.html", {
        "versions": versions, "selected": fact_id, "latest": latest, "subject": latest.entity,
        "correct_form": FactCorrectForm(initial={"text": latest.text}), "retract_form": FactRetractForm(),
        "current": next((v.fact for v in versions if v.fact.is_active), None),
    }, agent=agent)


@require_POST
@ui_page
def fact_correct(request, agent, fact_id: int):
    form = FactCorrectForm(request.POST)
    if not form.is_valid():
        messages.error(request, "A correction needs the new text and a reason.")
        return redirect("ui:fact", agent.slug, fact_id)
    try:
        new = fact_services.fact_correct(agent=agent, fact_id=fact_id, text=form.cleaned_data["text"],
                                    reason=form.cleaned_data["reason"], actor=actor_of(request),
                                    valid_from=form.cleaned_data["valid_from"])
    except DomainError as exc:
        messages.error(request, str(exc))
        return redirect("ui:fact", agent.slug, fact_id)
    messages.success(request, f"Corrected: version {new.id} now supersedes version {fact_id}.")
    return redirect("ui:fact", agent.slug, new.id)


@require_POST
@ui_page
def fact_retract(request, agent, fact_id: int):
    form = FactRetractForm(request.POST)
    if not form.is_valid():
        messages.error(request, "A retraction needs a reason.")
        return redirect("ui:fact", agent.slug, fact_id)
    try:
        report = fact_services.fact_retract(agent=agent, fact_id=fact_id, reason=form.cleaned_data["reason"],
                                       actor=actor_of(request), reopen_previous=form.cleaned_data["reopen_previous"])
    except DomainError as exc:
        messages.error(request, str(exc))
        return redirect("ui:fact", agent.slug, fact_id)
    done = f"Retracted version {fact_id}; {report.relationships_closed} relationship(s) it evidenced closed too."
    if report.reinstated is not None:
        messages.success(request, f"{done} The version it replaced is current again as version {report.reinstated.id}.")
        return redirect("ui:fact", agent.slug, report.reinstated.id)
    messages.success(request, done)
    return redirect("ui:fact", agent.slug, fact_id)


@require_POST
@ui_page
def fact_reinstate(request, agent, fact_id: int):
    form = FactReinstateForm(request.POST)
    if not form.is_valid():
        messages.error(request, "A reinstatement needs a reason.")
        return redirect("ui:fact", agent.slug, fact_id)
    try:
        new = fact_services.fact_reinstate(agent=agent, fact_id=fact_id, reason=form.cleaned_data["reason"],
                                      actor=actor_of(request))
    except DomainError as exc:
        messages.error(request, str(exc))
        return redirect("ui:fact", agent.slug, fact_id)
    messages.success(request, f"Reinstated: version {new.id} states version {fact_id}'s text again and is current.")
    return redirect("ui:fact", agent.slug, new.id)


@require_GET
@ui_page
def traces(request, agent):
    kind, status = request.GET.get("kind", ""), request.GET.get("status", "")
    runs = selectors.runs_list(agent=agent).defer("result", "params").order_by("-created_at", "-id")
    if kind in RunKind.values:
        runs = runs.filter(kind=kind)
    if status in RunStatus.values:
        runs = runs.filter(status=status)
    return render_page(request, "memories/traces.html", {
        "nav": "traces", "runs": runs[:100], "kind": kind, "status": status,
        "kinds": RunKind.values, "statuses": RunStatus.values,
    }, agent=agent)


@require_GET
@ui_page
def trace_detail(request, agent, run_id: int):
    run = selectors.runs_with_steps(agent=agent).select_related("event").filter(pk=run_id).first()
    if run is None:
        raise Http404(f"no trace {run_id}")
    return render_page(request, "memories/trace.html", {
        "nav": "traces", "run": run, "rows": waterfall(list(run.steps.all())),
        "items": ui_reads.retrieval_items(agent=agent, run=run),
    }, agent=agent)


@require_GET
@ui_page
def time_travel(request, agent):
    """What the agent knew at `as_of` (its own clock; about the world at `valid_at`, by default
    the same moment) beside what it knows now."""
    moment = request.moment
    diff = None if moment.is_now else ui_reads.knowledge_diff(agent=agent, then=moment)
    return render_page(request, "memories/time_travel.html", {
        "nav": "time", "diff": diff, "moments": ui_reads.knowledge_moments(agent=agent), "with_valid_at": True,
    }, agent=agent)


# --- merge suggestions: what the merge_suggestions job found, merged or dismissed in one click ----

def _suggestions(request, agent, *, notice: dict | None = None, status: int = 200):
    return render_page(request, "memories/merge_suggestions.html", {
        "nav": "suggestions", "rows": ui_reads.merge_suggestions_open(agent=agent), "notice": notice,
    }, agent=agent, status=status)


@require_GET
@ui_page
def merge_suggestions(request, agent):
    return _suggestions(request, agent)


def _decided(request, agent, decide) -> object:
    """Run one decision (`decide(cleaned_data)` → the notice). For htmx the answer is the list
    again, with what happened, swapped in place; without it, a redirect back to the list. A
    suggestion of another agent or gone is a 404, a bad survivor a 400, one already decided (or
    whose entity was merged since) a 409: the list with the error, at that status (the page swaps
    it in: data-swap-errors)."""
    form = MergeSuggestionDecisionForm(request.POST)
    if not form.is_valid():
        return _suggestions(request, agent, notice={"level": "error", "text": "Which entity stays?"}, status=400)
    try:
        notice = decide(form.cleaned_data)
    except DomainError as exc:
        status = 404 if isinstance(exc, NotFound) else 400 if "survivor" in exc.extra else 409
        return _suggestions(request, agent, notice={"level": "error", "text": str(exc)}, status=status)
    if request.htmx:
        return _suggestions(request, agent, notice={"level": "success", **notice})
    messages.success(request, notice["text"])
    return redirect("ui:merge_suggestions", agent.slug)


@require_POST
@ui_page
def merge_suggestion_merge(request, agent, suggestion_id: int):
    """Merge the pair into the chosen entity (the service's choice when none is given), as the
    API's merge does: one `entity_merge` audit row with the user."""

    def merge(data):
        suggestion = maintenance.merge_suggestion_accept(
            agent=agent, suggestion_id=suggestion_id, actor=actor_of(request), survivor_id=data["survivor"],
            reason=data["reason"])
        pair = selectors.entities_list(agent=agent).in_bulk([suggestion.entity_a_id, suggestion.entity_b_id])
        merged = next(e for e in pair.values() if e.merged_into_id)
        survivor = pair[merged.merged_into_id]
        return {"text": f"Merged {merged.display_name} into {survivor.display_name}: its facts, relationships "
                        f"and aliases moved there (Unmerge on that page undoes it).", "entity": survivor}

    return _decided(request, agent, merge)


@require_POST
@ui_page
def merge_suggestion_dismiss(request, agent, suggestion_id: int):
    """The two are different: the pair is closed and never suggested again (audited)."""

    def dismiss(data):
        suggestion = maintenance.merge_suggestion_dismiss(agent=agent, suggestion_id=suggestion_id,
                                                          actor=actor_of(request), reason=data["reason"])
        pair = selectors.entities_list(agent=agent).in_bulk([suggestion.entity_a_id, suggestion.entity_b_id])
        a, b = pair[suggestion.entity_a_id], pair[suggestion.entity_b_id]
        return {"text": f"Dismissed: {a.display_name} and {b.display_name} stay apart and are not suggested again."}

    return _decided(request, agent, dismiss)
