"""Links to employers, schools and homes from ordinary chat English: fragments and self
introductions, less common job phrasings, lower-case names the agent knows, "we" moves that
take the partner along, and jobs that end without a name. Sentences written for these tests."""

from datetime import UTC, datetime, timedelta

from memories.extraction.offline import extract_offline
from memories.models import Entity, Fact, Relationship
from memories.services.write import memory_write

AT = datetime(2023, 5, 10, 9, 0, tzinfo=UTC)


def _links(message: str, speaker: str = "Oskar Lind", known: tuple[str, ...] = ()) -> set[tuple[str, str, str]]:
    ex = extract_offline(message, speaker=speaker, known_names=list(known), occurred_at=AT)
    return {(r.source, r.rel_type, r.target) for r in ex.relations}


# --- the extractor ------------------------------------------------------------------------------

def test_a_fragment_introduction_describes_the_speaker():
    links = _links("hi, I'm Oskar. data engineer at Vantrix, living in Tallinn, originally from Riga")
    assert {("Oskar Lind", "works_at", "Vantrix"), ("Oskar Lind", "lives_in", "Tallinn"),
            ("Oskar Lind", "from", "Riga")} <= links


def test_a_fragment_without_an_occupation_is_no_job():
    links = _links("Great dinner at Nobu Palace last night, best sushi ever.")
    assert not any(rel == "works_at" for _, rel, _ in links)


def test_a_self_introduction_with_a_role_at_an_employer_in_a_city():
    links = _links("I'm Mira, a tax accountant at Pellham Rowe LLP in Bristol.", speaker="Mira Castell")
    assert {("Mira Castell", "works_at", "Pellham Rowe LLP"), ("Mira Castell", "lives_in", "Bristol")} <= links


def test_a_home_said_outright_wins_over_the_city_of_the_job():
    links = _links("I teach chemistry at Westbrook Academy in Dayton. I live in Kettering with my dog Bo.")
    assert ("Oskar Lind", "works_at", "Westbrook Academy") in links
    assert ("Oskar Lind", "lives_in", "Kettering") in links
    assert ("Oskar Lind", "lives_in", "Dayton") not in links


def test_less_common_job_phrasings():
    assert ("Oskar Lind", "works_at", "Quillon") in _links("I do payroll support at Quillon.")
    assert ("Oskar Lind", "works_at", "Crumbhaus") in _links(
        "Changed jobs — I'm with a bakery chain called Crumbhaus now.")
    assert ("Oskar Lind", "works_at", "Ortolan Group") in _links("Starting Monday I'm the head chef at Ortolan Group.")
    assert ("Oskar Lind", "works_at", "Halvard Press") in _links(
        "I'm no longer freelancing — I joined Halvard Press as a copy editor.")
    assert ("Dev Patel", "works_at", "Servo Forge") in _links(
        "Dev Patel dropped out of college to join a robotics startup in Austin called Servo Forge.")


def test_a_job_named_around_the_word_job():
    assert ("Oskar Lind", "works_at", "Fennick") in _links("Stopped consulting, Fennick is my full-time job now.",
                                                           known=("Fennick",))
    assert ("Oskar Lind", "works_at", "Marlowe Labs") in _links("Marlowe Labs let me keep my job after the move.")


def test_starting_an_own_business_is_where_one_works_and_leaving_the_firm_ends_a_job():
    ex = extract_offline("I left my firm and started my own studio, Brightline Design, with a friend.",
                         speaker="Oskar Lind", occurred_at=AT)
    assert ("Oskar Lind", "works_at", "Brightline Design") in {(r.source, r.rel_type, r.target) for r in ex.relations}
    ended = [f for f in ex.facts if f.negated and f.slot == "works_at"]
    assert ended and ended[0].value == "" and ended[0].subject == "Oskar Lind"


def test_leaving_the_office_early_ends_no_job():
    ex = extract_offline("I left the office early to catch the train.", speaker="Oskar Lind", occurred_at=AT)
    assert not any(f.negated for f in ex.facts)


def test_lower_case_known_names_from_a_lower_case_writer():
    links = _links("quit zentrix last week. going freelance for a while", known=("Zentrix",))
    assert ("Oskar Lind", "former_employee_of", "Zentrix") in links
    ex = extract_offline("We met by the fountain in the town square.", speaker="Oskar Lind", known_names=["Square"])
    assert "Square" not in {e.name for e in ex.entities}


def test_working_remotely_from_a_city_is_living_there():
    assert ("Oskar Lind", "lives_in", "Asheville") in _links("Working remotely from Asheville has been great.")


