"""The operator admin, through its own URLs: versioned rows are read-only and never deleted in
place; corrections go through the operator services, attributed to the logged-in user."""

from __future__ import annotations

import re
from datetime import UTC, datetime

import pytest
from django.test import Client

from memories.models import (
    Agent,
    AuditEntry,
    Entity,
    EntityAlias,
    Event,
    Fact,
    KeywordPosting,
    PipelineRun,
    Relationship,
)
from memories.services.entities import entity_get_or_create
from memories.services.facts import facts_access_fold, facts_mark_accessed
from memories.services.write import memory_write
from retrieval.services import memory_retrieve

pytestmark = pytest.mark.django_db

ACTOR = "user:olga"
GOOGLE, MICROSOFT = "Maya works at Google.", "Maya works at Microsoft."


@pytest.fixture
def site(db) -> Client:
    from django.contrib.auth import get_user_model

    user = get_user_model().objects.create_superuser("olga", "olga@example.com", "pw")
    client = Client()
    client.force_login(user)
    return client


def say(agent, text, when="2024-01-05T10:00:00"):
    return memory_write(agent=agent, message=text, speaker_name="Rafael",
                        occurred_at=datetime.fromisoformat(when).replace(tzinfo=UTC))


@pytest.fixture
def maya(agent):
    say(agent, GOOGLE)
    say(agent, "Clara works at Orion Tech.", "2024-01-06T10:00:00")
    return agent


def fact_about(agent, word) -> Fact:
    return Fact.objects.get(agent=agent, text__contains=word, valid_to__isnull=True, invalidated_at__isnull=True)


def admin_url(model, *parts) -> str:
    return f"/admin/memories/{model}/" + "".join(f"{p}/" for p in parts)


def found(agent, query) -> dict[int, str]:
    return {f.id: f.text for f in memory_retrieve(agent=agent, query=query, limit=20).facts}


def test_a_fact_is_shown_read_only_and_its_change_form_changes_nothing(maya, site):
    fact = fact_about(maya, "Google")
    page = site.get(admin_url("fact", fact.id, "change"))
    assert page.status_code == 200
    html = page.content.decode()
    assert fact.text in html and 'name="text"' not in html and "Correct…" in html and "Retract…" in html
    assert "Version chain" in html

    edit = site.post(admin_url("fact", fact.id, "change"), {"text": "Maya works at Microsoft", "confidence": 1})
    assert edit.status_code == 403
    fact.refresh_from_db()
    assert fact.text == "Maya works at Google" and fact.is_active
    assert site.get(admin_url("fact", "add")).status_code == 403
    assert not AuditEntry.objects.exists()


def test_a_facts_page_shows_the_retrievals_not_yet_added_to_its_access_count(maya, site):
    fact = fact_about(maya, "Google")
    for _ in range(3):
        facts_mark_accessed(agent=maya, fact_ids=[fact.id])
    assert "Retrievals not yet in access count" in site.get(admin_url("fact", fact.id, "change")).content.decode()
    assert _shown(site, fact, "retrievals_pending") == "3" and _shown(site, fact, "access_count") == "0"
    facts_access_fold(agent=maya)
    assert _shown(site, fact, "retrievals_pending") == "0" and _shown(site, fact, "access_count") == "3"


def _shown(site, fact, field: str) -> str:
    """The value a read-only field of the fact's change page shows."""
    html = site.get(admin_url("fact", fact.id, "change")).content.decode()
    found = re.search(rf'field-{field}\b.*?<div class="readonly">(.*?)</div>', html, re.S)
    return found.group(1).strip() if found else ""


@pytest.mark.parametrize("model", ["fact", "relationship", "entity", "entityalias", "event", "pipelinerun",
                                   "auditentry"])
