"""Person roles with one current holder, cessations that close, and corrections of a name just
said — asserted on what the write pipeline stores. Sentences written for these tests."""

from datetime import UTC, datetime, timedelta

from memories.extraction.offline import extract_offline
from memories.extraction.offline.corrections import correction_in
from memories.extraction.offline.parse import cessations
from memories.models import Entity, Fact, Relationship
from memories.reconcile import CurrentEdge, edges_to_close, facts_naming_ended, plan_correction
from memories.services.write import memory_write

T0 = datetime(2022, 3, 1, 9, 0, tzinfo=UTC)


def _write_all(agent, messages, step=timedelta(days=40), speaker="Wren Adler"):
    at = T0
    for text in messages:
        result = memory_write(agent=agent, message=text, speaker_name=speaker, occurred_at=at)
        assert result.success
        at += step


def _current_texts(agent):
    return list(Fact.objects.current().filter(agent=agent).values_list("text", flat=True))


def _current_edges(agent):
    return {(r.source.display_name, r.rel_type, r.target.display_name)
            for r in Relationship.objects.current().filter(agent=agent)}


# --- pure decisions ------------------------------------------------------------------------------

def test_a_new_holder_of_a_role_replaces_the_old_one_and_only_that_role():
    current = [CurrentEdge(1, 50, "dentist_of", 10), CurrentEdge(2, 60, "therapist_of", 10)]
    assert edges_to_close("dentist_of", 51, 10, current) == [1]
    assert edges_to_close("dentist_of", 51, 11, current) == []


def test_an_ending_that_names_no_state_ends_the_subjects_states_toward_that_one_entity():
    # "done with X": the job, the studies or the membership at X end; a home in X, the same states
    # toward another entity, and someone else's job at X stay
    current = [CurrentEdge(1, 50, "studies_at", 10), CurrentEdge(2, 50, "works_at", 10),
               CurrentEdge(3, 50, "lives_in", 10), CurrentEdge(4, 50, "works_at", 11),
               CurrentEdge(5, 60, "works_at", 10), CurrentEdge(6, 50, "member_of", 10)]
    assert sorted(edges_to_close("finished_with", 50, 10, current)) == [1, 2, 6]
    assert edges_to_close("finished_with", 50, 12, current) == []


def test_a_job_ending_said_of_a_club_or_school_ends_that_state_when_there_is_no_job_there():
    # "quit ⟨the team⟩" is read as leaving a job; with no job there, the membership (or the
    # studies) toward that very entity end instead, and nothing else does
    current = [CurrentEdge(1, 50, "member_of", 10), CurrentEdge(2, 50, "studies_at", 11),
               CurrentEdge(3, 50, "works_at", 12), CurrentEdge(4, 60, "member_of", 10)]
    assert edges_to_close("former_employee_of", 50, 10, current) == [1]
    assert edges_to_close("former_employee_of", 50, 11, current) == [2]
    assert edges_to_close("former_employee_of", 50, 12, current) == [3]  # a job there: the job ends
    assert edges_to_close("former_employee_of", 50, 13, current) == []


def test_quitting_a_team_ends_the_membership_and_stores_no_job_there(agent):
    _write_all(agent, ["My daughter Maisie plays for the Corrib Herons.",
                       "maisie quit the herons, shes doing drama instead"], speaker="Ingrid Solberg")
    rels = {(r.source.display_name, r.rel_type, r.target.display_name, r.valid_to is None)
            for r in Relationship.objects.filter(agent=agent)}
    assert ("Maisie", "member_of", "Corrib Herons", False) in rels
    assert not any(rel == "works_at" for _, rel, _, _ in rels)


def test_facts_that_state_an_ended_value_are_found_by_name_and_slot_word():
    existing = [(1, "Irene Vos is Wren's boss"), (2, "Irene Vos got promoted"), (3, "Wren reports to Irene Vos"),
                (4, "Wren's girlfriend Irene Vos plays chess")]
    assert facts_naming_ended("manager", ["Irene Vos"], existing) == [1, 3]
    assert facts_naming_ended("partner", ["Irene Vos"], existing) == [4]


