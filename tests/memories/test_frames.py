"""The frame engine over the parse and its semantic back-off (memories/extraction/offline/frames.py):
what they link beyond the surface rules, what they leave alone, and what the trace says of each."""

import tomllib
from datetime import UTC, datetime
from pathlib import Path

import pytest

from memories.config import WriteConfig
from memories.extraction.offline import extract_offline, lexicon
from memories.extraction.offline.frames import frames
from memories.extraction.offline.text import normalize_message
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


# --- chat spellings, and the word lists as data ------------------------------------------------


@pytest.mark.parametrize(("said", "read"), [
    ("been workin at the library since june", "been working at the library since june"),
    ("im startin at the council monday", "I'm starting at the council monday"),
    ("me n my gf moved w/ her mum", "me and my gf moved with her mum"),
    # a word of its own, a name and a capital are left alone
    ("my cousin justin is visitin", "my cousin justin is visiting"),
    ("N is a letter, Im sure", "N is a letter, I'm sure"),
])
def test_chat_spellings_read_as_the_words_they_stand_for(said, read):
    assert normalize_message(said) == read


def test_a_job_said_in_chat_spelling_is_linked():
    ex = extract_offline("been workin at Galway Clinic since june", speaker="Niamh Walsh")
    assert ("Niamh Walsh", "works_at", "Galway Clinic") in {(r.source, r.rel_type, r.target) for r in ex.relations}


def test_a_lower_case_word_after_a_kin_word_is_no_name_when_it_is_a_verb():
    ex = extract_offline("my mum lives in cork still, my grandad passed away last year", speaker="Seán Murphy")
    assert {e.name for e in ex.entities if e.type == "person"} == {"Seán Murphy"}


def test_a_pet_named_in_lower_case():
    ex = extract_offline("got a cat called mochi today", speaker="Hana Sato")
    assert {(e.name, e.type) for e in ex.entities} >= {("Mochi", "pet")}


def test_each_kin_word_is_written_once_and_says_one_relation():
    data = tomllib.loads((Path(lexicon.__file__).parent / "kin.toml").read_text(encoding="utf-8"))
    words = [w for group in data["kin"] for key in ("female", "male", "other") for w in group.get(key, ())]
    assert len(words) == len(set(words))
    assert lexicon.KINSHIP["abuela"] == ("grandparent_of", True)  # the named one is the grandparent
    assert {"amma", "baba"} <= lexicon.PARENT_NAMES and "mother" not in lexicon.PARENT_NAMES


def test_a_state_said_in_the_past_is_linked_by_its_past_relation_only():
    past = extract_offline("Anton worked at Krona Bank for ten years.", speaker="Nadia Petrova")
    now = extract_offline("Anton has worked at Krona Bank since 2019.", speaker="Nadia Petrova")
    assert {(r.rel_type) for r in past.relations if r.target == "Krona Bank"} == {"worked_at"}
    assert {(r.rel_type) for r in now.relations if r.target == "Krona Bank"} == {"works_at"}


def test_a_lower_case_writer_names_places_after_any_preposition_but_not_common_words():
    ex = extract_offline("the food in nice was amazing, my parents are in bursa now", speaker="Callum Reid")
    assert {(e.name, e.type) for e in ex.entities if e.type == "place"} == {("Bursa", "place")}
    ex = extract_offline("we relocated to rio de janeiro in march", speaker="Callum Reid")
    assert ("Callum Reid", "lives_in", "Rio de Janeiro") in {(r.source, r.rel_type, r.target) for r in ex.relations}


def test_lower_case_pet_names_listed_after_the_pets():
    ex = extract_offline("we've got two cats now, tito and nala", speaker="Thao Nguyen")
    assert {(e.name, e.type) for e in ex.entities if e.type == "pet"} == {("Tito", "pet"), ("Nala", "pet")}
    assert not [e for e in extract_offline("we have two dogs, both lazy and fat", speaker="Thao Nguyen").entities
                if e.type == "pet"]


