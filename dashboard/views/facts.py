"""A fact's version chain and its operator actions: correct, retract, reinstate."""

from __future__ import annotations

from django.contrib import messages
from django.shortcuts import redirect
from django.views.decorators.http import require_GET, require_POST

from dashboard import selectors as ui_reads
from dashboard.forms import FactCorrectForm, FactReinstateForm, FactRetractForm
from dashboard.pages import actor_of, or_404, render_page, ui_page
from memories.errors import DomainError
from memories.services import facts as fact_services


@require_GET
@ui_page
def fact_detail(request, agent, fact_id: int):
    versions = or_404(ui_reads.fact_chain, agent=agent, fact_id=fact_id)
    latest = versions[-1].fact
    return render_page(request, "dashboard/fact.html", {
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
                                            actor=actor_of(request),
                                            reopen_previous=form.cleaned_data["reopen_previous"])
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

