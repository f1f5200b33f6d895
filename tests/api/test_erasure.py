"""Forget finishes the job, and leaves a receipt.

One person, Ilse Brandt, told about in every way people write about someone: her full name, a
nickname ("Ilsi"), a title ("Frau Brandt"), an initial ("I. Brandt"), the family name alone; her
own messages (with a phone number, an external id and an idempotency key); another message whose
external id names her; a duplicate of her merged into her. Then an operator forgets her. Nothing
of her names, keys, ids or number is readable anywhere afterwards — database, API, pages, admin —
the receipt counts what went and holds nothing of her, a retry of her request is still a replay,
and a message sent after the forget starts afresh instead of joining a leftover of her.
"""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime

import pytest
from django.contrib.auth.models import User
from django.test import Client
from django.urls import reverse

from memories.models import (
    AuditEntry,
    Entity,
    EntityAlias,
    ErasureReceipt,
    Event,
    Fact,
    PipelineRun,
    Relationship,
)
from memories.services.entities import entity_alias_add
from memories.services.write import event_process, memory_write
from retrieval.services import memory_retrieve
from tests.api.conftest import url
from tests.api.test_forget import database_mentions, pg_words

pytestmark = pytest.mark.django_db

HER = re.compile(r"(?<![^\W_])(ilse|brandt|ilsi)(?![^\W_])", re.IGNORECASE)
HER_WORDS = pg_words("ilse", "brandt", "ilsi")
# her request keys, her phone numbers, the employer only her own message named
HER_DATA = ("note-ilse-brandt-1", "idem-ilse-brandt-1", "chat-ilse-brandt-2", "1701234567", "170 1234567",
            "0151 2345678", "nordbank")
HER_DATA_RE = re.compile("|".join(re.escape(d) for d in HER_DATA), re.IGNORECASE)
OWN_MESSAGE = {"speaker": "Ilse Brandt", "text": "My phone number is +49 170 1234567. I work at Nordbank.",
               "external_id": "note-ilse-brandt-1"}


def say(agent, text, day, speaker="Rafael"):
    return memory_write(agent=agent, message=text, speaker_name=speaker,
                        occurred_at=datetime(2024, 3, day, 10, tzinfo=UTC))


def readable(payload) -> list[str]:
    text = payload if isinstance(payload, str) else json.dumps(payload, ensure_ascii=False)
    return HER.findall(text) + HER_DATA_RE.findall(text)


@pytest.fixture
def ilse(agent, make_key, client_for):
    """The story, told through the write pipeline and the API; returns (agent, her entity, admin API)."""
    api = client_for(make_key(agent, "admin"))
    say(agent, "Ilse Brandt moved to Hamburg.", 1)
    her = Entity.objects.filter(agent=agent, display_name="Ilse Brandt").get()
    entity_alias_add(agent=agent, entity_id=her.id, alias="Ilsi", actor="key:test")
    say(agent, "Frau Brandt called about the rent.", 2)
    say(agent, "I. Brandt signed the lease on Monday.", 3)
    say(agent, "Brandt is a careful landlord.", 4)
    say(agent, "Ilsi loves sailing. Her number is 0151 2345678.", 5)
    say(agent, "Bruno lives in Porto.", 6)
    answer = api.post(url(agent, "events"), OWN_MESSAGE, format="json", HTTP_IDEMPOTENCY_KEY="idem-ilse-brandt-1")
    assert answer.status_code == 202, answer.content
    event_process(run_id=answer.json()["job"]["id"])
    other = api.post(url(agent, "events"), {"speaker": "Rafael", "text": "Marta plays chess on Sundays.",
                                            "external_id": "chat-ilse-brandt-2"}, format="json")
    event_process(run_id=other.json()["job"]["id"])
    frau = Entity.objects.get(agent=agent, display_name="Frau Brandt")
    merged = api.post(url(agent, "entities", her.id, "merge"), {"entity_id": frau.id, "reason": "same person"},
                      format="json")
    assert merged.status_code == 200, merged.content
    memory_retrieve(agent=agent, query="Where does Ilse Brandt live?", limit=5)
    memory_retrieve(agent=agent, query="Who signed the lease?", limit=5)
    return agent, her, api