@pytest.mark.parametrize(("said", "ended"), [
    ("I'm not at Huawei anymore.", ("works_at", "Huawei")),
    ("Tom is no longer with Acme Corp.", ("works_at", "Acme Corp")),
    ("I stopped working for Philips in June.", ("works_at", "Philips")),
    ("I'm not in London anymore, we moved.", ("lives_in", "London")),
])
def test_a_state_said_to_be_over_is_taken_back_not_linked(said, ended):
    ex = extract_offline(said, speaker="Nadia Petrova")
    slot, value = ended
    assert any(f.slot == slot and f.value == value and f.negated for f in ex.facts), said
    assert not [r for r in ex.relations if r.rel_type == slot and r.target == value], said


def test_a_pet_that_died_or_was_given_up_is_an_ending_and_a_pet_doing_things_is_not():
    died = extract_offline("Our old cat Whiskers passed away years ago.", speaker="Nadia Petrova")
    assert {(r.source, r.rel_type, r.target) for r in died.relations} == {
        ("Nadia Petrova", "former_owner_of", "Whiskers")}
    alive = extract_offline("My dog Rex gave up on the frisbee.", speaker="Nadia Petrova")
    assert ("Nadia Petrova", "has_pet", "Rex") in {(r.source, r.rel_type, r.target) for r in alive.relations}


@pytest.mark.django_db
def test_a_state_read_by_a_frame_begins_when_the_sentence_says_it_began(agent):
    memory_write(agent=agent, message="Quick update: I left Kakao. I've been at Naver since March of last year.",
                 speaker_name="Ilse Brandt", occurred_at=datetime(2022, 6, 18, 9, 0, tzinfo=UTC))
    edge = Relationship.objects.get(agent=agent, rel_type="works_at", target__display_name="Naver")
    assert edge.valid_from.year == 2021  # not the day it was said
    # a move planned for a month has not begun: it is dated when it was said, not last year's June
    memory_write(agent=agent, message="We're relocating, Ilse is moving to Braga in June.",
                 speaker_name="Ana Souza", occurred_at=datetime(2023, 2, 1, 9, 0, tzinfo=UTC))
    assert all(e.valid_from.year >= 2023 for e in Relationship.objects.filter(agent=agent, rel_type="lives_in"))


@pytest.mark.django_db
def test_a_club_left_leaves_no_current_link_but_keeps_the_past(agent):
    memory_write(agent=agent, message="I joined the Leeds Chess Club in spring.", speaker_name="Ilse Brandt",
                 occurred_at=T0)
    memory_write(agent=agent, message="I quit the Leeds Chess Club, too much drama.", speaker_name="Ilse Brandt",
                 occurred_at=datetime(2025, 9, 1, 9, 0, tzinfo=UTC))
    edges = Relationship.objects.filter(agent=agent, target__display_name="Leeds Chess Club")
    assert not [e for e in edges if e.valid_to is None]  # nothing links them today
    assert [e for e in edges if e.rel_type == "member_of" and e.valid_to is not None]  # the membership was
    memory_write(agent=agent, message="I was a member of the Tromsø Rowing Club until 2015.",
                 speaker_name="Ilse Brandt", occurred_at=T0)
    rowing = Relationship.objects.filter(agent=agent, target__display_name="Tromsø Rowing Club")
    assert rowing.exists() and not rowing.filter(valid_to__isnull=True).exists()


def test_whose_relative_or_role_holder_someone_is_is_a_person():
    ex = extract_offline("Kasia's boss, Marek Zieliński, is a nightmare.", speaker="Ilse Brandt")
    assert {(e.name, e.type) for e in ex.entities} >= {("Kasia", "person"), ("Marek Zieliński", "person")}
    assert ("Marek Zieliński", "manager_of", "Kasia") in {(r.source, r.rel_type, r.target) for r in ex.relations}
    assert not extract_offline("Spotify's office is huge.", speaker="Ilse Brandt").entities