def test_we_all_is_the_speaker_and_the_people_just_named():
    links = _links("My old roommates are Ines Duarte and Pavel Horak. We all ended up living in Lyon.")
    assert {("Oskar Lind", "lives_in", "Lyon"), ("Ines Duarte", "lives_in", "Lyon"),
            ("Pavel Horak", "lives_in", "Lyon")} <= links


def test_named_relatives_after_a_group_word_are_the_subject():
    links = _links("My grandparents, Otto Brandt and Hilde Brandt, still live in Kiel.")
    assert {("Otto Brandt", "lives_in", "Kiel"), ("Hilde Brandt", "lives_in", "Kiel")} <= links
    ex = extract_offline("My grandparents, Otto Brandt and Hilde Brandt, still live in Kiel.", speaker="Oskar Lind")
    assert any(f.text.startswith("Otto Brandt still lives in Kiel") for f in ex.facts)


def test_a_move_said_with_we_is_marked_for_the_household():
    ex = extract_offline("We relocated to Porto last month.", speaker="Oskar Lind", occurred_at=AT)
    moved = [r for r in ex.relations if r.rel_type == "lives_in"]
    assert moved and moved[0].household
    ex = extract_offline("I relocated to Porto last month.", speaker="Oskar Lind", occurred_at=AT)
    assert not any(r.household for r in ex.relations)


def test_an_age_opens_a_self_description():
    links = _links("I'm 58, a school nurse at Dunmore Primary in Carlisle, and I've two grown sons.")
    assert {("Oskar Lind", "works_at", "Dunmore Primary"), ("Oskar Lind", "lives_in", "Carlisle")} <= links
    links = _links("Oskar here. 31, backend dev at Sorrel Systems, living in a flat in Gdansk with my cat.",
                   known=("Sorrel Systems",))
    assert {("Oskar Lind", "works_at", "Sorrel Systems"), ("Oskar Lind", "lives_in", "Gdansk")} <= links


def test_a_second_verb_of_the_writer_after_and():
    ex = extract_offline("I live in Tucson and work as a lab technician at Verdant Biotech.", speaker="Oskar Lind")
    assert ("Oskar Lind", "works_at", "Verdant Biotech") in {(r.source, r.rel_type, r.target) for r in ex.relations}
    assert any(f.text.startswith("Oskar Lind works as a lab technician") for f in ex.facts)


def test_where_home_is_now_and_where_we_are_now():
    assert ("Oskar Lind", "lives_in", "Ludlow") in _links("Home is now Ludlow. We found a cottage by the river.")
    assert ("Oskar Lind", "lives_in", "Dunedin") in _links("we're now in Dunedin! the flat is tiny but warm")
    assert ("Oskar Lind", "lives_in", "Lisbon") in _links("We're a Dutch family living in Lisbon these days.")
    assert not any(rel == "lives_in" for _, rel, _ in _links("I'm now in Vienna for the conference until Friday."))


def test_a_farm_near_a_town_is_where_its_farmers_live():
    links = _links("My husband, Aled Rhys, and I run a dairy farm just outside Tregaron.")
    assert {("Oskar Lind", "lives_in", "Tregaron"), ("Aled Rhys", "lives_in", "Tregaron")} <= links


def test_someone_else_moves_and_takes_a_job():
    links = _links("Priya Nair finished her degree and took a job with Halcyon Energy in Calgary.")
    assert {("Priya Nair", "works_at", "Halcyon Energy"), ("Priya Nair", "lives_in", "Calgary")} <= links
    links = _links("My father, Ilie Popa, has come over from Cluj to live with us here in Turin.")
    assert ("Ilie Popa", "lives_in", "Turin") in links and ("Ilie Popa", "lives_in", "Cluj") not in links
    ex = extract_offline("Marek's moved to Gdynia, of all places.", speaker="Oskar Lind", known_names=["Marek Nowak"],
                         known_aliases={"Marek": "Marek Nowak"}, known_types={"Marek Nowak": "person"})
    assert ("Marek Nowak", "lives_in", "Gdynia") in {(r.source, r.rel_type, r.target) for r in ex.relations}


def test_a_contracted_is_after_a_dash_opens_a_clause():
    links = _links("Maria Roth and Peter Roth have moved to Bergen — she's a surgeon at Haukeland Clinic now.")
    assert {("Maria Roth", "lives_in", "Bergen"), ("Peter Roth", "lives_in", "Bergen"),
            ("Maria Roth", "works_at", "Haukeland Clinic")} <= links


