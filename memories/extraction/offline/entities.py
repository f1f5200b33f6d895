"""The entities of one message: canonical names and aliases, types from context, and the tagged
sentences (mentions replaced by placeholders, he/she/him/her resolved)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from memories.extraction.offline.frames import names_a_pet
from memories.extraction.offline.lexicon import (
    FAMILY_NAME_PLACES,
    FEMALE_KIN,
    FEMALE_NAMES,
    FIRST_NAMES,
    GIVEN_NAMES,
    HONORIFICS,
    HONORIFICS_AFTER_WORD,
    KIN_MODIFIERS,
    KINSHIP,
    MALE_KIN,
    MALE_NAMES,
    NAME_KINDS,
    OCCUPATIONS,
    ORG_NOUNS,
    ORG_PREFIXES,
    ORG_SUFFIXES,
    PERSONS_OCCASIONS,
    PET_TERMS,
    PLACE_PREFIXES,
    PLACE_SUFFIXES,
    PLACES,
    STOP_CAPS,
    STREET_WORDS,
    WORD_PLACES,
    WORLD_GIVEN_NAMES,
    alternation,
    sexes_cross,
)
from memories.extraction.offline.names import (
    KIN_OWNER_AFTER,
    OWNED_BY_A_PERSON_AFTER,
    Mention,
    NameContext,
    alias_pairs,
    declared_nicknames,
    find_mentions,
    stated_aliases,
)
from memories.extraction.offline.parse import (
    entity_labels,
    human_subject_spans,
    is_dictionary_word,
    opens_as_subject_of_a_life,
    parse,
    parse_many,
)
from memories.extraction.offline.text import SPEAKER, split_sentences
from memories.naming import first_names_compatible, title_of

TYPE_PRIORITY = ("pet", "person", "organization", "place", "concept")


KIN_ALT = alternation(KINSHIP)
PET_ALT = alternation(PET_TERMS)
MOD_ALT = alternation(KIN_MODIFIERS)
_OWNER = r"(?:my|his|her|their|our|your|\w+'s)"
_KIN_BEFORE = re.compile(
    rf"{_OWNER}\s+(?:(?:{MOD_ALT})[\s-]+)*(?P<kin>{KIN_ALT}|{PET_ALT})(?:\s+(?:there|here|now|at\s+work))?\s*(?:,\s*)?"
    r"\(?\s*$"
)
_PET_NAMED_BEFORE = re.compile(
    rf"\b(?:{PET_ALT})\s*(?:,\s*)?(?:named|called)\s*$"
    # "adopted a shiba inu named X": an animal no list holds, adopted; not a child adopted
    r"|\badopt(?:ed|s|ing)?\s+(?:an?|another)\s+(?:(?!(?:girl|boy|baby|babies|child|kid|son|daughter|one|"
    r"toddler|teen|teenager|orphan|orphaned|sibling|brother|sister|newborn|infant|refugee|old|man|woman|person|"
    r"twins?|student|pupil|family)\b)[a-z-]+\s+){1,3}(?:named|called)\s*$")
# "We adopted a kitten. Her name is Mochi.": a name given right after the message brought up a pet
_NAME_IS_BEFORE = re.compile(
    # "Name is Pudim", "…, very shy, named Caju" right after a pet
    r"(?:\b(?:his|her|its)\s+name(?:\s+is|'s|\s+was)|\bnamed\s+(?:him|her|it)|^\W*name\s+is|,\s*(?:named|called)"
    r"|\b(?:he|she|it)(?:'s|\s+is)\s+called)\s+$",  # "we got a puppy, she's called Biscuit"
    re.I)
_PERSON_WORD = re.compile(
    r"\b(?:neighbou?r|friend|guy|girl|man|woman|lady|boss|colleague|teacher|doctor|nurse)s?\b", re.I)
_A_PET = re.compile(rf"\b(?:an?|another|our|my|new)\s+(?:[\w-]+\s+){{0,2}}?(?:{PET_ALT})s?\b", re.I)
# "Bob is my neighbor's son": the last term of a possessive chain is what Bob is.
_KIN_AFTER = re.compile(
    rf"^\s*(?:,|\(|'s|\s(?:is|was))\s*(?:also\s+)?{_OWNER}\s+(?:(?:{MOD_ALT})[\s-]+)*(?P<kin>{KIN_ALT}|{PET_ALT})\b"
    rf"(?:'s\s+(?:(?:{MOD_ALT})[\s-]+)*(?P<kin2>{KIN_ALT}|{PET_ALT})\b)?"
)


def _phrases_before(phrases: str) -> re.Pattern:
    alternatives = "|".join(sorted(phrases.split(","), key=len, reverse=True))
    return re.compile(rf"\b(?:{alternatives})(?:\s+the)?\s*$")


_ORG_STRONG = _phrases_before(
    "offer from,job offer from,offer at,works at,work at,working at,worked at,works for,work for,working for,"
    "worked for,employed by,employed at,"
    "hired by,job at,job with,intern at,internship at,internship with,apprenticeship at,apprenticeship with,"
    "traineeship at,traineeship with,position at,post at,role at,interview at,interview with,"
    "studies at,study at,studying at,student at,enrolled at,graduated from,phd at,degree at,masters at,"
    "master's at,doctorate at,mba at,joined,join,joining,founded,"
    "co-founded,cofounded,ceo of,cto of,founder of,resigned from,fired from,laid off from,retired from,"
    "employee of,started at,started working at,notice at,resignation at,engineer at,manager at,designer at,"
    "developer at,first day at,first week at,last day at,first shift at,"
    "teacher at,nurse at,head of engineering at,company,startup,firm,"
    # what one belongs to: a club, a team, a choir, a charity
    "plays for,play for,playing for,played for,volunteer with,volunteers with,volunteering with,"
    "volunteered with,volunteer at,volunteers at,member of,captain of,sings in,sing in,sang in"
)
# "works part-time at ⟨Lawson⟩", "worked nights for ⟨X⟩": a word or two between the work and its place
_WORKS_SOMEHOW_AT = re.compile(r"\bwork(?:s|ed|ing)?\s+(?:[\w-]+\s+){1,2}?(?:at|for)(?:\s+the)?\s*$")
_ORG_WEAK = _phrases_before("left,quit,leaving,leave,accepted")
# Where someone lives or moved to is a place, whatever a stored type or the parser's label said
# ("phoned from X" may have stored it as an organization; "I moved to X" retypes it).
_RESIDENCE_BEFORE = _phrases_before(
    "lives in,live in,living in,resides in,relocated to,relocating to,moved to,move to,moving to,moved back to,"
    "settled in,home is now,home is now in,home is in,we're now in,we are now in"
)
_PLACE_STRONG = _phrases_before(
    "lives in,live in,living in,lived in,resides in,based in,born in,raised in,grew up in,stay in,"
    "staying in,located in,moved to,move to,moving to,moved back to,relocated to,relocating to,moved from,"
    "moved away from,moved out of,moving away from,moving out of,move out of,"
    "trip to,flew to,flight to,vacation in,vacationing in,traveled to,"
    "travelled to,traveling to,travelling to,hometown of,city of,drove to,road trip to,is from,am from,"
    "are from,'m from,comes from,come from,originally from,streets of,visited,visiting"
)
# "moved from X to Y": Y is the new home
_MOVED_FROM_TO_BEFORE = re.compile(
    r"\b(?:moved|moving|move|relocated|relocating)\s+(?:away\s+|out\s+)?from\s+[\w'. -]{1,40}?\s+to\s*$")
_PLACE_WEAK = _phrases_before("in,to,from,near,went to,around,across,outside,into,visit")
_AT_BEFORE = _phrases_before("at")
_AT_OR_IN_BEFORE = re.compile(r"\b(?:at|in)\s+$")  # "years at X, my dad was": X is where, not who
_PERSON_BEFORE = _phrases_before(
    "with,told,asked,met,hired,called,texted,talked to,spoke to,spoke with,talk to,talking to,dating,"
    "married,married to,thanks,thank,and,engaged to,"
    "work with,works with,working with,worked with,named,teaming up with,teamed up with"
)
# whom only a person marries, dates, leaves or reports to: "married to X", "I report to X" is a person
# whatever the parser says (or a name's last word: "Min-ji Park")
_PARTNER_BEFORE = _phrases_before(
    "married to,engaged to,dating,divorced,divorced from,proposed to,broke up with,split up with,split from,"
    "in a relationship with,wedding with,wedding to,started seeing,been seeing,marriage to,engagement to,"
    "report to,reports to,reporting to,reported to,reporting directly to,report directly to"
)
# "it's called X", "the app was named X": a name given to a thing, not someone phoned or met
_NAMING_BEFORE = re.compile(r"\b(?:is|'s|was|be|been|are|were)\s+(?:now\s+)?(?:called|named)\s*$")
_PERSON_AFTER = re.compile(
    r"^(?:'s)?\s+(?:said|says|told|tells|asked|asks|texted|called|thinks|thought|wants|wanted|hired|"
    r"recruited|who|and i|and me)\b"
)
_BY_BEFORE = re.compile(r"\bby\s*$")
_ROLE_AT_BEFORE = re.compile(
    rf"\b(?:{alternation(OCCUPATIONS)}|lead|head|director|engineer|analyst)s?\s+(?:at|with)\s*$"
)
_ORG_NAMED_BEFORE = re.compile(
    rf"\b(?:{alternation(ORG_NOUNS)})(?:\s+(?:in|from|based\s+in|out\s+of)\s+[\w'. -]{{1,30}}?"
    r"|\s+(?:there|here|nearby|downtown|in\s+town))?\s*(?:,\s*)?"
    r"(?:(?:is|was|'s)\s+)?(?:called|named)(?:\s+the)?\s*$"
)  # "a startup called X", "a startup in Austin called X", "a team called the X", "her gym is called X",
# "a studio there called X"
# "my own catering company, X": what one runs, named in apposition
_OWN_ORG_BEFORE = re.compile(rf"\bown\s+(?:[\w-]+\s+){{0,2}}?(?:{alternation(ORG_NOUNS)})\s*,\s*$")
# "I freelance for a translation agency, Verbalia.": a name closing the sentence after "a ⟨kind of business⟩,"
_AN_ORG_BEFORE = re.compile(rf"\ban?\s+(?:[\w-]+\s+){{0,2}}?(?:{alternation(ORG_NOUNS)})\s*,\s*$")
_SENTENCE_CLOSES = re.compile(r"^\s*[.!?]*\s*$")
# What only a person does or is, said right after a one-word name: "Guili is coming to visit",
# "Guili is an architect", "Guili got married", "Guili is 34".
_HUMAN_AFTER = re.compile(
    r"^\s+(?:(?:also|just|finally|really|still|now)\s+)?(?:"
    r"(?:is|was|are|were)\s+(?:coming|going|heading|flying|driving)\s+(?:over|home|back|(?:down\s+|up\s+)?"
    r"(?:here\s+)?to\s+(?:visit|stay|see))|(?:came|comes)\s+(?:over|by|to\s+visit|to\s+see|to\s+stay)|"
    r"(?:is|was)\s+visiting|visited\s+(?:me|us)|"
    r"(?:is|was|got|gets)\s+(?:pregnant|married|engaged|divorced|promoted)|was\s+born|"
    r"(?:is|was|turned|turns)\s+\d{1,3}(?:\s+years?\s+old\b|\s*(?:[.!,]|$))|"
    r"(?:loves|misses|missed|feels|felt|adores)\b|"
    rf"(?:is|was)\s+(?:also\s+)?(?:an?|the)\s+(?:[\w-]+\s+)?(?:{'|'.join(sorted(OCCUPATIONS))})\b)"
)


_KIN_IN_PARENS = re.compile(rf"\s*\(\s*((?:{KIN_ALT}))\s*\)", re.I)


@dataclass
class MessageEntity:
    """An entity named in the message being extracted (not the stored `memories.models.Entity`):
    canonical name, aliases, the type votes gathered from context, and a pronoun gender."""

    name: str
    aliases: list[str] = field(default_factory=list)
    scores: dict[str, int] = field(default_factory=dict)
    gender: str = ""
    forced: str = ""

    def vote(self, kind: str, points: int) -> None:
        self.scores[kind] = self.scores.get(kind, 0) + points

    @property
    def type(self) -> str:
        if self.forced:
            return self.forced
        if not self.scores:
            return "concept"
        best = max(self.scores.values())
        return next(t for t in TYPE_PRIORITY if self.scores.get(t) == best)


class Registry:
    """Entities of the message by index; index 0 is the speaker."""

    def __init__(self, speaker: str):
        self.entities = [MessageEntity(speaker, forced="person")]
        self._index = {speaker.lower(): SPEAKER}

    def names(self) -> list[str]:
        return [e.name for e in self.entities]

    def lookup(self, name: str) -> int | None:
        return self._index.get(name.lower())

    def ensure(self, name: str) -> int:
        idx = self.lookup(name)
        if idx is None:
            idx = len(self.entities)
            self.entities.append(MessageEntity(name))
            self._index[name.lower()] = idx
        return idx

    def add_alias(self, idx: int, alias: str) -> None:
        entity = self.entities[idx]
        if alias.lower() != entity.name.lower() and alias not in entity.aliases:
            entity.aliases.append(alias)
        self._index.setdefault(alias.lower(), idx)

    def merge(self, idx: int, into: int) -> None:
        """`idx` was another name of `into`: its names become aliases of `into`."""
        gone = self.entities[idx]
        for alias in [gone.name, *gone.aliases]:
            self.add_alias(into, alias)
        for key, value in list(self._index.items()):
            if value == idx:
                self._index[key] = into

    def is_person(self, idx: int) -> bool:
        return self.entities[idx].type == "person"


@dataclass
class Sentence:
    text: str
    mentions: list[Mention]
    ids: list[int | None] = field(default_factory=list)  # entity index per mention (None: vocative)
    tagged: str = ""


# --- canonical names ------------------------------------------------------------------------------


def _canonical_map(sentences: list[Sentence], speaker: str, known_names: Sequence[str],
                   known_people: Sequence[str] = ()) -> dict[str, str]:
    """lower(surface) → canonical name, from known names, parenthesized aliases, first names and
    family names; `known_people` are the known names the agent holds as persons."""
    canon: dict[str, str] = {}
    for sentence in sentences:
        for mention in sentence.mentions:
            if mention.known:
                canon.setdefault(mention.text.lower(), mention.known)
        for short, full in alias_pairs(sentence.text, sentence.mentions):
            short, full = sorted((short, full), key=lambda m: (len(m.text.split()), len(m.text)))
            target = canon.get(full.text.lower(), full.text)
            canon[short.text.lower()] = target
            canon.setdefault(full.text.lower(), target)
        for short, full in stated_aliases(sentence.text, sentence.mentions):
            target = canon.get(full.text.lower(), full.text)
            canon[short.text.lower()] = target
            canon.setdefault(full.text.lower(), target)
    full_names = [n for n in [speaker, *known_names] if len(n.split()) > 1]
    full_names += [m.text for s in sentences for m in s.mentions
                   if len(m.text.split()) > 1 and not m.title and not title_of(m.text)]  # "Dr. Ana Lima" counts
    full_names += [v for v in canon.values() if len(v.split()) > 1]
    by_first: dict[str, set[str]] = {}
    for name in full_names:
        by_first.setdefault(name.split()[0].lower(), set()).add(canon.get(name.lower(), name))
    for sentence in sentences:
        for mention in sentence.mentions:
            key = mention.text.lower()
            if key not in canon and " " not in key and len(by_first.get(key, ())) == 1:
                full = next(iter(by_first[key]))
                if key in PLACES and (_named_after_a_place(full) or _RESIDENCE_BEFORE.search(
                        sentence.text[max(0, mention.start - 48) : mention.start].lower())):
                    continue  # "leeds" is the city, not "Leeds Grammar School"; "living in Cambridge" too
                canon[key] = full
    _short_forms_said(sentences, canon, speaker, by_first)
    people = {canon.get(n.lower(), n) for n in full_names if n.split()[0].lower() not in HONORIFICS}
    # no one titles themselves: "Mr. Rahman" from Nadia Rahman is someone else
    _titled_surnames(sentences, canon, people - {speaker, canon.get(speaker.lower(), speaker)})
    _married_names(sentences, canon, people, speaker)
    _bare_surnames(sentences, canon, speaker, [*known_people, *(
        m.text for s in sentences for m in s.mentions if _like_person_name(m.text))])
    return canon


_NAMING_BEFORE = re.compile(
    r"\b(?:call(?:s|ed|ing)?|known\s+as|go(?:es)?\s+by|went\s+by|nicknamed|named|but)\s+(?:(?:him|her|them|me|us)\s+)?$",
    re.I)


def _short_forms_said(sentences: list[Sentence], canon: dict[str, str], speaker: str,
                      by_first: dict[str, set[str]]) -> None:
    """"I asked Chiamaka Obi out. Chi said yes": a one-word name that is a short form of the given name
    of exactly one full name this message says, of the same sex, is that person (never the writer: "my
    buddy Chris" beside a writer Christopher is someone else)."""
    said = [(s, m.text) for s in sentences for m in s.mentions if len(m.text.split()) > 1 and not m.title
            and not title_of(m.text) and m.text.split()[0].lower() not in HONORIFICS and _like_person_name(m.text)
            and "'" not in m.text and "’" not in m.text]
    for sentence in sentences:
        for mention in sentence.mentions:
            key = mention.text.lower()
            if key in canon or " " in key or len(key) < 3 or key in by_first or key in PLACES or mention.title or (
                    _NAMING_BEFORE.search(sentence.text, 0, mention.start)):
                continue  # "everyone calls him Bill": the name given stays as said (the nickname rules keep it)
            # in another sentence: "Maximiliano Ortiz, Max, and Leo" lists three people
            fulls = {canon.get(n.lower(), n) for s, n in said if s is not sentence
                     if first_names_compatible(key, n.split()[0].lower(), either_way=False)
                     and not sexes_cross(key, n.split()[0].lower())}
            if len(fulls) == 1:
                canon[key] = fulls.pop()


# institutions whose town's name said alone is still the town (not "Liverpool" for Liverpool FC, nor
# "Cambridge" for Cambridge University)
_TOWN_NAMED_HEADS = frozenset({"school", "academy", "hospital", "clinic", "council", "library", "museum", "station",
                               "airport", "cathedral", "prison", "zoo"})


def _named_after_a_place(name: str) -> bool:
    """An institution or a place named after its town ("Leeds Grammar School", "York Road"): the
    town's name said alone is the town."""
    last = name.split()[-1].lower()
    return last in _TOWN_NAMED_HEADS or last in PLACE_SUFFIXES


def _surname(name: str) -> str:
    return name.split()[-1].lower().replace("’", "'") if len(name.split()) > 1 else ""


def _titled_surnames(sentences: list[Sentence], canon: dict[str, str], people: set[str]) -> None:
    """"Doctor Okafor" is the one Okafor the message names, else the one Okafor it knows of; a
    name whose family name comes first ("Mrs. Lim" for Lim Bee Hoon) when no one has it last."""
    named = {canon.get(m.text.lower(), m.known or m.text) for s in sentences for m in s.mentions}
    # "Prof. Varga's daughter, Dr. Eszter Varga": a full name said with another title is someone else
    titled_as = {canon.get(m.text.lower(), m.known or m.text): title for s in sentences for m in s.mentions
                 if (title := title_of(_titled_alias(s.text, m)))}
    for sentence in sentences:
        for mention in sentence.mentions:
            words = mention.text.replace(".", "").split()
            key = mention.text.lower()
            if key in canon or len(words) != 2 or words[0].lower() not in HONORIFICS:
                continue
            title = title_of(mention.text)
            # "Mr. Tveit's son, Mr. Jonas Tveit": whose son he is, is not the son named with him
            others = {canon.get(m.text.lower(), m.known or m.text) for m in sentence.mentions if m.start > mention.end
                      } if KIN_OWNER_AFTER.match(sentence.text[mention.end:]) else set()
            for pool in (people & named, people):
                pool = {p for p in pool - others if titled_as.get(p, title) == title}
                same = {p for p in pool if _surname(p) == words[1].lower()} or {
                    p for p in pool if words[1].lower() in p.lower().split()[:-1]}
                if same:
                    if len(same) == 1:
                        canon[key] = next(iter(same))
                    break


def _like_person_name(name: str) -> bool:
    """Two or more capitalized words that no gazetteer holds and none of which says organization
    or place ("Pieter Verhoeven"; not "Santa Fe", "Hartley Brown LLP", "Mill Street")."""
    words = name.lower().split()
    return (len(words) > 1 and name[:1].isupper() and name.lower() not in PLACES
            and not set(words) & (ORG_SUFFIXES | PLACE_SUFFIXES))


def _bare_surnames(sentences: list[Sentence], canon: dict[str, str], speaker: str, people: Sequence[str]) -> None:
    """"Verhoeven" said alone, of "Pieter Verhoeven": a one-word name that is the family name of exactly one
    person the agent knows or the message names, and no one's given name, is that person."""
    carriers: dict[str, set[str]] = {}
    for name in {canon.get(p.lower(), p) for p in people}:
        if (surname := _surname(name)) and name.lower() != speaker.lower():
            carriers.setdefault(surname, set()).add(name)
    for sentence in sentences:
        for mention in sentence.mentions:
            key = mention.text.lower()
            if (key in canon or " " in key or mention.known or mention.honorific or key in FIRST_NAMES
                    or key in PLACES or len(carriers.get(key, ())) != 1 or key == _surname(speaker)):
                continue
            canon[key] = next(iter(carriers[key]))


_MARRIAGE_CUE = re.compile(
    r"\b(?:married|marry|marrying|wedding|wed|newlyweds?|(?:took|taking|take|takes|kept|keeping)\s+(?:his|her|their)"
    r"\s+(?:last\s+|sur)?name|(?:changed|changing|change)\s+(?:his|her|their)\s+(?:last\s+|sur)?name|"
    r"married\s+name|maiden\s+name|née|nee|"
    # "after the divorce he went back to his birth name": a name given up
    r"(?:gone|went|going|go|goes|reverted|returned|returning)\s+back\s+to\s+(?:his|her|their|our|the)\s+"
    r"(?:family|maiden|old|birth|own|original)\s+name)\b",
    re.I,
)


def says_a_name_changed(text: str) -> bool:
    """The text says someone took or gave up a family name ("married", "maiden name", "went back to
    her birth name")."""
    return bool(_MARRIAGE_CUE.search(text))


# "is to be known as Mrs. X from now on", "in the name of Mrs. X": a new name outright; "I am X", "she's X" only
# said with "now" ("Now on my passport I am Zofia Lis"; not "Hi, I'm Ana Costa, Ana Reis's cousin")
_RENAMED_BEFORE = re.compile(
    r"(?:\bknown\s+as|\bin\s+the\s+name\s+of|\bbec[ao]me|\bnow\s+called|\bname\s+is\s+now)\s+(?:now\s+)?"
    r"(?:(?:mrs|ms|mr|miss|dr)\.?\s+)?$", re.I)
_NEW_NAME_BEFORE = re.compile(
    r"(?:\bi\s+am|\bi'm|\b(?:she|he)\s+is|\b(?:she|he)'s)\s+(?:now\s+)?(?:(?:mrs|ms|mr|miss|dr)\.?\s+)?$", re.I)
_NOW = re.compile(r"\bnow\b", re.I)


def _married_names(sentences: list[Sentence], canon: dict[str, str], people: set[str], speaker: str) -> None:
    """"Ana married Rui Costa … she's Ana Costa now", "Ana went back to her maiden name, Ana Reis":
    in a message about a marriage or a name given up, a new "first name + a surname someone of the
    message carries" is the person of that first name, not someone new."""
    text = " ".join(s.text for s in sentences)
    if not _MARRIAGE_CUE.search(text):
        return
    surnames = {_surname(p) for p in people} - {""}
    for sentence in sentences:
        for mention in sentence.mentions:
            words = mention.text.split()
            key = mention.text.lower()
            # "I am Zofia Lis now", "is now known as Mrs. Oduya": a name said to be someone's new one
            renamed = bool(_RENAMED_BEFORE.search(sentence.text, 0, mention.start) or (
                _NEW_NAME_BEFORE.search(sentence.text, 0, mention.start) and _NOW.search(sentence.text)))
            if len(words) != 2 or mention.known or canon.get(key, mention.text) != mention.text or (
                    mention.honorific and words[1].lower() != _surname(speaker) and not renamed):
                continue  # "Mr. John Costa", an in-law
            surname = words[1].lower()
            spouse = [p for p in people if _surname(p) == surname and p != mention.text]
            same_first = [p for p in people if p != mention.text and _surname(p) != surname and _surname(p)
                          and first_names_compatible(words[0], p.split()[0])]
            if (spouse and surname in surnames or renamed) and len(same_first) == 1:
                canon[key] = same_first[0]


def _drop_family_names(sentences: list[Sentence], speaker: str, people: Sequence[str]) -> None:
    """"She's keeping Dela Cruz", "the last Okafor in town": a bare family name that the writer
    or several people the message knows of carry is the family's name, no one new; it stays
    plain text."""
    named = [m.text for s in sentences for m in s.mentions if m.text.split()[0].lower() in FIRST_NAMES]
    full = {n.strip() for n in [*people, *named] if len(n.split()) > 1}
    carriers: dict[str, set[str]] = {}
    for name in full:
        words = name.lower().split()
        for cut in range(1, len(words)):
            carriers.setdefault(" ".join(words[cut:]), set()).add(name)
    own = speaker.lower().split()
    speaker_family = {" ".join(own[cut:]) for cut in range(1, len(own))}
    for sentence in sentences:
        keep = [m for m in sentence.mentions if m.known or m.honorific or m.title or m.text.lower() in PLACES or not (
            m.text.lower() in speaker_family or len(carriers.get(m.text.lower(), ())) >= 2)
            or _KIN_RIGHT_BEFORE.search(sentence.text, 0, m.start)]  # "my son Kamau": his given name
        sentence.mentions = keep


_KIN_RIGHT_BEFORE = re.compile(rf"\b(?:my|our)\s+(?:(?:{MOD_ALT})\s+)*(?:{KIN_ALT})\s*,?\s*$", re.I)
_OWN_SHORT_NAME = re.compile(r"\s+(?:here|again)\s*(?:[.!,;:—–-]|$)")  # not "Chris again forgot ..."


def build_registry(message: str, speaker: str, recent: Sequence[str], known: Sequence[str],
                   known_aliases: dict[str, str] | None = None, known_types: dict[str, str] | None = None,
                   written: str | None = None) -> tuple:
    """Split, find names, group aliases, type entities. Returns (registry, sentences, name context).
    `written` is the message as its writer typed it, before chat spellings were read ("im" → "I'm")."""
    ctx = NameContext(speaker, known, [message, *recent[-5:]], known_aliases, known_types, written=written)
    texts = split_sentences(message)
    parse_many(texts)  # every sentence is parsed below: together through nlp.pipe, ~1.5x faster
    sentences = [Sentence(s, find_mentions(s, ctx)) for s in texts]
    registry = Registry(speaker)
    _drop_family_names(sentences, speaker, [n for n in known if (known_types or {}).get(n) == "person"])
    canon = _canonical_map(sentences, speaker, known, [n for n in known if (known_types or {}).get(n) == "person"])
    for s, sentence in enumerate(sentences):
        for mention in sentence.mentions:
            # Katherine Moore's "Hi, Kate here", Ben Adeyemi's "Benji here, new phone": the writer's short name
            if (mention.vocative or not s and not sentence.text[:mention.start].strip(" ,!-—")) and (
                    _OWN_SHORT_NAME.match(sentence.text, mention.end) and " " in speaker.strip()
                    and first_names_compatible(mention.text, speaker.split()[0])):
                registry.add_alias(SPEAKER, mention.text)
                sentence.ids.append(None if mention.vocative else SPEAKER)
                continue
            sentence.ids.append(None if mention.vocative else _register(registry, canon, mention))
    stored = {k.lower(): v for k, v in (known_types or {}).items() if v in KNOWN_TYPE_VOTES}
    titled_aliases = _titled_aliases(sentences, registry)
    for sentence in sentences:
        for mention, idx in zip(sentence.mentions, sentence.ids, strict=True):
            if idx is not None and idx != SPEAKER and (kin := _KIN_IN_PARENS.match(sentence.text, mention.end)):
                registry.add_alias(idx, kin.group(1).title())  # "Emmanuel Okafor (Dad)": later "Dad" is him
            name = mention.text.strip()
            said = sentence.text[mention.start:mention.end]
            titled = _TITLE_AFTER.fullmatch(said[len(name):]) if said.lower().startswith(name.lower()) else None
            if idx is not None and idx != SPEAKER and " " not in name and (
                    titled or (titled := _TITLE_AFTER.match(sentence.text, mention.end))):
                registry.add_alias(idx, f"{name} {titled.group(1)}")  # "Kemal Hoca" is Kemal, however it was read
    for idx, titled in titled_aliases:
        registry.add_alias(idx, titled)  # "Dr. Roxana Rahimi": later "Dr. Rahimi" is her
    for sentence in sentences:
        labels = entity_labels(sentence.text) if sentence.mentions else []
        for mention, idx in zip(sentence.mentions, sentence.ids, strict=True):
            if idx is not None and idx != SPEAKER:
                entity = registry.entities[idx]
                _vote(entity, sentence.text, mention)
                _vote_parser(entity, mention, labels)
                _vote_family_name(entity, sentence.text, mention)
                _vote_life_subject(entity, sentence.text, mention)
                _vote_been_at(entity, sentence.text, mention)
                if names_a_pet(sentence.text, mention.start, mention.end) or _named_after_a_pet(
                        sentences, sentence, mention):
                    # "Meet Haru, our new dog", "called him Sultan": said outright, over a given name's
                    # shape and its place as a subject ("our two dogs, Quince and Zora, are …")
                    # (not over a person the agent knows: "took the dogs, Hollis and Pia, to the beach")
                    entity.vote("pet", 100 if stored.get(entity.name.lower()) == "person" else 130)
                if entity.name.lower() in stored and not entity.scores.get("known"):
                    entity.vote(stored[entity.name.lower()], KNOWN_TYPE_VOTES[stored[entity.name.lower()]])
                    entity.scores["known"] = 0
    for entity in registry.entities:
        entity.scores.pop("known", None)
    _vote_like_the_job_left(registry, sentences)
    _writer_renamed(registry, sentences)
    _vote_shared_first_names(registry, [n for n, t in stored.items() if t == "person"])
    _apply_declared_nicknames(registry, sentences)
    _apply_writer_nicknames(registry, sentences)
    _apply_quoted_nicknames(registry, sentences)
    return registry, sentences, ctx


# "my name is now ⟨X⟩", "my married name is ⟨X⟩", "I am now ⟨Mrs X⟩": the writer's own new name
_OWN_NAME_BEFORE = re.compile(
    r"(?:\bmy\s+(?:new\s+|married\s+|legal\s+|full\s+)?(?:sur)?name\s+(?:is|'s|will\s+be)\s+(?:now\s+)?"
    r"|(?P<now>\bI(?:\s+am|'m)\s+now\s+))$", re.I)


def _writer_renamed(registry: Registry, sentences: list[Sentence]) -> None:
    """"My name is now Ettie Pellow", "I am now Mrs Pellow": a name the writer gives as their own is
    one of the writer's names (and no one else's: not the Jory Pellow a titled surname was read as)."""
    for sentence in sentences:
        for mention, idx in zip(sentence.mentions, sentence.ids, strict=True):
            said = sentence.text[mention.start:mention.end].strip()
            own = _OWN_NAME_BEFORE.search(sentence.text[:mention.start])
            if idx is None or idx == SPEAKER or own is None or own["now"] and not title_of(said):
                continue
            for entity in registry.entities[1:]:
                entity.aliases = [a for a in entity.aliases if a.lower() not in (said.lower(), mention.text.lower())]
            registry.add_alias(SPEAKER, said if title_of(said) else mention.text)


# "moved from ⟨Infosys⟩ to ⟨X⟩", "quit ⟨Infosys⟩ to join ⟨X⟩": a job left for another
_JOB_MOVE_GAP = re.compile(r"\s+(?:to|to\s+join)\s+(?:the\s+)?$", re.I)
_JOB_MOVE_BEFORE = re.compile(
    r"\b(?:(?:moved|went|jumped|hopped|transferred)\s+from|left|leaving|quit|quitting)\s+(?:the\s+)?$", re.I)


def _vote_like_the_job_left(registry: Registry, sentences: list[Sentence]) -> None:
    """What one leaves an employer for is an organization too: "moved from ⟨Infosys⟩ to
    ⟨Thoughtworks⟩", "quit ⟨Tesco⟩ to join ⟨Aldi⟩" (a town said so is one the gazetteer knows)."""
    for sentence in sentences:
        pairs = zip(sentence.mentions, sentence.ids, sentence.mentions[1:], sentence.ids[1:], strict=False)
        for left, a, then, b in pairs:
            if None in (a, b) or SPEAKER in (a, b) or registry.entities[a].type != "organization":
                continue
            if not (_JOB_MOVE_BEFORE.search(sentence.text, 0, left.start)
                    and _JOB_MOVE_GAP.fullmatch(sentence.text, left.end, then.start)):
                continue
            entity = registry.entities[b]
            if entity.type not in ("organization", "person") and entity.name.lower() not in PLACES:
                entity.vote("organization", 200)


def _titled_aliases(sentences: list[Sentence], registry: Registry) -> list[tuple[int, str]]:
    """(entity, "Dr. Rahimi") for each person the message names in full with a title, when that title
    and family name are no one else's here: not when the message also says "Dr. Rahimi" of another
    entity, nor when it names two Dr. Rahimis."""
    said = {m.text.lower(): idx for s in sentences for m, idx in zip(s.mentions, s.ids, strict=True) if idx is not None}
    found: dict[str, set[int]] = {}
    for sentence in sentences:
        for mention, idx in zip(sentence.mentions, sentence.ids, strict=True):
            if idx is not None and idx != SPEAKER and (titled := _titled_alias(sentence.text, mention)):
                found.setdefault(titled, set()).add(idx)
                said_whole = sentence.text[mention.start:mention.end]
                if _INITIAL.fullmatch(mention.text.split()[0]) and said_whole.lower() != titled.lower():
                    found.setdefault(said_whole, set()).add(idx)  # "Mr A. Keverne" as signed, beside "Mr Keverne"
    return [(next(iter(ids)), titled) for titled, ids in found.items()
            if len(ids) == 1 and said.get(titled.lower(), next(iter(ids))) in ids]


_INITIAL = re.compile(r"[^\W\d_]\.")


def _titled_alias(sentence: str, mention: Mention) -> str:
    """"Dr. Rahimi" of "Dr. Roxana Rahimi": a given and a family name said with a title."""
    words, span = mention.text.split(), sentence[mention.start:mention.end]
    title = span.split(" ", 1)[0]
    if not mention.honorific or len(words) != 2 or not title_of(span):
        return ""
    return f"{title} {words[1]}"


def _named_after_a_pet(sentences: list[Sentence], sentence: Sentence, mention: Mention) -> bool:
    """"Her name is ⟨X⟩" after a pet brought up in the sentence or the one before ("got a puppy!")."""
    before = sentence.text[: mention.start]
    if not _NAME_IS_BEFORE.search(before):
        return False
    k = sentences.index(sentence)
    if _A_PET.search(before) or k > 0 and _A_PET.search(sentences[k - 1].text):
        return True
    # "…took in a rabbit. White, very fluffy. Name is Pudim": over a short description between
    between = sentences[k - 1] if k > 1 else None
    return bool(between is not None and not between.mentions and len(between.text.split()) <= 5
                and not _PERSON_WORD.search(between.text) and _A_PET.search(sentences[k - 2].text))


def _vote_family_name(entity: MessageEntity, text: str, mention: Mention) -> None:
    """A one-word city that is also a family name, as the subject of a verb only a person does
    ("Preston from the garage said …"), is the person."""
    if mention.text.lower() in FAMILY_NAME_PLACES and any(
            start <= mention.start and mention.end <= end for start, end in human_subject_spans(text)):
        entity.vote("person", 45)


def _labelled_not_a_person(text: str, mention: Mention) -> bool:
    return any(t.idx == mention.start and t.ent_type_ in ("ORG", "FAC", "PRODUCT")
               for t in parse(text))


def _vote_life_subject(entity: MessageEntity, text: str, mention: Mention) -> None:
    """"Tendai works at Econet": a one-word name that no dictionary or gazetteer holds, the subject
    of a verb only a person does with a life, is a person, whatever the parser labelled it."""
    words = mention.text.split()
    # "Tunde Adeyemi moved to X": every word of a longer name is no word, town or kind of business either,
    # and the parser does not call it a firm, a building or a product ("Rolls Royce moved to Derby")
    if (len(words) <= 3 and all(w.lower() not in PLACES and not is_dictionary_word(w) and w.lower() not in ORG_SUFFIXES
                                for w in words)
            and (len(words) == 1 or not _labelled_not_a_person(text, mention))
            and (opens_as_subject_of_a_life(text, mention.start) or OWNED_BY_A_PERSON_AFTER.match(text, mention.end))):
        entity.vote("person", 45)  # "Kasia's new flat in X": whose home it is


def _vote_been_at(entity: MessageEntity, text: str, mention: Mention) -> None:
    """"I've been at Petronas for six years": where someone "is at" is a place or an organization
    (one is with a person, or at their house), whatever the parser labelled the name."""
    token = next((t for t in parse(text) if mention.start <= t.idx < mention.end and t.dep_ == "pobj"), None)
    if (token is not None and token.head.lower_ == "at" and token.head.head.lemma_ == "be"
            and not any(c.dep_ == "case" for c in token.children)):  # "at Bruno's": his place
        entity.vote("organization", 45)


def _vote_shared_first_names(registry: Registry, known_people: Sequence[str]) -> None:
    """"Emeka Obi … my cousin Emeka Nwosu": a full name that opens with the first name of a
    person the message or the agent knows is a person too, whatever the parser made of it."""
    firsts = {e.name.split()[0].lower() for e in registry.entities[1:]
              if e.type == "person" and len(e.name.split()) > 1}
    firsts |= {n.split()[0] for n in [registry.entities[SPEAKER].name.lower(), *known_people] if len(n.split()) > 1}
    for entity in registry.entities[1:]:
        words = entity.name.split()
        if (len(words) in (2, 3) and all(w[:1].isupper() for w in words) and words[0].lower() in firsts
                and words[0].lower() not in HONORIFICS and entity.type in ("concept", "place")):
            entity.vote("person", 50)


def _merge_into(registry: Registry, sentences: list[Sentence], gone: int, into: int) -> None:
    """`gone` was another name of `into`: merged in the registry, and every mention of it is `into`'s."""
    registry.merge(gone, into)
    for sentence in sentences:
        sentence.ids = [into if i == gone else i for i in sentence.ids]


def _apply_writer_nicknames(registry: Registry, sentences: list[Sentence]) -> None:
    """"they all call me jp": the name is the writer's, in any case; read as someone else before
    ("my middle name is Oluwaseun"), that one is the writer."""
    for sentence in sentences:
        for nick in writer_nicknames(sentence.text, registry.entities[SPEAKER].name):
            read = registry.lookup(nick)
            if read is not None and read != SPEAKER:
                _merge_into(registry, sentences, read, SPEAKER)
            registry.add_alias(SPEAKER, nick)


_QUOTES = "'\"‘’“”"


def writer_nicknames(text: str, speaker: str) -> list[str]:
    """Names the writer says they go by, read off the parse whatever their case: the second object
    of "call" with "me" ("they all call me jp", "he calls me t-bone", "everyone calls me Bee") and
    what "my nickname" or "my ⟨kind⟩ name" is ("my derby name is shawshank"). Not a description
    ("they call me lazy", "she called me an idiot", "called me names"), a word of chat ("lol"), a
    kin word ("the kids call me nana"), a name the writer gives someone else ("my nickname for Mark
    is Bear") or a name that is the writer's own."""
    doc = parse(text)
    heads = []
    for token in doc:
        if token.lemma_ == "call" and any(c.dep_ == "dobj" and c.lower_ == "me" for c in token.children):
            heads += [(c, True) for c in token.children if c.dep_ == "oprd" and c.pos_ in ("NOUN", "PROPN")]
        elif (token.lemma_ in ("name", "nickname") and token.dep_ == "nsubj" and token.head.lemma_ == "be"
              and any(c.dep_ == "poss" and c.lower_ == "my" for c in token.children)
              and not any(c.dep_ == "prep" for c in token.children)
              and (token.lemma_ == "nickname" or any(c.dep_ in ("compound", "amod") and c.lower_ in NAME_KINDS
                                                     for c in token.children))):
            heads += [(c, False) for c in token.head.children if c.dep_ == "attr" and c.pos_ in ("NOUN", "PROPN")]
    out = []
    for head, called in heads:
        words = doc[head.left_edge.i : head.i + 1]
        said = text[words.start_char : words.end_char]
        nick = said.strip(_QUOTES + " ")
        if (not nick or len(nick.split()) > 2 or any(t.pos_ in ("DET", "ADJ", "NUM", "PRON") for t in words)
                or not all(c.isalnum() or c in " -'’" for c in nick) or nick.lower() in KINSHIP
                or nick.lower() in STOP_CAPS or nick.lower() in speaker.lower().split()):
            continue
        # a word of the dictionary, said after "call me" in lower case and unquoted, says what, not who
        if called and nick == said and nick.islower() and all(is_dictionary_word(w) for w in nick.split()):
            continue
        out.append(nick)
    return out


def _apply_declared_nicknames(registry: Registry, sentences: list[Sentence]) -> None:
    """"My name's Ana Reis, but call me Nina", "I married Rob Hale. He goes by Bob": the nickname
    is another name of the writer, or of the nearest person before it the pronoun fits; every
    mention of it in the message stands for that person."""
    for s, sentence in enumerate(sentences):
        for k, who in reversed(declared_nicknames(sentence.text, sentence.mentions)):
            nick = sentence.ids[k]
            # "Tunde already calls her Mimi": the one who calls her so is not whom the name is for
            caller = sentence.ids[k - 1] if k and _CALLER_GAP.match(
                sentence.text, sentence.mentions[k - 1].end, sentence.mentions[k].start) else None
            owner = SPEAKER if who == "i" else _person_before(registry, sentences, s, k, who, skip=caller)
            said = sentence.mentions[k].text
            if nick is not None and nick == owner and said.lower() != registry.entities[owner].name.lower():
                registry.add_alias(owner, said)  # Joanna's "she calls me Jojo", a name already read as hers
                continue
            if nick is None or owner is None or nick in (owner, SPEAKER):
                continue
            _merge_into(registry, sentences, nick, owner)
            # the declaration keeps the nickname as written ("… but call me Nina")
            del sentence.mentions[k], sentence.ids[k]


_QUOTE_OPEN, _QUOTE_CLOSE = "['\"‘“]", "['\"’”]"
# "we call Pardoe 'big gil' and Sorensen 'gilly'": who, then the nickname in quotes
_CALLED_QUOTED = re.compile(
    r"\b(?i:we|i|everyone|everybody|they|people)\s+(?i:all\s+|just\s+|usually\s+|always\s+)?"
    r"(?i:call|calls|called|(?:started|start)\s+calling)\s+")
_WHO_QUOTED = re.compile(
    rf"(?:\s*,\s*|\s+and\s+|\s*)(?P<who>[^\W\d_][\w'-]*(?:\s+[^\W\d_][\w'-]*)?)\s+{_QUOTE_OPEN}"
    rf"(?P<nick>[^'\"’”,]{{1,24}}){_QUOTE_CLOSE}(?![\w'’])")
# a quote that opens a clipped word or a description, not a nickname ("'cause", "'til", "'a liar'")
_NOT_A_NICKNAME = re.compile(r"(?i:cause|cos|til|bout|round|em|a|an|the\s+worst)\b")


def _apply_quoted_nicknames(registry: Registry, sentences: list[Sentence]) -> None:
    """Nicknames a group gives in quotes: "we call Pardoe 'big gil' and Sorensen 'gilly'" (who is
    said by a name the message holds for exactly one person); each nickname becomes another name of
    its person. Not a word of the dictionary ("they called him 'selfish'") nor a description."""
    people = [i for i, e in enumerate(registry.entities) if i != SPEAKER and e.type == "person"]
    for sentence in sentences:
        for call in _CALLED_QUOTED.finditer(sentence.text):
            pos = call.end()
            while (item := _WHO_QUOTED.match(sentence.text, pos)) is not None:
                pos = item.end()
                who, nick = item["who"].lower(), item["nick"].strip()
                if _NOT_A_NICKNAME.match(nick) or (" " not in nick and is_dictionary_word(nick.lower())):
                    continue
                owners = [i for i in people if who == registry.entities[i].name.lower()
                          or who in (registry.entities[i].name.split()[0].lower(), _surname(registry.entities[i].name))]
                if len(owners) == 1:
                    registry.add_alias(owners[0], nick)


_CALLER_GAP = re.compile(r"\s+(?:\w+\s+)?(?:calls?|called)\s+(?:him|her)\s+$", re.I)


def _person_before(registry: Registry, sentences: list[Sentence], s: int, k: int, gender: str,
                   skip: int | None = None) -> int | None:
    """The nearest person named before mention `k` of sentence `s` that a he/she of `gender` fits
    (not `skip`)."""
    earlier = [*(i for other in sentences[:s] for i in other.ids), *sentences[s].ids[:k]]
    for idx in reversed(earlier):
        if idx is None or idx in (SPEAKER, skip):
            continue
        entity = registry.entities[idx]
        if entity.type == "person" and entity.gender in ("", gender):
            return idx
    return None


# What the agent already stored about a known name weighs like a clear cue; the sentence can
# still outvote it (a later message may correct a type). A pet's name looks like a person's by
# design ("Pip has been rehomed"), so a known pet outweighs a name's shape and the parser together.
KNOWN_TYPE_VOTES = {"person": 60, "pet": 80, "organization": 50, "place": 50}


# The parser's entity type weighs less than a clear context cue ("left X", "a startup called X"):
# the small model often calls an unknown one-word company a PERSON. Several mentions add up.
PARSER_VOTES = {"person": 25, "place": 35, "organization": 35, "concept": 10}


def _vote_parser(entity: MessageEntity, mention: Mention, labels: list[tuple[int, int, str]]) -> None:
    for start, end, kind in labels:
        if start < mention.end and mention.start < end:
            entity.vote(kind, PARSER_VOTES[kind])
            return


def _register(registry: Registry, canon: dict[str, str], mention: Mention) -> int:
    name = canon.get(mention.text.lower(), mention.text)
    idx = registry.ensure(name)
    registry.add_alias(idx, mention.text)
    return idx


# --- types ----------------------------------------------------------------------------------------


def vote_from_context(entity: MessageEntity, sentence: str, mention: Mention) -> None:
    """The type votes of one mention's context and shape (also for names in earlier messages)."""
    _vote(entity, sentence, mention)


def _vote(entity: MessageEntity, sentence: str, mention: Mention) -> None:
    before = sentence[max(0, mention.start - 48) : mention.start].lower()
    after = sentence[mention.end : mention.end + 40].lower()
    words = mention.text.lower().replace(".", "").split()
    if mention.title:
        entity.vote("concept", 60)
    if mention.honorific:
        entity.vote("person", 90)
    if mention.organization:
        entity.vote("organization", 150)
    if mention.place:
        entity.vote("place", 100)
    if mention.person:
        entity.vote("person", 60)
    _vote_kinship(entity, before, after)
    _vote_name_shape(entity, words, mention.text, before)
    _vote_context(entity, before, after)
    if len(words) == 1 and words[0] not in PLACES and not mention.text.isupper() and _HUMAN_AFTER.match(after):
        entity.vote("person", 40)
    if _POST_AFTER.match(after):
        entity.vote("person", 90)  # "Adaeze Orji, an architect at …": what a person is, set off after the name
    if len(words) == 2 and words[0] not in PLACES and not is_dictionary_word(words[1]) and re.search(
            rf"(?<![\w'’-]){re.escape(words[0])}\s*,\s*$", before):
        entity.vote("person", 90)  # "another Bheki, Bheki Ngcobo": a given name said again with the family name
    if " ".join(words) in PLACES and (street := _STREET_BEFORE.search(before)) and street["last"] in PLACE_SUFFIXES:
        entity.vote("place", 80)  # "14 Clifton Road, Bristol": an address's town
    elif (address := _ADDRESS_BEFORE.search(sentence, 0, mention.start)) and address["last"].lower() in STREET_WORDS:
        entity.vote("place", 160)  # "3 Saltwick Lane, Tresswick": a town no gazetteer holds, after a house's number


_TITLE_AFTER = re.compile(rf" ((?i:{alternation(HONORIFICS_AFTER_WORD)}))(?![\w'’-])")
# the post ends the phrase: not "a teacher training college", "a marine park"
_POST_AFTER = re.compile(rf"^\s*(?:,|[—–])\s*(?:an?|the)\s+(?:[\w-]+\s+){{0,2}}?(?:{alternation(OCCUPATIONS)})"
                         r"(?=\s*(?:[,.;!?)—–]|$)|\s+(?:at|for|with|in|from|who|and)\b)")


_STREET_BEFORE = re.compile(r"\b(?P<last>[a-z]+)\.?,\s*$")
# "3 Saltwick Lane, ⟨town⟩": a house's number, then a street's name in capitals
_ADDRESS_BEFORE = re.compile(r"(?<![\w/-])\d{1,4}[a-zA-Z]?,?\s+(?:[A-Z][\w'’-]*\s+){1,3}?(?P<last>[A-Z][a-z]+)\.?,\s*$")
_AND_I = re.compile(r"(?:\s+\w+){0,3}?\s+(?:and|&)\s+(?:i|me)\b", re.I)
_VERB_ING_OR_ED_BEFORE = re.compile(r"\b[A-Za-z]{2,}(?:ing|ed)\s*$")


def _vote_kinship(entity: MessageEntity, before: str, after: str) -> None:
    if _PET_NAMED_BEFORE.search(before):
        entity.vote("pet", 100)
        return
    if _ORG_NAMED_BEFORE.search(before) or _OWN_ORG_BEFORE.search(before) or (
            _AN_ORG_BEFORE.search(before) and _SENTENCE_CLOSES.match(after)):
        entity.vote("organization", 100)
        return
    kin_after = _KIN_AFTER.match(after)
    if kin_after and _AND_I.match(after, kin_after.end()) and _VERB_ING_OR_ED_BEFORE.search(before):
        kin_after = None  # "Leaving Gisborne, my sister and I drove north": the writer's company, a subject
    match = _KIN_BEFORE.search(before) or (not _AT_OR_IN_BEFORE.search(before) and kin_after)
    if not match:
        if KIN_OWNER_AFTER.match(after):  # "Kasia's boss": whose boss, a person
            entity.vote("person", 90)
        elif _OCCASION_AFTER.match(after):  # "Priya's party"; a place's or a firm's name outvotes it
            entity.vote("person", 55)
        return
    term = match.groupdict().get("kin2") or match.group("kin")
    if term in PET_TERMS:
        entity.vote("pet", 100)
        return
    entity.vote("person", 90)
    if not entity.gender:
        entity.gender = "f" if term in FEMALE_KIN else "m" if term in MALE_KIN else ""


# whose party or wedding: a person ("met him at Priya's party"; not "at McDonald's")
_OCCASION_AFTER = re.compile(
    rf"^'s\s+(?:(?:surprise|birthday|\d+(?:st|nd|rd|th))\s+)?(?:{alternation(PERSONS_OCCASIONS)})\b", re.I)


# a word before a town named like an English word that says it is the town ("in Bath", "leaving Bath")
_PLACE_WORD_BEFORE = re.compile(
    r"\b(?:in|to|from|near|around|outside|leaving|leave|left|visit|visited|visiting|of)\s+$", re.I)


# not "from", "to", "of" or "visiting": "a text from Preston", "talked to Preston" are as often a person
_TOWN_BEFORE = re.compile(r"\b(?:in|near|around|outside|leaving|leave|left|(?:move[sd]?|moving|relocat\w+)\s+to)\s+$",
                          re.I)


def _vote_name_shape(entity: MessageEntity, words: list[str], text: str, before: str = "") -> None:
    if words[-1] in ORG_SUFFIXES or (len(words) > 1 and words[0] in ORG_PREFIXES):
        entity.vote("organization", 80)
    if len(words) > 1 and (words[-1] in PLACE_SUFFIXES or words[0] in PLACE_PREFIXES):
        entity.vote("place", 70)
    if (name := " ".join(words)) in PLACES:
        # a town that is also a family name ("Dunedin", "Preston") is the town after "leaving", "in", "to"
        entity.vote("place", 30 if name in FAMILY_NAME_PLACES and not _TOWN_BEFORE.search(before) else 60)
    elif (name in WORD_PLACES and text[:1].isupper() and name not in FIRST_NAMES and name not in WORLD_GIVEN_NAMES
          and _PLACE_WORD_BEFORE.search(before)):
        entity.vote("place", 45)  # "Leaving Bath", "moved to Shanghai"; not "I work at Orange", "Reading is fun"
    if len(words) == 2 and (words[0] in GIVEN_NAMES or not is_dictionary_word(words[0])) and re.fullmatch(
            r"[A-Z]\w+ [A-Z][\w']+-[A-Z][\w']+", text):
        entity.vote("person", 45)  # "Babatunde Oriel-Coker": a given name and a double-barrelled family name
    if words[0] in FIRST_NAMES:
        entity.vote("person", 55 if len(words) > 1 else 50)
        entity.gender = entity.gender or gender_of(words[0])
    elif words[0] in WORLD_GIVEN_NAMES:
        entity.vote("person", 45)
    if text.isupper() and len(text) > 1:
        entity.vote("concept", 20)
    entity.vote("concept", 10)


# "Okhmatdyt hospital", "Kalinda bank": a name before a lower-case noun of an institution names one
_INSTITUTION_AFTER = re.compile(r"^\s+(?:hospital|clinic|university|college|school|academy|bank|institute)\b")
_A_BEFORE = re.compile(r"\b(?:a|an)\s+$", re.I)


def _vote_context(entity: MessageEntity, before: str, after: str) -> None:
    if (_INSTITUTION_AFTER.match(after) and entity.name.lower() not in PLACES and not _A_BEFORE.search(before)
            and not is_dictionary_word(entity.name.lower())):  # not "a Catholic school"
        entity.vote("organization", 60)
    if _ORG_STRONG.search(before) or _ROLE_AT_BEFORE.search(before) or _WORKS_SOMEHOW_AT.search(before):
        entity.vote("organization", 70)
    elif _ORG_WEAK.search(before):
        entity.vote("organization", 35)
    if _RESIDENCE_BEFORE.search(before):
        entity.vote("place", 100)
    elif _PLACE_STRONG.search(before) or _MOVED_FROM_TO_BEFORE.search(before):
        entity.vote("place", 70)
    elif _PLACE_WEAK.search(before):
        entity.vote("place", 30)
    if _AT_BEFORE.search(before):
        entity.vote("organization", 15)
        entity.vote("place", 15)
    if _PARTNER_BEFORE.search(before):
        entity.vote("person", 120)  # above a place's last word and a weak "to" together
    elif _PERSON_AFTER.match(after) or (_PERSON_BEFORE.search(before) and not _NAMING_BEFORE.search(before)):
        entity.vote("person", 40)
    elif _BY_BEFORE.search(before):
        entity.vote("person", 20)
    words = entity.name.lower().split()
    if _WHO_AFTER.match(after) and not set(words) & ORG_SUFFIXES and (len(words) > 1 or words[0] in FIRST_NAMES):
        entity.vote("person", 80)  # "I sit next to ⟨X⟩, who offered me …": a place is "where", not "who"


_WHO_AFTER = re.compile(r"^\s*,\s*who\b")


def gender_of(first_name: str) -> str:
    return "f" if first_name in FEMALE_NAMES else "m" if first_name in MALE_NAMES else ""
