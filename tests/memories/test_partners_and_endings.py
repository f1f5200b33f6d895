"""Partners said in many ways, a doctor who hands a patient on, and things that end (a death, a
called-off engagement, a pastime dropped, a course finished) — asserted on what the extractor
returns and on what the write pipeline stores. Sentences written for these tests."""

from datetime import UTC, datetime, timedelta

from memories.extraction.offline import extract_offline
from memories.extraction.offline.parse import cessations, deaths
from memories.models import Fact, Relationship
from memories.services.write import memory_write

T0 = datetime(2021, 2, 1, 9, 0, tzinfo=UTC)


def _relations(text, **kw):
    ex = extract_offline(text, speaker="Wren Adler", **kw)
    return {(r.source, r.rel_type, r.target) for r in ex.relations}


def _write_all(agent, messages, step=timedelta(days=60)):
    at = T0
    for text in messages:
        assert memory_write(agent=agent, message=text, speaker_name="Wren Adler", occurred_at=at).success
        at += step


def _current_texts(agent):
    return list(Fact.objects.current().filter(agent=agent).values_list("text", flat=True))


def _edges(agent, current=True):
    rows = Relationship.objects.filter(agent=agent)
    rows = rows.current() if current else rows
    return {(r.source.display_name, r.rel_type, r.target.display_name) for r in rows}


# --- the extractor -------------------------------------------------------------------------------

def test_partners_said_around_the_name():
    assert ("Wren Adler", "partner_of", "Ines Varga") in _relations(
        "Ines Varga — my girlfriend of two years, for what it's worth — got promoted.")
    assert ("Wren Adler", "partner_of", "Oskar Lind") in _relations(
        "I have a boyfriend now — Oskar Lind, he's in my pottery class.")
    assert ("Wren Adler", "partner_of", "Kofi Mensah") in _relations("Three years with Kofi Mensah today! He's a chef.")
    assert ("Petra Holm", "partner_of", "Lea Brandt") in _relations(
        "My cousin Petra Holm got engaged to her university girlfriend, Lea Brandt.")


def test_couples_moving_in_eloping_and_calling_it_off():
    assert ("Wren Adler", "partner_of", "Rafael Souza") in _relations(
        "Rafael Souza and I are moving in together in May.")
    assert ("Wren Adler", "spouse_of", "Celia Marr") in _relations("Celia Marr and I eloped last weekend!")
    assert ("Wren Adler", "former_partner_of", "Piotr Zale") in _relations(
        "Piotr Zale and I have called off the engagement.")


def test_the_lucky_one_is_engaged_to_whoever_was_said_engaged():
    rels = _relations("Nadia's engaged! The lucky guy is Tomas Wren, a vet from Leeds.",
                      known_names=["Nadia Fox"], known_aliases={"Nadia": "Nadia Fox"},
                      known_types={"Nadia Fox": "person"})
    assert ("Nadia Fox", "engaged_to", "Tomas Wren") in rels


def test_a_neighbour_described_between_owner_and_term_is_still_a_neighbour():
    assert ("Wren Adler", "neighbor_of", "Nadia Szabo") in _relations("Nadia Szabo is my downstairs neighbour.")
    # "'s" as "is" before an article is no possessive: the dog is not Ivo's alone
    rels = _relations("Ivo and I adopted a dog! He's a scruffy terrier named Biscuit.", known_names=["Ivo Kern"],
                      known_aliases={"Ivo": "Ivo Kern"})
    assert {("Wren Adler", "has_pet", "Biscuit"), ("Ivo Kern", "has_pet", "Biscuit")} <= rels


def test_someone_moved_to_a_titled_doctor_has_a_new_doctor():
    rels = _relations("Dr. Abney has retired, so I've been switched to Dr. Omar Kell at the same practice.")
    assert ("Omar Kell", "doctor_of", "Wren Adler") in rels
    assert not any(rel == "doctor_of" for _, rel, _ in _relations("I was moved to Tom Reyes's team."))


def test_what_stopped_what_finished_and_who_died_from_the_parse():
    assert cessations("I stopped going to pottery after the move.") == [("I", ["pottery"])]
    assert "violin" in cessations("I haven't touched the violin in months, honestly.")[0][1]
    assert cessations("I haven't seen Leo in years.") == []
    assert "mba" in cessations("I graduated!")[0][1]
    # a course done ends it and studying with it ("studies at X" too)
    (subject, terms), = cessations("PhD done.")
    assert subject == "" and terms[0] == "phd" and "studying" in terms
    assert cessations("She is finishing her PhD this year.") == []
    assert cessations("I will graduate next year.") == []
    assert deaths("Hugo passed away in his sleep.") == ["Hugo"]
    assert deaths("My wife died in March.") == [""]
    assert deaths("I passed the exam and passed away the evening reading.") == []


def test_a_new_pastime_said_without_a_subject_is_the_writers():
    ex = extract_offline("New hobby alert, believe it or not: linocut printing!", speaker="Wren Adler")
    assert any(f.subject == "Wren Adler" and "linocut" in f.text for f in ex.facts)
    ex = extract_offline("Mira's got me into rowing instead.", speaker="Wren Adler", known_names=["Mira Olsen"],
                         known_aliases={"Mira": "Mira Olsen"}, known_types={"Mira Olsen": "person"})
    assert any(f.subject == "Wren Adler" and "rowing" in f.text for f in ex.facts)


# --- the write path ------------------------------------------------------------------------------

def test_a_death_ends_the_marriage_and_its_facts(agent):
    _write_all(agent, ["I've been married to Hugo Brandt for thirty years.", "Hugo passed away last week."])
    assert not any(rel == "spouse_of" for _, rel, _ in _edges(agent))
    assert ("Wren Adler", "spouse_of", "Hugo Brandt") in _edges(agent, current=False)
    assert not any("married to Hugo" in t for t in _current_texts(agent))


def test_a_called_off_engagement_ends_the_couple_it_began(agent):
    _write_all(agent, ["I'm engaged to Piotr Zale!", "Piotr and I have called off the engagement."])
    assert not any("Piotr Zale" in (s, t) for s, _, t in _edges(agent))
    closed = Relationship.objects.filter(agent=agent, rel_type="engaged_to")
    assert closed.exists() and all(r.valid_to is not None for r in closed)


def test_a_doctor_who_hands_a_patient_on_is_replaced(agent):
    _write_all(agent, ["My doctor is Dr. Ruth Abney.",
                       "Dr. Abney has retired, so I've been switched to Dr. Omar Kell at the same practice."])
    doctors = {s for s, rel, t in _edges(agent) if rel == "doctor_of" and t == "Wren Adler"}
    assert doctors == {"Omar Kell"}
    assert not any("Abney is Wren Adler's doctor" in t for t in _current_texts(agent))


def test_pastimes_accumulate_and_the_dropped_ones_end(agent):
    _write_all(agent, [
        "I joined a pottery collective called Mudlarks on Tuesdays.",
        "I've started learning the oboe.",
        "I started the part-time law degree at Ridgefield College this week.",
        "I've taken up archery, and I've started beekeeping too.",
        "I stopped going to pottery once my hours changed.",
        "I haven't touched the oboe in over a year, it lives under the bed now.",
        "I graduated! Law degree done.",
    ])
    current = " | ".join(_current_texts(agent))
    assert "archery" in current and "beekeeping" in current
    assert "Mudlarks" not in current
    assert "started learning the oboe" not in current
    assert "started the part-time law degree" not in current