def test_the_story_is_stored_with_her_everywhere_before_the_forget(ilse):
    """The scans below find her before the forget: they would see her if she were left."""
    found = "\n".join(database_mentions(HER_WORDS, HER_DATA))
    for where in ("memories_entity.key", "memories_pipelinestep.data", "memories_pipelinerun.result",
                  "memories_event.external_id", "memories_event.idempotency_key", "memories_auditentry.after",
                  "memories_fact.text", "memories_keywordposting.term"):
        assert where in found, where
    assert "_brandt" in found and "1701234567" in found.replace(" ", "")


def test_forget_leaves_nothing_of_her_and_a_receipt_with_nothing_of_her(ilse, admin_user):
    agent, her, api = ilse
    counts = {model: model.objects.filter(agent=agent).count()
              for model in (Fact, Entity, EntityAlias, Relationship)}
    preview = api.get(url(agent, "entities", her.id, "forget"))
    assert preview.status_code == 200
    forms = {f["kind"]: f for f in preview.json()["name_forms"]}
    assert {f["action"] for f in forms.values()} == {"redacted"}  # nobody else is a Brandt or an Ilse
    assert forms["initial and family name"]["form"] == "I. Brandt"
    gone_ids = {e["id"] for e in preview.json()["entities"]}

    answer = api.post(url(agent, "entities", her.id, "forget"), {"reason": "Ilse asked us to"}, format="json")
    assert answer.status_code == 200, answer.content
    report = answer.json()

    # 1. her entities' keys are opaque wherever they were stored
    assert report["opaque_key"] == f"{her.type}:forgotten-{her.id}"
    assert database_mentions(HER_WORDS, HER_DATA) == []
    steps = json.dumps(list(PipelineRun.objects.filter(agent=agent).values("result", "params")))
    assert f"forgotten-{her.id}" in steps + json.dumps(list(AuditEntry.objects.values("before", "after")))
    # 2. her request keys are digests
    own = Event.objects.get(agent=agent, speaker="[redacted]")
    assert own.external_id.startswith("redacted:") and own.idempotency_key.startswith("redacted:")
    # 3. the unlinked forms went with her: every entity of the preview, and the texts
    assert not Entity.objects.filter(id__in=gone_ids).exists()
    texts = set(Event.objects.filter(agent=agent).values_list("text", flat=True))
    assert {"[redacted] signed the lease on Monday.", "[redacted] is a careful landlord.",
            "[redacted] loves sailing. Her number is [redacted]."} <= texts
    # 4. nothing derived from her own message is left (the number, her employer)
    assert not Fact.objects.filter(agent=agent, source_event=own).exists()
    assert not Entity.objects.filter(agent=agent, key__contains="nordbank").exists()
    # other people's facts about others stay
    assert Fact.objects.filter(agent=agent, text__contains="Bruno lives in Porto").exists()
    assert Fact.objects.filter(agent=agent, text__contains="Marta plays chess").exists()

    # 6. the receipt: stored, linked, counts that match the rows that went, nothing of her
    receipt = ErasureReceipt.objects.get(pk=report["receipt"]["id"])
    assert report["receipt_url"].endswith(url(agent, "erasures", receipt.id))
    assert receipt.tables == report["tables"] and receipt.actor.startswith("key:") and receipt.reason_given
    assert receipt.opaque_key == report["opaque_key"] and receipt.created_at is not None
    after = {model: model.objects.filter(agent=agent).count() for model in counts}
    tables = report["tables"]
    assert counts[Fact] - after[Fact] == tables["memories_fact"]["deleted"] == report["facts_deleted"]
    assert counts[Entity] - after[Entity] == sum(tables["memories_entity"].get(k, 0) for k in (
        "deleted", "deleted_with_her_messages"))
    assert counts[EntityAlias] - after[EntityAlias] == tables["memories_entityalias"]["deleted"]
    assert counts[Relationship] - after[Relationship] == tables["memories_relationship"]["deleted"]
    assert tables["memories_event"]["redacted"] == Event.objects.filter(agent=agent, redacted_at__isnull=False).count()
    assert tables["memories_event"]["request_keys_redacted"] == 3  # her external id and key, the other's id
    assert tables["memories_entitymerge"]["deleted"] == 1
    for path in (url(agent, "erasures"), url(agent, "erasures", receipt.id)):
        shown = api.get(path)
        assert shown.status_code == 200 and not readable(shown.json()), path
    assert not readable([receipt.tables, receipt.totals, receipt.name_forms, receipt.opaque_keys, receipt.actor])
    entry = AuditEntry.objects.get(agent=agent, action="entity_forget")
    assert entry.after["receipt"] == receipt.id and entry.reason == "[redacted]"

    # 7. the pages and the admin, every API surface (last: a question naming her is new information,
    # its own trace keeps it)
    _assert_pages_show_nothing_of_her(agent, admin_user, receipt)
    _assert_api_shows_nothing_of_her(api, agent)


