"""The write pipeline with an LLM: the local OpenAI-compatible server replays scripted answers."""

from datetime import UTC, datetime

from memories.models import Entity, EntityAlias, Event, Fact, FactEntityLink, PipelineStep, Relationship
from memories.services.write import memory_write
from tests.support.scripts import by_message, by_schema, calls, extraction

T0 = datetime(2024, 3, 1, 9, 0, tzinfo=UTC)
T1 = datetime(2024, 5, 20, 9, 0, tzinfo=UTC)

CLARA = extraction(
    entities=[("Clara Rezende", "person"), ("Vertix", "organization"), ("Orion Tech", "organization"),
              ("Thiago Nogueira", "person")],
    facts=[("Clara Rezende", "Clara Rezende left Vertix", "relationship_change"),
           ("Clara Rezende", "Clara Rezende joined Orion Tech as head of engineering", "biographical_milestone"),
           ("Thiago Nogueira", "Thiago Nogueira personally hired Clara Rezende", "specific_event")],
    relations=[("Clara Rezende", "former_employee_of", "Vertix"), ("Clara Rezende", "works_at", "Orion Tech"),
               ("Thiago Nogueira", "hired", "Clara Rezende")],
    profiles=[("Clara Rezende", "Software engineer. Left Vertix, joined Orion Tech as head of engineering.")],
)


def write(agent, text, speaker="Rafael", at=T0, **kw):
    return memory_write(agent=agent, message=text, speaker_name=speaker, occurred_at=at, **kw)


def test_clara_walkthrough_makes_one_llm_call_and_links_vertix(agent, fake_llm):
    fake_llm.responder = by_schema({"informed_extraction": CLARA})
    result = write(agent, "Clara Rezende saiu da Vertix e foi pra Orion Tech como head de engenharia. "
                          "O Thiago Nogueira a contratou pessoalmente.")
    assert result.success and result.extraction_path == "informed"
    assert calls(fake_llm, "informed_extraction") == 1
    assert len(fake_llm.chat_requests) == 1
    assert len(result.facts_added) == 3
    assert result.tokens_used["total_tokens"] > 0
    # the four the message names, and its writer, a person the agent knows once they write
    assert sorted(Entity.objects.filter(agent=agent).values_list("display_name", flat=True)) == [
        "Clara Rezende", "Orion Tech", "Rafael", "Thiago Nogueira", "Vertix"]
    vertix = Entity.objects.get(agent=agent, key="organization:vertix")
    linked = Fact.objects.filter(entity_links__entity=vertix).values_list("text", flat=True)
    assert "Clara Rezende left Vertix" in linked
    rels = {(r.source.display_name, r.rel_type, r.target.display_name) for r in Relationship.objects.all()}
    assert ("Clara Rezende", "works_at", "Orion Tech") in rels and ("Thiago Nogueira", "hired", "Clara Rezende") in rels
    assert all(r.evidence_fact_id for r in Relationship.objects.all())
    clara = Entity.objects.get(agent=agent, key="person:clara_rezende")
    assert "Orion Tech" in clara.profile_text
    steps = list(PipelineStep.objects.filter(run__event_id=result.event_id).values_list("name", flat=True))
    assert steps[:3] == ["alias_lookup", "pre_retrieval", "extraction"] and "reconcile" in steps


RICARDO = by_message({
    "lives in São Paulo": extraction(
        entities=[("Ricardo Gomes", "person"), ("São Paulo", "place")],
        facts=[("Ricardo Gomes", "Ricardo Gomes lives in São Paulo", "biographical_milestone")],
        relations=[("Ricardo Gomes", "lives_in", "São Paulo")]),
    "moved to Austin": extraction(
        entities=[("Ricardo Gomes", "person"), ("Austin", "place")],
        facts=[("Ricardo Gomes", "Ricardo Gomes moved to Austin, Texas", "biographical_milestone")],
        relations=[("Ricardo Gomes", "lives_in", "Austin")]),
})