def test_versioned_rows_and_logs_are_never_deleted_in_place(maya, site, model):
    AuditEntry.objects.create(agent=maya, actor="x", action="test", object_type="x", object_id="1")
    row = {"fact": Fact, "relationship": Relationship, "entity": Entity, "entityalias": EntityAlias,
           "event": Event, "pipelinerun": PipelineRun, "auditentry": AuditEntry}[model].objects.first()
    before = type(row).objects.count()
    assert site.get(admin_url(model, row.pk, "delete")).status_code == 403
    assert site.post(admin_url(model, row.pk, "delete"), {"post": "yes"}).status_code == 403
    changelist = site.get(admin_url(model))
    assert changelist.status_code == 200 and "delete_selected" not in changelist.content.decode()
    site.post(admin_url(model), {"action": "delete_selected", "_selected_action": [row.pk], "post": "yes"})
    assert type(row).objects.count() == before
    if model != "entity":  # an entity's description stays editable (through entity_describe)
        assert site.post(admin_url(model, row.pk, "change"), {}).status_code == 403


def test_agents_are_listed_with_their_counts_and_never_added_changed_or_deleted(maya, site):
    facts_before = Fact.objects.filter(agent=maya).count()
    index = site.get("/admin/").content.decode()
    assert admin_url("agent") in index and admin_url("agent", "add") not in index
    changelist = site.get(admin_url("agent"))
    html = changelist.content.decode()
    assert changelist.status_code == 200 and maya.slug in html
    assert admin_url("agent", "add") not in html and "delete_selected" not in html
    row = changelist.context["cl"].result_list.get(pk=maya.pk)
    assert (row.n_events, row.n_entities, row.n_facts_current) == (
        Event.objects.filter(agent=maya).count(),
        Entity.objects.filter(agent=maya, merged_into__isnull=True).count(),
        Fact.objects.filter(agent=maya, valid_to__isnull=True, invalidated_at__isnull=True).count())
    detail = site.get(admin_url("agent", maya.pk, "change"))
    assert detail.status_code == 200 and maya.name in detail.content.decode()
    assert 'name="name"' not in detail.content.decode()

    assert site.get(admin_url("agent", "add")).status_code == 403
    assert site.post(admin_url("agent", "add"), {"slug": "sneaky", "name": "Sneaky"}).status_code == 403
    assert site.post(admin_url("agent", maya.pk, "change"), {"slug": maya.slug, "name": "Renamed"}).status_code == 403
    assert site.get(admin_url("agent", maya.pk, "delete")).status_code == 403
    assert site.post(admin_url("agent", maya.pk, "delete"), {"post": "yes"}).status_code == 403
    site.post(admin_url("agent"), {"action": "delete_selected", "_selected_action": [maya.pk], "post": "yes"})
    assert list(Agent.objects.values_list("slug", "name")) == [(maya.slug, maya.name)]
    assert Fact.objects.filter(agent=maya).count() == facts_before and not AuditEntry.objects.exists()


