"""The merge suggestions page: the open suggestions of the agent in the URL with both entities,
the score and its evidence; Merge and Dismiss through the same services as the API, audited with
the user, answered in place for htmx; a suggestion of another agent, gone or already decided is
a 4xx."""

import pytest
from django.urls import reverse

from memories.jobs.runner import job_run
from memories.models import AuditEntry, Entity, MergeSuggestion
from memories.services.entities import entity_get_or_create
from memories.services.facts import fact_add


def duplicates(agent, embedder) -> dict[str, Entity]:
    """Two probable duplicates in the demo as the job finds them: a second, shorter Guilherme
    (with a fact of his own, sharing Rafael as a neighbour) and a second Clara."""
    from datetime import UTC, datetime

    from memories.models import Relationship

    made = {}
    for name in ("Guilherme", "Clara"):
        made[name] = entity_get_or_create(agent=agent, name=name, entity_type="person",
                                          name_embedding=embedder.embed([name])[0])
    at = datetime(2024, 6, 1, tzinfo=UTC)
    text = "Guilherme plays the saxophone"
    fact_add(agent=agent, entity=made["Guilherme"], text=text, embedding=embedder.embed([text])[0], valid_from=at)
    rafael = Entity.objects.get(agent=agent, key="person:rafael")
    Relationship.objects.create(agent=agent, source=rafael, target=made["Guilherme"], rel_type="friend_of",
                                valid_from=at, learned_at=at, recorded_at=at)
    job_run(name="merge_suggestions", agent=agent)
    return made


def suggestion_of(agent, name) -> MergeSuggestion:
    return MergeSuggestion.objects.get(agent=agent, entity_b__display_name=name)


@pytest.fixture
def suggested(demo, embedder):
    return duplicates(demo, embedder)


def url(name, *args):
    return reverse(f"ui:{name}", args=["demo", *args])


def test_the_page_lists_the_open_suggestions_with_their_evidence(viewer_client, demo, suggested):
    page = url("merge_suggestions")
    response = viewer_client.get(page)
    assert response.status_code == 200 and b'class="sidebar"' in response.content
    rows = response.context["rows"]
    assert {(r.a.entity.display_name, r.b.entity.display_name) for r in rows} == {
        ("Guilherme Maturana", "Guilherme"), ("Clara Rezende", "Clara")}
    guili = next(r for r in rows if r.b.entity.display_name == "Guilherme")
    assert guili.suggestion.reasons["names"] == 1.0 and [e.display_name for e in guili.shared] == ["Rafael"]
    # the survivor offered is the one with more current facts (the short one has 1, the long one more)
    assert guili.survivor_id == guili.a.entity.id and guili.a.facts > guili.b.facts == 1
    html = response.content.decode()
    for entity in (guili.a.entity, guili.b.entity):
        assert url("entity", entity.id) in html
    assert "shared neighbours" in html and f'{guili.suggestion.score:.2f}' in html
    assert 'aria-current="page">Merge suggestions' in html
    assert "/dismiss/" not in html and ">Merge</button>" not in html  # a viewer sees, does not decide
    fragment = viewer_client.get(page, HTTP_HX_REQUEST="true")
    assert fragment.status_code == 200 and b"<html" not in fragment.content and b"Guilherme" in fragment.content
    for name in ("merge_suggestion_merge", "merge_suggestion_dismiss"):
        assert viewer_client.post(url(name, guili.suggestion.id)).status_code == 403
    assert MergeSuggestion.objects.filter(agent=demo, status="open").count() == 2


def test_merge_keeps_the_chosen_entity_and_answers_htmx_in_place(operator_client, demo, suggested):
    suggestion = suggestion_of(demo, "Guilherme")
    short = suggested["Guilherme"]
    response = operator_client.post(url("merge_suggestion_merge", suggestion.id), {"survivor": short.id},
                                    HTTP_HX_REQUEST="true")
    assert response.status_code == 200 and b"<html" not in response.content
    assert "Merged Guilherme Maturana into Guilherme" in response.content.decode()
    assert [r.b.entity.display_name for r in response.context["rows"]] == ["Clara"]
    assert Entity.objects.get(key="person:guilherme_maturana", agent=demo).merged_into_id == short.id
    suggestion.refresh_from_db()
    assert (suggestion.status, suggestion.decided_by) == ("merged", "user:otto")
    audit = AuditEntry.objects.get(action="entity_merge")
    assert audit.actor == "user:otto" and audit.reason == f"merge suggestion {suggestion.id}"
    # decided already: 409, nothing changes
    again = operator_client.post(url("merge_suggestion_merge", suggestion.id), HTTP_HX_REQUEST="true")
    assert again.status_code == 409 and b"already merged" in again.content
    assert AuditEntry.objects.filter(action="entity_merge").count() == 1


