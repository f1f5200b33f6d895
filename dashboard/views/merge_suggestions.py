"""Merge suggestions: what the merge_suggestions job found, merged or dismissed in one click."""

from __future__ import annotations

from django.contrib import messages
from django.shortcuts import redirect
from django.views.decorators.http import require_GET, require_POST

from dashboard import selectors as ui_reads
from dashboard.forms import MergeSuggestionDecisionForm
from dashboard.pages import actor_of, render_page, ui_page
from memories import selectors
from memories.errors import DomainError, NotFound
from memories.services import maintenance


def _suggestions(request, agent, *, notice: dict | None = None, status: int = 200):
    return render_page(request, "dashboard/merge_suggestions.html", {
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