def _assert_api_shows_nothing_of_her(api, agent):
    pages = [url(agent, "events"), url(agent, "jobs"), url(agent, "traces"), url(agent, "facts")
             + "?include_superseded=true", url(agent, "entities") + "?include_merged=true",
             url(agent, "relationships") + "?include_superseded=true", url(agent, "graph"), url(agent, "erasures"),
             url(agent, "merge-suggestions"), url(agent, "events") + "?external_id=note-ilse-brandt-1"]
    runs = PipelineRun.objects.filter(agent=agent)
    pages += [url(agent, "traces", r.id) for r in runs]
    pages += [url(agent, "jobs", r.id) for r in runs.filter(kind="write")]
    pages += [url(agent, "entities", e) for e in Entity.objects.filter(agent=agent).values_list("id", flat=True)]
    for page in pages:
        answer = api.get(page)
        assert answer.status_code == 200, page
        assert not readable(answer.json()), (page, readable(answer.json()))
    assert api.get(url(agent, "events") + "?external_id=note-ilse-brandt-1").json()["results"] == []
    for query in ("Where does Ilse Brandt live?", "Who signed the lease?", "What is Ilsi's phone number?"):
        found = api.post(url(agent, "retrieve"), {"query": query}, format="json").json()
        assert not readable({k: found[k] for k in ("context", "facts", "events")}), query


def _assert_pages_show_nothing_of_her(agent, admin_user, receipt):
    from django.contrib import admin

    site = Client()
    site.force_login(admin_user)
    slug = agent.slug
    pages = [reverse("ui:agent_home", args=[slug]), reverse("ui:agent_home", args=[slug]) + "?q=lease",
             reverse("ui:traces", args=[slug]), reverse("ui:erasures", args=[slug]),
             reverse("ui:erasure", args=[slug, receipt.id]),
             reverse("ui:ask", args=[slug]) + "?q=Who+signed+the+lease%3F",
             reverse("ui:time_travel", args=[slug]) + "?as_of=2024-03-02", reverse("ui:graph", args=[slug])]
    pages += [reverse("ui:trace", args=[slug, r]) for r in PipelineRun.objects.filter(agent=agent).values_list(
        "id", flat=True)]
    pages += [reverse("ui:entity", args=[slug, e]) for e in Entity.objects.filter(agent=agent).values_list(
        "id", flat=True)]
    for model in admin.site._registry:
        base = f"/admin/{model._meta.app_label}/{model._meta.model_name}/"
        pages += [base] + [f"{base}{pk}/change/" for pk in model.objects.values_list("pk", flat=True)[:40]]
    for page in pages:
        answer = site.get(page)
        assert answer.status_code in (200, 302), page
        assert not readable(answer.content.decode()), (page, readable(answer.content.decode()))


