"""The shorter forms of a forgotten person's name, and which of them are hers (pure functions),
and the redaction helpers a forget uses: names inside identifiers, capitalized-only forms, opaque
keys, request-key digests, contact details."""

from __future__ import annotations

from memories.name_forms import FAMILY, GIVEN, INITIAL, TITLED, KnownName, forms_hers, name_forms
from memories.redaction import (
    KeyRewriter,
    NameMatcher,
    opaque_key,
    redact_contacts,
    request_key_digest,
)

ORDINARY = {"will", "may", "green", "rose"}


def decide(names, known=()):
    return {d.kind: d for d in name_forms(names, [KnownName(label, tuple(n)) for label, n in known],
                                          ordinary_word=ORDINARY.__contains__)}


def test_a_full_name_gives_its_family_name_titled_initialled_and_its_given_name():
    forms = decide(["ilse brandt"])
    assert forms[FAMILY].forms == ("brandt",) and forms[GIVEN].forms == ("ilse",)
    assert {"frau brandt", "mrs brandt", "dr brandt", "herr brandt"} <= set(forms[TITLED].forms)
    assert forms[INITIAL].forms == ("i brandt",) and forms[INITIAL].shown == "I. Brandt"
    assert all(d.hers for d in forms.values())
    anycase, capitalized = forms_hers(forms.values())
    assert capitalized == {"brandt", "ilse"} and "i brandt" in anycase  # one word: capitalized only


def test_a_family_name_with_a_particle_keeps_it_and_a_one_word_name_gives_nothing():
    assert decide(["ana da silva"])[FAMILY].forms == ("da silva",)
    assert decide(["zo"]) == {} and decide(["dr brandt"]) == {}  # a title and a family name is no full name


def test_another_known_person_with_her_family_name_keeps_the_shared_forms():
    forms = decide(["ilse brandt"], [("Klaus Brandt", ["klaus brandt"])])
    assert not forms[FAMILY].hers and forms[FAMILY].also == ["Klaus Brandt"]
    assert not forms[TITLED].hers and "could also mean Klaus Brandt" in forms[TITLED].reason
    assert forms[INITIAL].hers and forms[GIVEN].hers  # "I. Brandt" and "Ilse" can only be her
    same_initial = decide(["ilse brandt"], [("Ingo Brandt", ["ingo brandt"])])
    assert not same_initial[INITIAL].hers and same_initial[INITIAL].also == ["Ingo Brandt"]
    same_given = decide(["ilse brandt"], [("Ilse Weber", ["ilse weber"])])
    assert not same_given[GIVEN].hers and same_given[FAMILY].hers


def test_a_title_another_entity_goes_by_stays_theirs_and_ordinary_words_are_never_forms():
    forms = decide(["ilse brandt"], [("The landlord", ["the landlord", "herr brandt"])])
    assert forms[TITLED].hers and "herr brandt" not in forms[TITLED].forms and "frau brandt" in forms[TITLED].forms
    common = decide(["will green"])
    assert not common[GIVEN].hers and common[GIVEN].reason == "also an ordinary word"
    assert not common[FAMILY].hers and not common[INITIAL].hers  # "w green" / "a green" read as text
    assert common[TITLED].hers  # "Mr Green" is still him


def test_the_matcher_finds_names_inside_identifiers_and_one_word_forms_only_capitalized():
    m = NameMatcher.from_names(["Ilse Brandt", "frau brandt", "i brandt"], key=b"k", capitalized=["brandt"])
    assert m.redact("note-ilse-brandt-1 / person:ilse_brandt") == "note-[redacted]-1 / person:[redacted]"
    assert m.redact("Frau Brandt and I. Brandt; Brandt") == "[redacted] and [redacted]; [redacted]"
    assert m.redact("a brandt of wine") == "a brandt of wine"
    tomb = NameMatcher.from_digests(m.digests, key=b"k", max_words=m.max_words, capitalized=m.capitalized)
    assert tomb.redact("Brandt called") == "[redacted] called" and "brandt" not in repr(tomb.capitalized)


def test_keys_become_opaque_whole_and_request_keys_keyed_digests():
    keys = KeyRewriter({"person:ilse_brandt": opaque_key("person", 12)})
    assert keys.rewrite_json({"person:ilse_brandt": ["x person:ilse_brandt", "person:ilse_brandtx"]}) == {
        "person:forgotten-12": ["x person:forgotten-12", "person:ilse_brandtx"]}
    digest = request_key_digest("note-ilse-brandt-1", key=b"k", field="external_id")
    assert digest.startswith("redacted:") and "ilse" not in digest
    assert digest == request_key_digest("note-ilse-brandt-1", key=b"k", field="external_id")
    assert digest != request_key_digest("note-ilse-brandt-1", key=b"k", field="idempotency_key")
    assert digest != request_key_digest("note-ilse-brandt-1", key=b"other", field="external_id")
    assert request_key_digest(digest, key=b"k", field="external_id") == digest


def test_contact_details_go_from_a_message_that_names_her_dates_and_short_numbers_stay():
    assert (redact_contacts("[redacted] moved. Her number is 0151 2345678, mail ilse.b@example.org. "
                            "We met on 2024-03-05, flat 12.")
            == "[redacted] moved. Her number is [redacted], mail [redacted]. We met on 2024-03-05, flat 12.")
    assert redact_contacts("Call Bruno on 0151 2345678.") == "Call Bruno on 0151 2345678."