def test_a_correction_through_the_admin_is_a_new_audited_version_with_fresh_search_data(maya, site, embedder):
    old = fact_about(maya, "Google")
    form = site.get(admin_url("fact", old.id, "correct"))
    assert form.status_code == 200 and "Maya works at Google" in form.content.decode()

    response = site.post(admin_url("fact", old.id, "correct"), {"text": MICROSOFT, "reason": "she moved"})
    new = Fact.objects.get(supersedes=old)
    assert response.status_code == 302 and response["Location"] == admin_url("fact", new.id, "change")
    old.refresh_from_db()
    assert old.text == "Maya works at Google" and not old.is_active and "she moved" in old.invalidation_reason
    assert new.text == MICROSOFT and new.is_active and new.entity_id == old.entity_id
    assert new.source_context == "operator" and new.speaker == ACTOR
    audit = AuditEntry.objects.get(action="fact_correct")
    assert (audit.actor, audit.reason, audit.object_id) == (ACTOR, "she moved", str(old.id))
    assert audit.after["id"] == new.id

    # the new version is searched by its own words and vector; the old row keeps its own
    postings = set(KeywordPosting.objects.filter(kind="fact", doc_id=new.id).values_list("term", flat=True))
    assert "microsoft" in postings and "googl" not in postings
    assert list(new.embedding) == pytest.approx(list(embedder.embed([MICROSOFT])[0]), abs=1e-5)
    microsoft = found(maya, "Who works at Microsoft?")
    assert microsoft.get(new.id) == MICROSOFT and old.id not in microsoft
    google = found(maya, "Who works at Google?")
    assert old.id not in google
    assert all(Fact.objects.get(pk=i).text == text for i, text in google.items())

    # the change page shows the chain; the closed version can no longer be corrected
    page = site.get(admin_url("fact", new.id, "change")).content.decode()
    assert "Maya works at Google" in page and MICROSOFT in page and "she moved" in page
    assert "Correct…" not in site.get(admin_url("fact", old.id, "change")).content.decode()
    again = site.post(admin_url("fact", old.id, "correct"), {"text": "Maya works at Apple."})
    assert again.status_code == 200 and f"the current version is {new.id}" in again.content.decode()
    assert Fact.objects.filter(agent=maya, text__contains="Apple").count() == 0


def test_retract_through_the_admin_page_and_the_list_action(maya, site):
    google, orion = fact_about(maya, "Google"), fact_about(maya, "Orion")
    response = site.post(admin_url("fact", google.id, "retract"), {"reason": "not true"})
    assert response.status_code == 302
    google.refresh_from_db()
    assert not google.is_active and "not true" in google.invalidation_reason
    entry = AuditEntry.objects.get(action="fact_retract", object_id=str(google.id))
    assert (entry.actor, entry.reason) == (ACTOR, "not true")

    confirm = site.post(admin_url("fact"), {"action": "retract_selected", "_selected_action": [orion.id]})
    assert confirm.status_code == 200 and "Orion Tech" in confirm.content.decode()
    orion.refresh_from_db()
    assert orion.is_active  # nothing happens before the reason form is submitted
    site.post(admin_url("fact"), {"action": "retract_selected", "_selected_action": [orion.id], "apply": "1",
                                  "reason": "wrong"})
    orion.refresh_from_db()
    assert not orion.is_active
    assert AuditEntry.objects.get(action="fact_retract", object_id=str(orion.id)).actor == ACTOR
    assert not Relationship.objects.current().filter(agent=maya, evidence_fact=orion).exists()


def test_a_closed_fact_offers_reinstate_which_makes_it_current_again(maya, site):
    google = fact_about(maya, "Google")
    assert "Reinstate…" not in site.get(admin_url("fact", google.id, "change")).content.decode()
    site.post(admin_url("fact", google.id, "correct"), {"text": GOOGLE.replace("Google", "Apple"), "reason": "x"})
    page = site.get(admin_url("fact", google.id, "change")).content.decode()
    assert "Reinstate…" in page and "Correct…" not in page
    form = site.get(admin_url("fact", google.id, "reinstate")).content.decode()
    assert "stops being believed" in form
    response = site.post(admin_url("fact", google.id, "reinstate"), {"reason": "it was Google after all"})
    new = fact_about(maya, "Maya works")
    assert response.status_code == 302 and response["Location"] == admin_url("fact", new.id, "change")
    assert new.text == google.text and new.id != google.id
    assert AuditEntry.objects.get(action="fact_reinstate").actor == ACTOR