def test_a_visitor_lives_where_they_came_from():
    assert ("Ana Weiss", "lives_in", "Graz") in _links("My cousin Ana Weiss is here from Graz for a week.")
    assert ("Oskar Lind", "lives_in", "Graz") not in _links("I'm originally from Graz.")


def test_more_ways_to_take_a_job():
    assert ("Oskar Lind", "works_at", "Brackwell") in _links(
        "I had two offers and I accepted Brackwell. The other one was a long commute.", known=("Brackwell",))
    assert ("Oskar Lind", "works_at", "Norvane") in _links(
        "I start as head of design at Norvane's Leeds campus on Monday.")
    links = _links("I found a logistics role at Tarrow Freight in Hull.")
    assert {("Oskar Lind", "works_at", "Tarrow Freight"), ("Oskar Lind", "lives_in", "Hull")} <= links
    assert ("Oskar Lind", "works_at", "Ember & Oak") in _links(
        "Big news: I'm starting my own cake company, Ember & Oak, in the spring.")
    assert ("Oskar Lind", "works_at", "Fjell Coffee") in _links(
        "I'm going for it: my own roastery, Fjell Coffee, sourcing from small farms.")


def test_joining_a_club_is_membership_not_a_job():
    links = _links("I joined Harbour City Roller Derby last month!")
    assert ("Oskar Lind", "member_of", "Harbour City Roller Derby") in links
    assert not any(rel == "works_at" for _, rel, _ in links)


def test_ways_a_job_ends():
    def ended(text, known=()):
        ex = extract_offline(text, speaker="Oskar Lind", known_names=list(known), occurred_at=AT)
        return [(f.subject, f.value) for f in ex.facts if f.negated and f.slot == "works_at"]

    assert ended("Handed in my resignation at Corvid Media today.", ("Corvid Media",)) == [
        ("Oskar Lind", "Corvid Media")]
    assert ended("I've given notice at Pellham Bank and I feel lighter.", ("Pellham Bank",)) == [
        ("Oskar Lind", "Pellham Bank")]
    assert ended("I did it: handed in my notice at the bakery.") == [("Oskar Lind", "")]
    assert ended("I've left the district attorney's office!") == [("Oskar Lind", "")]
    assert ended("Twenty years, and today was my last day at the museum.") == [("Oskar Lind", "")]
    assert ended("I am officially retired!") == [("Oskar Lind", "")]
    assert ended("My aunt is a retired teacher from Hull.") == []
    assert ended("I left the office early to beat the traffic.") == []


# --- the write path ------------------------------------------------------------------------------

T0 = datetime(2021, 3, 1, 9, 0, tzinfo=UTC)
T1 = datetime(2023, 4, 20, 9, 0, tzinfo=UTC)


def _write(agent, text, at, speaker="Iris Vale"):
    result = memory_write(agent=agent, message=text, speaker_name=speaker, occurred_at=at)
    assert result.success
    return result


def _current(agent, name, rel_type, as_of=None):
    entity = Entity.objects.get(agent=agent, display_name=name)
    rows = Relationship.objects.filter(agent=agent, source=entity, rel_type=rel_type)
    rows = rows.visible(as_of) if as_of is not None else rows.current()
    return {r.target.display_name for r in rows}


def test_a_we_move_takes_the_partner_along_from_when_it_happened(agent):
    _write(agent, "My boyfriend Theo Marsh and I live in Denver.", T0)
    assert _current(agent, "Theo Marsh", "lives_in") == {"Denver"}
    _write(agent, "Big news: we moved up to Boulder last month. The mountains are right there.", T1)
    assert _current(agent, "Theo Marsh", "lives_in") == {"Boulder"}
    assert _current(agent, "Iris Vale", "lives_in") == {"Boulder"}
    theo = Entity.objects.get(agent=agent, display_name="Theo Marsh")
    denver = Relationship.objects.get(agent=agent, source=theo, rel_type="lives_in", target__display_name="Denver")
    assert denver.valid_to is not None and denver.valid_to <= T1 - timedelta(days=15)


def test_leaving_an_unnamed_workplace_ends_the_only_employer(agent):
    _write(agent, "I'm a vet tech at Pinecrest Animal Hospital.", T0)
    assert _current(agent, "Iris Vale", "works_at") == {"Pinecrest Animal Hospital"}
    _write(agent, "Big change: I left the clinic and I'm back in school for nursing.", T1)
    assert _current(agent, "Iris Vale", "works_at") == set()
    current = Fact.objects.current().filter(agent=agent).values_list("text", flat=True)
    assert not any("Pinecrest" in t and "vet tech" in t for t in current)


