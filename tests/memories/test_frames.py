"""The frame engine over the parse and its semantic back-off (memories/extraction/offline/frames.py):
what they link beyond the surface rules, what they leave alone, and what the trace says of each."""

from datetime import UTC, datetime

import pytest

from memories.config import WriteConfig
from memories.extraction.offline import extract_offline
from memories.extraction.offline.frames import frames
from memories.models import Relationship
from memories.providers.embeddings import get_embedder
from memories.services.write import memory_write

T0 = datetime(2025, 2, 3, 9, 0, tzinfo=UTC)


def relations(text, speaker="Ilse Brandt", embed=None):
    extraction = extract_offline(text, speaker=speaker, embed=embed)
    return {(r.source, r.rel_type, r.target): r.method for r in extraction.relations}


def test_a_frame_reads_a_dwelling_noun_on_the_way_to_the_place():
    found = relations("Our flat in Tromsø is small but warm.")
    assert found.get(("Ilse Brandt", "lives_in", "Tromsø")) == "frame"


def test_a_frame_reads_the_subject_of_a_relative_clause():
    found = relations("My aunt Greta, who settled in Graz after the war, still writes letters.")
    assert found.get(("Greta", "lives_in", "Graz")) is not None


def test_what_is_not_a_current_state_is_not_linked_by_any_frame():
    for text in ("We might move to Innsbruck next spring.", "I grew up in Linz.",
                 "Last summer we visited Salzburg.", "I had an interview at Hallmark Freight on Monday."):
        found = relations(text, embed=get_embedder().embed)
        assert not [k for k in found if k[1] in ("lives_in", "works_at")], (text, found)


def test_a_study_frame_replaces_the_job_a_rule_read_at_a_school():
    found = relations("My nephew Jonas is spending his first semester at Leipzig University.")
    assert ("Jonas", "studies_at", "Leipzig University") in found
    assert ("Jonas", "works_at", "Leipzig University") not in found


def test_the_job_of_a_lecturer_at_a_school_stays_a_job():
    found = relations("I'm a lecturer at Ostrava College.")
    assert ("Ilse Brandt", "works_at", "Ostrava College") in found
    assert ("Ilse Brandt", "studies_at", "Ostrava College") not in found


PAYROLL = "I put in my first week at Brightwell Foods."


def test_the_back_off_links_only_with_an_embedder_and_says_so():
    assert ("Ilse Brandt", "works_at", "Brightwell Foods") not in relations(PAYROLL)
    method = relations(PAYROLL, embed=get_embedder().embed).get(("Ilse Brandt", "works_at", "Brightwell Foods"))
    assert method and method.startswith("semantic ")


def test_every_frame_has_prototypes_and_a_known_relation():
    data = frames()
    assert {f.relation for f in data.frames} >= {"lives_in", "works_at", "studies_at", "member_of"}
    assert all(f.prototypes and f.triggers for f in data.frames) and data.other


@pytest.mark.django_db
def test_the_trace_says_how_a_link_was_found(agent):
    result = memory_write(agent=agent, message="Just signed the lease on a place in Montevideo!",
                          speaker_name="Ilse Brandt", occurred_at=T0)
    extraction = next(s for s in result.trace if s["name"] == "extraction")
    assert extraction["data"]["relation_methods"]["Ilse Brandt -[lives_in]-> Montevideo"] == "frame"
    result = memory_write(agent=agent, message=PAYROLL, speaker_name="Ilse Brandt", occurred_at=T0)
    extraction = next(s for s in result.trace if s["name"] == "extraction")
    assert extraction["data"]["relation_methods"]["Ilse Brandt -[works_at]-> Brightwell Foods"].startswith("semantic ")
    assert Relationship.objects.filter(agent=agent, rel_type="works_at",
                                       target__display_name="Brightwell Foods").exists()


@pytest.mark.django_db
def test_the_back_off_can_be_turned_off_per_write(agent):
    assert WriteConfig().offline_semantic_backoff
    memory_write(agent=agent, message=PAYROLL, speaker_name="Ilse Brandt", occurred_at=T0,
                 config_overrides={"offline_semantic_backoff": False})
    assert not Relationship.objects.filter(agent=agent, rel_type="works_at").exists()


def people(text, speaker="Ilse Brandt"):
    return {e.name for e in extract_offline(text, speaker=speaker).entities if e.type == "person"} - {speaker}


def test_a_name_no_dictionary_holds_as_the_subject_of_a_life_is_a_person():
    assert people("Tendai moved to Harare in March.") == {"Tendai"}
    assert people("Oyelaran works at Flutterwave now.") == {"Oyelaran"}


def test_words_and_companies_that_open_a_sentence_stay_no_people():
    for text in ("Lunch moved to two o'clock.", "Netflix raised its prices again.", "Spotify works fine offline.",
                 "Dinner was lovely."):
        assert not people(text), text


def test_a_lower_case_name_after_a_kin_word_is_that_person():
    assert people("my cousin tunde is visiting next week") == {"Tunde"}
    assert not people("my cousin just got engaged") and not people("my sister always calls on sundays")


def test_a_pet_named_in_its_own_clause_is_the_namers():
    extraction = extract_offline("We adopted a collie last week and named her Bixa.", speaker="Ilse Brandt")
    assert ("Ilse Brandt", "has_pet", "Bixa") in {(r.source, r.rel_type, r.target) for r in extraction.relations}
    assert not extract_offline("I met a dog called Pongo at the park.", speaker="Ilse Brandt").relations
