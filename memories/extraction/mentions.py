"""How a message names people and things the agent may already know, in English: runs of
capitalized words, relatives said with or without their names ("my brother", "my cousin Ama",
"Dad", "Lena's husband"), a writer who introduces themselves, lower-case writing. Read by the
write path's alias lookup (memories/pipeline/write/lookup.py) and by retrieval's entity hints.
Pure functions over text: which known entity a phrase stands for is the caller's to look up."""

from __future__ import annotations

import re

from memories.extraction.offline.lexicon import (
    CLUB_WORDS,
    FIRST_NAMES,
    HONORIFICS_AFTER_WORD,
    KIN_TITLES,
    KINSHIP,
    ORG_NOUNS,
    ORG_SUFFIXES,
    PARENT_NAMES,
    PET_TERMS,
    PLACES,
    STOP_CAPS,
)
from memories.extraction.offline.parse import is_common_word, opens_as_subject_of_a_life, parse
from memories.extraction.offline.text import normalize_message, split_sentences
from memories.extraction.offline.text import possessive_stems as possessive_stems  # for the alias lookup
from memories.naming import HONORIFICS_AFTER_HYPHEN, LOWER_LETTERS, UPPER_LETTERS, normalize_alias

_LO = LOWER_LETTERS  # a lower-case letter, in a character class
_UP = UPPER_LETTERS  # a capital letter, in a character class

# "Stanford" for Stanford University: the generic last words of an organization's name
ORGANIZATION_TAILS = ORG_SUFFIXES

_TITLE = r"(?:Mr|Mrs|Ms|Miss|Mx|Dr|Doctor|Prof|Professor)\.?\s+"
_CAP_WORD = rf"[{_UP}][\w'’-]*"
_INITIALS = rf"(?:[{_UP}]\.\s*){{1,3}}\s"  # "H. Whitby", "J. R. R. Tolkien": a given name's initials
_NAME_RUN = re.compile(rf"(?<![\w'’.])(?:{_TITLE})?(?:{_INITIALS})?{_CAP_WORD}(?:\s+{_CAP_WORD}){{0,2}}")


def name_runs(text: str) -> list[str]:
    """Runs of one to three capitalized words (a leading title kept, a possessive "'s" and a
    sentence's opening filler such as "So" or "Yesterday" dropped): the names that an alias
    lookup by n-grams can miss ("Paddy", "Dr. Fisher", "BofA")."""
    out = []
    for match in _NAME_RUN.finditer(text):
        words = [re.sub(r"['’]s$", "", w) for w in match.group().split()]
        titled = re.match(_TITLE, match.group()) is not None
        while not titled and words and words[0].lower().strip("'’") in STOP_CAPS:
            words = words[1:]
        while words and words[-1].lower() in STOP_CAPS:
            words = words[:-1]
        if words and not (len(words) == 1 and titled):
            out.append(" ".join(words))
    return list(dict.fromkeys(out))


_GENERIC_ORG_WORDS = ORG_SUFFIXES | ORG_NOUNS


def may_be_short_organization_name(word: str) -> bool:
    """A single capitalized word that can be the first word of a known organization's name used
    alone ("Huron" for Huron Realty Group): not a common word, not a place ("Boston" is no short
    name of Boston University)."""
    return " " not in word and not is_common_word(word.lower()) and word.lower() not in PLACES


# --- relatives ---------------------------------------------------------------------------------------