def test_ricardo_move_is_an_update_with_a_version_chain_and_cascade(agent, fake_llm):
    fake_llm.responder = by_schema({"informed_extraction": RICARDO})
    write(agent, "Ricardo Gomes lives in São Paulo.")
    old = Fact.objects.get(text="Ricardo Gomes lives in São Paulo")
    verdict = {"decisions": [{"index": 0, "action": "UPDATE", "target_id": old.id, "reason": "he moved"}]}
    fake_llm.responder = by_schema({"informed_extraction": RICARDO, "reconciliation": verdict})

    result = write(agent, "Ricardo Gomes moved to Austin, Texas.", at=T1)

    assert [c.previous_fact_id for c in result.facts_updated] == [old.id]
    new = Fact.objects.get(supersedes=old)
    assert new.text == "Ricardo Gomes moved to Austin, Texas" and new.valid_from == T1
    old.refresh_from_db()
    assert old.valid_to == T1 and old.invalidated_at is not None
    assert "he moved" in old.invalidation_reason
    edges = {r.target.display_name: r.invalidated_at is None for r in Relationship.objects.filter(rel_type="lives_in")}
    assert edges == {"São Paulo": False, "Austin": True}
    reconcile_step = PipelineStep.objects.get(run__event_id=result.event_id, name="reconcile")
    assert reconcile_step.data["decisions"][0]["action"] == "UPDATE"
    assert reconcile_step.data["decisions"][0]["method"] == "llm"


def test_guili_resolves_to_guilherme_and_is_registered_as_alias(agent, fake_llm):
    fake_llm.responder = by_schema({"informed_extraction": by_message({
        "Guilherme Maturana": extraction(
            entities=[("Guilherme Maturana", "person", ["Guili"]), ("Rafael", "person")],
            facts=[("Guilherme Maturana", "Guilherme Maturana is Rafael's friend", "relationship_change")],
            relations=[("Rafael", "friend_of", "Guilherme Maturana")]),
        "Talked to Guili": extraction(
            entities=[("Guili", "person")],
            facts=[("Guili", "Guili says the project is on track", "specific_event")]),
    })})
    write(agent, "My friend Guili (Guilherme Maturana) is great.")
    guilherme = Entity.objects.get(agent=agent, key="person:guilherme_maturana")
    assert EntityAlias.objects.get(agent=agent, alias="guili").entity == guilherme

    result = write(agent, "Talked to Guili about the project, it's on track.")

    assert [r["method"] for r in result.entities_resolved] == ["alias"]
    assert Fact.objects.get(text__startswith="Guili says").entity == guilherme
    assert Entity.objects.filter(agent=agent, type="person").count() == 2


def test_invalid_json_falls_back_to_blind_extraction_and_keeps_the_event(agent, fake_llm):
    fake_llm.responder = by_schema({
        "informed_extraction": "this is not JSON {",
        "entity_scan": {"entities": [{"name": "Marta", "type": "person", "aliases": []}]},
        "fact_extraction": {"facts": [{"subject": "Marta", "text": "Marta prefers tea", "confidence": 0.9,
                                       "action": "NEW", "importance_category": "stable_preference"}]},
        "relation_extraction": {"relations": []},
    })
    result = write(agent, "Marta prefers tea.")
    assert result.success and result.extraction_path == "blind"
    assert [c.text for c in result.facts_added] == ["Marta prefers tea"]
    assert calls(fake_llm, "entity_scan") == 1 and calls(fake_llm, "fact_extraction") == 1
    assert Event.objects.filter(agent=agent).count() == 1
    step = PipelineStep.objects.get(run__event_id=result.event_id, name="extraction")
    assert "informed_error" in step.data


def test_a_reply_with_more_items_than_the_message_has_words_is_refused(agent, fake_llm):
    # what a small model does when a grammar keeps it to the schema but nothing makes it stop
    looping = extraction(entities=[("Marta", "person")],
                         facts=[("Marta", "Marta prefers tea", "stable_preference")] * 6)
    fake_llm.responder = by_schema({
        "informed_extraction": looping,
        "entity_scan": {"entities": [{"name": "Marta", "type": "person", "aliases": []}]},
        "fact_extraction": {"facts": looping["facts"][:1]},
        "relation_extraction": {"relations": []},
    })
    result = write(agent, "Marta prefers tea.")
    assert result.success and result.extraction_path == "blind"
    assert [c.text for c in result.facts_added] == ["Marta prefers tea"]
    step = PipelineStep.objects.get(run__event_id=result.event_id, name="extraction")
    assert "facts" in step.data["informed_error"] and "too long" in step.data["informed_error"]
    sent = fake_llm.chat_requests[0]["response_format"]["json_schema"]["schema"]
    assert sent["properties"]["facts"]["maxItems"] == 3 + 2  # three words, plus the speaker and one spare
    assert sent["properties"]["entities"]["items"]["properties"]["aliases"]["maxItems"] == 5


