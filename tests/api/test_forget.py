"""Forget means forget: after an operator forgets a person, none of her names or aliases (of any
length) is left in any read endpoint, admin page or database column; other people's messages
keep everything but her name, with the facts they gave; and a message logged before the forget
but processed after it never brings her back."""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime, timedelta

import pytest
from django.db import connection
from django.test import Client

from memories.models import Entity, Event, Fact, ForgetTombstone, KeywordPosting, PipelineRun, RunStatus
from memories.redaction import NameMatcher, redact_contacts_json
from memories.services.entities import entity_alias_add
from memories.services.write import event_process, event_submit, memory_write
from retrieval.services import memory_retrieve
from tests.api.conftest import url

pytestmark = pytest.mark.django_db

NAMES = re.compile(r"(?<![^\W_])(zoe|zo|kim)(?![^\W_])", re.IGNORECASE)  # her name, surname and 2-letter nickname,
# also inside identifiers: `person:zoe_kim`, `note-zoe-kim-1` (an underscore or a hyphen separates words)


def say(agent, text, speaker="Rafael", day=5):
    return memory_write(agent=agent, message=text, speaker_name=speaker,
                        occurred_at=datetime(2024, 1, day, 10, tzinfo=UTC))


def _text_columns() -> list[tuple[str, str]]:
    with connection.cursor() as cursor:
        cursor.execute("""
            SELECT c.table_name, c.column_name FROM information_schema.columns c
            JOIN information_schema.tables t ON t.table_name = c.table_name AND t.table_schema = c.table_schema
            WHERE c.table_schema = 'public' AND t.table_type = 'BASE TABLE'
              AND (c.data_type IN ('text', 'character varying', 'json', 'jsonb', 'ARRAY', 'tsvector')
                   OR c.udt_name = 'tsvector')
        """)
        return cursor.fetchall()


def pg_words(*words: str) -> str:
    """A PostgreSQL regex for any of `words` as a whole word, where an underscore or a hyphen also
    separates words: it finds names inside entity keys (`person:zoe_kim`), external ids and
    idempotency keys (`note-zoe-kim-1`), trace data, job results and audit rows alike."""
    return rf"(^|[^[:alnum:]])({'|'.join(words)})([^[:alnum:]]|$)"


def database_mentions(pattern: str = pg_words("zoe", "zo", "kim"), literals: tuple[str, ...] = ()) -> list[str]:
    """Every (table.column: value) in the database — any text, JSON, array or tsvector column of
    any table: messages and their external ids and idempotency keys, entities and their keys,
    facts, traces (runs and steps), job results, audit rows, merge records, the admin log, BM25
    terms and postings — that matches `pattern` (case-insensitive) or holds one of `literals`."""
    found = []
    with connection.cursor() as cursor:
        for table, column in _text_columns():
            cursor.execute(f'SELECT "{column}"::text FROM "{table}" WHERE "{column}"::text ~* %s'
                           + "".join(f' OR strpos(lower("{column}"::text), %s) > 0' for _ in literals),
                           [pattern, *[literal.lower() for literal in literals]])
            found += [f"{table}.{column}: {row[0][:3000]}" for row in cursor.fetchall()]
    return found


def test_the_matcher_finds_names_of_any_length_as_whole_words_without_holding_them():
    m = NameMatcher.from_names(["Zoë Kim", "zo"], key=b"k")
    assert (m.redact("Zoe Kim's cat; zo and ZO, not zone or Zoey.")
            == "[redacted]'s cat; [redacted] and [redacted], not zone or Zoey.")
    assert m.redact_json({"alias": "zo", "n": 3, "zoe kim": ["x"]}) == {"alias": "[redacted]", "n": 3,
                                                                        "[redacted]": ["x"]}
    assert "zo" not in repr(m.digests) and not m.search("zoology")


def test_a_trace_string_that_names_her_loses_her_contacts_too():
    trace = {"decisions": [{"fact": "[redacted]'s number is 0151 2345678", "similarity": 0.61},
                           {"fact": "Bruno's number is 0151 7654321"}], "n": 3}
    assert redact_contacts_json(trace) == {"decisions": [{"fact": "[redacted]'s number is [redacted]",
                                                          "similarity": 0.61},
                                                         {"fact": "Bruno's number is 0151 7654321"}], "n": 3}


