"""The golden comparison itself: a case passes only when the memory holds what it expects, in the
state it expects — so a golden case cannot pass by looking at nothing."""

import pytest

from tests.golden.golden import Stored, compare, load_cases


def _memory(*edges, facts=(), names=None) -> Stored:
    """Entities 1..n named after `names` (default Ana Souza, Porto, Lisbon, Rui), edges as
    (source, rel, target, current)."""
    stored = Stored()
    for eid, (name, etype) in enumerate(names or [("Ana Souza", "person"), ("Porto", "place"), ("Lisbon", "place"),
                                                  ("Rui", "person")], start=1):
        stored.entities[eid] = (name, etype, frozenset({name.lower()}))
    stored.relationships = list(edges)
    stored.facts = list(facts)
    return stored


def _rel(relation, obj, state="current", subject="Ana Souza"):
    return {"relationships": [{"subject": subject, "relation": relation, "object": obj, "state": state}]}


def test_a_current_link_needs_a_current_edge_of_that_relation():
    assert compare(_memory((1, "lives_in", 2, True)), _rel("lives_in", "Porto")) == []
    assert compare(_memory((1, "lives_in", 2, False)), _rel("lives_in", "Porto"))
    assert compare(_memory((1, "lived_in", 2, True)), _rel("lives_in", "Porto"))
    assert compare(_memory(), _rel("lives_in", "Faro")) == [
        "Ana Souza -lives_in-> Faro (current): no entity named 'Faro'"]


def test_either_end_of_a_symmetric_edge_and_the_inverse_of_a_directed_one_count():
    assert compare(_memory((4, "sibling_of", 1, True)), _rel("sibling_of", "Rui")) == []
    assert compare(_memory((1, "reports_to", 4, True)), _rel("manager_of", "Ana Souza", subject="Rui")) == []
    assert compare(_memory((4, "parent_of", 1, True)), _rel("parent_of", "Rui"))


def test_an_ended_link_is_not_current_and_was_recorded():
    assert compare(_memory((1, "lives_in", 2, False)), _rel("lives_in", "Porto", "ended")) == []
    assert compare(_memory((1, "lived_in", 2, True)), _rel("lives_in", "Porto", "ended")) == []
    assert compare(_memory(), _rel("lives_in", "Porto", "ended")) == [
        "Ana Souza -lives_in-> Porto (ended): no past link stored"]
    assert compare(_memory((1, "lives_in", 2, True), (1, "lives_in", 2, False)), _rel("lives_in", "Porto", "ended"))


def test_an_absent_link_may_be_past_but_never_current():
    assert compare(_memory(), _rel("lives_in", "Porto", "absent")) == []
    assert compare(_memory((1, "lives_in", 3, False)), _rel("lives_in", "Lisbon", "absent")) == []
    assert compare(_memory((1, "lives_in", 3, True)), _rel("lives_in", "Lisbon", "absent"))


def test_another_name_must_denote_the_entity_and_no_other():
    people = [("Katarzyna Nowak", "person"), ("Kasia", "person")]
    want = {"entities": [{"name": "Katarzyna Nowak", "type": "person", "aliases": ["Kasia"]}]}
    assert compare(_memory(names=people), want) == ["'Kasia' does not name 'Katarzyna Nowak' (it names ['Kasia'])"]
    alone = _memory(names=people[:1])
    assert compare(alone, want, resolve=lambda name, etype: 1) == []
    assert compare(alone, want, resolve=lambda name, etype: None)
    assert compare(alone, {"entities": [{"name": "Katarzyna Nowak", "type": "organization"}]})
    assert compare(_memory(names=people), {"people": 1}) == [
        "2 people stored, 1 expected: ['Kasia', 'Katarzyna Nowak']"]


def test_facts_by_words_slot_and_state():
    loves = (1, frozenset({1}), "Ana Souza loves climbing", "", "", False)
    gave_up = (1, frozenset({1}), "Ana Souza gave up climbing", "", "", True)
    home = (4, frozenset({4, 1}), "Rui lives with Ana Souza in Porto", "lives_in", "Porto", True)
    memory = _memory(facts=[loves, gave_up, home])
    assert compare(memory, {"facts": [{"subject": "Ana Souza", "has": "climb", "state": "ended"}]}) == []
    assert compare(memory, {"facts": [{"subject": "Ana Souza", "has": "limbing"}]})  # words start at a word
    assert compare(memory, {"facts": [{"subject": "Ana Souza", "has": "Porto"}]}) == []  # named in Rui's fact
    assert compare(memory, {"facts": [{"subject": "Ana Souza", "slot": "lives_in", "value": "Porto"}]})
    assert compare(memory, {"facts": [{"subject": "Rui", "slot": "lives_in", "value": "porto"}]}) == []
    assert compare(memory, {"facts": [{"subject": "Ana Souza", "has": "loves", "state": "absent"}]}) == []
    assert compare(memory, {"facts": [{"subject": "Ana Souza", "has": "gave up", "state": "ended"}]})


@pytest.mark.parametrize("case", [
    "  - id: typo-01\n    messages: [\"I live in Porto.\"]\n    expect:\n"
    "      relationships: [{subject: Ana Souza, relation: lives_in, object: Porto, stat: ended}]\n",
    "  - id: typo-02\n    messages: [\"I live in Porto.\"]\n    expect:\n"
    "      relationships: [{subject: Ana Souza, relation: live_in, object: Porto, state: absent}]\n",
    "  - id: typo-03\n    messages: [\"I live in Porto.\"]\n    expect:\n      relations: []\n",
])
def test_a_misspelt_case_is_refused_rather_than_passed(tmp_path, case):
    (tmp_path / "lives_in.yaml").write_text(f"frame: lives_in\nspeaker: Ana Souza\ncases:\n{case}")
    with pytest.raises(AssertionError):
        load_cases(tmp_path)