def test_a_retry_of_her_request_after_the_forget_is_still_a_replay(ilse):
    agent, her, api = ilse
    job = PipelineRun.objects.get(agent=agent, event__external_id="note-ilse-brandt-1")
    assert api.post(url(agent, "entities", her.id, "forget"), {}, format="json").status_code == 200
    events = Event.objects.filter(agent=agent).count()
    again = api.post(url(agent, "events"), OWN_MESSAGE, format="json", HTTP_IDEMPOTENCY_KEY="idem-ilse-brandt-1")
    assert again.status_code == 202 and again["Idempotent-Replayed"] == "true"
    assert again.json()["job"]["id"] == job.id and not readable(again.json())
    by_external_id = api.post(url(agent, "events"), OWN_MESSAGE, format="json")
    assert by_external_id["Idempotent-Replayed"] == "true" and by_external_id.json()["job"]["id"] == job.id
    other = api.post(url(agent, "events"), {**OWN_MESSAGE, "text": "Something else."}, format="json",
                     HTTP_IDEMPOTENCY_KEY="idem-ilse-brandt-1")
    assert other.status_code == 422 and other.json()["error"]["code"] == "idempotency_conflict"
    assert Event.objects.filter(agent=agent).count() == events
    assert database_mentions(HER_WORDS, HER_DATA) == []


def test_a_message_after_the_forget_does_not_join_a_leftover_of_her(ilse):
    agent, her, api = ilse
    before = set(Entity.objects.filter(agent=agent).values_list("id", flat=True))
    api.post(url(agent, "entities", her.id, "forget"), {}, format="json")
    for text in ("Frau Brandt sent the keys.", "Brandt fixed the heating."):
        result = say(agent, text, 20)
        touched = {e["id"] for e in result.entities_resolved if "brandt" in e["key"]}
        assert touched and not touched & before, text  # a new entity, not one she left behind
        for entity_id in touched:
            assert set(Fact.objects.filter(entity_id=entity_id).values_list("source_event__text", flat=True)) <= {
                "Frau Brandt sent the keys.", "Brandt fixed the heating."}


def test_another_known_brandt_keeps_the_forms_they_share(agent, make_key, client_for):
    """Klaus Brandt is known too: "Herr Brandt" and "Brandt" alone could be either of them, so they
    stay (the preview says why); "I. Brandt" can only be her and goes; Klaus keeps all of his."""
    api = client_for(make_key(agent, "admin"))
    say(agent, "Ilse Brandt moved to Hamburg.", 1)
    say(agent, "Klaus Brandt works at the harbour office.", 2)
    say(agent, "Herr Brandt called about the boat.", 3)
    say(agent, "I. Brandt signed the lease on Monday.", 4)
    her = Entity.objects.filter(agent=agent, display_name="Ilse Brandt").get()
    klaus = Entity.objects.get(agent=agent, display_name="Klaus Brandt")
    preview = api.get(url(agent, "entities", her.id, "forget")).json()
    forms = {f["kind"]: f for f in preview["name_forms"]}
    assert forms["family name"]["action"] == "kept" and forms["family name"]["could_also_mean"] == ["Klaus Brandt"]
    assert forms["title and family name"]["action"] == "kept"
    assert "could also mean Klaus Brandt" in forms["title and family name"]["reason"]
    assert forms["initial and family name"]["action"] == "redacted"
    assert klaus.id not in {e["id"] for e in preview["entities"]}

    report = api.post(url(agent, "entities", her.id, "forget"), {}, format="json").json()
    assert report["receipt"]["name_forms"]["family name"] == "kept"
    texts = set(Event.objects.filter(agent=agent).values_list("text", flat=True))
    assert {"Klaus Brandt works at the harbour office.", "Herr Brandt called about the boat.",
            "[redacted] signed the lease on Monday."} <= texts
    assert Entity.objects.filter(pk=klaus.pk).exists()
    assert Fact.objects.filter(agent=agent, entity=klaus, text__contains="harbour").exists()
    assert database_mentions(pg_words("ilse")) == []


def _change_in_the_admin(site, entity) -> None:
    """An operator edits the entity's importance in the admin: the admin log keeps a row naming it."""
    changed = site.post(f"/admin/memories/entity/{entity.id}/change/", {
        "importance": "0.9", "profile_text": "", "summary_text": "", "aliases-TOTAL_FORMS": 0,
        "aliases-INITIAL_FORMS": 0})
    assert changed.status_code == 302, changed.content[:500]