@pytest.fixture
def forgotten_world(agent):
    say(agent, "Zoe Kim moved to Lisbon.", day=5)
    zoe = Entity.objects.get(agent=agent, display_name="Zoe Kim")
    entity_alias_add(agent=agent, entity_id=zoe.id, alias="Zo", actor="key:test")
    say(agent, "Clara works at Orion Tech. Zo loves jazz.", day=6)
    say(agent, "Marta plays chess on Sundays.", speaker="Zoe Kim", day=7)
    say(agent, "Bruno lives in Porto.", day=8)
    memory_retrieve(agent=agent, query="Where does Zoe Kim live?", limit=5)
    # logged before the forget, still queued when it happens (its task would run afterwards)
    _, queued_own, _ = event_submit(agent=agent, message="I am allergic to peanuts.", speaker_name="Zoe Kim",
                                    occurred_at=datetime(2024, 1, 9, tzinfo=UTC))
    _, queued_other, _ = event_submit(agent=agent, message="Zo and Bruno went hiking in Sintra.",
                                      speaker_name="Rafael", occurred_at=datetime(2024, 1, 9, tzinfo=UTC))
    assert queued_own.status == RunStatus.QUEUED
    return agent, zoe, queued_own, queued_other


def test_forget_leaves_no_trace_of_her_names_anywhere(forgotten_world, make_key, client_for):
    agent, zoe, queued_own, queued_other = forgotten_world
    assert database_mentions()  # the search does find her before
    admin_api = client_for(make_key(agent, "admin"))
    response = admin_api.post(url(agent, "entities", zoe.id, "forget"), {"reason": "Zoe asked"}, format="json")
    assert response.status_code == 200, response.content
    report = response.json()
    tables = report["tables"]
    assert tables["memories_event"] == {"redacted": 2, "mentions_redacted": 3}  # 2 of hers (1 queued), 3 naming her
    assert tables["memories_entity"]["deleted"] == 1 and tables["memories_fact"]["deleted"] >= 2
    assert tables["memories_entityalias"]["deleted"] >= 2
    assert tables["memories_pipelinerun"]["redacted"] >= 1 and tables["memories_auditentry"]["redacted"] >= 1
    assert tables["memories_keywordterm"]["deleted"] >= 1

    # the queued messages are processed after the forget: hers adds nothing, the other keeps Bruno
    assert event_process(run_id=queued_own.id).facts_added == []
    event_process(run_id=queued_other.id)
    assert not Entity.objects.filter(agent=agent, display_name__iregex=r"^(zoe|zo)\b").exists()

    # other people's messages keep everything but her name, and their facts
    texts = set(Event.objects.filter(agent=agent).values_list("text", flat=True))
    assert "Clara works at Orion Tech. [redacted] loves jazz." in texts
    assert "[redacted] and Bruno went hiking in Sintra." in texts
    assert Fact.objects.filter(agent=agent, text__icontains="Orion Tech").exists()
    assert Fact.objects.filter(agent=agent, text__icontains="Porto").exists()
    # what she said herself is gone whole, with what was derived from it (Marta plays chess)
    assert not Fact.objects.filter(agent=agent, text__icontains="chess").exists()
    assert not KeywordPosting.objects.filter(agent=agent, term__in=["zoe", "zo", "kim", "chess"]).exists()
    edited = Event.objects.get(agent=agent, text__startswith="Clara works")
    assert edited.embedding is not None and edited.redacted_at is None

    assert database_mentions() == []
    assert ForgetTombstone.objects.filter(agent=agent).count() == 1

    # every read endpoint
    pages = [url(agent, "events"), url(agent, "events") + "?speaker=Zoe%20Kim", url(agent, "jobs"),
             url(agent, "traces"), url(agent, "facts") + "?include_superseded=true",
             url(agent, "entities") + "?include_merged=true", url(agent, "relationships") + "?include_closed=true",
             url(agent, "graph")]
    pages += [url(agent, "traces", run_id) for run_id in PipelineRun.objects.filter(agent=agent).values_list(
        "id", flat=True)]
    pages += [url(agent, "jobs", run_id) for run_id in PipelineRun.objects.filter(
        agent=agent, kind="write").values_list("id", flat=True)]
    pages += [url(agent, "entities", e) for e in Entity.objects.filter(agent=agent).values_list("id", flat=True)]
    for page in pages:
        answer = admin_api.get(page)
        assert answer.status_code == 200, page
        assert not NAMES.search(json.dumps(answer.json(), ensure_ascii=False)), page
    found = admin_api.post(url(agent, "retrieve"), {"query": "Who went hiking in Sintra?"}, format="json")
    assert found.status_code == 200 and not NAMES.search(json.dumps(found.json()["context"]))
    assert not NAMES.search(json.dumps({k: found.json()[k] for k in ("facts", "events")}))


