"""The write pipeline with no LLM: the deterministic English extractor, same path downstream."""

import json
import threading
from datetime import UTC, datetime, timedelta

import pytest
from django.core.management import call_command
from django.db import connections

from memories.errors import ConfigError, DomainError, PayloadTooLarge
from memories.models import Entity, EntityAlias, Event, Fact, FactEntityLink, PipelineRun, Relationship
from memories.services.write import memory_write

T0 = datetime(2024, 3, 1, 9, 0, tzinfo=UTC)
T1 = datetime(2024, 5, 20, 9, 0, tzinfo=UTC)


def write(agent, text, speaker="Rafael", at=T0, **kw):
    return memory_write(agent=agent, message=text, speaker_name=speaker, occurred_at=at, **kw)


def active(agent, **filters):
    return Fact.objects.filter(agent=agent, valid_to__isnull=True, invalidated_at__isnull=True, **filters)


def test_clara_leaves_vertix_for_orion_tech(agent):
    result = write(agent, "Clara Rezende left Vertix and joined Orion Tech as head of engineering. "
                          "Thiago Nogueira hired her personally.")
    assert result.success and result.extraction_path == "offline" and result.tokens_used["total_tokens"] == 0
    added = [c.text for c in result.facts_added]
    assert any("Clara Rezende left Vertix" in t for t in added)
    assert any("Clara Rezende joined Orion Tech" in t for t in added)
    assert any(t.startswith("Thiago Nogueira hired Clara Rezende") for t in added)
    vertix = Entity.objects.get(agent=agent, key="organization:vertix")
    linked = Fact.objects.filter(entity_links__entity=vertix).values_list("text", flat=True)
    assert any("Clara Rezende left Vertix" in t for t in linked)
    rels = {(r.source.display_name, r.rel_type, r.target.display_name)
            for r in Relationship.objects.filter(agent=agent)}
    assert ("Clara Rezende", "works_at", "Orion Tech") in rels
    assert ("Thiago Nogueira", "hired", "Clara Rezende") in rels


def test_clara_leaving_closes_her_old_job(agent):
    write(agent, "Clara Rezende works at Vertix.")
    old = active(agent, text__contains="works at Vertix").get()
    write(agent, "Clara Rezende left Vertix and joined Orion Tech.", at=T1)
    old.refresh_from_db()
    assert old.invalidated_at is not None and old.valid_to == T1
    assert not Relationship.objects.filter(agent=agent, rel_type="works_at", target__display_name="Vertix",
                                           invalidated_at__isnull=True).exists()


def test_ricardo_moves_from_sao_paulo_to_austin(agent):
    write(agent, "Ricardo Gomes lives in São Paulo.")
    result = write(agent, "Ricardo Gomes moved to Austin, Texas.", at=T1)
    assert len(result.facts_updated) == 1
    new = Fact.objects.get(pk=result.facts_updated[0].fact_id)
    old = new.supersedes
    assert old.text == "Ricardo Gomes lives in São Paulo" and "Austin" in new.text
    assert old.valid_to == T1 and new.valid_from == T1 and old.invalidated_at is not None
    chain = [new.supersedes_id, new.id]
    assert chain == [old.id, new.id]
    lives = {r.target.display_name: r.invalidated_at is None
             for r in Relationship.objects.filter(agent=agent, rel_type="lives_in")}
    assert lives["São Paulo"] is False and lives["Austin"] is True


def test_guili_is_an_alias_of_guilherme_maturana(agent):
    write(agent, "My friend Guili (Guilherme Maturana) plays guitar.")
    guilherme = Entity.objects.get(agent=agent, key="person:guilherme_maturana")
    assert EntityAlias.objects.get(agent=agent, alias="guili").entity == guilherme
    result = write(agent, "Guili is coming to visit in June.", at=T1)
    assert {r["key"] for r in result.entities_resolved} >= {"person:guilherme_maturana"}
    assert not Entity.objects.filter(agent=agent, key__contains="guili").exists()
    assert Relationship.objects.filter(agent=agent, rel_type="friend_of", target=guilherme).exists()