def test_a_correction_plan_restates_facts_and_moves_edges():
    plan = plan_correction(
        wrong_id=7, right_id=9, wrong_names=["Ridgeway"], right_name="Riverside",
        facts=[(1, "Wren moved to Ridgeway last weekend", "Ridgeway"), (2, "Wren loves jazz", "")],
        edges=[CurrentEdge(5, 3, "lives_in", 7), CurrentEdge(6, 3, "works_at", 8)],
    )
    assert plan.facts == {1: ("Wren moved to Riverside last weekend", "Riverside")}
    assert plan.edges == {5: (3, 9)}


# --- the extractor -------------------------------------------------------------------------------

def test_correction_sentences_name_the_right_and_the_wrong_entity():
    for text in ["Sorry, I meant Riverside, not Ridgeway.", "Wait, sorry — it's Lyft, not Uber.",
                 "Correction: it's Northgate Clinic, not Southgate Clinic.",
                 "Oops, I said Ridgeway but I meant Riverside."]:
        ex = extract_offline(text, speaker="Wren Adler", known_names=["Ridgeway", "Uber", "Southgate Clinic"])
        assert len(ex.corrections) == 1, text
        assert not ex.facts, text
    ex = extract_offline("It's Lyon, not Lille, that I love.", speaker="Wren Adler")
    assert not ex.corrections
    assert correction_in("\x021\x03 is great, not \x022\x03") is None


def test_cessations_of_a_habit_and_a_switch():
    assert cessations("Haven't been rowing since I broke my wrist.")[0][1] == ["row"]
    assert cessations("I haven't seen Tomas since May.") == []
    assert cessations("Dr. Brandt switched me from lisinopril to amlodipine.") == [("me", ["lisinopril"])]


def test_no_time_for_a_pastime_ends_it_but_one_busy_day_does_not():
    assert cessations("I don't have time for sailing these days.") == [("I", ["sail"])]
    assert cessations("Honestly I have no time for chess any more.") == [("I", ["chess"])]
    assert cessations("I didn't have time for lunch today.") == []
    assert cessations("We have time for a quick swim before dinner.") == []


def test_roles_and_reporting_lines_are_extracted_as_slots():
    ex = extract_offline("My supervisor there, Tobias Lenz, is very relaxed.", speaker="Wren Adler")
    assert ("Tobias Lenz", "manager_of", "Wren Adler") in {(r.source, r.rel_type, r.target) for r in ex.relations}
    ex = extract_offline("Irene moved to the Oslo office, so now I report to Omar Haddad.", speaker="Wren Adler",
                         known_names=["Irene Vos"])
    rels = {(r.source, r.rel_type, r.target) for r in ex.relations}
    assert ("Wren Adler", "reports_to", "Omar Haddad") in rels
    assert any(f.slot == "role:manager" and f.value == "Omar Haddad" for f in ex.facts)


def test_a_kin_word_in_parentheses_is_an_alias():
    ex = extract_offline("My parents, Tomas Weller (Dad) and Alma Weller (Mum), live in Ghent.", speaker="Wren Adler")
    aliases = {e.name: e.aliases for e in ex.entities}
    assert aliases["Tomas Weller"] == ["Dad"] and aliases["Alma Weller"] == ["Mum"]


def test_a_verb_opening_a_sentence_is_not_part_of_the_name():
    ex = extract_offline("Left Quillfern last month.", speaker="Wren Adler")
    assert "Quillfern" in {e.name for e in ex.entities}
    assert ("Wren Adler", "former_employee_of", "Quillfern") in {(r.source, r.rel_type, r.target) for r in ex.relations}


# --- the write path ------------------------------------------------------------------------------

def test_a_new_specialist_replaces_the_old_one(agent):
    _write_all(agent, ["My dentist is Dr. Hollis Brandt at the Eastfield practice.",
                       "Dr. Brandt moved away, so my new dentist is Dr. Mira Castell."])
    edges = _current_edges(agent)
    assert ("Mira Castell", "dentist_of", "Wren Adler") in edges
    assert ("Hollis Brandt", "dentist_of", "Wren Adler") not in edges
    # what is current names Hollis as the dentist only beside the one who replaced him
    assert not [t for t in _current_texts(agent) if "Hollis" in t and "dentist" in t and "Mira" not in t]