def test_the_forget_preview_reads_the_agents_facts_once(forgotten_world, make_key, client_for):
    """What a forget covers is read in one pass over the agent's facts (the texts that name her and
    the facts she said), not one pass for each: the agent's facts are the largest table it reads."""
    from django.test.utils import CaptureQueriesContext

    agent, zoe, _, _ = forgotten_world
    admin_api = client_for(make_key(agent, "admin"))
    every_fact = re.compile(r'FROM "memories_fact" WHERE "memories_fact"\."agent_id" = \d+( ORDER BY [^()]*)?$')
    with CaptureQueriesContext(connection) as ctx:
        assert admin_api.get(url(agent, "entities", zoe.id, "forget")).status_code == 200
    assert len([q for q in ctx.captured_queries if every_fact.search(q["sql"])]) == 1


def test_the_admin_shows_no_trace_of_her_after_forget(forgotten_world, admin_user):
    from django.contrib import admin

    agent, zoe, _, _ = forgotten_world
    from memories.services.forget import entity_forget

    entity_forget(agent=agent, entity_id=zoe.id, actor="user:admin", reason="asked")
    site = Client()
    site.force_login(admin_user)
    for model in admin.site._registry:
        meta = model._meta
        base = f"/admin/{meta.app_label}/{meta.model_name}/"
        page = site.get(base)
        assert page.status_code == 200, base
        assert not NAMES.search(_visible(page)), base
        for pk in model.objects.values_list("pk", flat=True)[:30]:
            page = site.get(f"{base}{pk}/change/")
            assert page.status_code in (200, 302), (base, pk)
            assert not NAMES.search(_visible(page)), (base, pk)


def _visible(page) -> str:
    """The page's text (a page quoting names in its HTML attributes counts too)."""
    return page.content.decode()


def test_a_message_logged_before_the_forget_but_processed_after_is_redacted(agent):
    """The race the lock cannot see: an event whose insert committed after the forget scanned the
    log. The tombstone (name digests only) catches it when the worker picks it up."""
    from memories.services.forget import entity_forget

    say(agent, "Zoe Kim moved to Lisbon.")
    zoe = Entity.objects.get(agent=agent, display_name="Zoe Kim")
    entity_forget(agent=agent, entity_id=zoe.id, actor="test")
    tomb = ForgetTombstone.objects.get(agent=agent)
    before = tomb.created_at - timedelta(seconds=1)
    _, own, _ = event_submit(agent=agent, message="I love tennis.", speaker_name="Zoe Kim")
    _, other, _ = event_submit(agent=agent, message="Bruno met Zoe Kim in Faro.", speaker_name="Rafael")
    Event.objects.filter(id__in=[own.event_id, other.event_id]).update(recorded_at=before)
    assert event_process(run_id=own.id).facts_added == []
    event_process(run_id=other.id)
    assert Event.objects.get(pk=own.event_id).text == "[redacted]"
    assert Event.objects.get(pk=other.event_id).text == "Bruno met [redacted] in Faro."
    assert not Entity.objects.filter(agent=agent, display_name__icontains="zoe").exists()
    # a message logged after the forget is new information: it is remembered
    say(agent, "Zoe Kim moved to Porto.", day=10)
    assert Entity.objects.filter(agent=agent, display_name="Zoe Kim").exists()
