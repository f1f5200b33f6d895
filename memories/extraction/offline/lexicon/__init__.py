"""Word lists for the offline extractor, read from the data files beside this module: `words.toml`
(one whitespace-separated list per key), `kin.toml` (kin and social-role words with their relations),
`../frames.toml` (the frames and the verbs of people) and `../places.txt` (the gazetteer, built by
scripts/build_places.py). Everything is lower-case; callers compare `word.lower()`."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

from memories.naming import strip_accents
from memories.roles import ROLE_RELATIONS, ROLE_TERMS

_HERE = Path(__file__).parent


def _toml(path: Path) -> dict:
    return tomllib.loads(path.read_text(encoding="utf-8"))


def word_set(text: str) -> frozenset[str]:
    """Whitespace-separated words → frozenset."""
    return frozenset(text.split())


def alternation(words) -> str:
    """A regex alternation of `words`, escaped, the longest first ("grandma|gran")."""
    return "|".join(re.escape(w) for w in sorted(words, key=len, reverse=True))


FRAME_DATA = _toml(_HERE.parent / "frames.toml")
SPEECH_VERBS = frozenset(FRAME_DATA["people"]["speech"])
PERSON_VERBS = SPEECH_VERBS | frozenset(FRAME_DATA["people"]["life"])
MOVED_BY = frozenset(FRAME_DATA["people"]["moved_by"])

_WORDS = _toml(_HERE / "words.toml")
_W = {key: word_set(value) for key, value in _WORDS.items() if isinstance(value, str)}

STOP_CAPS = _W["stop_caps"]
NAME_KINDS = _W["name_kinds"]
CALENDAR_TAILS = _W["calendar_tails"]
GREETING_WORDS = _W["greeting_words"]
HONORIFICS = _W["honorifics"]
TITLE_MODIFIERS = _W["title_modifiers"]
CITY_ORG_HEADS = _W["city_org_heads"]
HONORIFICS_AFTER_WORD = _W["honorifics_after_word"]
TITLES_IN_LOWER_CASE = _W["titles_in_lower_case"]
NAME_CONNECTORS = _W["name_connectors"]
OF_HEADS = _W["of_heads"]
ORG_SUFFIXES = _W["org_suffixes"]
ORG_NOUNS = _W["org_nouns"]
ORG_PREFIXES = _W["org_prefixes"]
PLACE_SUFFIXES = _W["place_suffixes"]
STREET_WORDS = PLACE_SUFFIXES | _W["street_words"]
PET_GOODS = _W["pet_goods"]
CLUB_WORDS = _W["club_words"]
PLACE_PREFIXES = _W["place_prefixes"]
PERSONS_OCCASIONS = _W["persons_occasions"]

# The gazetteer (GeoNames' countries, US states and cities of 50,000+ people, less ordinary words and
# given names) and the places people name in chat that it lacks or that say "place" at full weight
# even alone.
_GAZETTEER = frozenset(
    line for line in (_HERE.parent / "places.txt").read_text(encoding="utf-8").splitlines()
    if line and not line.startswith("#")
)
# Romanian writes s and t with a comma below (ș, ț) where the gazetteer has the older cedilla (ş, ţ):
# a place reads the same either way
_GAZETTEER = _GAZETTEER | frozenset(p.translate(str.maketrans("şţ", "șț")) for p in _GAZETTEER)
_WRITTEN_PLACES = _W["written_places"] | frozenset(_WORDS["written_places_multi"])
PLACES = _GAZETTEER | _WRITTEN_PLACES
# the gazetteer's places as written without their marks ("lodz", "wroclaw"), read where a place is
# expected: some are also words ("colon", "sale")
FOLDED_PLACES = frozenset(strip_accents(p) for p in _GAZETTEER) - PLACES
# Other names of the larger cities ("lisboa", "saigon", "bangalore"; scripts/build_places.py) with the
# city's own name: one place either way
PLACE_OTHER_NAMES = dict(
    line.split("\t", 1) for line in (_HERE.parent / "place_names.txt").read_text(encoding="utf-8").splitlines()
    if line and not line.startswith("#")
)
# Capitals and larger cities whose one-word name is also an English word ("Bath", "Wellington",
# "Shanghai"; scripts/build_places.py; no given names): not in PLACES, so never a place by the list alone in lower case;
# capitalized, a lean to a place that the sentence's cues and a given name outweigh
WORD_PLACES = frozenset(
    line for line in (_HERE.parent / "word_places.txt").read_text(encoding="utf-8").splitlines()
    if line and not line.startswith("#")
)
# One word of the gazetteer alone is also many a family name ("Preston", "Sheffield"): it says
# place less firmly than a place people name in chat.
FAMILY_NAME_PLACES = frozenset(p for p in _GAZETTEER - _WRITTEN_PLACES if " " not in p)

# given names of many countries (scripts/build_names.py, from Faker), dictionary words left out: evidence
# that a word is a name, not a vote on its gender
WORLD_GIVEN_NAMES = frozenset(
    line for line in (_HERE.parent / "given_names.txt").read_text(encoding="utf-8").splitlines()
    if line and not line.startswith("#")
)
# family names of many countries (scripts/build_names.py, from Faker), ordinary lower-case English words
# left out: after a lower-case given name, "ana torres" is a person where "ana today" is not
WORLD_FAMILY_NAMES = frozenset(
    line for line in (_HERE.parent / "family_names.txt").read_text(encoding="utf-8").splitlines()
    if line and not line.startswith("#")
)
FEMALE_NAMES = _W["female_names"]
MALE_NAMES = _W["male_names"]
FIRST_NAMES = FEMALE_NAMES | MALE_NAMES | _W["unisex_names"]
GIVEN_NAMES = FIRST_NAMES | WORLD_GIVEN_NAMES  # every given name known: a word is a name
AMBIGUOUS_NAMES = _W["ambiguous_names"]


def sex_of(given: str) -> str:
    """"f" or "m" for a (lower-case) given name the name lists hold for that sex only; "" otherwise."""
    return "f" if given in FEMALE_NAMES and given not in MALE_NAMES else (
        "m" if given in MALE_NAMES and given not in FEMALE_NAMES else "")


def sexes_cross(short: str, full: str) -> bool:
    """"max" for Maxine, "dan" for Daniela: a (short) given name the name lists hold for one sex, beside
    a name they hold only for the other."""
    return (short in MALE_NAMES and full in FEMALE_NAMES and full not in MALE_NAMES) or (
        short in FEMALE_NAMES and full in MALE_NAMES and full not in FEMALE_NAMES)

# Kin and social-role term → (relation, the named person is the source).
_KIN = _toml(_HERE / "kin.toml")
KINSHIP: dict[str, tuple[str, bool]] = {
    term: (group["relation"], bool(group.get("named_first")))
    for group in _KIN["kin"]
    for term in (*group.get("female", ()), *group.get("male", ()), *group.get("other", ()))
}
# roles someone holds for the owner: one current holder each ("my dentist", "my landlord")
KINSHIP.update({term: (ROLE_RELATIONS[role], True) for term, role in ROLE_TERMS.items()})
FEMALE_KIN = frozenset(term for group in _KIN["kin"] for term in group.get("female", ()))
MALE_KIN = frozenset(term for group in _KIN["kin"] for term in group.get("male", ()))
# the words for one relative: "Dad" finds the man the writer called "my father"
SAME_KIN: tuple[frozenset[str], ...] = tuple(
    frozenset(group[gender]) for group in _KIN["kin"] if group.get("same") for gender in ("female", "male")
)
# the words a writer calls a parent or grandparent by, as if a name ("Dad sold his hives")
PARENT_NAMES, GRANDPARENT_NAMES = (
    frozenset(term for group in _KIN["kin"] if group.get("same") and group["relation"] == relation
              for term in (*group["female"], *group["male"]) if term not in group.get("formal", ()))
    for relation in ("parent_of", "grandparent_of")
)

# words for a woman or a man that are no kin ("a girl from my class", "the actor")
PERSON_NOUNS = {"female": _W["female_person_nouns"], "male": _W["male_person_nouns"]}
KIN_TITLES = _W["kin_titles"]
OCCUPATIONS = _W["occupations"]
PET_TERMS = _W["pet_terms"] | {w.replace("_", " ") for w in _W["two_word_pet_kinds"]}
KIN_MODIFIERS = _W["kin_modifiers"]

IRREGULAR_PAST = _W["irregular_past"]
ED_BASE_VERBS = _W["ed_base_verbs"]
SAME_FORM_VERBS = _W["same_form_verbs"]
PAST_PARTICIPLES = _W["past_participles"]
MODALS = _W["modals"]
ADVERBS = _W["adverbs"]
LY_VERBS = _W["ly_verbs"]
COLLOQUIAL_VERBS: dict[str, str] = dict(_WORDS["colloquial_verbs"])
CHAT_FORMS: dict[str, str] = dict(_WORDS["chat_forms"])
CHAT_WORDS = _W["chat_words"]

ABBREVIATIONS = _W["abbreviations"]
CORP_ABBREVIATIONS = _W["corp_abbreviations"]