def test_now_i_report_to_replaces_the_boss(agent):
    _write_all(agent, ["My boss is Irene Vos. She is strict but kind.",
                       "Irene moved to the Oslo office, so now I report to Omar Haddad."])
    edges = _current_edges(agent)
    assert ("Wren Adler", "reports_to", "Omar Haddad") in edges
    assert not any("Irene Vos" in (s, t) and rel in ("manager_of", "reports_to") for s, rel, t in edges)
    assert not [t for t in _current_texts(agent) if "Irene" in t and "boss" in t]


def test_a_described_manager_is_no_longer_current_once_replaced(agent):
    # the old manager is named inside a longer sentence, not in a plain "X is my boss" fact
    _write_all(agent, ["I started at Pellworth Foods in May.",
                       "My supervisor there, Irene Vos, lets me pick my own projects, which I love.",
                       "Irene retired in the spring, so now I report to Omar Haddad."])
    assert ("Wren Adler", "reports_to", "Omar Haddad") in _current_edges(agent)
    assert not [t for t in _current_texts(agent) if "Irene" in t and "supervisor" in t]


def test_a_habit_not_done_since_closes(agent):
    _write_all(agent, ["Started rowing three mornings a week on the canal.",
                       "Haven't been rowing since I broke my wrist, and I don't think I'm going back."])
    assert not [t for t in _current_texts(agent) if "rowing three mornings" in t]


def test_a_switched_medication_closes_the_old_one(agent):
    _write_all(agent, ["My GP is Dr. Hollis Brandt. He has me on lisinopril, 10 mg a day.",
                       "Dr. Brandt switched me from lisinopril to amlodipine last week."])
    current = _current_texts(agent)
    assert not [t for t in current if "lisinopril" in t and "switched" not in t]
    assert any("amlodipine" in t for t in current)


def test_an_employer_laying_off_the_speaker_ends_the_job(agent):
    _write_all(agent, ["I'm a payroll clerk at Fenwick Logistics.",
                       "Fenwick Logistics laid off forty people on Monday, including me."])
    assert not any(rel == "works_at" for _, rel, _ in _current_edges(agent))
    assert not [t for t in _current_texts(agent) if "payroll clerk" in t]


def test_leaving_ends_the_offer_and_the_job(agent):
    _write_all(agent, ["Got an offer from Quillfern in Leipzig!", "I started at Quillfern on Monday.",
                       "Left Quillfern last month."])
    named = [t for t in _current_texts(agent) if "Quillfern" in t]
    assert named and all("left" in t.lower() or "no longer" in t for t in named), named


def test_a_breakup_closes_the_partner_facts(agent):
    _write_all(agent, ["My girlfriend Sol Romero just got a job at Kestrel Robotics.",
                       "Sol Romero and I split up in the spring."])
    assert not [t for t in _current_texts(agent) if "girlfriend" in t]
    assert not any(rel == "partner_of" for _, rel, _ in _current_edges(agent))
    # what else that sentence said is still true: Sol still works there
    assert ("Sol Romero", "works_at", "Kestrel Robotics") in _current_edges(agent)


def test_a_correction_replaces_the_name_just_said(agent):
    _write_all(agent, ["I live in Marlow.", "I moved to Ridgeway last weekend.",
                       "Sorry, I meant Riverside, not Ridgeway. Long day."], step=timedelta(hours=3))
    edges = _current_edges(agent)
    assert ("Wren Adler", "lives_in", "Riverside") in edges
    assert not any("Ridgeway" in (s, t) for s, _, t in edges)
    current = _current_texts(agent)
    assert any("Riverside" in t for t in current) and not any("Ridgeway" in t for t in current)
    riverside = Entity.objects.get(agent=agent, display_name="Riverside")
    assert riverside.type == "place" and riverside.key == "place:riverside"  # the key says the same type
    _write_all(agent, ["Riverside has a great farmers market."])  # found again, not a second Riverside
    assert Entity.objects.filter(agent=agent, display_name__iexact="Riverside").count() == 1