_KIN_WORDS = "|".join(sorted((re.escape(k) for k in KINSHIP), key=len, reverse=True))
# "my brother" — followed by his name ("my brother Tom") or not ("my brother moved to Austin")
_MY_KIN = re.compile(rf"\b(?:my|our)\s+(?P<kin>{_KIN_WORDS})\b(?P<named>\s*,?\s*\(?(?-i:[{_UP}]))?(?!'s)", re.I)
_MY_PARENTS = re.compile(rf"\b(?i:my|our)\s+parents\b(?![’']|\s*,?\s*\(?[{_UP}])")
# "left Brackenbury's", "quit brackenbury's": a name said in the possessive that owns nothing a person
# would (a relative, a pet) — how a business called after its owner is named for short
_PETS_ALT = "|".join(sorted((re.escape(p) for p in PET_TERMS), key=len, reverse=True))
# verbs and prepositions that put someone in or out of an organization ("at", "quit", "joined")
_BELONGING = r"at|from|for|with|to|into|in|quit(?:s|ting)?|left|leaves?|leaving|join(?:s|ed|ing)?"
_POSSESSIVE_NAME = re.compile(
    rf"\b(?:{_BELONGING})\s+"
    rf"(?P<name>[^\W\d_][\w-]{{2,}})['’]s(?![\w'’])(?!\s+(?:{_KIN_WORDS}|{_PETS_ALT})s?\b)", re.I)


def possessive_names(message: str) -> dict[str, str]:
    """The words said in the possessive after a verb or preposition of belonging, with no relative or
    pet after them ("Brackenbury", "brackenbury"), each with its possessive as written
    ("Brackenbury's"); function words left out ("everyone's", "today's")."""
    return {m.group("name"): m.group()[m.start("name") - m.start():] for m in _POSSESSIVE_NAME.finditer(message)
            if not is_common_word(m.group("name").lower())}


def owns_nothing(message: str, written: str) -> bool:
    """The possessive `written` owns nothing after it: not "at Thistlewood's funeral", nor "'s" for
    "is" ("Sloane's moving"). Parses the message: asked only of names that stand for something known."""
    owned = {t.idx for t in parse(message) if (t.pos_ in ("NOUN", "PROPN", "AUX") or t.tag_ in ("VBG", "VBN"))
             and t.lower_ not in _WHEN}  # "the manager at brackenbury's sent me home": the shop's, then the verb
    for found in re.finditer(re.escape(written), message):
        after = next((i for i in range(found.end(), len(message)) if not message[i].isspace()), -1)
        if after not in owned:
            return True
    return False


_WHEN = frozenset({"today", "yesterday", "tonight", "week", "month", "year", "night", "morning"})


# "quit the hornets", "transferred from the Polytechnic": a word of an organization's name after "the",
# where a verb or a preposition of belonging puts it
_THE_WORD = re.compile(
    rf"\b(?:{_BELONGING}|of|up)\s+the\s+"
    r"(?P<word>[^\W\d_][\w-]{3,})(?![\w'’-])"
    # not "the Quillon in Wexley", "the team at ⟨firm⟩", "the club at her new school": another one, said where
    r"(?!\s+(?:in|at|of|from|near|on|for)\s)", re.I)
# what ends a belonging said of "the choir", "the club" ("gave up the choir", "quit the team")
_ENDS_THE = re.compile(r"\b(?:quit(?:s|ting)?|left|leaves?|leaving|(?:gave|given|give|giving)\s+up|"
                       r"(?:dropped|drop|dropping)\s+out\s+of|(?:resigned|withdrew|withdrawn)\s+from)\s+$", re.I)


def club_words_after_the(message: str) -> set[str]:
    """The words of `CLUB_WORDS` said after "the" by a verb that ends a belonging ("quit the choir",
    "gave up the team")."""
    return {w for m in _THE_WORD.finditer(message) if (w := m.group("word")).lower() in CLUB_WORDS
            and _ENDS_THE.search(message, 0, m.start("word") - 4)}


def words_after_the(message: str) -> set[str]:
    """The words said so ("hornets", "Polytechnic"), as written: not function words, places, nor
    the generic words of organizations ("the council", "the bakery": any one of them)."""
    return {w for m in _THE_WORD.finditer(message) if (w := m.group("word")).lower() not in _GENERIC_ORG_WORDS
            and not is_common_word(w.lower()) and w.lower() not in PLACES}