def test_llm_down_still_stores_event_and_uses_offline_extractor(agent, fake_llm):
    fake_llm.responder = lambda req: {"status": 500}
    result = write(agent, "I live in Curitiba.")
    assert result.success and result.extraction_path == "offline"
    assert Event.objects.filter(agent=agent).count() == 1
    assert any("Curitiba" in c.text for c in result.facts_added)


def test_same_idempotency_key_creates_nothing_new(agent, fake_llm):
    fake_llm.responder = by_schema({"informed_extraction": CLARA})
    first = write(agent, "Clara Rezende left Vertix.", idempotency_key="msg-1")
    counts = (Event.objects.count(), Fact.objects.count(), Relationship.objects.count())
    second = write(agent, "Clara Rezende left Vertix.", idempotency_key="msg-1")
    assert second.event_id == first.event_id
    assert (Event.objects.count(), Fact.objects.count(), Relationship.objects.count()) == counts
    assert calls(fake_llm, "informed_extraction") == 1


def test_dry_run_reports_changes_but_writes_nothing(agent, fake_llm):
    fake_llm.responder = by_schema({"informed_extraction": CLARA})
    result = write(agent, "Clara Rezende left Vertix.", dry_run=True)
    assert result.dry_run and len(result.facts_added) == 3 and result.tokens_used["total_tokens"] > 0
    assert not Event.objects.exists() and not Fact.objects.exists() and not Entity.objects.exists()


def test_fact_links_are_created_for_every_named_entity(agent, fake_llm):
    fake_llm.responder = by_schema({"informed_extraction": CLARA})
    write(agent, "Clara Rezende left Vertix.")
    hired = Fact.objects.get(text="Thiago Nogueira personally hired Clara Rezende")
    linked = set(FactEntityLink.objects.filter(fact=hired).values_list("entity__key", "is_primary"))
    assert linked == {("person:thiago_nogueira", True), ("person:clara_rezende", False)}


CURITIBA = by_message({
    "I live in Curitiba": extraction(
        entities=[("Rafael", "person"), ("Curitiba", "place")],
        facts=[("Rafael", "Rafael lives in Curitiba", "biographical_milestone")],
        relations=[("Rafael", "lives_in", "Curitiba")]),
    "I moved to São Paulo": extraction(
        entities=[("Rafael", "person"), ("São Paulo", "place")],
        facts=[("Rafael", "Rafael lives in São Paulo", "biographical_milestone")],
        relations=[("Rafael", "lives_in", "São Paulo")]),
})


def test_curitiba_then_sao_paulo_cascades_with_an_llm(agent, fake_llm):
    fake_llm.responder = by_schema({"informed_extraction": CURITIBA})
    write(agent, "I live in Curitiba")
    first = Fact.objects.get(text="Rafael lives in Curitiba")
    edge = Relationship.objects.get(rel_type="lives_in")
    assert edge.evidence_fact == first
    verdict = {"decisions": [{"index": 0, "action": "UPDATE", "target_id": first.id, "reason": "moved"}]}
    fake_llm.responder = by_schema({"informed_extraction": CURITIBA, "reconciliation": verdict})

    write(agent, "I moved to São Paulo", at=T1)

    first.refresh_from_db()
    edge.refresh_from_db()
    assert first.invalidated_at is not None and edge.invalidated_at is not None and edge.valid_to == T1
    current = Relationship.objects.get(rel_type="lives_in", invalidated_at__isnull=True)
    assert current.target.display_name == "São Paulo" and current.evidence_fact.supersedes == first
    assert calls(fake_llm, "reconciliation") == 1
