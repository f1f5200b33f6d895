"""Pure helpers for entity names: normalization, keys, pronouns and relationship terms."""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache

SPEAKER_PRONOUNS = frozenset({"i", "me", "my", "mine", "myself", "eu", "user", "the user", "speaker"})
RELATIONSHIP_TERMS = frozenset({
    "wife", "husband", "girlfriend", "boyfriend", "partner", "spouse", "mom", "mother", "dad", "father",
    "brother", "sister", "son", "daughter", "friend", "best friend", "boss", "coworker", "colleague",
    "manager", "grandma", "grandmother", "grandpa", "grandfather", "aunt", "uncle", "cousin", "kids",
    "children", "parents", "family", "amigo", "amiga",
})
_HONORIFICS = re.compile(r"^(mr|mrs|ms|dr|prof)\.?\s+", re.IGNORECASE)
_NON_WORD = re.compile(r"[^\w\s]+")
_SPACES = re.compile(r"\s+")


def strip_accents(text: str) -> str:
    if text.isascii():
        return text
    return "".join(c for c in unicodedata.normalize("NFKD", text) if not unicodedata.combining(c))


def normalize_alias(name: str) -> str:
    """"São  Paulo!" → "sao paulo": the form aliases are stored and matched in."""
    # the same names and fact texts are compared again on every write: short ones are cached
    return _normalize_cached(name) if len(name) <= 256 else _normalize(name)


@lru_cache(maxsize=8192)
def _normalize_cached(name: str) -> str:
    return _normalize(name)


def _normalize(name: str) -> str:
    text = strip_accents(name).casefold()
    text = _NON_WORD.sub(" ", text.replace("'s ", " ").replace("’s ", " "))
    return _SPACES.sub(" ", text).strip()


def slugify(name: str) -> str:
    return normalize_alias(name).replace(" ", "_") or "unnamed"


def entity_key(entity_type: str, name: str) -> str:
    return f"{normalize_type(entity_type)}:{slugify(_HONORIFICS.sub('', name.strip()))}"


def normalize_type(entity_type: str) -> str:
    value = (entity_type or "concept").strip().lower()
    return re.sub(r"\s+", "_", value) or "concept"


def is_speaker_reference(name: str) -> bool:
    """"I", "me", "my", or a bare relationship term ("girlfriend") — both mean the speaker."""
    norm = normalize_alias(name)
    bare = norm.removeprefix("my ").strip()
    return norm in SPEAKER_PRONOUNS or norm in RELATIONSHIP_TERMS or bare in RELATIONSHIP_TERMS


def ngrams(text: str, max_len: int = 4) -> set[str]:
    """Every run of 1..max_len words of the normalized text: the word-boundary candidates that
    an alias lookup compares against."""
    words = normalize_alias(text).split()
    out: set[str] = set()
    for size in range(1, max_len + 1):
        for start in range(0, len(words) - size + 1):
            out.add(" ".join(words[start : start + size]))
    return out


def mentions(text: str, name: str, min_length: int = 3) -> bool:
    """Word-boundary, case- and accent-insensitive test that `name` appears in `text`."""
    norm_name = normalize_alias(name)
    if len(norm_name) < min_length:
        return False
    return f" {norm_name} " in f" {normalize_alias(text)} "


# --- first names, short forms and diminutives --------------------------------------------------