def test_merge_without_a_choice_keeps_the_one_with_more_facts_and_redirects_without_htmx(operator_client, demo,
                                                                                       suggested):
    suggestion = suggestion_of(demo, "Guilherme")
    response = operator_client.post(url("merge_suggestion_merge", suggestion.id))
    assert response.status_code == 302 and response["Location"] == url("merge_suggestions")
    assert Entity.objects.get(pk=suggested["Guilherme"].pk).merged_into.key == "person:guilherme_maturana"
    assert b"Merged Guilherme into Guilherme Maturana" in operator_client.get(response["Location"]).content


def test_dismiss_closes_the_pair_for_good_and_is_audited(operator_client, demo, suggested):
    suggestion = suggestion_of(demo, "Clara")
    response = operator_client.post(url("merge_suggestion_dismiss", suggestion.id), HTTP_HX_REQUEST="true")
    assert response.status_code == 200 and b"Dismissed: Clara Rezende and Clara stay apart" in response.content
    assert [r.b.entity.display_name for r in response.context["rows"]] == ["Guilherme"]
    suggestion.refresh_from_db()
    assert suggestion.status == "dismissed"
    assert AuditEntry.objects.get(action="merge_suggestion_dismiss").actor == "user:otto"
    job_run(name="merge_suggestions", agent=demo)  # not suggested again
    assert MergeSuggestion.objects.get(pk=suggestion.pk).status == "dismissed"
    assert Entity.objects.get(pk=suggested["Clara"].pk).merged_into_id is None
    for name in ("merge_suggestion_dismiss", "merge_suggestion_merge"):  # already dismissed: 409
        done = operator_client.post(url(name, suggestion.id))
        assert done.status_code == 409 and b"already dismissed" in done.content and b"<html" in done.content


def test_a_foreign_gone_or_bad_suggestion_is_a_4xx_and_changes_nothing(operator_client, demo, suggested, embedder):
    from memories.services.agents import agent_get_or_create

    other = agent_get_or_create(slug="other", name="Other")
    for name in ("Marta Lima", "Marta"):
        entity_get_or_create(agent=other, name=name, entity_type="person", name_embedding=embedder.embed([name])[0])
    job_run(name="merge_suggestions", agent=other)
    foreign = MergeSuggestion.objects.get(agent=other)
    for name in ("merge_suggestion_merge", "merge_suggestion_dismiss"):
        assert operator_client.post(url(name, foreign.id)).status_code == 404
        assert operator_client.post(url(name, foreign.id), HTTP_HX_REQUEST="true").status_code == 404
        assert operator_client.post(url(name, 999999)).status_code == 404
    assert MergeSuggestion.objects.get(pk=foreign.pk).status == "open"
    suggestion = suggestion_of(demo, "Guilherme")
    third = Entity.objects.get(agent=demo, key="person:ana")
    bad = operator_client.post(url("merge_suggestion_merge", suggestion.id), {"survivor": third.id})
    assert bad.status_code == 400 and b"survivor must be one of the two" in bad.content
    assert operator_client.post(url("merge_suggestion_merge", suggestion.id), {"survivor": "x"}).status_code == 400
    assert operator_client.get(url("merge_suggestion_merge", suggestion.id)).status_code == 405
    assert set(MergeSuggestion.objects.filter(agent=demo).values_list("status", flat=True)) == {"open"}
    assert not AuditEntry.objects.exists()


def test_a_pair_left_moot_by_another_merge_is_not_offered(operator_client, demo, suggested):
    short = suggested["Guilherme"]
    maturana = Entity.objects.get(agent=demo, key="person:guilherme_maturana")
    operator_client.post(reverse("ui:entity_merge", args=["demo", maturana.id]), {"merged": short.id})
    rows = operator_client.get(url("merge_suggestions")).context["rows"]
    assert [r.b.entity.display_name for r in rows] == ["Clara"]