def test_the_forget_redacts_only_its_own_agents_rows_of_the_admin_log(agent, other_agent, make_key, client_for,
                                                                       admin_user):
    """Another agent's Klaus Brandt, edited in the admin too, keeps his admin-log row as it was,
    and the receipt counts only the rows of the agent that forgot."""
    from django.contrib.admin.models import LogEntry

    api = client_for(make_key(agent, "admin"))
    say(agent, "Ilse Brandt moved to Hamburg.", 1)
    say(other_agent, "Klaus Brandt works at the harbour office.", 2)
    her = Entity.objects.get(agent=agent, display_name="Ilse Brandt")
    klaus = Entity.objects.get(agent=other_agent, display_name="Klaus Brandt")
    site = Client()
    site.force_login(admin_user)
    for entity in (her, klaus):
        _change_in_the_admin(site, entity)
    theirs = {row.pk: (row.object_repr, row.change_message) for row in LogEntry.objects.filter(
        object_id=str(klaus.id), content_type__model="entity")}
    assert theirs and all("Klaus Brandt" in shown for shown, _ in theirs.values())

    report = api.post(url(agent, "entities", her.id, "forget"), {}, format="json").json()

    assert report["tables"]["django_admin_log"] == {"redacted": 1}
    assert {row.pk: (row.object_repr, row.change_message) for row in LogEntry.objects.filter(
        pk__in=theirs)} == theirs
    hers = LogEntry.objects.get(object_id=str(her.id), content_type__model="entity")
    assert hers.object_repr == f"[redacted] ({report['opaque_key']})"
    assert database_mentions(pg_words("ilse")) == []


def test_the_receipts_need_the_admin_scope(ilse, make_key, client_for, other_agent):
    agent, her, api = ilse
    receipt_id = api.post(url(agent, "entities", her.id, "forget"), {}, format="json").json()["receipt"]["id"]
    for scope in ("read", "write"):
        client = client_for(make_key(agent, scope))
        assert client.get(url(agent, "erasures")).status_code == 403
        assert client.get(url(agent, "erasures", receipt_id)).status_code == 403
        assert client.get(url(agent, "entities", 1, "forget")).status_code == 403
    stranger = client_for(make_key(other_agent, "admin"))
    assert stranger.get(url(agent, "erasures", receipt_id)).status_code == 404
    assert client_for(make_key(other_agent, "admin")).get(url(other_agent, "erasures", receipt_id)).status_code == 404


def test_the_receipt_and_the_preview_are_in_the_openapi_schema(admin_api):
    schema = admin_api.get("/api/v1/schema/?format=json").json()
    paths = schema["paths"]
    assert "get" in paths["/api/v1/agents/{agent}/erasures/"]
    assert "get" in paths["/api/v1/agents/{agent}/erasures/{id}/"]
    forget = paths["/api/v1/agents/{agent}/entities/{id}/forget/"]
    assert "get" in forget and "post" in forget
    report = schema["components"]["schemas"]["ForgetReport"]["properties"]
    assert {"receipt", "receipt_url", "opaque_key", "request_keys_redacted"} <= set(report)


def test_a_receipt_page_is_for_operators(ilse, client):
    agent, her, api = ilse
    receipt_id = api.post(url(agent, "entities", her.id, "forget"), {}, format="json").json()["receipt"]["id"]
    viewer = User.objects.create_user("vic", password="pw")
    from django.contrib.auth.models import Group

    viewer.groups.add(Group.objects.get(name="viewers"))
    client.force_login(viewer)
    assert client.get(reverse("ui:erasure", args=[agent.slug, receipt_id])).status_code == 403
    assert client.get(reverse("ui:erasures", args=[agent.slug])).status_code == 403


