from datetime import UTC, datetime

import pytest

from retrieval.planner import plan_query

NOW = datetime(2024, 6, 12, tzinfo=UTC)


def plan(q, types=frozenset({"person", "project"})):
    return plan_query(q, now=NOW, entity_ids=[], known_types=set(types))


@pytest.mark.parametrize("query", ["hi", "Hello!", "thanks", "ok", "bom dia", "👍", "...", ""])
def test_greetings_and_trivial_queries_skip(query):
    assert plan(query).strategy == "skip"


def test_a_real_question_runs_all_signals():
    p = plan("Where does Marcos Tavares live?")
    assert p.strategy == "multi_signal" and p.reason == "deterministic" and not p.broad_query


def test_aggregation_only_for_types_the_agent_has():
    assert plan("list my projects").pattern_types == ["project"]
    assert plan("list my projects", types={"person"}).pattern_types == []
    assert plan("who are my friends?").pattern_rel_types == ["friend_of"]


def test_broad_queries_widen_the_graph():
    assert plan("tell me everything about Ana").broad_query


def test_temporal_expression_becomes_a_window():
    p = plan("what did I do yesterday?")
    assert p.window and p.window.start.day == 11


@pytest.mark.parametrize("query", ["What books has John read?", "What activities does Melanie partake in?",
                                   "What do Jon and Gina both have in common?", "How many hikes has Joanna been on?",
                                   "What kinds of art does Caroline make?", "list my projects"])
def test_questions_asking_for_several_things_are_enumerations(query):
    assert plan(query).intent == "enumeration"


@pytest.mark.parametrize("query", ["What did Maria adopt?", "What does Melanie do to destress?",
                                   "Where does Marcos Tavares live?", "What is Caroline's relationship status?",
                                   "When did Nate win his first tournament?"])
def test_questions_about_one_thing_are_lookups(query):
    assert plan(query).intent == "lookup"