def test_a_city_from_the_introduction_is_where_one_lived_until_the_move(agent):
    _write(agent, "I'm Iris, a paralegal at Corbin Hale LLP in Raleigh.", T0)
    _write(agent, "We relocated to Richmond in June.", datetime(2022, 7, 20, 9, 0, tzinfo=UTC))
    assert _current(agent, "Iris Vale", "lives_in") == {"Richmond"}
    assert _current(agent, "Iris Vale", "lives_in", as_of=datetime(2022, 1, 1, tzinfo=UTC)) == {"Raleigh"}


def test_a_kin_word_in_parentheses_names_the_parent_in_later_messages(agent):
    _write(agent, "My parents, Otto Brandt (Dad) and Hilde Brandt (Mum), still live in Kiel.", T0)
    assert _current(agent, "Otto Brandt", "lives_in") == {"Kiel"}
    _write(agent, "Mum and Dad have moved into a flat in Flensburg to be near the sea.", T1)
    assert _current(agent, "Otto Brandt", "lives_in") == {"Flensburg"}
    assert _current(agent, "Hilde Brandt", "lives_in") == {"Flensburg"}


def test_a_place_first_taken_for_an_organization_is_where_one_moves(agent):
    _write(agent, "My daughter Nell Vale just phoned from Harrogate: she's engaged!", T0)
    _write(agent, "Well, I did it. I moved to Harrogate last month, ten minutes from Nell.", T1)
    assert _current(agent, "Iris Vale", "lives_in") == {"Harrogate"}
    assert Entity.objects.get(agent=agent, display_name="Harrogate").type == "place"


def test_retiring_ends_the_job_and_what_was_said_of_it(agent):
    _write(agent, "I'm 64, an archivist at Calder Museum in Wakefield.", T0)
    assert _current(agent, "Iris Vale", "works_at") == {"Calder Museum"}
    _write(agent, "Today was my last day at the museum. I am officially retired!", T1)
    assert _current(agent, "Iris Vale", "works_at") == set()
    assert _current(agent, "Iris Vale", "lives_in") == {"Wakefield"}
    current = Fact.objects.current().filter(agent=agent).values_list("text", flat=True)
    assert not any("archivist" in t for t in current)
    assert any("officially retired" in t for t in current)


def test_notice_at_an_unnamed_workplace_ends_what_was_said_of_the_job(agent):
    _write(agent, "I'm a dental nurse at a clinic on Mill Street, and I love my patients.", T0)
    _write(agent, "Handed in my notice at the clinic. I'm starting my own bakery, Crumb Theory!", T1)
    assert _current(agent, "Iris Vale", "works_at") == {"Crumb Theory"}
    current = Fact.objects.current().filter(agent=agent).values_list("text", flat=True)
    assert not any("dental nurse" in t for t in current)


# --- other people's moves and jobs, said by the writer ---------------------------------------------

def test_a_subjectless_sentence_about_his_things_belongs_to_the_person_just_named():
    links = _links("My cousin Teodor Marek finally did it!! Handed in his notice at Brevik and moved to Cork "
                   "for a job at Olvana.")
    assert {("Teodor Marek", "former_employee_of", "Brevik"), ("Teodor Marek", "lives_in", "Cork"),
            ("Teodor Marek", "works_at", "Olvana")} <= links
    assert not any(src == "Oskar Lind" and rel in ("lives_in", "works_at", "former_employee_of")
                   for src, rel, _ in links)


def test_a_subjectless_sentence_that_helps_the_person_stays_the_writers():
    links = _links("My sister Hana Kral called. Helped her with her move to Brno.")
    assert ("Hana Kral", "lives_in", "Brno") not in links or ("Oskar Lind", "lives_in", "Brno") not in links
    assert not any(src == "Hana Kral" and tgt == "Hana Kral" for src, _, tgt in links)


def test_someone_at_an_employer_now_still_in_a_city():
    links = _links("My brother Jonas Berg changed jobs again: he left Quorvo and he's at Telvane now, "
                   "still in Aarhus.", known=("Telvane",))
    assert {("Jonas Berg", "former_employee_of", "Quorvo"), ("Jonas Berg", "works_at", "Telvane"),
            ("Jonas Berg", "lives_in", "Aarhus")} <= links