@pytest.mark.django_db(transaction=True)
def test_the_touched_tables_are_vacuumed_once_the_forget_commits(agent):
    from django.db import connection

    from memories.services.forget import entity_forget

    say(agent, "Ilse Brandt moved to Hamburg.", 1)
    say(agent, "Frau Brandt called about the rent.", 2)
    her = Entity.objects.filter(agent=agent, display_name="Ilse Brandt").get()
    report = entity_forget(agent=agent, entity_id=her.id, actor="user:dpo")
    receipt = ErasureReceipt.objects.get(pk=report.receipt_id)
    assert receipt.vacuumed_at is not None and receipt.vacuum_error == "", receipt.vacuum_error
    assert {"memories_event", "memories_fact", "memories_entity", "memories_pipelinestep",
            "memories_keywordposting"} <= set(receipt.vacuum_tables)
    with connection.cursor() as cursor:
        cursor.execute("SELECT relname, last_vacuum FROM pg_stat_user_tables WHERE relname = ANY(%s)",
                       [receipt.vacuum_tables])
        vacuumed = dict(cursor.fetchall())
    assert set(vacuumed) == set(receipt.vacuum_tables)
    assert all(when is not None and when >= receipt.created_at for when in vacuumed.values()), vacuumed


def test_a_vacuum_that_cannot_run_is_recorded_and_logged_never_raised(agent, caplog,
                                                                     django_capture_on_commit_callbacks):
    """Inside a transaction (here: the test's) VACUUM cannot run: the forget stands, the receipt
    says why the tables were not vacuumed."""
    from memories.services.forget import entity_forget

    say(agent, "Ilse Brandt moved to Hamburg.", 1)
    her = Entity.objects.filter(agent=agent, display_name="Ilse Brandt").get()
    with django_capture_on_commit_callbacks(execute=True):
        report = entity_forget(agent=agent, entity_id=her.id, actor="user:dpo")
    receipt = ErasureReceipt.objects.get(pk=report.receipt_id)
    assert receipt.vacuumed_at is None and "inside a transaction" in receipt.vacuum_error
    assert "not vacuumed" in caplog.text and not Entity.objects.filter(pk=her.pk).exists()


@pytest.fixture
def vacuum_sent(settings, monkeypatch):
    """The vacuum takes the worker's path (the tests otherwise run it in their own process right
    after the commit); what is sent to the broker is recorded instead of queued."""
    from celery import current_app

    from memories.services import broker

    settings.ANAMNESIS_ERASURE_VACUUM_INLINE = False
    monkeypatch.setattr(broker, "_broker_down_until", 0.0)
    sent = []
    monkeypatch.setattr(current_app, "send_task", lambda name, args, **kwargs: sent.append((name, args)))
    return sent


def test_the_forget_sends_its_vacuum_to_a_worker_instead_of_running_it_in_the_request(
        ilse, vacuum_sent, django_capture_on_commit_callbacks, admin_user):
    """VACUUM reads every index of tables every agent shares: the forget's request does not wait
    for it. The receipt says "pending" until a worker has run it."""
    from memories.services.erasures import ERASURE_VACUUM_TASK

    agent, her, api = ilse
    with django_capture_on_commit_callbacks(execute=True):
        answer = api.post(url(agent, "entities", her.id, "forget"), {}, format="json")
    assert answer.status_code == 200, answer.content
    receipt_id = answer.json()["receipt"]["id"]
    assert vacuum_sent == [(ERASURE_VACUUM_TASK, [receipt_id])]
    vacuum = api.get(url(agent, "erasures", receipt_id)).json()["vacuum"]
    assert (vacuum["status"], vacuum["vacuumed_at"], vacuum["error"]) == ("pending", None, "")
    site = Client()
    site.force_login(admin_user)
    page = site.get(reverse("ui:erasure", args=[agent.slug, receipt_id])).content.decode()
    assert "pending: a worker vacuums the" in page