def test_curitiba_then_sao_paulo_cascades(agent):
    write(agent, "I live in Curitiba.")
    first = active(agent, text__contains="Curitiba").get()
    edge = Relationship.objects.get(agent=agent, rel_type="lives_in")
    assert edge.evidence_fact == first
    write(agent, "I moved to São Paulo.", at=T1)
    first.refresh_from_db()
    edge.refresh_from_db()
    assert first.invalidated_at is not None
    assert edge.invalidated_at is not None and edge.valid_to == T1
    new_edge = Relationship.objects.get(agent=agent, rel_type="lives_in", invalidated_at__isnull=True)
    assert new_edge.target.display_name == "São Paulo"
    assert new_edge.evidence_fact.supersedes == first


def test_retraction_closes_the_fact(agent):
    write(agent, "I work at Acme.")
    result = write(agent, "I no longer work at Acme.", at=T1)
    assert len(result.facts_deleted) == 1
    assert not active(agent, text__contains="works at Acme").exists()


def test_historical_import_keeps_when_it_was_said(agent):
    result = write(agent, "Ana is an architect.", at=datetime(2021, 7, 4, tzinfo=UTC))
    fact = Fact.objects.get(pk=result.facts_added[0].fact_id)
    assert fact.valid_from == datetime(2021, 7, 4, tzinfo=UTC)
    assert fact.recorded_at.year >= 2026


def test_empty_message_stores_nothing(agent):
    result = write(agent, "   \n ")
    assert result.success and result.event_id is None and not Event.objects.exists()


def test_oversized_message_is_rejected_and_nothing_stored(agent):
    with pytest.raises(PayloadTooLarge):
        write(agent, "x" * (32 * 1024 + 1))
    with pytest.raises(PayloadTooLarge):
        write(agent, "hello there", config_overrides={"max_message_bytes": 5})
    assert not Event.objects.exists()


def test_bad_overrides_are_clear_errors(agent):
    with pytest.raises(ConfigError, match="unknown setting"):
        write(agent, "hello", config_overrides={"no_such_setting": 1})
    with pytest.raises(ConfigError, match="fuzzy_threshold"):
        write(agent, "hello", config_overrides={"fuzzy_threshold": "high"})
    with pytest.raises(DomainError, match="speaker"):
        write(agent, "hello", speaker=" ")
    assert not Event.objects.exists()


def test_every_step_is_traced(agent):
    result = write(agent, "Marta prefers green tea.")
    run = PipelineRun.objects.get(pk=result.run_id)
    assert run.status == "succeeded" and run.attempts == 1
    names = list(run.steps.values_list("name", flat=True))
    assert names == ["alias_lookup", "pre_retrieval", "extraction", "normalize_dedup", "resolve_entities",
                     "reconcile", "upsert"]
    reconcile = run.steps.get(name="reconcile")
    assert reconcile.data["decisions"][0]["action"] == "ADD"
    assert reconcile.data["decisions"][0]["method"] == "fast_path"


def test_same_idempotency_key_creates_nothing_new(agent):
    first = write(agent, "Marta prefers green tea.", idempotency_key="abc")
    counts = (Event.objects.count(), Fact.objects.count(), FactEntityLink.objects.count())
    second = write(agent, "Marta prefers green tea.", idempotency_key="abc")
    assert second.event_id == first.event_id
    assert (Event.objects.count(), Fact.objects.count(), FactEntityLink.objects.count()) == counts


def test_repeating_a_statement_reinforces_it(agent):
    write(agent, "Marta prefers green tea.")
    result = write(agent, "Marta prefers green tea.", at=T1)
    assert len(result.facts_unchanged) == 1 and not result.facts_added
    assert active(agent, text__contains="green tea").get().reinforcement_count == 1


