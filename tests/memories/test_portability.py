"""An agent's memory taken out and brought back: export → import → export gives the same content
(ids aside), and the imported agent answers retrievals — now and as of past moments — as the
original does; merges can still be undone, operator changes still read as they did; a forgotten
person is nowhere in an export, and nothing of another agent is either; a bad file stores nothing."""

from __future__ import annotations

import io
import json
import re
from datetime import UTC, datetime, timedelta

import numpy as np
import pytest
from django.core.management import call_command

from memories.errors import Conflict, InvalidExportFile
from memories.models import (
    Agent,
    AuditEntry,
    Entity,
    Event,
    Fact,
    ForgetTombstone,
    KeywordCorpus,
    KeywordPosting,
    KeywordTerm,
    MergeSuggestion,
    PipelineRun,
    Relationship,
    RunStatus,
)
from memories.models.visibility import Moment
from memories.portability.compare import export_content
from memories.selectors.export import agent_export
from memories.services import entities as entity_services
from memories.services import facts as fact_services
from memories.services.budgets import agent_llm_budget_set
from memories.services.forget import entity_forget
from memories.services.jobs import job_checkpoint_save
from memories.services.maintenance import merge_suggestion_dismiss
from memories.services.portability import agent_import, export_forgets_apply
from memories.services.write import event_submit, memory_write
from retrieval.services import memory_retrieve

pytestmark = pytest.mark.django_db
NOW = datetime(2025, 6, 1, tzinfo=UTC)  # "now" for recency, the same for both agents


def say(agent, text, speaker="Rafael", day=5, month=1):
    return memory_write(agent=agent, message=text, speaker_name=speaker,
                        occurred_at=datetime(2024, month, day, 10, tzinfo=UTC))


def export_lines(agent) -> list[str]:
    return list(agent_export(agent=agent))


def round_trip(agent, slug: str) -> tuple[Agent, list[str], list[str]]:
    """The agent exported, imported as `slug`, and the import exported."""
    first = export_lines(agent)
    copy = agent_import(slug=slug, lines=first, actor="test").agent
    return copy, first, export_lines(copy)


def answers(agent, query: str, as_of: datetime | None) -> list:
    """What a retrieval returns, without ids: each item's kind, text and score, and the context
    with its citations' event ids blanked."""
    result = memory_retrieve(agent=agent, query=query, as_of=as_of, now=NOW, record=False)
    items = [("fact", f.text, round(f.score, 4), f.valid_from, f.valid_to) for f in result.facts]
    items += [("event", e.text, round(e.score, 4), e.occurred_at) for e in result.events]
    return [items, re.sub(r"event \d+", "event #", result.context)]


def assert_same_memory(original, copy, queries: list[str], moments: list[datetime | None]) -> None:
    """Vectors, keyword statistics and retrieval answers of the two agents are the same."""
    for model, column in ((Fact, "embedding"), (Event, "embedding"), (Entity, "name_embedding")):
        pairs = zip(model.objects.filter(agent=original).order_by("id").values_list(column, flat=True),
                    model.objects.filter(agent=copy).order_by("id").values_list(column, flat=True), strict=True)
        for a, b in pairs:
            assert (a is None) == (b is None)
            if a is not None:
                assert float(np.dot(a, b)) > 0.9999
    for kind in ("fact", "event"):
        def stats(agent, kind=kind):
            corpus = KeywordCorpus.objects.filter(agent=agent, kind=kind).values_list("doc_count", "total_length")
            terms = KeywordTerm.objects.filter(agent=agent, kind=kind, df__gt=0).values_list("term", "df")
            postings = KeywordPosting.objects.filter(agent=agent, kind=kind).values_list("term", "tf", "doc_length")
            return list(corpus), sorted(terms), sorted(postings)
        assert stats(original) == stats(copy)
    for query in queries:
        for moment in moments:
            assert answers(original, query, moment) == answers(copy, query, moment), (query, moment)