def heads_its_phrase(message: str, word: str) -> bool:
    """`word`, said after "the", is the noun of its phrase, not a word that qualifies the noun after it
    ("from the surf shop"). Parses the message: asked only of words that name something known."""
    starts = {m.start("word") for m in _THE_WORD.finditer(message) if m.group("word") == word}
    return any(t.idx in starts and not (t.dep_ in ("compound", "amod", "nmod") and t.head.i > t.i)
               for t in parse(message))


# "Tess's husband" said without his name (no name follows)
_THEIR_KIN = re.compile(
    rf"(?P<owner>[{_UP}][\w-]+(?:\s+[{_UP}][\w-]+)?)['’]s\s+(?P<kin>(?i:{_KIN_WORDS}))\b"
    rf"(?!\s*,?\s*\(?[{_UP}])(?!['’]s)")
# "Dad sold his hives", "mam moved into sheltered housing": the word for a parent used as a name
_PARENT_CALLED = re.compile(
    rf"(?<![\w'’])(?P<word>{'|'.join(sorted(PARENT_NAMES, key=len, reverse=True))})(?!\w|['’](?!s\b))", re.I)
# … but not when something says whose parent it is ("my dad" is _MY_KIN's, "Tom's mum" is Tom's)
_OWNED_BEFORE = re.compile(
    r"(?:\b(?:my|our|your|his|her|their|the|a|an|one|another|some|any|every|each|this|that|no)|['’]s?)\s+$", re.I)
_KIN_TITLE_WORDS = "|".join(sorted((re.escape(k) for k in KIN_TITLES), key=len, reverse=True))
# "my cousin Emeka", "Cousin Emeka", "Uncle Tunde": a first name said with the writer's kin word
_KIN_NAMED = re.compile(
    rf"(?:\b(?i:my|our)\s+(?P<kin>(?i:{_KIN_WORDS}))\s*,?\s+|(?<![\w'’])(?P<title>(?i:{_KIN_TITLE_WORDS}))\s+)"
    rf"(?P<name>[{_UP}][\w'’-]+)(?!\s+[{_UP}])")
# the name first, the kin word after it: "Mateo (my brother, not ...)", "Ines, my cousin,"
_NAMED_KIN = re.compile(
    rf"(?<![\w'’-])(?P<name>[{_UP}][\w'’-]+)\s*(?:\(|,)\s*(?i:my|our)\s+(?P<kin>(?i:{_KIN_WORDS}))\b")


def is_unnamed_relative(phrase: str) -> bool:
    """"my brother" as a whole: the words a message used for a relative it did not name."""
    match = _MY_KIN.fullmatch(phrase.strip())
    return match is not None and not match.group("named")


def unnamed_relatives(message: str) -> list[tuple[str, str]]:
    """(phrase, kin word) for each of the writer's relatives the message names only by kin
    ("my brother moved to Austin" → ("my brother", "brother")), unless the message also names a
    relative of that kin ("my brother Tom ... my brother": it names him itself)."""
    phrases = list(_MY_KIN.finditer(message))
    named = {m.group("kin").lower() for m in phrases if m.group("named")}
    said = {m.group(0).lower(): m.group("kin").lower() for m in phrases if not m.group("named")}
    return [(phrase, kin) for phrase, kin in said.items() if kin not in named]


def parents_phrase(message: str) -> str | None:
    """"my parents" said without names, as the message wrote it."""
    said = _MY_PARENTS.search(message)
    return said.group(0) if said else None


def relatives_of_others(message: str) -> list[tuple[str, str, str]]:
    """(owner, kin word, phrase) for a relative said as someone else's without a name ("Lena's
    husband landed a job" → ("Lena", "husband", "Lena's husband"))."""
    return [(m.group("owner"), m.group("kin").lower(), m.group(0)) for m in _THEIR_KIN.finditer(message)]


