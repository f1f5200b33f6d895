"""What is stored after ordinary conversations: one current value per single-valued slot,
cessations that close, couples as subjects, nicknames that resolve to the one person they can
mean. Sentences written for these tests."""

from datetime import UTC, datetime

import numpy as np

from memories.extraction.offline import extract_offline
from memories.extraction.offline.parse import births, cessations, without_ended_item
from memories.models import Entity, EntityAlias, Fact, Relationship
from memories.naming import first_names_compatible, person_names_compatible
from memories.reconcile import (
    ADD,
    NOOP,
    Candidate,
    CurrentEdge,
    ExistingFact,
    decide,
    edges_to_close,
    facts_ended_by,
    new_content_words,
    semantic_dedup,
)
from memories.services.write import memory_write

T0 = datetime(2023, 1, 10, 9, 0, tzinfo=UTC)
T1 = datetime(2023, 6, 10, 9, 0, tzinfo=UTC)
T2 = datetime(2024, 2, 10, 9, 0, tzinfo=UTC)


# --- pure decisions ------------------------------------------------------------------------------

def test_a_new_residence_ends_the_previous_one_but_not_the_employer():
    current = [CurrentEdge(1, 10, "lives_in", 20), CurrentEdge(2, 10, "works_at", 30),
               CurrentEdge(3, 11, "lives_in", 20)]
    assert edges_to_close("lives_in", 10, 21, current) == [1]


def test_a_new_partner_ends_the_previous_partner_on_either_side():
    current = [CurrentEdge(1, 10, "spouse_of", 40), CurrentEdge(2, 41, "partner_of", 10)]
    assert edges_to_close("partner_of", 10, 42, current) == [1, 2]
    assert edges_to_close("spouse_of", 10, 40, current) == [2]  # engaged → married: same couple stays


def test_a_cessation_ends_only_the_edge_it_names():
    current = [CurrentEdge(1, 10, "works_at", 30), CurrentEdge(2, 10, "partner_of", 41)]
    assert edges_to_close("former_employee_of", 10, 30, current) == [1]
    assert edges_to_close("former_partner_of", 41, 10, current) == [2]
    assert edges_to_close("former_employee_of", 10, 31, current) == []


def test_a_pet_that_died_ends_that_pet_only_and_a_new_pet_ends_none():
    current = [CurrentEdge(1, 10, "has_pet", 60), CurrentEdge(2, 10, "has_pet", 61), CurrentEdge(3, 11, "has_pet", 60)]
    assert edges_to_close("former_owner_of", 10, 60, current) == [1]  # one of many: not the other pet, nor owner
    # said by one who never had it ("the note says Rex was rehomed"): no one keeps it
    assert edges_to_close("former_owner_of", 12, 60, current) == [1, 3]
    assert edges_to_close("has_pet", 10, 62, current) == []  # pets are no slot


def test_a_new_manager_replaces_the_old_one_whichever_way_it_was_said():
    current = [CurrentEdge(1, 50, "manager_of", 10)]  # "my boss is Irene"
    assert edges_to_close("reports_to", 10, 51, current) == [1]  # "now I report to Omar"


def test_a_cessation_ends_the_facts_that_name_what_stopped():
    existing = [(1, "Wren teaches piano at the conservatory"), (2, "Wren drinks black coffee every morning"),
                (3, "Wren lives in Leeds")]
    assert facts_ended_by(["teach"], existing) == [1]
    assert facts_ended_by(["coffee"], existing) == [2]


def test_first_names_short_forms_diminutives_and_accents():
    for short, full in [("Rob", "Robert"), ("Robbie", "Robert"), ("Josie", "Josephine"), ("Nell", "Nell"),
                        ("Zoe", "Zoë"), ("Bartek", "Bartek"), ("Bill", "William"), ("Gosia", "Małgorzata"),
                        ("Katya", "Yekaterina"), ("Memo", "Guillermo")]:
        assert first_names_compatible(short, full), (short, full)
    assert not first_names_compatible("Ivy", "Irene")
    assert person_names_compatible("Rob", "Robert Nakamura")
    assert not person_names_compatible("Rob Kaur", "Robert Nakamura")
    assert person_names_compatible("Ciaran OBrien", "Ciaran O'Brien")


# --- the parser ----------------------------------------------------------------------------------