@pytest.mark.django_db(transaction=True)
def test_the_worker_vacuums_the_touched_tables_once_and_records_it_on_the_receipt(agent, vacuum_sent):
    from celery import current_app
    from django.db import connection

    from memories import tasks  # noqa: F401  (registers the worker's tasks in this process)
    from memories.services.forget import entity_forget

    say(agent, "Ilse Brandt moved to Hamburg.", 1)
    her = Entity.objects.filter(agent=agent, display_name="Ilse Brandt").get()
    report = entity_forget(agent=agent, entity_id=her.id, actor="user:dpo")
    receipt = ErasureReceipt.objects.get(pk=report.receipt_id)
    assert receipt.vacuum_status == "pending"
    [(name, args)] = vacuum_sent
    assert current_app.tasks[name].apply(args=args).get() == {"receipt_id": receipt.id, "vacuumed": True}
    receipt.refresh_from_db()
    assert receipt.vacuum_status == "done" and receipt.vacuumed_at is not None, receipt.vacuum_error
    with connection.cursor() as cursor:
        cursor.execute("SELECT relname, last_vacuum FROM pg_stat_user_tables WHERE relname = ANY(%s)",
                       [receipt.vacuum_tables])
        vacuumed = dict(cursor.fetchall())
    assert all(when is not None and when >= receipt.created_at for when in vacuumed.values()), vacuumed
    # sent twice (the sweeper's copy): the second finds it done
    assert current_app.tasks[name].apply(args=args).get()["vacuumed"] is True
    assert ErasureReceipt.objects.get(pk=receipt.pk).vacuumed_at == receipt.vacuumed_at


def test_with_the_broker_down_the_vacuum_stays_pending_and_the_sweeper_sends_it_later(
        ilse, vacuum_sent, monkeypatch, caplog, django_capture_on_commit_callbacks):
    from datetime import timedelta

    from celery import current_app

    from memories.services.erasures import ERASURE_VACUUM_TASK, VACUUM_SWEEP_AFTER
    from memories.services.write_jobs import jobs_sweep

    agent, her, api = ilse

    def down(*args, **kwargs):
        raise ConnectionRefusedError("Error 111 connecting to 127.0.0.1:6390")

    with monkeypatch.context() as outage:
        outage.setattr(current_app, "send_task", down)
        with django_capture_on_commit_callbacks(execute=True):
            answer = api.post(url(agent, "entities", her.id, "forget"), {}, format="json")
    assert answer.status_code == 200, answer.content
    receipt = ErasureReceipt.objects.get(pk=answer.json()["receipt"]["id"])
    assert receipt.vacuum_status == "pending" and "vacuum stays pending" in caplog.text
    assert jobs_sweep()["vacuums"] == 0 and vacuum_sent == []  # its task may still be on its way
    ErasureReceipt.objects.filter(pk=receipt.pk).update(created_at=receipt.created_at - VACUUM_SWEEP_AFTER
                                                        - timedelta(seconds=1))
    assert jobs_sweep()["vacuums"] == 1
    assert vacuum_sent == [(ERASURE_VACUUM_TASK, [receipt.id])]


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_a_real_worker_vacuums_after_a_forget_through_the_api(agent, settings, make_key, client_for, tmp_path):
    from tests.faults.figures import wait_for
    from tests.support.worker import start_worker, stop_worker

    settings.ANAMNESIS_ERASURE_VACUUM_INLINE = False
    api = client_for(make_key(agent, "admin"))
    say(agent, "Ilse Brandt moved to Hamburg.", 1)
    say(agent, "Frau Brandt called about the rent.", 2)
    her = Entity.objects.filter(agent=agent, display_name="Ilse Brandt").get()
    worker = start_worker(log=tmp_path / "worker.log")
    try:
        answer = api.post(url(agent, "entities", her.id, "forget"), {}, format="json")
        assert answer.status_code == 200, answer.content
        receipt_id = answer.json()["receipt"]["id"]
        wait_for(lambda: ErasureReceipt.objects.get(pk=receipt_id).vacuum_status != "pending", 120,
                 "the worker's vacuum")
    finally:
        stop_worker(worker)
    vacuum = api.get(url(agent, "erasures", receipt_id)).json()["vacuum"]
    assert vacuum["status"] == "done" and vacuum["vacuumed_at"] and vacuum["error"] == "", vacuum