def test_entity_identity_is_read_only_and_its_description_is_saved_through_the_service(maya, site):
    entity = fact_about(maya, "Google").entity
    aliases = list(EntityAlias.objects.filter(entity=entity))
    page = site.get(admin_url("entity", entity.id, "change")).content.decode()
    assert 'name="display_name"' not in page and 'name="importance"' in page and "Merge into…" in page
    response = site.post(admin_url("entity", entity.id, "change"), {
        "display_name": "Hacked", "type": "place", "key": "place:hacked", "merged_into": entity.id,
        "importance": "0.9", "profile_text": "Maya, an engineer.", "summary_text": "",
        "aliases-TOTAL_FORMS": len(aliases), "aliases-INITIAL_FORMS": len(aliases),
        **{f"aliases-{i}-id": a.id for i, a in enumerate(aliases)},
        **{f"aliases-{i}-alias": "hacked" for i in range(len(aliases))},
        **{f"aliases-{i}-DELETE": "on" for i in range(len(aliases))}})
    assert response.status_code == 302
    assert list(EntityAlias.objects.filter(entity=entity)) == aliases
    invalid = site.post(admin_url("entity", entity.id, "change"), {
        "importance": "7", "profile_text": "", "summary_text": "", "aliases-TOTAL_FORMS": 0,
        "aliases-INITIAL_FORMS": 0})
    assert invalid.status_code == 200 and "importance" in invalid.context["adminform"].form.errors
    entity.refresh_from_db()
    assert (entity.display_name, entity.type, entity.key) == ("Maya", "person", "person:maya")
    assert entity.importance == 0.9 and entity.profile_text == "Maya, an engineer."
    entry = AuditEntry.objects.get(action="entity_describe")
    assert entry.actor == ACTOR and entry.after == {"importance": 0.9, "profile_text": "Maya, an engineer."}
    assert site.get(admin_url("entity", "add")).status_code == 403

    site.post(admin_url("entity", entity.id, "alias"), {"alias": "Mayita"})
    assert EntityAlias.objects.filter(entity=entity, alias="mayita").exists()
    assert AuditEntry.objects.get(action="alias_add").actor == ACTOR


def test_merge_through_the_admin(maya, site, other_agent):
    survivor = fact_about(maya, "Google").entity
    duplicate = entity_get_or_create(agent=maya, name="Maya L.", entity_type="person")
    stranger = entity_get_or_create(agent=other_agent, name="Maya", entity_type="person")

    refused = site.post(admin_url("entity", duplicate.id, "merge"), {"target": stranger.id})
    assert refused.status_code == 200 and "not found" in refused.content.decode()
    response = site.post(admin_url("entity", duplicate.id, "merge"), {"target": survivor.id, "reason": "same"})
    assert response.status_code == 302 and response["Location"] == admin_url("entity", survivor.id, "change")
    duplicate.refresh_from_db()
    assert duplicate.merged_into_id == survivor.id
    entry = AuditEntry.objects.get(action="entity_merge")
    assert (entry.actor, entry.reason, entry.object_id) == (ACTOR, "same", str(survivor.id))


def test_forget_through_the_admin_lists_what_goes_and_needs_confirmation(maya, site):
    entity = fact_about(maya, "Google").entity
    page = site.get(admin_url("entity", entity.id, "forget"))
    assert page.status_code == 200
    html = page.content.decode()
    assert "Maya works at Google" in html and "Messages of others naming her, her names redacted: 1" in html
    assert "Shorter forms of her name" in html

    unconfirmed = site.post(admin_url("entity", entity.id, "forget"), {"reason": "asked to"})
    assert unconfirmed.status_code == 200 and Entity.objects.filter(pk=entity.id).exists()
    response = site.post(admin_url("entity", entity.id, "forget"), {"reason": "asked to", "confirm": "on"})
    assert response.status_code == 302
    assert not Entity.objects.filter(pk=entity.id).exists()
    assert not Fact.objects.filter(agent=maya, text__contains="Maya").exists()
    entry = AuditEntry.objects.get(action="entity_forget")
    assert entry.actor == ACTOR
    # then the erasure receipt, read-only
    assert response["Location"] == admin_url("erasurereceipt", entry.after["receipt"], "change")
    receipt = site.get(response["Location"]).content.decode()
    assert "memories_fact" in receipt and ACTOR in receipt and "Maya" not in receipt
    assert "Save" not in receipt and site.get(admin_url("erasurereceipt", "add")).status_code == 403