def test_a_fragment_after_leaving_says_where_the_same_person_is_now():
    links = _links("My uncle Jerzy Nowak left Orbis after 15 yrs, now at Tellmark Systems, still Krakow.")
    assert {("Jerzy Nowak", "former_employee_of", "Orbis"), ("Jerzy Nowak", "works_at", "Tellmark Systems"),
            ("Jerzy Nowak", "lives_in", "Krakow")} <= links


def test_an_employer_named_after_a_description_of_it():
    links = _links("My wife Elin Holm accepted a position at a law firm there, Varga Doyle LLP.")
    assert ("Elin Holm", "works_at", "Varga Doyle LLP") in links


def test_leaving_the_team_for_an_employer_and_being_made_a_role_there():
    assert ("Gwen Harris", "works_at", "Channel Nine") in _links(
        "Gwen Harris has left us for Channel Nine. Says the pay is better.", known=("Channel Nine",))
    assert ("Gwen Harris", "works_at", "Radio Kestrel") in _links(
        "Gwen Harris has been made head of news at Radio Kestrel, so she is off too.", known=("Radio Kestrel",))


def test_moving_in_with_the_writer_in_a_city():
    links = _links("My mother Ilse Brandt has moved in with us in Dortmund.")
    assert ("Ilse Brandt", "lives_in", "Dortmund") in links


def test_an_acronym_can_be_a_word_of_the_role():
    links = _links("My friend Nils Aho is a QA tester at Solvent Labs in Espoo.")
    assert {("Nils Aho", "works_at", "Solvent Labs"), ("Nils Aho", "lives_in", "Espoo")} <= links


def test_a_pronoun_after_a_pair_follows_the_gender_an_earlier_message_gave():
    ex = extract_offline("Jonas and Tali got engaged! He's at Telvane now.", speaker="Oskar Lind",
                         known_names=["Jonas Berg", "Tali Roth", "Telvane"], occurred_at=AT,
                         recent_messages=["My brother Jonas Berg has a girlfriend now, Tali Roth."])
    links = {(r.source, r.rel_type, r.target) for r in ex.relations}
    assert ("Jonas Berg", "works_at", "Telvane") in links
    assert ("Tali Roth", "works_at", "Telvane") not in links


def test_still_on_her_own_in_a_town_is_where_she_lives():
    links = _links("My gran Maeve Doyle had another fall. She's 81, still on her own in Carlow.")
    assert ("Maeve Doyle", "lives_in", "Carlow") in links


def test_moving_into_care_housing_in_a_town():
    links = _links("My aunt Orla Keane moved into sheltered housing in Tullamore last week.")
    assert ("Orla Keane", "lives_in", "Tullamore") in links


def test_a_now_at_fragment_after_leaving_is_the_writers():
    links = _links("left Brevik after 12 yrs. now at Halden Instruments Ltd, still in Cork.",
                   known=("Brevik",))
    assert {("Oskar Lind", "former_employee_of", "Brevik"),
            ("Oskar Lind", "works_at", "Halden Instruments Ltd")} <= links


def test_an_aside_after_a_name_leaves_it_the_subject():
    links = _links("My brother is Piet Smit. Piet (my brother, not Ana's husband) joined Veldhuis Engineering "
                   "as a junior engineer.", known=("Piet Smit",))
    assert ("Piet Smit", "works_at", "Veldhuis Engineering") in links


def test_saying_yes_to_an_employer():
    assert ("Oskar Lind", "works_at", "Kovalo Labs") in _links("I said yes to Kovalo Labs!! Starting in June.")


def test_a_bare_working_for_after_a_sentence_about_someone_is_theirs():
    links = _links("My daughter Sara Lind is done at uni. working for the Kelso Trust in Leeds now, health policy",
                   known=("Kelso Trust",))
    assert ("Sara Lind", "works_at", "Kelso Trust") in links
    assert ("Oskar Lind", "works_at", "Kelso Trust") not in links
    assert ("Oskar Lind", "works_at", "Kelso Trust") in _links(
        "Finally finished the course. Working for the Kelso Trust now.", known=("Kelso Trust",))


def test_coming_to_live_with_the_writer_in_a_city():
    links = _links("My mother Lan Tran has finally agreed to come and live with us in Launceston.")
    assert ("Lan Tran", "lives_in", "Launceston") in links


def test_an_employer_transferring_someone_moves_their_home():
    links = _links("Petrova Energy transferred my husband Luka Horvat to Split, so we followed him.",
                   known=("Petrova Energy",))
    assert ("Luka Horvat", "lives_in", "Split") in links