def test_a_form_of_her_name_in_a_message_queued_before_the_forget_is_redacted_when_it_is_processed(agent):
    from datetime import timedelta

    from memories.models import ForgetTombstone
    from memories.services.forget import entity_forget
    from memories.services.write import event_submit

    say(agent, "Ilse Brandt moved to Hamburg.", 1)
    her = Entity.objects.filter(agent=agent, display_name="Ilse Brandt").get()
    entity_forget(agent=agent, entity_id=her.id, actor="test")
    before = ForgetTombstone.objects.get(agent=agent).created_at - timedelta(seconds=1)
    _, own, _ = event_submit(agent=agent, message="My number is 0151 2345678.", speaker_name="Frau Brandt",
                             external_id="note-ilse-brandt-9")
    _, other, _ = event_submit(agent=agent, message="Brandt paid the rent. Bruno lives in Porto.",
                               speaker_name="Rafael", external_id="chat-ilse-brandt-9")
    Event.objects.filter(id__in=[own.event_id, other.event_id]).update(recorded_at=before)
    assert event_process(run_id=own.id).facts_added == []
    event_process(run_id=other.id)
    assert Event.objects.get(pk=own.event_id).text == "[redacted]"
    assert Event.objects.get(pk=other.event_id).text == "[redacted] paid the rent. Bruno lives in Porto."
    assert database_mentions(HER_WORDS, ("ilse-brandt-9", "2345678")) == []


def test_a_key_naming_her_by_family_name_alone_is_digested_in_a_message_queued_before_the_forget(agent):
    """Keys are identifiers (`chat-brandt-9`): the forget digests those naming her by any word of
    her names, and so does the write pipeline for a message logged before the forget and processed
    after it."""
    from datetime import timedelta

    from memories.models import ForgetTombstone
    from memories.services.forget import entity_forget
    from memories.services.write import event_submit

    say(agent, "Ilse Brandt moved to Hamburg.", 1)
    her = Entity.objects.filter(agent=agent, display_name="Ilse Brandt").get()
    _, stored, _ = event_submit(agent=agent, message="Bruno lives in Porto.", speaker_name="Rafael",
                                external_id="chat-brandt-8", idempotency_key="idem-brandt-8")
    event_process(run_id=stored.id)
    entity_forget(agent=agent, entity_id=her.id, actor="test")
    before = ForgetTombstone.objects.get(agent=agent).created_at - timedelta(seconds=1)
    _, queued, _ = event_submit(agent=agent, message="Marta plays chess on Sundays.", speaker_name="Rafael",
                                external_id="chat-brandt-9", idempotency_key="idem-brandt-9")
    Event.objects.filter(pk=queued.event_id).update(recorded_at=before)
    event_process(run_id=queued.id)
    for run in (stored, queued):
        event = Event.objects.get(pk=run.event_id)
        assert event.external_id.startswith("redacted:") and event.idempotency_key.startswith("redacted:"), run
    assert Event.objects.get(pk=queued.event_id).text == "Marta plays chess on Sundays."
    assert Fact.objects.filter(agent=agent, text__contains="Marta plays chess").exists()
    assert database_mentions(HER_WORDS) == []


def test_an_import_run_again_after_the_forget_does_not_bring_her_messages_back(agent):
    from memories.importers.locomo import Turn
    from memories.services.forget import entity_forget
    from memories.services.imports import conversation_import

    turns = [Turn("D1:1", "Ilse Brandt", "I moved to Hamburg last spring.", datetime(2024, 3, 1, tzinfo=UTC), 1),
             Turn("D1:2", "Rafael", "Bruno lives in Porto.", datetime(2024, 3, 1, 0, 1, tzinfo=UTC), 1)]
    assert conversation_import(agent=agent, turns=turns).imported == 2
    her = Entity.objects.filter(agent=agent, display_name="Ilse Brandt").first()
    entity_forget(agent=agent, entity_id=her.id, actor="test")
    again = conversation_import(agent=agent, turns=turns)
    assert (again.imported, again.skipped) == (0, 2)
    assert database_mentions(HER_WORDS) == []