def test_the_demo_agents_come_back_the_same():
    from memories.demo.load import demo_load

    for agent in demo_load(say=lambda line: None):
        copy, first, second = round_trip(agent, f"{agent.slug}-copy")
        assert export_content(first) == export_content(second)
        assert json.loads(first[0])["counts"]["fact"] == Fact.objects.filter(agent=copy).count() > 0
        times = sorted(Event.objects.filter(agent=agent).values_list("occurred_at", flat=True))
        middle = times[len(times) // 2]
        earliest = Fact.objects.filter(agent=agent).order_by("id").first().text
        assert_same_memory(agent, copy, ["Where does she live?", "Who is the manager?", earliest],
                           [None, middle, times[0] + timedelta(days=1)])


CONVERSATION = {
    "sample_id": "porch",
    "conversation": {
        "speaker_a": "Odile", "speaker_b": "Kwame",
        "session_1_date_time": "4:10 pm on 3 March, 2023",
        "session_1": [
            {"speaker": "Odile", "dia_id": "D1:1", "text": "I finally moved to Rennes last week."},
            {"speaker": "Kwame", "dia_id": "D1:2", "text": "Nice! I still live in Accra with my sister Efua."},
            {"speaker": "Odile", "dia_id": "D1:3", "text": "I started working at a bakery called Pain Doré."},
        ],
        "session_2_date_time": "9:30 am on 20 July, 2023",
        "session_2": [
            {"speaker": "Kwame", "dia_id": "D2:1", "text": "I adopted a parrot named Kofi."},
            {"speaker": "Odile", "dia_id": "D2:2", "text": "I left the bakery and now I work at the town library."},
            {"speaker": "Kwame", "dia_id": "D2:3", "text": "Efua is learning the kora these days."},
        ],
        "session_3_date_time": "7:00 pm on 2 December, 2023",
        "session_3": [
            {"speaker": "Odile", "dia_id": "D3:1", "text": "I moved to Nantes in November."},
            {"speaker": "Kwame", "dia_id": "D3:2", "text": "Kofi learned to say my name!"},
        ],
    },
    "qa": [],
}


def test_a_conversation_imported_from_locomo_format_comes_back_the_same(db, tmp_path):
    source = tmp_path / "porch.json"
    source.write_text(json.dumps([CONVERSATION]))
    call_command("import_conversation", str(source), agent="porch", verbosity=0)
    agent = Agent.objects.get(slug="porch")
    export = tmp_path / "porch.jsonl"
    call_command("export_agent", "porch", out=str(export))
    printed = io.StringIO()
    call_command("import_agent", str(export), slug="porch-copy", stdout=printed)
    assert "8 event" in printed.getvalue() and "from 'porch'" in printed.getvalue()
    copy = Agent.objects.get(slug="porch-copy")
    assert export_content(export.read_text().splitlines()) == export_content(export_lines(copy))
    assert Event.objects.filter(agent=copy).count() == 8
    assert set(Event.objects.filter(agent=copy).values_list("external_id", flat=True)) >= {"D1:1", "D3:2"}
    # where Odile lived and worked, as the agent knew it then and now
    queries = ["Where does Odile live?", "Where does Odile work?", "What is the parrot called?"]
    assert_same_memory(agent, copy, queries, [None, datetime(2023, 5, 1, tzinfo=UTC),
                                              datetime(2023, 10, 1, tzinfo=UTC)])
    then = [f.text for f in memory_retrieve(agent=copy, query="Where does Odile live?", record=False,
                                            as_of=datetime(2023, 5, 1, tzinfo=UTC)).facts]
    assert any("Rennes" in t for t in then) and not any("Nantes" in t for t in then)


def test_merges_corrections_and_forgets_survive_the_trip(agent):
    say(agent, "Clara works at Orion Tech.", day=2)
    say(agent, "Tiago lives in Porto.", day=3)
    say(agent, "Zoe Kim moved to Lisbon.", day=4)
    say(agent, "Bruno met Zoe Kim in Faro.", day=5)
    say(agent, "Marta plays chess on Sundays.", day=6)
    clara = Entity.objects.get(agent=agent, display_name="Clara")
    tiago = Entity.objects.get(agent=agent, display_name="Tiago")
    marta = Entity.objects.get(agent=agent, display_name="Marta")
    entity_services.entity_merge(agent=agent, survivor_id=clara.id, merged_id=tiago.id, actor="user:op")
    entity_services.entity_alias_add(agent=agent, entity_id=marta.id, alias="Tata", actor="user:op")
    chess = Fact.objects.get(agent=agent, text__contains="chess")
    corrected = fact_services.fact_correct(agent=agent, fact_id=chess.id, text="Marta plays chess on Saturdays",
                                           reason="wrong day", actor="user:op")
    fact_services.fact_retract(agent=agent, fact_id=corrected.id, reason="not sure", actor="user:op",
                               reopen_previous=True)
    entity_forget(agent=agent, entity_id=Entity.objects.get(agent=agent, display_name="Zoe Kim").id, actor="user:op")
    suggestion = MergeSuggestion.objects.create(agent=agent, entity_a=min(clara, marta, key=lambda e: e.id),
                                                entity_b=max(clara, marta, key=lambda e: e.id), score=0.6,
                                                reasons={"shared_neighbours": [clara.id]})
    merge_suggestion_dismiss(agent=agent, suggestion_id=suggestion.id, actor="user:op")
    job_checkpoint_save(job="decay", agent=agent, watermark=NOW, data={"facts": 3})

    copy, first, second = round_trip(agent, "copy")
    assert export_content(first) == export_content(second)
    content = export_content(first)
    types = {row.get("type") for row in content}
    assert {"entity_merge", "merge_suggestion", "erasure_receipt", "forget_tombstone", "audit",
            "job_checkpoint"} <= types
    # operator changes read as they did: the reinstated version, the chain, the reasons
    from dashboard.selectors import fact_chain

    def chain(of_agent):
        head = Fact.objects.filter(agent=of_agent, text="Marta plays chess on Sundays").order_by("id").last()
        return [(v.decision, re.sub(r"\d+", "#", v.reason), v.fact.text, re.sub(r"\d+", "#", v.closed_reason),
                 v.fact.valid_from, v.fact.learned_at, v.fact.unlearned_at, v.fact.recorded_at)
                for v in fact_chain(agent=of_agent, fact_id=head.id)]
    assert [v[0] for v in chain(agent)] == ["ADD", "OPERATOR", "REINSTATED"]
    assert chain(agent) == chain(copy)
    # the merge can be undone on either, with the same outcome
    for which in (agent, copy):
        merged = Entity.objects.get(agent=which, display_name="Tiago")
        entity_services.entity_unmerge(agent=which, entity_id=merged.id, actor="user:op")

    def tiago_facts(of_agent):
        return sorted(Fact.objects.filter(agent=of_agent, entity__display_name="Tiago").values_list("text", flat=True))
    assert tiago_facts(agent) == tiago_facts(copy) == ["Tiago lives in Porto"]
    assert MergeSuggestion.objects.get(agent=copy).status == "dismissed"


def test_imported_rows_keep_their_clocks_and_note_when_they_arrived(agent):
    say(agent, "Ricardo Gomes lives in São Paulo.", day=5)
    say(agent, "Ricardo Gomes moved to Austin in March.", day=20, month=4)
    agent_llm_budget_set(agent=agent, actor="user:op", day_tokens=5000)
    report = agent_import(slug="copy", lines=export_lines(agent), actor="user:op")
    copy = report.agent
    clocks = ("valid_from", "valid_to", "learned_at", "valid_to_learned_at", "unlearned_at", "recorded_at",
              "invalidated_at")
    for model in (Fact, Relationship):
        original = list(model.objects.filter(agent=agent).order_by("id").values_list(*clocks))
        imported = list(model.objects.filter(agent=copy).order_by("id").values_list(*clocks))
        assert original == imported and original
        assert set(model.objects.filter(agent=copy).values_list("imported_at", flat=True)) == {report.imported_at}
        assert set(model.objects.filter(agent=agent).values_list("imported_at", flat=True)) == {None}
    assert set(Event.objects.filter(agent=copy).values_list("imported_at", flat=True)) == {report.imported_at}
    assert (list(Event.objects.filter(agent=copy).order_by("id").values_list("occurred_at", "recorded_at"))
            == list(Event.objects.filter(agent=agent).order_by("id").values_list("occurred_at", "recorded_at")))
    assert copy.created_at == agent.created_at
    assert (copy.llm_budget_day_tokens, copy.llm_budget_month_tokens) == (5000, None)  # its own budget came along
    assert AuditEntry.objects.get(agent=copy, action="agent_llm_budget").object_id == str(copy.id)
    entry = AuditEntry.objects.get(agent=copy, action="agent_import")
    assert entry.actor == "user:op" and entry.after["source"]["agent"]["slug"] == agent.slug
    assert entry.after["rows"]["fact"] == Fact.objects.filter(agent=copy).count()
    # the database's clock answers for the copy as for the original
    yesterday = min(Fact.objects.filter(agent=agent).values_list("recorded_at", flat=True)) - timedelta(seconds=1)
    assert not Fact.objects.filter(agent=copy).visible(Moment(recorded_as_of=yesterday)).exists()
    assert Fact.objects.filter(agent=copy).visible(Moment(recorded_as_of=NOW + timedelta(days=3650))).exists()
    with pytest.raises(Conflict):
        agent_import(slug="copy", lines=export_lines(agent), actor="user:op")


def test_a_job_not_finished_at_export_is_queued_again(agent):
    say(agent, "Bruno lives in Porto.")
    _, queued, _ = event_submit(agent=agent, message="Bruno moved to Braga.", speaker_name="Rafael",
                                occurred_at=datetime(2024, 2, 1, tzinfo=UTC))
    PipelineRun.objects.filter(pk=queued.pk).update(status=RunStatus.RUNNING, lease_owner="elsewhere:1")
    report = agent_import(slug="copy", lines=export_lines(agent), actor="test")
    assert report.jobs_queued == 1
    job = PipelineRun.objects.get(agent=report.agent, event__text="Bruno moved to Braga.")
    assert (job.status, job.lease_owner, job.params["recent_messages"]) == (RunStatus.QUEUED, "", [])


def test_a_forgotten_person_is_nowhere_in_the_export(agent):
    names = re.compile(r"(?<![^\W_])(zoe|kim)(?![^\W_])", re.IGNORECASE)
    say(agent, "Zoe Kim moved to Lisbon.", day=5)
    say(agent, "Clara met Zoe Kim at the market.", day=6)
    say(agent, "I love tennis.", speaker="Zoe Kim", day=7)
    say(agent, "Bruno lives in Porto.", day=8)
    assert names.search("".join(export_lines(agent)))
    entity_forget(agent=agent, entity_id=Entity.objects.get(agent=agent, display_name="Zoe Kim").id, actor="user:op")
    # a message logged before the forget that no worker has processed yet still holds her name
    tomb = ForgetTombstone.objects.get(agent=agent)
    _, pending, _ = event_submit(agent=agent, message="Bruno and Zoe Kim went hiking.", speaker_name="Rafael")
    Event.objects.filter(pk=pending.event_id).update(recorded_at=tomb.created_at - timedelta(seconds=1))
    assert export_forgets_apply(agent=agent) == 1
    text = "".join(export_lines(agent))
    assert not names.search(text)
    assert "Bruno and [redacted] went hiking." in text and "Clara met [redacted] at the market" in text
    copy = agent_import(slug="copy", lines=export_lines(agent), actor="test").agent
    assert not names.search("".join(export_lines(copy)))
    assert not Fact.objects.filter(agent=copy, text__icontains="zoe").exists()


def test_nothing_of_another_agent_is_in_the_export(agent, other_agent):
    say(agent, "Bruno lives in Porto.")
    say(other_agent, "Yusuf Demir works at Kestrel Labs.", speaker="Leyla")
    other_ids = {*Fact.objects.filter(agent=other_agent).values_list("id", flat=True),
                 *Entity.objects.filter(agent=other_agent).values_list("id", flat=True)}
    lines = export_lines(agent)
    text = "".join(lines)
    assert "Bruno" in text and not re.search("Yusuf|Demir|Kestrel|Leyla", text)
    rows = [json.loads(line) for line in lines[1:]]
    assert {r["id"] for r in rows if r["type"] in ("fact", "entity")}.isdisjoint(other_ids)
    assert sum(r["type"] == "fact" for r in rows) == Fact.objects.filter(agent=agent).count()


def test_a_bad_file_stores_nothing(agent):
    say(agent, "Bruno lives in Porto.")
    say(agent, "Clara works at Orion Tech.")
    lines = export_lines(agent)
    bad_line = next(i for i, line in enumerate(lines) if '"type":"relationship"' in line)
    broken = [*lines[:bad_line], re.sub(r'"strength":[0-9.]+', '"strength":7', lines[bad_line]),
              *lines[bad_line + 1:]]
    counts = {model: model.objects.count() for model in (Agent, Event, Fact, Entity, KeywordPosting, AuditEntry)}
    with pytest.raises(InvalidExportFile) as caught:
        agent_import(slug="copy", lines=broken, actor="test")
    assert caught.value.extra["line"] == bad_line + 1 and "'strength'" in caught.value.message
    assert {model: model.objects.count() for model in counts} == counts
    with pytest.raises(InvalidExportFile) as caught:
        agent_import(slug="copy", lines=lines[:-3], actor="test")  # cut between lines
    assert "truncated" in caught.value.message
    assert {model: model.objects.count() for model in counts} == counts


def test_a_row_the_database_refuses_is_a_bad_line_too(agent, monkeypatch):
    """Should a row pass the line checks and still break a constraint, the import names the lines
    of its batch and stores nothing."""
    from memories.portability import records

    say(agent, "Bruno lives in Porto.")
    lines = export_lines(agent)
    at = next(i for i, line in enumerate(lines) if '"type":"relationship"' in line)
    row = json.loads(lines[at])
    broken = [*lines[:at], json.dumps({**row, "valid_to": "2000-01-01T00:00:00+00:00"}) + "\n", *lines[at + 1:]]
    monkeypatch.setattr(records, "_checks", lambda row_type, values: None)  # the check that would catch it
    before = Fact.objects.count()
    with pytest.raises(InvalidExportFile) as caught:
        agent_import(slug="copy", lines=broken, actor="test")
    assert caught.value.extra["line"] == at + 1
    assert "the database refused a relationship row" in caught.value.message
    assert not Agent.objects.filter(slug="copy").exists() and Fact.objects.count() == before