def test_cessations_from_the_parse():
    assert cessations("I quit smoking last spring.") == [("I", ["smoking"])]
    assert cessations("Gave up on chess after the tournament.") == [("", ["chess"])]
    assert cessations("Wren doesn't play squash anymore.") == [("Wren", ["play", "squash"])]
    assert cessations("I no longer sing in the choir.")[0][1][0] == "sing"
    assert cessations("Wren loves squash.") == []


def test_a_couple_as_the_subject_links_them():
    ex = extract_offline("Omar Haddad and I broke up in the spring.", speaker="Wren Adler")
    rels = {(r.source, r.rel_type, r.target) for r in ex.relations}
    assert ("Wren Adler", "former_partner_of", "Omar Haddad") in rels
    ex = extract_offline("Irene Vos and Omar Haddad got married in Porto.", speaker="Wren Adler")
    assert {(r.source, r.rel_type, r.target) for r in ex.relations} >= {("Irene Vos", "spouse_of", "Omar Haddad")}


def test_a_headline_and_a_named_company_do_not_hide_the_job():
    ex = extract_offline("Great news: I joined a robotics startup called Quillfern as a tester.", speaker="Wren Adler")
    rels = {(r.source, r.rel_type, r.target) for r in ex.relations}
    assert ("Wren Adler", "works_at", "Quillfern") in rels


# --- the write path ------------------------------------------------------------------------------

def _write(agent, text, at, speaker="Wren Adler"):
    result = memory_write(agent=agent, message=text, speaker_name=speaker, occurred_at=at)
    assert result.success
    return result


def _current_links(agent, name):
    entity = Entity.objects.get(agent=agent, display_name=name)
    return {(r.source.display_name, r.rel_type, r.target.display_name)
            for r in Relationship.objects.current().filter(agent=agent, source=entity)}


def test_moves_and_job_changes_keep_one_current_value(agent):
    _write(agent, "I live in Leeds and I work at Brightwater Analytics.", T0)
    _write(agent, "I moved to Bristol last month.", T1)
    _write(agent, "I left Brightwater Analytics to join Kestrel Robotics.", T2)
    links = _current_links(agent, "Wren Adler")
    assert ("Wren Adler", "lives_in", "Bristol") in links and ("Wren Adler", "lives_in", "Leeds") not in links
    assert ("Wren Adler", "works_at", "Kestrel Robotics") in links
    assert not any(t == "Brightwater Analytics" for _, _, t in links)
    current = Fact.objects.current().filter(agent=agent).values_list("text", flat=True)
    assert not any("lives in Leeds" in t for t in current)


def test_quitting_closes_the_habit(agent):
    _write(agent, "I drink three espressos a day, coffee is life.", T0)
    _write(agent, "I quit coffee and switched to rooibos.", T1)
    current = list(Fact.objects.current().filter(agent=agent).values_list("text", flat=True))
    assert not any("coffee is life" in t for t in current)
    assert any("rooibos" in t for t in current)


def test_a_diminutive_resolves_to_the_one_person_and_becomes_an_alias(agent):
    _write(agent, "My colleague Robert Nakamura lives in Oslo.", T0)
    _write(agent, "Guess what, Robbie moved to Bergen last week.", T1)
    people = Entity.objects.filter(agent=agent, type="person", merged_into__isnull=True)
    assert sorted(people.values_list("display_name", flat=True)) == ["Robert Nakamura", "Wren Adler"]
    robert = people.get(display_name="Robert Nakamura")
    assert "robbie" in set(robert.aliases.values_list("alias", flat=True))
    assert ("Robert Nakamura", "lives_in", "Bergen") in _current_links(agent, "Robert Nakamura")


def test_two_people_with_one_first_name_stay_apart(agent):
    _write(agent, "Lunch with Sam Okoro and Sam Lindgren from the lab today.", T0)
    _write(agent, "Sam moved to Madrid.", T1)
    sams = Entity.objects.filter(agent=agent, type="person", display_name__in=["Sam Okoro", "Sam Lindgren"])
    assert sams.count() == 2


# --- no silent loss: close vectors are not the same statement -----------------------------------