def test_staff_without_the_model_permissions_cannot_correct(maya):
    from django.contrib.auth import get_user_model
    from django.contrib.auth.models import Permission

    user = get_user_model().objects.create_user("viewer", password="pw", is_staff=True)
    user.user_permissions.add(*Permission.objects.filter(codename__in=["view_fact", "view_entity"]))
    client = Client()
    client.force_login(user)
    fact = fact_about(maya, "Google")
    assert client.get(admin_url("fact", fact.id, "change")).status_code == 200
    assert "Correct…" not in client.get(admin_url("fact", fact.id, "change")).content.decode()
    assert client.post(admin_url("fact", fact.id, "correct"), {"text": MICROSOFT}).status_code == 403
    assert client.post(admin_url("entity", fact.entity_id, "forget"), {"confirm": "on"}).status_code == 403
    assert fact_about(maya, "Google").id == fact.id and not AuditEntry.objects.exists()


def test_profile_seeding_goes_through_the_service_and_keeps_an_existing_profile(agent):
    from memories.services.entities import entity_profile_seed

    entity = entity_get_or_create(agent=agent, name="Nina", entity_type="person")
    assert entity_profile_seed(entity=entity, text="Nina likes tea.")
    entity.refresh_from_db()
    assert entity.profile_text == "Nina likes tea." and entity.profile_refreshed_at is not None
    stale = Entity.objects.get(pk=entity.pk)
    stale.profile_text = ""  # a caller that read the row before another writer seeded it
    assert not entity_profile_seed(entity=stale, text="Nina hates tea.")
    assert not entity_profile_seed(entity=entity, text="")
    entity.refresh_from_db()
    assert entity.profile_text == "Nina likes tea."


def test_an_agents_llm_budget_is_set_through_its_service_audited_and_validated(agent, site):
    page = site.get(admin_url("agent", agent.pk, "change")).content.decode()
    assert "Set LLM budget…" in page and "0 tokens (no budget)" in page
    form = site.get(admin_url("agent", agent.pk, "budget"))
    assert form.status_code == 200 and 'name="day_tokens"' in form.content.decode()

    refused = site.post(admin_url("agent", agent.pk, "budget"), {"day_tokens": "-5", "month_tokens": "1.5"})
    assert refused.status_code == 200 and "greater than or equal to 0" in refused.content.decode()
    agent.refresh_from_db()
    assert agent.llm_budget_day_tokens is None and not AuditEntry.objects.exists()

    saved = site.post(admin_url("agent", agent.pk, "budget"), {"day_tokens": "800", "month_tokens": "",
                                                               "reason": "pilot"})
    assert saved.status_code == 302 and saved["Location"] == admin_url("agent", agent.pk, "change")
    agent.refresh_from_db()
    assert (agent.llm_budget_day_tokens, agent.llm_budget_month_tokens) == (800, None)
    entry = AuditEntry.objects.get()
    assert (entry.actor, entry.action, entry.reason, entry.after) == (
        ACTOR, "agent_llm_budget", "pilot", {"day_tokens": 800, "month_tokens": None})
    listed = site.get(admin_url("agent")).content.decode()
    assert "0 of 800 tokens (the agent&#x27;s own)" in listed


def test_staff_without_the_agent_change_permission_cannot_set_a_budget(agent):
    from django.contrib.auth import get_user_model
    from django.contrib.auth.models import Permission

    user = get_user_model().objects.create_user("viewer", password="pw", is_staff=True)
    user.user_permissions.add(*Permission.objects.filter(codename="view_agent"))
    client = Client()
    client.force_login(user)
    assert "Set LLM budget…" not in client.get(admin_url("agent", agent.pk, "change")).content.decode()
    assert client.post(admin_url("agent", agent.pk, "budget"), {"day_tokens": "10"}).status_code == 403
    agent.refresh_from_db()
    assert agent.llm_budget_day_tokens is None and not AuditEntry.objects.exists()