@pytest.mark.django_db(transaction=True)
def test_eight_concurrent_writes_about_a_new_person_create_one_entity(agent):
    barrier = threading.Barrier(8)
    errors = []

    def run(i):
        try:
            barrier.wait()
            memory_write(agent=agent, message=f"Joana Prado visited the office on day {i}.", speaker_name="Rafael")
        except Exception as exc:
            errors.append(exc)
        finally:
            connections.close_all()

    threads = [threading.Thread(target=run, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert Entity.objects.filter(agent=agent, display_name="Joana Prado").count() == 1
    assert Event.objects.filter(agent=agent).count() == 8
    assert PipelineRun.objects.filter(agent=agent, kind="write", status="succeeded").count() == 8


def test_remember_command_prints_the_write_result(db, capsys):
    call_command("remember", "I live in Curitiba.", agent="cli-agent", speaker="Rafael", json=True, create_agent=True,
                 at="2024-01-01T10:00:00Z")
    out = json.loads(capsys.readouterr().out)
    assert out["success"] and out["facts_added"][0]["text"].startswith("Rafael lives in Curitiba")


def test_import_conversation_is_time_ordered_and_resumable(db, tmp_path, capsys):
    sample = {
        "sample_id": "mini",
        "conversation": {
            "speaker_a": "Ana", "speaker_b": "Bo",
            "session_1_date_time": "1:56 pm on 8 May, 2023",
            "session_1": [{"speaker": "Ana", "dia_id": "D1:1", "text": "I moved to Lisbon last month."},
                          {"speaker": "Bo", "dia_id": "D1:2", "text": "Nice! I live in Porto."}],
            "session_2_date_time": "9:00 am on 1 June, 2023",
            "session_2": [{"speaker": "Ana", "dia_id": "D2:1", "text": "I adopted a dog named Rex."}],
        },
        "qa": [],
    }
    path = tmp_path / "mini.json"
    path.write_text(json.dumps([sample]))
    call_command("import_conversation", str(path), agent="mini", limit=2, verbosity=0)
    assert Event.objects.filter(agent__slug="mini").count() == 2
    call_command("import_conversation", str(path), agent="mini", verbosity=0)
    out = capsys.readouterr().out
    assert "1 imported, 2 already there" in out
    events = list(Event.objects.filter(agent__slug="mini").order_by("occurred_at"))
    assert [e.external_id for e in events] == ["D1:1", "D1:2", "D2:1"]
    assert events[0].occurred_at == datetime(2023, 5, 8, 13, 56, tzinfo=UTC)
    lisbon = Fact.objects.get(agent__slug="mini", text__contains="Lisbon")
    # "I moved to Lisbon last month", said in May: true since April, known since it was said
    assert lisbon.valid_from == datetime(2023, 4, 1, tzinfo=UTC)
    assert lisbon.learned_at == events[0].occurred_at


@pytest.mark.slow
def test_import_conversation_with_two_processes_keeps_each_agents_order(transactional_db, tmp_path, capsys):
    """Two conversations imported side by side, each whole in a process of its own: each agent
    gets its own messages in the order they were said, and what a later message says of an
    earlier one (a move, then a move away) ends as a single current home."""
    def sample(sample_id, who, first, second):
        return {"sample_id": sample_id, "conversation": {
            "speaker_a": who, "speaker_b": "Bo",
            "session_1_date_time": "1:56 pm on 8 May, 2023",
            "session_1": [{"speaker": who, "dia_id": "D1:1", "text": f"I moved to {first} last month."},
                          {"speaker": "Bo", "dia_id": "D1:2", "text": "How is it going?"}],
            "session_2_date_time": "9:00 am on 1 June, 2024",
            "session_2": [{"speaker": who, "dia_id": "D2:1", "text": f"I moved from {first} to {second}."}],
        }, "qa": []}
    path = tmp_path / "two.json"
    path.write_text(json.dumps([sample("one", "Ana", "Lisbon", "Porto"), sample("two", "Kofi", "Accra", "Kumasi")]))
    call_command("import_conversation", str(path), agent="pair", workers=2, verbosity=0)
    out = capsys.readouterr().out
    assert "pair-one: 3 imported" in out and "pair-two: 3 imported" in out
    for slug, who, first, second in [("pair-one", "Ana", "Lisbon", "Porto"), ("pair-two", "Kofi", "Accra", "Kumasi")]:
        events = list(Event.objects.filter(agent__slug=slug).order_by("id"))
        assert [e.external_id for e in events] == ["D1:1", "D1:2", "D2:1"]
        homes = Relationship.objects.filter(agent__slug=slug, source__display_name=who, rel_type="lives_in")
        assert {r.target.display_name for r in homes.filter(valid_to__isnull=True, invalidated_at__isnull=True)} == {
            second}
        assert homes.filter(target__display_name=first).exists()
    call_command("import_conversation", str(path), agent="pair", workers=2, verbosity=0)
    assert "pair-one: 0 imported, 3 already there" in capsys.readouterr().out


def test_a_message_is_embedded_with_its_speaker(agent):
    """Asked about Maria, what Maria said outranks the same words said by someone else."""
    from retrieval.services import memory_retrieve

    write(agent, "I adopted a puppy from the shelter last week.", speaker="Maria", external_id="maria")
    write(agent, "I adopted a puppy from the shelter last week.", speaker="John", external_id="john")
    result = memory_retrieve(agent=agent, query="What did Maria adopt?", preset="semantic_only", limit=10)
    semantic = {e.external_id: e.scores["semantic"] for e in result.events}
    assert semantic["maria"] > semantic["john"] + 0.05, semantic


def test_a_short_reply_can_be_embedded_with_what_it_answers(agent):
    """With event_embedding_context, "Sure, tomorrow works!" is recalled by a question about
    what was asked, sharing none of its words."""
    from retrieval.services import memory_retrieve

    question = "Would you like to come over to my place and swap baking recipes?"
    write(agent, "I finally fixed the flat tire on my bike this morning.", speaker="Joanna")
    write(agent, question, speaker="Nate", at=T0 + timedelta(minutes=5))
    for external_id, context in (("reply", 1), ("bare", 0)):
        write(agent, "Sure, tomorrow works!", speaker="Joanna", at=T0 + timedelta(minutes=6 + context),
              recent_messages=[f"Nate: {question}"], external_id=external_id,
              config_overrides={"event_embedding_context": context})
    result = memory_retrieve(agent=agent, query="When does Joanna plan to visit Nate to trade recipes?",
                             preset="semantic_only", limit=10)
    semantic = {e.external_id or e.text: e.scores["semantic"] for e in result.events}
    assert semantic["reply"] > semantic["bare"] + 0.1, semantic
    # and above Joanna's unrelated message
    assert semantic["reply"] > semantic.get("I finally fixed the flat tire on my bike this morning.", 0.0)


def test_a_fact_is_a_near_copy_only_of_one_about_the_same_subject():
    """Two facts of one message that say nearly the same words about two entities are both kept: each
    is what its own entity shows (the pet's kind beside the owner's sentence that names it)."""
    import numpy as np

    from memories.config import WriteConfig
    from memories.extraction.schema import ExtractedFact, Extraction
    from memories.pipeline.trace import StepRecord
    from memories.pipeline.write.extract import normalize
    from memories.pipeline.write.values import Extracted, Message

    class SameVector:  # every text the same direction: only the subjects can tell the facts apart
        def embed(self, texts):
            return [np.ones(4) / 2 for _ in texts]

    facts = [ExtractedFact(subject="Rosa Lind", text="Rosa Lind got a greyhound called Biscotti"),
             ExtractedFact(subject="Biscotti", text="Biscotti is Rosa Lind's greyhound"),
             ExtractedFact(subject="Rosa Lind", text="Rosa Lind got a greyhound")]
    message = Message(agent=None, event=None, speaker="Rosa Lind", config=WriteConfig())
    out = normalize(message, Extracted(Extraction(facts=facts), "offline"), SameVector(), StepRecord("n", 1))
    assert [f.text for f in out.extraction.facts] == [facts[0].text, facts[1].text]


def test_a_shop_said_in_lower_case_by_its_owners_name_keeps_a_small_possessive_s(agent):
    # str.title() would store "Yarrowby'S"; the name is stored as a person would write it
    write(agent, "just started at yarrowby's, the pay is rubbish", speaker="Keturah Solberg")
    names = set(Entity.objects.filter(agent=agent, type="organization").values_list("display_name", flat=True))
    assert names == {"Yarrowby's"}