def test_a_close_vector_that_says_more_is_not_a_duplicate():
    rng = np.random.default_rng(7)
    base = rng.normal(size=16)
    a, b = base / np.linalg.norm(base), (base + 0.01) / np.linalg.norm(base + 0.01)  # cosine ≈ 1
    texts = ["Odile is Wren's new neighbor", "Odile is Wren's new neighbor; Odile plays the oboe"]
    assert semantic_dedup([a, b], 0.85) == [0]  # vectors alone: the second would be dropped
    assert semantic_dedup([a, b], 0.85, texts) == [0, 1]  # it says more: kept
    assert semantic_dedup([a, b], 0.85, [texts[0], "Odile is the new neighbor of Wren"]) == [0]
    assert new_content_words(texts[1], texts[0]) == {"play", "oboe"}
    existing = [ExistingFact(1, texts[0], 0.95)]
    assert decide(Candidate(texts[1], a), existing).action == ADD
    assert decide(Candidate("Odile is Wren's new neighbor!", a), existing).action == NOOP


def test_a_second_instrument_is_not_taken_for_the_first(agent):
    # the two facts' vectors are ~0.93 apart: near-identical by cosine, different statements
    _write(agent, "My cousin Odile plays the oboe.", T0)
    _write(agent, "My cousin Odile plays the flute.", T1)
    about = " ".join(Fact.objects.current().filter(agent=agent).values_list("text", flat=True))
    assert "oboe" in about and "flute" in about, about


def test_a_profile_follows_a_move_at_once(agent):
    _write(agent, "I live in Tromsø and I work at Polar Freight.", T0)
    wren = Entity.objects.get(agent=agent, display_name="Wren Adler")
    assert "Tromsø" in wren.profile_text
    _write(agent, "I moved to Bergen last month.", T1)
    wren.refresh_from_db()
    assert "Bergen" in wren.profile_text and "Tromsø" not in wren.profile_text, wren.profile_text
    assert "Polar Freight" in wren.profile_text  # what did not change stays


def test_a_birth_ends_the_pregnancy(agent):
    _write(agent, "My wife Noor and I found out we're expecting! Due in May.", T0)
    assert any("expecting" in t for t in Fact.objects.current().filter(agent=agent).values_list("text", flat=True))
    _write(agent, "Our son Tarek arrived on Monday! Noor is doing great.", T1)
    current = Fact.objects.current().filter(agent=agent, entity__display_name="Wren Adler")
    assert not [t for t in current.values_list("text", flat=True) if "expecting" in t or "Due in" in t]
    assert births("My son arrived late to dinner.") == [] and births("I have a son and a daughter.") == []


def test_a_writer_without_capitals_still_names_the_people_they_know(agent):
    _write(agent, "My girlfriend Ilse Brandt just started at Fernhill Labs.", T0)
    _write(agent, "ilse and i broke up last week. still friends though", T1)
    links = _current_links(agent, "Wren Adler")
    assert not [link for link in links if "Ilse Brandt" in link and link[1] in ("partner_of", "spouse_of")], links
    current = Fact.objects.current().filter(agent=agent).values_list("text", flat=True)
    assert not [t for t in current if "girlfriend" in t], list(current)
    assert Entity.objects.filter(agent=agent, type="person").count() == 2  # no separate "ilse"


def test_a_name_given_to_a_thing_is_not_a_person():
    ex = extract_offline("Teaming up with an old acme colleague, Rui Matos, to start a company. "
                         "It's called Quellwork, tools for printers.", speaker="Wren Adler", known_names=["Acme"])
    types = {e.name: e.type for e in ex.entities}
    assert types.get("Quellwork") != "person", types
    assert ("Wren Adler", "colleague_of", "Rui Matos") in {(r.source, r.rel_type, r.target) for r in ex.relations}


def test_what_someone_will_not_stop_is_no_cessation():
    for sentence in ["I just can't stop painting these days.", "Ines won't quit on her dreams.",
                     "I'm not gonna give up on the bakery.", "Ines has been using an app to practice scales.",
                     "I'm used to early mornings."]:
        assert cessations(sentence) == [], sentence
    assert cessations("I used to paint every weekend.") == [("I", ["paint"])]
    assert cessations("I stopped painting.") == [("I", ["paint"])]