def parent_words_as_names(message: str) -> list[str]:
    """The words for a parent used as a name ("Dad sold his hives"; in lower-case writing
    "mam moved"), not those that say whose parent it is ("my dad", "Tom's mum")."""
    lower_case = writes_in_lower_case(message)
    words = []
    for match in _PARENT_CALLED.finditer(message):
        word = match.group("word")
        if (word[0].isupper() or lower_case) and not _OWNED_BEFORE.search(message[: match.start()]):
            words.append(word)
    return words


def named_relatives(message: str) -> list[tuple[str, str]]:
    """(kin word, first name) for a relative said with the writer's kin word and a first name
    ("my cousin Emeka", "Cousin Emeka", "Uncle Tunde"); a kin title counts capitalized only."""
    found = []
    for match in _KIN_NAMED.finditer(message):
        if match.group("title") and not match.group("title")[0].isupper():
            continue
        found.append(((match.group("kin") or match.group("title")).lower(), match.group("name")))
    found += [(match.group("kin").lower(), match.group("name")) for match in _NAMED_KIN.finditer(message)]
    return found


# --- the writer and the way they write ----------------------------------------------------------------

_SENTENCE_OPENING = re.compile(r"(?:^|[.!?]\s+)[^\w]*(\w+)")
_SENTENCE_BREAK = re.compile(r"(?<=[.!?])\s+")
_SENTENCE_OR_LINE_BREAK = re.compile(r"(?<=[.!?])\s+|\n+")


def message_sentences(message: str) -> list[str]:
    """A message's sentences and lines, as a write reads which sentence names what."""
    return _SENTENCE_OR_LINE_BREAK.split(message or "")


def writes_in_lower_case(message: str) -> bool:
    """The writer does not capitalize: no sentence opens with a capital letter (a shouted one,
    "ON VALENTINES DAY.", says nothing of it)."""
    openings = _SENTENCE_OPENING.findall(message)
    return bool(openings) and not any(w[0].isupper() and not (w.isupper() and len(w) > 1) for w in openings)


def lower_case_words(message: str) -> set[str]:
    """In lower-case writing, the words that may be first names ("freya and i split up"): three
    letters or more, not function words."""
    return {w for w in re.findall(rf"[{_LO}]{{3,}}", message) if not is_common_word(w)}


# "chloe b did karaoke", "Jack T. called": a given name and the initial of a family name. A
# lone a or i is a word, and in lower case u, n, r, y, k and x are chat's words for you, and,
# are, why, okay and a kiss.
_NAME_AND_INITIAL = re.compile(
    r"(?<![\w'’])(?P<given>[^\W\d_]{2,})\s+(?P<initial>(?![aiunrykxI]\b)[^\W\d_])\.?(?![\w'’-])")


def names_with_initial(message: str) -> list[tuple[str, str, str]]:
    """(phrase, given name, initial) for each given name said with the initial of a family name:
    ("chloe b", "chloe", "b"). The caller keeps those that fit exactly one known person."""
    return [(f"{m.group('given')} {m.group('initial')}{'.' if m.group().endswith('.') else ''}", m.group("given"),
             m.group("initial"))
            for m in _NAME_AND_INITIAL.finditer(message)
            if m.group("given").lower() not in STOP_CAPS and not is_common_word(m.group("given").lower())
            # "sophie A just told us": a capital A after a name in lower case is an initial, not "a"
            and (m.group("initial") != "A" or m.group("given").islower())]


_NAME_AND_HONORIFIC = re.compile(
    rf"(?<![\w'’-])(?P<base>[^\W\d_]{{2,}})(?:[-‐‑](?i:{'|'.join(sorted(HONORIFICS_AFTER_HYPHEN))})"
    rf"|\s+(?i:{'|'.join(sorted(HONORIFICS_AFTER_WORD))}))(?![\w'’-])"
)


def names_with_honorific(message: str) -> list[tuple[str, str]]:
    """(phrase, name) for each name said with an honorific after it ("tanaka-san", "tanaka";
    "Hasan Bey", "Hasan"). The caller keeps those whose name is someone it knows."""
    return [(m.group(), m.group("base")) for m in _NAME_AND_HONORIFIC.finditer(message)]