def test_a_correction_leaves_older_messages_alone(agent):
    _write_all(agent, ["I moved to Ridgeway last weekend.", "Sorry, I meant Riverside, not Ridgeway."],
               step=timedelta(days=30))
    assert ("Wren Adler", "lives_in", "Ridgeway") in _current_edges(agent)


def test_a_correction_changes_only_what_its_writer_said(agent):
    """Another speaker's statement naming the same town is theirs to correct, not the writer's."""
    at = T0
    for speaker, text in [("Wren Adler", "I moved to Ridgeway last weekend."),
                          ("Tobias Kell", "My cousin lives in Ridgeway too."),
                          ("Wren Adler", "Sorry, I meant Riverside, not Ridgeway.")]:
        assert memory_write(agent=agent, message=text, speaker_name=speaker, occurred_at=at).success
        at += timedelta(hours=1)
    edges = _current_edges(agent)
    assert ("Wren Adler", "lives_in", "Riverside") in edges
    assert ("Wren Adler", "lives_in", "Ridgeway") not in edges
    assert any("cousin" in t and "Ridgeway" in t for t in _current_texts(agent))


def test_a_correction_said_in_two_short_sentences(agent):
    _write_all(agent, ["My sister Ottilie Brandt is moving to Antwerp in June.",
                       "Argh, tired. It's Ghent. Not Antwerp. I have no idea why I wrote that."],
               step=timedelta(hours=2))
    current = _current_texts(agent)
    assert any("Ghent" in t for t in current) and not any("moving to Antwerp" in t for t in current)
    assert Entity.objects.filter(agent=agent, display_name="Ghent", type="place").exists()


def test_a_corrected_family_name_renames_the_person(agent):
    _write_all(agent, ["My nephew Caspar Lindqvist is dating Marisol Quintero from his choir.",
                       "Whoops, her surname is Quintana, not Quintero. Marisol Quintana.",
                       "Caspar and Marisol went to Bruges for the weekend."], step=timedelta(hours=5))
    current = _current_texts(agent)
    assert any("Marisol Quintana" in t for t in current)
    assert not any("Quintero" in t for t in current)
    people = Entity.objects.filter(agent=agent, type="person", merged_into__isnull=True,
                                   display_name__startswith="Marisol")
    assert [p.display_name for p in people] == ["Marisol Quintana"]  # "Marisol" alone is her, no one new


def test_a_month_written_short_is_stored_not_a_failed_write(agent):
    result = memory_write(agent=agent, message="I moved to Leeds in sept, loving it",
                          speaker_name="Wren Adler", occurred_at=T0)
    assert result.success


def test_how_long_an_ended_state_lasted_is_read_from_its_sentence():
    from memories.temporal import ended_after

    assert ended_after("I quit Halden Bank after almost six years, no regrets.") == timedelta(days=6 * 365)
    assert ended_after("she retired from the post office after 25 yrs") == timedelta(days=25 * 365)
    assert ended_after("left the choir after a couple of months") == timedelta(days=60)
    assert ended_after("I left the office after lunch") is None
    assert ended_after("moved out after 0 years") is None


def test_a_job_left_after_years_was_held_in_those_years(agent):
    """A state first told as it ends, with how long it lasted: an earlier moment sees it."""
    _write_all(agent, ["I left Halden Bank after almost six years, time for something new."])
    edge = Relationship.objects.get(agent=agent, rel_type="works_at", target__display_name="Halden Bank")
    assert edge.valid_to == T0 and edge.valid_from == T0 - timedelta(days=6 * 365)
    assert not Relationship.objects.current().filter(pk=edge.pk).exists()


def test_a_job_left_with_no_span_said_begins_where_it_ends(agent):
    _write_all(agent, ["I left Halden Bank last week, time for something new."])
    edge = Relationship.objects.get(agent=agent, rel_type="works_at", target__display_name="Halden Bank")
    assert edge.valid_from == edge.valid_to