def test_my_brother_unnamed_is_the_one_brother_the_writer_has(agent):
    _write(agent, "My brother Tobias Lund lives in Malmö.", T0)
    _write(agent, "My brother moved to Uppsala last month.", T1)
    assert ("Tobias Lund", "lives_in", "Uppsala") in _current_links(agent, "Tobias Lund")
    assert ("Tobias Lund", "lives_in", "Malmö") not in _current_links(agent, "Tobias Lund")
    assert not EntityAlias.objects.filter(agent=agent, alias__startswith="my ").exists()  # no name of his
    assert not any(link[0] == "Wren Adler" and link[1] == "lives_in" for link in _current_links(agent, "Wren Adler"))


def test_my_sister_unnamed_is_nobody_in_particular_when_there_are_two(agent):
    _write(agent, "My sister Alma Lund lives in Lund. My sister Greta Lund lives in Ystad.", T0)
    _write(agent, "My sister moved to Visby.", T1)
    assert not [link for link in _current_links(agent, "Alma Lund") | _current_links(agent, "Greta Lund")
                if "Visby" in link]


def test_dad_used_as_a_name_is_the_father_the_writer_named(agent):
    _write(agent, "My father, Arvo Lindqvist, lives in Turku and keeps bees.", T0)
    _write(agent, "Dad moved to Porvoo last month and joined a rowing club there.", T1)
    assert ("Arvo Lindqvist", "lives_in", "Porvoo") in _current_links(agent, "Arvo Lindqvist")
    assert ("Arvo Lindqvist", "lives_in", "Turku") not in _current_links(agent, "Arvo Lindqvist")
    assert not any(link[0] == "Wren Adler" and link[1] == "lives_in" for link in _current_links(agent, "Wren Adler"))
    assert not EntityAlias.objects.filter(agent=agent, alias__iexact="dad").exists()  # the writer's word, no name


def test_someone_elses_mum_is_not_the_writers_mother(agent):
    _write(agent, "My mum, Eija Lindqvist, lives in Turku.", T0)
    _write(agent, "Tobias's Mum moved to Oulu.", T1)
    assert ("Eija Lindqvist", "lives_in", "Turku") in _current_links(agent, "Eija Lindqvist")


def test_dropping_one_of_two_pastimes_keeps_the_other(agent):
    _write(agent, "I took up bouldering and the cello this spring.", T0)
    _write(agent, "I gave up the cello, too many scales.", T2)
    current = list(Fact.objects.current().filter(agent=agent).values_list("text", flat=True))
    assert any("bouldering" in t for t in current), current
    assert not any("cello" in t and "gave up" not in t for t in current), current
    # in the summer both were still going: the first version holds them, true until the cello ended
    summer = [f.text for f in Fact.objects.filter(agent=agent, valid_from__lte=T1, invalidated_at__isnull=False)
              if f.valid_to and f.valid_to > T1]
    assert any("bouldering" in t and "cello" in t for t in summer), summer
    assert without_ended_item("Ivo plays chess, golf and tennis every week", ["golf"]) == \
        "Ivo plays chess and tennis every week"
    assert without_ended_item("Ivo plays golf every week", ["golf"]) is None  # the whole statement ends
    assert without_ended_item("Ivo plays chess and runs marathons", ["play"]) is None  # verbs are no list items


def test_someones_husband_unnamed_is_the_husband_the_agent_knows(agent):
    _write(agent, "My friend Liesel Brandt married Jonas Weber last summer. They live in Graz.", T0)
    _write(agent, "Liesel's husband got a job at Andritz in Linz.", T1)
    assert ("Jonas Weber", "works_at", "Andritz") in _current_links(agent, "Jonas Weber")
    assert not any(link[1] == "works_at" for link in _current_links(agent, "Liesel Brandt"))
    assert not EntityAlias.objects.filter(agent=agent, alias__contains="husband").exists()  # no name of his


def test_my_parents_moving_moves_both_parents(agent):
    _write(agent, "My dad, Aurelio Conti, and my mum, Bruna Conti, live in Modena.", T0)
    _write(agent, "My parents sold the house and relocated to Parma last month.", T1)
    for parent in ("Aurelio Conti", "Bruna Conti"):
        assert (parent, "lives_in", "Parma") in _current_links(agent, parent), parent
        assert (parent, "lives_in", "Modena") not in _current_links(agent, parent), parent
    assert not any(link[1] == "lives_in" for link in _current_links(agent, "Wren Adler"))