def bare_subjects(message: str) -> set[str]:
    """In lower-case writing, the words the parse reads as a proper noun standing alone as the
    subject of a verb other than "be", with no article, possessive or number before them
    ("fischer approved my leave", "ada is already complaining"; not "art is my passion", "brown is
    my favourite colour", "the baker approved it"; never a kin word such as "gran"): such a word
    stands as a name even when a dictionary holds it too."""
    out = set()
    for sentence in split_sentences(normalize_message(message)):
        for token in parse(sentence):
            if (token.dep_ in ("nsubj", "nsubjpass") and (token.tag_ == "NNP" or token.i == 0 and (
                    opens_as_subject_of_a_life(sentence, token.idx))) and token.is_lower
                    and token.is_alpha and len(token) >= 3 and token.head.pos_ == "VERB"
                    and token.head.lemma_ != "be" and token.text not in KINSHIP and token.text not in PARENT_NAMES
                    and token.text not in STOP_CAPS and not any(
                        c.dep_ in ("det", "poss", "nummod", "amod", "compound") for c in token.children)):
                out.add(token.text)
    return out


def is_one_sentence(message: str) -> bool:
    return len(_SENTENCE_BREAK.split(message.strip())) == 1


# "Hi, Julia here — …", "Jonas again.", "Hey, it's Ana here": someone else writes on the account.
_SELF_INTRODUCTION = re.compile(
    r"^\W*(?:(?i:hi|hey|hello|hiya)\b[\s,!.]*)?(?:(?i:it's|it\s+is|this\s+is)\s+)?"
    rf"(?P<name>[{_UP}][\w'’-]+(?:\s+[{_UP}][\w'’-]+)?)\s+(?:here|again)\s*(?:[.!,;:—–-]|$)",
)
# "hello, this is Tomás Ruiz, Elena's son": someone writes on the account and says whose relative
_RELATIVE_WRITES = re.compile(
    r"^\W*(?:(?i:hi|hey|hello|hiya)\b[\s,!.]*)?(?i:it's|it\s+is|this\s+is)\s+"
    rf"(?P<name>[{_UP}][\w'’-]+(?:\s+[{_UP}][\w'’-]+)?)\s*[,—–-]\s*(?P<owner>[{_UP}][\w'’-]+)['’]s\s+\w+",
)


def relative_introduction(message: str) -> tuple[str, str] | None:
    """(name, owner) when the message opens with its writer saying whose relative they are
    ("hello, this is Tomás Ruiz, Elena's son" → ("Tomás Ruiz", "Elena"))."""
    match = _RELATIVE_WRITES.match(message)
    return (match.group("name"), match.group("owner")) if match else None


# "Congrats Mags!!", "Tomi noooo", "Thanks Ade, see you Friday": a message that opens by calling
# someone by one name
_CALLED_BY_NAME = re.compile(
    rf"^\W*(?:(?i:hi|hey|hello|hiya|congrats|congratulations|thanks|thank\s+you|thx|ty|well\s+done|aw+|omg|yay)"
    rf"[\s,!.]+)?(?P<name>[{_UP}][{_LO}]+)\b(?=\s*[!,?]|\s+(?i:no+|yay|you|u)\b)")


def name_called(message: str) -> str | None:
    """The one name a message opens by calling someone ("Congrats Mags!!" → "Mags"), if any."""
    match = _CALLED_BY_NAME.match(message)
    if not match or match.group("name").lower() in STOP_CAPS or is_common_word(match.group("name").lower()):
        return None
    return match.group("name")


def self_introduction(message: str) -> str | None:
    """The name a message opens with as its writer's ("Hi, Julia here", "Jonas again.")."""
    match = _SELF_INTRODUCTION.match(message)
    return match.group("name") if match else None


def is_first_name(name: str) -> bool:
    """A first name the lexicon knows (an unambiguous new writer may introduce themselves by it)."""
    return normalize_alias(name) in FIRST_NAMES