# Common English short forms that no spelling rule derives (a rule covers "Dan"/"Daniel",
# "Danny"/"Daniel", "Kate"/"Katherine", "Becca"/"Rebecca", "Liz"/"Elizabeth").
_NICKNAMES = {
    "liz": "elizabeth", "lizzie": "elizabeth", "tom": "thomas", "tommy": "thomas",
    "bill": "william", "billy": "william", "will": "william", "liam": "william", "bob": "robert",
    "bobby": "robert", "rob": "robert", "robbie": "robert", "dick": "richard", "rick": "richard",
    "ricky": "richard", "jack": "john", "johnny": "john", "jim": "james", "jimmy": "james",
    "jamie": "james", "ted": "edward", "teddy": "edward", "ned": "edward", "chuck": "charles",
    "charlie": "charles", "hank": "henry", "harry": "henry", "paddy": "patrick", "pat": "patrick",
    "peggy": "margaret", "maggie": "margaret", "meg": "margaret", "molly": "mary", "polly": "mary",
    "sasha": "alexander", "sacha": "alexander", "alex": "alexander", "sandy": "alexandra",
    "tony": "anthony", "mike": "michael", "mickey": "michael", "nick": "nicholas", "sam": "samuel",
    "peg": "margaret", "betty": "elizabeth", "bess": "elizabeth", "beth": "elizabeth",
    "lisa": "elizabeth", "kathy": "katherine", "katie": "katherine", "kat": "katherine",
    "cathy": "catherine", "sue": "susan", "susie": "susan", "jenny": "jennifer", "jen": "jennifer",
    "abby": "abigail", "gabe": "gabriel", "joe": "joseph", "joey": "joseph", "steve": "stephen",
    "chris": "christopher", "kit": "christopher", "matt": "matthew", "andy": "andrew",
    "drew": "andrew", "greg": "gregory", "larry": "lawrence", "lenny": "leonard", "ron": "ronald",
    "don": "donald", "walt": "walter", "fred": "frederick", "freddie": "frederick", "al": "albert",
    "bia": "beatriz", "bea": "beatrice", "trish": "patricia", "tricia": "patricia", "patty": "patricia",
    "nate": "nathaniel", "zach": "zachary", "zack": "zachary", "ben": "benjamin", "benji": "benjamin",
    "manny": "emmanuel", "nacho": "ignacio", "pepe": "jose", "paco": "francisco", "lupe": "guadalupe",
}
_DIMINUTIVE_ENDINGS = ("ie", "y", "ey", "i")


def nickname_of(name: str) -> str:
    """The full first name a known nickname stands for ("Paddy" → "patrick"), else ""."""
    return _NICKNAMES.get(_fold(name), "")


def _fold(name: str) -> str:
    return normalize_alias(name).replace(" ", "")


def first_names_compatible(short: str, full: str) -> bool:
    """Could `short` be the first name `full` goes by? Same name up to accents and punctuation,
    a short form ("Dan"/"Daniel", "Sash"/"Sasha"), a diminutive ("Danny"/"Daniel",
    "Maddie"/"Madison", "Kate"/"Katherine"), a tail ("Becca"/"Rebecca") or a known nickname."""
    a, b = _fold(short), _fold(full)
    if not a or not b:
        return False
    if a == b:
        return True
    if len(a) > len(b):
        a, b = b, a
    if _NICKNAMES.get(a) == b or _NICKNAMES.get(a) == _NICKNAMES.get(b, b) and a in _NICKNAMES:
        return True
    if len(a) >= 3 and b.startswith(a):
        return True
    for ending in _DIMINUTIVE_ENDINGS:
        stem = a.removesuffix(ending)
        if stem != a and len(stem) >= 3 and (b.startswith(stem) or b.startswith(stem[:-1]) and stem[-1] == stem[-2]):
            return True
    if a.endswith("e") and len(a) >= 4 and b.startswith(a[:-1]):
        return True
    return len(a) >= 4 and b.endswith(a) and len(b) - len(a) <= 2


def person_names_compatible(a: str, b: str) -> bool:
    """Two person names that can denote one person: compatible first names, and the same
    surname when both carry one ("Sam Patel" is never "Sam Whitfield")."""
    ta, tb = (normalize_alias(_HONORIFICS.sub("", n).replace("'", "").replace("’", "")).split() for n in (a, b))
    if not ta or not tb:
        return False
    if len(ta) > 1 and len(tb) > 1 and ta[-1] != tb[-1]:
        return False
    return first_names_compatible(ta[0], tb[0])
