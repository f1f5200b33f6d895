"""Finding proper names in a sentence: capitalized runs, quoted titles, known names, aliases.

A capitalized word at the start of a sentence ("Yesterday", "Talked") is only a name with some
evidence: a known name, a common first name or place, a person verb after it ("Ana said"), or
the same word capitalized mid-sentence elsewhere in the conversation.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache

from memories.extraction.offline.frames import names_a_pet
from memories.extraction.offline.lexicon import (
    AMBIGUOUS_NAMES,
    CALENDAR_TAILS,
    CHAT_FORMS,
    CITY_ORG_HEADS,
    ED_BASE_VERBS,
    FIRST_NAMES,
    FOLDED_PLACES,
    GIVEN_NAMES,
    GRANDPARENT_NAMES,
    GREETING_WORDS,
    HONORIFICS,
    HONORIFICS_AFTER_WORD,
    IRREGULAR_PAST,
    KIN_TITLES,
    KINSHIP,
    NAME_CONNECTORS,
    OCCUPATIONS,
    OF_HEADS,
    ORG_NOUNS,
    ORG_PREFIXES,
    ORG_SUFFIXES,
    PARENT_NAMES,
    PERSON_NOUNS,
    PERSON_VERBS,
    PET_GOODS,
    PET_TERMS,
    PLACE_OTHER_NAMES,
    PLACES,
    STOP_CAPS,
    TITLE_MODIFIERS,
    TITLES_IN_LOWER_CASE,
    WORLD_FAMILY_NAMES,
    WORLD_GIVEN_NAMES,
    alternation,
    word_set,
)
from memories.extraction.offline.parse import (
    is_common_word,
    is_dictionary_word,
    is_word_form,
    opens_as_subject_of_a_life,
    parse,
    verb_lemma,
)
from memories.naming import (
    HONORIFIC_SUFFIX,
    LOWER_LETTERS,
    UPPER_LETTERS,
    first_names_compatible,
    in_nickname_table,
    is_acronym_of,
    strip_accents,
    title_case,
)
from memories.temporal import MONTHS

_LO = LOWER_LETTERS  # a lower-case letter, in a character class
_UP = UPPER_LETTERS  # a capital letter, in a character class

WORD_RE = re.compile(r"[^\W\d_]\w*(?:'\w+)*(?:-\w+)*")
_CONTRACTION_SUFFIXES = frozenset({"m", "ve", "d", "ll", "re", "t"})
_QUOTED = re.compile(r'"([^"\n]{2,80})"')
_ALIAS_GAP = re.compile(
    r"^\s*\(\s*(?:aka\s+|a\.k\.a\.?\s+|(?:real|full|legal|proper|actual|birth)\s+name(?:\s+is)?:?\s+|n[ée]e\s+)?$",
    re.I)
_ALIAS_CLOSE = re.compile(r"^\s*\)")
# "pip (rosalind brisbyn if ur wondering)", "Spud (real name Pelleas Harrowby, no one uses it)": a full name
# in brackets with a remark after it, before the bracket closes
_ALIAS_REMARK = re.compile(r"^(?:\s*[,;:—–]|\s+-\s)[^()]{0,60}\)")
# a remark about the name itself ("if ur wondering", "nobody uses it"), not about someone else
_NAME_REMARK = re.compile(
    r"^\s*,?\s*(?:if\s+(?:u|ur|you|you're|youre|ya)\b[^()]{0,25}|(?:but\s+|though\s+|tho\s+)?(?:nobody|no\s+one|no1)\s+"
    r"(?:uses|calls|says)\b[^()]{0,30}|lol|haha\w*|btw|officially|technically)\s*\)", re.I)
# "tomek from my team (tomasz oriel)": a full name in brackets after where one knows someone from
_WHERE_FROM_GAP = re.compile(r"^\s+(?:from|at|in|on)\s+(?:[a-z]+\s+){0,2}[a-z]+\s*\(\s*$", re.I)
# "bazza (Barry Lynch to his mum)": a full name in brackets, said for whom it is the name
_FULL_NAME_SAID_TO = re.compile(
    r"^\s+(?:to|for)\s+(?:his|her|their|my|your|ur|u|you|the|everyone|everybody|people|friends|family|work|"
    r"colleagues|strangers|normies|most|outsiders|officials)\b[^()]{0,30}\)", re.I)
_PERSON_AFTER = re.compile(
    rf"^(?:'s)?\s*(?:,\s*)?(?:(?:and|&)\s+(?:I|me)\b|(?:and|&)\s+[{_UP}]|(?:said|says|told|tells|asked|asks|"
    r"texted|called|thinks|wants|wanted|is my|was my|who)\b)"
)
# "Kasia's boss", "Seo-yeon's piano teacher": whose relative or role holder someone is, is a person
KIN_OWNER_AFTER = re.compile(rf"^'s\s+(?:[a-z-]+\s+)?(?:{alternation(KINSHIP)})\b", re.I)
_STATED_AFTER = re.compile(
    r"^\s*(?:[—–,(-]\s*)?(?:that's|that\s+is|which\s+is)\s+what\s+\w+(?:\s+of\s+us)?\s+calls?\b"
    r"|^\s+is\s+(?:short|a\s+nickname)\s+for\b",
    re.I,
)
_GREETING_BEFORE = re.compile(
    r"\b(?:hey|hi|hello|hiya|yo|thanks|thank you|thx|bye|goodbye|congrats|congratulations|dear|morning|night)"
    r"[\s,!]*$",
    re.I,
)
_SALUTATION_BEFORE = re.compile(r"(?:^|[:'\"‘“]\s*)Dear\s+$")  # a letter's opening, quoted or not
_APPOSITION = re.compile(
    r"^\s*,\s*(?:(?:my|his|her|their|our|your|the|a|an|who|which|whose|and|or)\b|\x02)", re.I
)
_SENTENCE_END = re.compile(r"^[\s!.?\"')]*$")
_DENIED_AFTER = re.compile(r"^\s*,\s*not\s", re.I)  # "Sorry, Ghent, not Bruges": a correction, no one addressed
_INTERJECTION_BEFORE = re.compile(
    r"^\W*(?:yes|yeah|yep|oh|wow|woah|whoa|well|ok|okay|sure|no|right|true|sorry|aw+|ha\w*|lol|omg|gosh|"
    r"awesome|great|cool|nice|amazing)\W*$",
    re.I,
)
_MID_CAPITAL = re.compile(rf"(?<=[{_LO},;] )([{_UP}][^\W\d_]+)")
# Residence and travel phrases after which a lower-case gazetteer place is still a name
# ("i live in curitiba").
_LOWER_PLACE = re.compile(
    r"\b(?:(?:live[sd]?|living|based|born|raised|grew\s+up|resides?|staying|flat|apartment|house|condo)\s+in|"
    r"(?:moved|moving|move|"
    r"relocated|relocating|flew|trip|traveled|travelled|traveling|travelling|drove)\s+(?:back\s+)?(?:to|2)|"
    # "moved from leeds to york": both ends of the move
    rf"(?:moved|moving|relocated|relocating)\s+(?:away\s+|out\s+)?from(?:\s+[{_LO}][{_LO}'-]*){{1,3}}\s+to|"
    r"(?:moved|moving|relocated|relocating)\s+(?:away\s+|out\s+)?from|"
    r"(?:am|'m|is|are|comes?|originally)\s+from|visit(?:ed|ing)?|"
    r"(?:i'?m|am|is|are|we're|were|they're|['’]s)\s+(?:now\s+|still\s+)?in(?=\s+\S+\s+now\b))\s+"
    rf"(?P<place>[{_LO}][{_LO}'-]*(?:\s+[{_LO}][{_LO}'-]*){{0,2}})"
)


@dataclass
class Mention:
    """A name in a sentence. start/end span the whole mention (including a "Dr."), text is the
    name itself ("Helena Costa"; a lone "Dr. Silva" keeps its title)."""

    start: int
    end: int
    text: str
    known: str = ""  # canonical spelling when it matched a known name (or the speaker)
    title: bool = False  # a quoted title ("Becoming Nicole")
    honorific: bool = False
    vocative: bool = False
    person: bool = False  # said where only a person is ("me and dani", "broke up with callum")
    organization: bool = False  # named after what it is ("a gym, its called iron house")
    place: bool = False  # a lower-case place no word or name shares ("bangalore rain")


class NameContext:
    """Per-message lookups: the speaker, known names, and lazily the words seen capitalized
    mid-sentence (evidence that a sentence-initial word is a name)."""

    def __init__(self, speaker: str, known_names: Sequence[str], texts: Sequence[str],
                 known_aliases: Mapping[str, str] | None = None, known_types: Mapping[str, str] | None = None,
                 written: str | None = None):
        self.speaker = speaker
        self.known_types = {k.lower(): v for k, v in (known_types or {}).items()}
        self.known = _known_matcher(tuple(dict.fromkeys([speaker, *known_names])),
                                    tuple(sorted((known_aliases or {}).items())))
        self._texts = texts
        self._mid_caps: frozenset[str] | None = None
        # from the message as typed: "im at ucl" reads "I'm at ucl" later, still a writer in lower case
        self.lowercase_writer = bool(texts) and bool(_LOWERCASE_WRITER.search(written or texts[0]))

    def seen_mid_sentence(self, word: str) -> bool:
        if self._mid_caps is None:
            self._mid_caps = frozenset(w for t in self._texts for w in _MID_CAPITAL.findall(t))
        return word in self._mid_caps


@lru_cache(maxsize=64)
def _known_matcher(names: tuple[str, ...], aliases: tuple[tuple[str, str], ...] = ()
                   ) -> tuple[re.Pattern | None, dict[str, str]]:
    canonical = {n.strip().lower(): n.strip() for n in names if len(n.strip()) >= 2}
    for alias, target in aliases:
        if len(alias.strip()) >= 2 and target.strip():
            canonical[alias.strip().lower()] = target.strip()
    if not canonical:
        return None, {}
    usable = sorted(canonical, key=len, reverse=True)
    pattern = re.compile(r"(?<!\w)(?:" + "|".join(re.escape(n) for n in usable) + r")(?!\w)", re.I)
    # matching ignores case the way the regex engine does, which is wider than lower(): "YILDIRIM"
    # and "yildirim" match "Yıldırım", "ISTANBUL" matches "İstanbul". Their folded forms find them.
    for key, name in list(canonical.items()):
        canonical.setdefault(_folded(key), name)
    return pattern, canonical


def _folded(text: str) -> str:
    return strip_accents(text).casefold()


def known_canonical(canonical: dict[str, str], text: str) -> str | None:
    """The known name a matched text stands for (None when none does)."""
    return canonical.get(text.lower()) or canonical.get(_folded(text))


def find_mentions(sentence: str, ctx: NameContext) -> list[Mention]:
    """All name mentions of one sentence, in order."""
    titles = _titles(sentence)
    spans = _Spans(titles)
    mentions = titles + [m for m in _known(sentence, ctx) if not spans.overlaps(m.start, m.end)]
    taken = _Spans(mentions)
    tokens = [(m.start(), m.end(), m.group()) for m in WORD_RE.finditer(sentence)]
    for run in _capital_runs(sentence, tokens, taken):
        mention = _run_to_mention(sentence, tokens, run, ctx)
        if mention is not None:
            mentions.append(mention)
    mentions += _lower_places(sentence, _Spans(mentions), ctx.lowercase_writer)
    own = frozenset(w.lower() for w in ctx.speaker.split()[1:])  # "my brother jonathan mould": the family's own
    mentions += _lower_kin_names(sentence, _Spans(mentions), own)
    if ctx.lowercase_writer:
        mentions += _lower_given_names(sentence, _Spans(mentions), own)
    mentions += _lower_organizations(sentence, _Spans(mentions), ctx.lowercase_writer)
    if ctx.lowercase_writer:
        mentions += _lower_named_organizations(sentence, _Spans(mentions))
        mentions += _lower_short_before_full(sentence, _Spans(mentions))
        mentions += _bracketed_lower_names(sentence, mentions)
        mentions += _lower_nick_after_full(sentence, mentions)
    mentions = [m for m in mentions if not _a_breed(sentence, m)]
    mentions.sort(key=lambda m: m.start)
    if ctx.lowercase_writer:
        _with_lower_initials(sentence, mentions)
    for before, mention in zip(mentions, mentions[1:], strict=False):
        if mention.title and bracketed_nickname(sentence, before, mention):
            mention.title = False  # quoted as a nickname, not as the title of a work
    for mention in mentions:
        mention.vocative = _is_vocative(sentence, mention, mentions)
    return mentions


# "chris b, hes from cork", "chris m took us out": the initial of a family name after a given name in
# lower case; not a letter that is a word in chat (u, n, r, y, k, x, w, c, b4) or "a" / "i"
_LOWER_INITIAL_AFTER = re.compile(r" (?P<initial>[a-hj-mopqstvz])(?=\s*(?:$|[,.!?;:)])|\s+(?P<verb>[a-z]+))")


def _with_lower_initials(sentence: str, mentions: list[Mention]) -> None:
    """A one-word given name in lower case followed by the initial of a family name takes the initial
    ("Chris B"): someone else than a known Chris of another family name. The known name stays only when
    its family name has that initial."""
    starts = {m.start for m in mentions}
    for mention in mentions:
        said = sentence[mention.start:mention.end]
        if " " in said or not said.islower() or mention.title or mention.place or mention.organization:
            continue
        initial = _LOWER_INITIAL_AFTER.match(sentence, mention.end)
        if initial is None or initial.end("initial") in starts or (
                initial.group("verb") and not any(t.idx == initial.start("verb") and t.pos_ in ("VERB", "AUX")
                                                  for t in parse(sentence))):
            continue
        letter = initial.group("initial")
        mention.end = initial.end("initial")
        mention.person = True
        if mention.known and any(w.lower().startswith(letter) for w in mention.known.split()[1:]):
            continue  # "chris m" of a known Chris Mbeki: him
        mention.known = ""
        mention.text = f"{said.capitalize()} {letter.upper()}"


# A name given outright, from a writer who does not capitalize: "her name is mochi", "we called
# him biscuit lol", "got a puppy, she's called biscuit"
_LOWER_NAMED = re.compile(
    r"\b(?:(?P<stated>(?:his|her|its|their)\s+name(?:\s+is|'s|s))|(?:we|i)\s+(?:(?:all|just|always|usually)\s+)?"
    r"(?:named|called|call|(?:started|start)\s+calling)\s+(?:him|her|it)|"
    # others' name for someone, not for a thing ("people call it hell")
    r"(?:everyone|everybody|people|ppl|they)\s+(?:(?:all|just|always|usually|there|here)\s+)?(?:call|calls|called)"
    r"\s+(?:him|her)"
    # "she still calls me jojo": the writer's own nickname
    r"|(?P<me>(?:she|he|they|everyone|everybody|people|ppl|[a-z]+)\s+(?:(?:all|just|always|usually|still)\s+)?calls\s+me)"
    r"|(?P<bare>named)\s+(?:him|her|it)|(?P<called>(?:he|she|it)(?:'s|\s+is)\s+called))\s+"
    rf"(?P<name>[{_LO}][{_LO}'-]{{1,20}})(?=\s*(?:[.,!?;)]|$)|\s+(?:and|but|lol|haha|like|since|now|too|tho)\b)"
)


# "my cousin kemal tamsk aka kemo": the name after "aka", said of the name before it
_LOWER_AKA = re.compile(
    rf"\b(?P<full>[{_LO}]+ [{_LO}]+) (?:aka|a\.k\.a\.?)\s+(?P<name>[{_LO}][{_LO}'-]{{1,20}})\b")


# what "her name is" is said to be, when it gives none
_SAID_OF_A_NAME = frozenset({
    "unknown", "irrelevant", "secret", "unclear", "long", "short", "weird", "funny", "hard", "difficult", "easy",
    "common", "rare", "different", "same", "ridiculous", "cute", "perfect", "private", "confidential",
    "forgotten", "missing", "wrong", "right", "fine", "great", "beautiful", "lovely", "terrible", "unusual",
    "familiar", "everywhere", "mud", "mentioned", "listed", "there", "gone", "too", "not", "also", "still",
})


# words for a person that stand before a name without being part of it ("this guy andre")
_PERSON_NOUNS = PERSON_NOUNS["female"] | PERSON_NOUNS["male"] | word_set(
    "dude bloke chap kid fella gal lad lass bro sis babe")


_OWNERS = frozenset({"my", "our", "his", "her", "their", "your", "'s", "’s"})
_TWO_WORD_KIND = re.compile(rf"(?:{alternation(k for k in PET_TERMS if ' ' in k)})\b", re.I)


def _lower_given_names(sentence: str, taken: _Spans, own: frozenset[str] = frozenset()) -> list[Mention]:
    out = [Mention(m.start("name"), m.end("name"), m.group("name").capitalize())
           for m in _LOWER_NAMED.finditer(sentence)
           if m.group("name") not in STOP_CAPS and not taken.overlaps(m.start("name"), m.end("name"))
           # "named her pickle", not "called her back"; "her name is biscuit" whatever the parse, but not
           # "her name is unknown"
           and (m.group("stated") and m.group("name") not in _SAID_OF_A_NAME
                # not "calls me sunshine"; initials are ("calls me kb")
                or m.group("me") and (not is_dictionary_word(m.group("name")) or len(m.group("name")) <= 2)
                or not m.group("me") and (_parsed_as_noun(sentence, m.start("name"))
                                          # "so we call him gaz": no English word, whatever the parse
                                          or not m.group("bare") and not is_word_form(m.group("name"))
                                          and not is_common_word(m.group("name"))))
           # "got a cat, named her …", "a kitten, he's called …"
           and (not (m.group("bare") or (m.group("called") or "").startswith("it"))
                or _PET_BEFORE.search(sentence, 0, m.start()))]
    out += [Mention(m.start("name"), m.end("name"), m.group("name").capitalize(), person=True)
            for m in _LOWER_AKA.finditer(sentence) if not taken.overlaps(m.start("name"), m.end("name"))
            and m.group("name") not in STOP_CAPS and not is_common_word(m.group("name"))
            # after a full name, not "my brother milo aka bestie"
            and not any(is_word_form(w) and w not in GIVEN_NAMES for w in m.group("full").split())]
    for token in parse(sentence):
        word = token.text
        if (not word.isalpha() or not word.islower() or len(word) < 3 or word in STOP_CAPS or word in PLACES
                or word in HONORIFICS_AFTER_WORD
                or word in FOLDED_PLACES or word in KINSHIP or is_common_word(word)
                or taken.overlaps(token.idx, token.idx + len(word)) or any(m.start <= token.idx < m.end for m in out)
                or word in PET_TERMS and token.i and token.nbor(-1).lower_ in _OWNERS  # "my cat mochi"
                or _TWO_WORD_KIND.match(sentence, token.idx)):  # "a little jack russell": a kind of dog
            continue
        given = (word in FIRST_NAMES or in_nickname_table(word)) and word not in AMBIGUOUS_NAMES
        unknown = _unknown_word(word) and _HAS_VOWEL.search(word)
        # a given name of another country with a family name after it ("marek zielinski") is a person too
        full = (word in WORLD_GIVEN_NAMES or given) and _family_name_after(
            sentence, token.idx + len(word), own)  # where the family name ends
        if full and is_dictionary_word(word) and (is_common_word(word) or not _unknown_word(
                sentence[token.idx + len(word):full].strip().replace("'", ""))):
            full = None  # "ines varga" is someone; "grace period", "will power" are not
        placed = _in_a_persons_place(sentence, token) and (
            token.pos_ == "PROPN" and given
            or token.pos_ in ("PROPN", "NOUN") and (
                unknown or word in WORLD_GIVEN_NAMES or given and token.dep_ == "dobj"))
        paired = given and _family_word_after(token)  # "christopher mbeki", "jonathan pike from work"
        if given and not is_dictionary_word(word) or full or placed or paired or _world_name_as_subject(token):
            start, end = token.idx, token.idx + len(word)
            before = token.nbor(-1) if token.i else None
            if before is not None and before.is_lower and before.is_alpha and before.lower_ not in _PERSON_NOUNS and (
                    before.lower_ not in KINSHIP) and (  # "jo's bf marcus": whose partner, not his given name
                    before.dep_ == "compound" and before.head.i == token.i
                    or placed and before.dep_ == token.dep_ == "oprd" and before.head.i == token.head.i
                    or placed and word in WORLD_FAMILY_NAMES and _unknown_word(before.text)) and (
                    not taken.overlaps(before.idx, token.idx)):
                start = before.idx  # "bridget oneill told me", "my manager is ngozi okafor": her given name too
            elif (given or full or placed) and (family := full or _family_name_after(sentence, end, own) or (
                    paired and paired.idx + len(paired))) and not taken.overlaps(end, family):
                end = family  # "a new girl on my team, marta zielinska": her family name too
            out.append(Mention(start, end, title_case(sentence[start:end]), person=True))
    return out


# "jess (jessica ng)", "tomek from work (tomasz oriel if ur asking)": a person's full name in brackets
# after the name one goes by, in lower case: one to three words that are not everyday English
_BRACKETED_LOWER = re.compile(
    rf"\s*(?:[a-z]+\s+){{0,3}}?\(\s*(?:aka\s+|(?:real|full)\s+name\s+)?(?P<name>[{_LO}][{_LO}'-]+(?:\s+[{_LO}][{_LO}'-]+){{0,2}})"
    r"(?=\s*(?:\)|[,;:—–]|\s(?:if|tho|though|but|lol|haha|btw)\b))")


# "kez (kezia mould)": a lower-case short form, then the full name it stands for in brackets
_SHORT_BEFORE_FULL = re.compile(
    rf"(?<![\w'’])(?P<short>[{_LO}][{_LO}'-]+)\s*\(\s*(?P<first>[{_LO}][{_LO}-]+)\s+[{_LO}][{_LO}'-]+\s*\)")


def _lower_short_before_full(sentence: str, taken: _Spans) -> list[Mention]:
    """The short form before a full name in brackets, when its given name is what it is short for."""
    out = []
    for match in _SHORT_BEFORE_FULL.finditer(sentence):
        short, first = match.group("short"), match.group("first")
        start, end = match.span("short")
        if (len(short) >= 2 and short != first and not taken.overlaps(start, end) and short not in STOP_CAPS
                and not is_common_word(short) and short not in KINSHIP and first not in KINSHIP
                and first_names_compatible(short, first)):  # "tommo (tom pellow)": longer, and his
            out.append(Mention(start, end, title_case(short), person=True))
    return out


_NICK_IN_BRACKETS = re.compile(rf"\s*\(\s*(?P<nick>[{_LO}][{_LO}'-]{{1,14}})\s*\)")


def _lower_nick_after_full(sentence: str, mentions: list[Mention]) -> list[Mention]:
    """"ettie brisco (etts)": a lower-case word in brackets right after a person's full name, which
    starts as the given name does or is a piece of it, is what she goes by (not "(lol)", "(ugh)", "(mum)",
    "(leeds)")."""
    out = []
    for mention in mentions:
        words = mention.text.lower().split()
        if len(words) < 2 or mention.place or mention.organization or mention.title or words[0] in KINSHIP:
            continue
        found = _NICK_IN_BRACKETS.match(sentence, mention.end)
        nick = found.group("nick") if found else ""
        if not nick or nick in words or nick in STOP_CAPS or is_common_word(nick) or nick in KINSHIP or (
                nick in PLACES or _CHAT_NOISE.search(nick)) or not (nick[0] == words[0][0] or nick[:3] in words[0]):
            continue
        out.append(Mention(found.start("nick"), found.end("nick"), title_case(nick), person=True))
    return out


_CHAT_NOISE = re.compile(r"(.)\1\1|^(?:ha|he|hi|lo|lma|o|m|g)+h*$")  # "omgggg", "hahaha", "lmaooo"


def _bracketed_lower_names(sentence: str, mentions: list[Mention]) -> list[Mention]:
    out = []
    for mention in mentions:
        said = sentence[mention.start:mention.end]
        if " " in said.strip() or mention.place or mention.organization or mention.title or said.lower() in KINSHIP:
            continue
        found = _BRACKETED_LOWER.match(sentence, mention.end)
        if found is None:
            continue
        inside = [m for m in mentions if m.start < found.end("name") and found.start("name") < m.end]
        if inside and not (len(inside) == 1 and inside[0].start == found.start("name") and inside[0].end < found.end(
                "name") and inside[0].person):
            continue
        words = found.group("name").split()
        if any(w in STOP_CAPS or w in KINSHIP or w in PLACES or is_common_word(w) or _CHAT_NOISE.search(w)
               for w in words) or not (words[0] in GIVEN_NAMES or in_nickname_table(words[0]) or len(words) > 1 and (
                _unknown_word(words[0])) or first_names_compatible(said, words[0])):
            continue  # "pip (the dog)", "jess (my cousin)", "sam (ugh)", "tomek (hahaha)"
        if inside:  # "jessica" read alone, the bracket says "jessica ng"
            inside[0].end, inside[0].text = found.end("name"), title_case(found.group("name"))
        else:
            out.append(Mention(found.start("name"), found.end("name"), title_case(found.group("name")), person=True))
    return out


_LIFE_EVENTS = frozenset({"leave", "break", "split", "join", "finish", "die", "retire", "resign", "graduate",
                          "engage"})
_A_LIFES_THINGS = frozenset({"job", "boss", "wedding", "birthday", "baby", "boyfriend", "girlfriend", "bf", "gf",
                             "flat", "house", "place", "family", "kid", "kids", "work", "school", "uni", "degree"})


def _world_name_as_subject(token) -> bool:
    """A given name of another country that no dictionary holds, the subject of a verb, alone or
    coordinated ("ahmet finally left the bank", "selin and burak broke up"), or whose a thing is."""
    word = token.lower_
    subject = token.head if token.dep_ == "conj" else token
    verb = subject.head
    if (word not in WORLD_GIVEN_NAMES or is_dictionary_word(word) or token.pos_ not in ("PROPN", "NOUN")
            or word in ORG_SUFFIXES or any(c.dep_ in ("det", "poss") for c in token.children)):
        return False  # not "my uni", "the mercedes"
    if token.dep_ == "poss":  # "emre's new job", "ahmet's wife"; not "zara's new collection"
        return token.head.lemma_.lower() in _A_LIFES_THINGS or token.head.lower_ in KINSHIP
    # "ahmet finally left the bank", "selin and burak broke up"; not "siri set an alarm", "kia recalled my car"
    return (subject.dep_ in ("nsubj", "nsubjpass") and verb.pos_ in ("VERB", "AUX") and verb.i > token.i
            and (verb.lemma_.lower() in PERSON_VERBS or verb.lemma_.lower() in _LIFE_EVENTS))


# after a two-word name whose second word the dictionary holds, what says a person was named: "from work",
# a comma or a closing bracket, "and i", or a verb of what people do
_PERSON_CUE_AFTER = re.compile(
    r"\s*(?:[,;)]|$|\s(?:from|at|and\s+i|and\s+me|is|was|says|said|told|texted|invited|asked|got|quit|left|joined|moved|"
    r"works|lives|started|called)\b)")


def _family_word_after(token):
    """The next word, when the parser reads a lower-case given name as the first half of a two-word
    name ("christopher mbeki", "jonathan pike from work invited me"): the name tagged a proper noun
    and compounded with the next word, which is no verb, function word or kin word. None otherwise."""
    if token.pos_ != "PROPN" or token.dep_ != "compound" or token.head.i != token.i + 1:
        return None
    after = token.head
    word = after.text
    if (not after.is_alpha or not after.is_lower or len(word) < 2 or after.pos_ in ("VERB", "AUX")
            or is_common_word(word) or word in KINSHIP or word in STOP_CAPS or word in HONORIFICS_AFTER_WORD
            or word.endswith("s") and (verb_lemma(word[:-1]) or verb_lemma(word[:-2]))):  # "marek snores all night"
        return None
    if is_word_form(word) and not _PERSON_CUE_AFTER.match(token.doc.text, after.idx + len(word)):
        return None  # "a victoria sponge for the party", "harry potter again": no one is said to be there
    return after


def _family_name_after(sentence: str, end: int, own: frozenset[str] = frozenset()) -> int | None:
    """Where the family name after a lower-case given name ends, when the next word is one no
    dictionary holds ("marta zielinska"), a family name that is no ordinary word ("ana torres") or
    the writer's own family name, whatever word it is ("my brother jonathan mould"); None otherwise."""
    family = _LOWER_FAMILY_NAME.match(sentence, end)
    if family is None:
        return None
    name, at = family.group("name"), family.start("name")
    if name in HONORIFICS_AFTER_WORD:
        return None  # "ottarine maam": a title after her name
    # "ricardo torres works nights": no verb "torre"
    if (_unknown_word(name) or name in own and _own_family_said(sentence, at)) and not _is_verb_at(
            sentence, at) or (
            name in WORLD_FAMILY_NAMES and not _is_verb_at(sentence, at, known=True)):
        return family.end()
    return None


def _own_family_said(sentence: str, start: int) -> bool:
    """The writer's family name after a relative's given name in lower case, read by the parser as a
    name or a noun of its own ("jonathan mould got engaged"), not as a word of what follows ("ana long
    story short", "ben still lives", "ella young as she is")."""
    return any(t.idx == start and t.pos_ in ("NOUN", "PROPN") and t.dep_ not in ("compound", "amod", "nmod")
               for t in parse(sentence))


def _other_family_name(sentence: str, end: int, known: str) -> bool:
    """A lower-case known given name followed by a family name that is not the known person's:
    "marta zielinska" is someone else than the Marta Nowak the agent knows."""
    after = _family_name_after(sentence, end)
    return after is not None and _folded(sentence[end:after].strip()) not in _folded(known).split()[1:]


_WITH_SOMEONE = frozenset({"break", "split", "hang", "fight", "argue"})  # "broke up with jake"
_FAMILY_RELATIONS = frozenset({"partner_of", "spouse_of", "sibling_of", "parent_of", "cousin_of", "grandparent_of",
                               "aunt_or_uncle_of", "related_to", "friend_of", "former_partner_of"})
_SOMEONE = frozenset({"guy", "girl", "man", "woman", "lady", "dude", "lad", "bloke", "chap", "boy", "someone",
                      "kid", "person", "fella", "gal"})
# what one does to a person, said of the verb's object ("met christopher", "married jordan")
_MEET_SOMEONE = frozenset({"meet", "marry", "date", "invite", "hug", "kiss", "text", "message"})
_HAS_VOWEL = re.compile(r"[aeiouyà-ÿ]")


def _in_a_persons_place(sentence: str, token) -> bool:
    """Where the parse puts someone: with "me" or "I" ("me and dani", "dani and I"), after "with"
    ("broke up with jake"), what someone's kin or role is ("my boyfriend is vikram"), or the
    subject of what only a person does ("yara moved out")."""
    head = token.head
    if token.dep_ == "conj" and head.lower_ in ("me", "i"):
        return True
    if token.dep_ == "attr" and head.lemma_ == "be":  # "my boyfriend is vikram", "new roommate is jessamyn"
        return any(c.dep_ == "nsubj" and c.lower_ in KINSHIP and (
            any(p.dep_ == "poss" for p in c.children) or not any(p.dep_ == "det" for p in c.children))
                   for c in head.children)
    if token.dep_ in ("oprd", "dobj", "appos") and head.lemma_ in ("name", "call") and head.dep_ == "acl" and (
            head.head.lower_ in _SOMEONE):  # "she's seeing a lad called rory quinn"
        return True
    if token.dep_ == "pobj" and head.lower_ == "with":
        return head.head.lemma_ in _WITH_SOMEONE or head.head.lemma_ in PERSON_VERBS or (
            head.head.lemma_ == "go" and any(c.dep_ == "prt" and c.lower_ == "out" for c in head.head.children))
    if token.dep_ == "dobj" and head.lemma_ in _MEET_SOMEONE:  # "met christopher at the gym"
        return True
    if token.dep_ == "poss" and KINSHIP.get(head.lower_, ("",))[0] in _FAMILY_RELATIONS:  # "kwesi's new girlfriend"
        return True
    if token.dep_ == "oprd" and head.lemma_ in ("call", "name") and any(  # "his girlfriend is called efua"
            c.dep_ in ("nsubj", "nsubjpass") and c.lower_ in KINSHIP for c in head.children):
        return True
    if token.dep_ == "pobj" and head.lower_ == "to" and head.head.lemma_ in ("engage", "marry", "wed"):
        return True  # "got engaged to esi"
    return any(c.dep_ == "conj" and c.lower_ in ("me", "i") for c in token.children) and token.dep_ in (
        "nsubj", "nsubjpass") or opens_as_subject_of_a_life(sentence, token.idx)


def _titles(sentence: str) -> list[Mention]:
    out = []
    for match in _QUOTED.finditer(sentence):
        words = match.group(1).split()
        capitals = sum(1 for w in words if w[:1].isupper())
        if words[0][:1].isupper() and len(words) <= 8 and capitals * 10 >= len(words) * 6:
            out.append(Mention(match.start(1), match.end(1), match.group(1).strip(), title=True))
    return out


# A writer who does not capitalize ("quit spotify last week", "freya and i split up"): names the
# agent already knows are theirs in lower case too.
_LOWERCASE_WRITER = re.compile(rf"(?:^|[.!?]\s+)[{_LO}]|(?<![\w'])i(?:'m|'ve|'d|'ll)?(?![\w'])")


_LOWER_WITH_INITIAL = re.compile(rf"[{_LO}][{_LO}'-]+ [{_UP}]\.?")


def _known(sentence: str, ctx: NameContext) -> list[Mention]:
    pattern, canonical = ctx.known
    if pattern is None:
        return []
    out = []
    for match in pattern.finditer(sentence):
        text = match.group()
        # "maya L": a known name said in lower case but for the initial of a family name
        lower_ok = (text.islower() or _LOWER_WITH_INITIAL.fullmatch(text) is not None) and len(text) >= 3 and (
            ctx.lowercase_writer or " " in text)
        if (text[:1].isupper() and not _NAME_GOES_ON.match(sentence, match.end())) or (
            lower_ok and text not in STOP_CAPS and not (" " not in text and is_common_word(text))
        ) or text.lower() in _PARENT_WORDS:  # "dad's in leeds now": the lookup took "dad" for one person
            known = known_canonical(canonical, text)
            head = _OF_HEAD_BEFORE.search(sentence, 0, match.start())
            if head and head.group(1).lower() in OF_HEADS:
                continue  # the known "Exeter" of "the University of Exeter": a longer name
            if known is not None and not (text.islower() and _other_family_name(sentence, match.end(), known)):
                out.append(Mention(match.start(), match.end(), text, known=known))
    return out


_PARENT_WORDS = PARENT_NAMES | GRANDPARENT_NAMES
_OF_HEAD_BEFORE = re.compile(r"\b([A-Z][a-z]+) of (?:the )?$")

# A known name followed by another capitalized word is part of a longer name: the "Sam" of
# "Sam Whitfield" is not the known "Sam" (Patel).
_NAME_GOES_ON = re.compile(
    r" (?!(?i:" + "|".join(re.escape(w) for w in sorted(STOP_CAPS, key=len, reverse=True)) + rf")\b)[{_UP}][{_LO}]"
)


def _lower_places(sentence: str, taken: _Spans, lowercase_writer: bool = False) -> list[Mention]:
    """Lower-case places of the gazetteer after a residence or travel phrase; the longest of the
    up to three words that follow wins ("moved to new york city"). From a writer who does not
    capitalize, also after any preposition of place when the parser reads a name there, with no
    article or adjective of its own ("my parents are in porto"; not "in nice weather")."""
    out = []
    starts = [(m, m.start("place")) for m in _LOWER_PLACE.finditer(sentence)]
    if lowercase_writer:
        starts += [(m, m.start("place")) for m in _PLACE_AFTER.finditer(sentence)
                   if _among(m.group("place").split()[0], _PLACE_HEADS) and _named_at(sentence, m.start("place"))]
        # "bangalore rain + zoom = pain": a place no word or name shares, wherever it stands
        starts += [(m, m.start("place")) for m in _ANY_WORD.finditer(sentence)
                   if _among(m.group("place").split()[0], _SURE_PLACE_HEADS)]
    for match, start in sorted(starts, key=lambda item: item[1]):
        words = match.group("place").split()
        for n in range(len(words), 0, -1):
            if _among(" ".join(words[:n]), _LOWER_PLACE_NAMES) and (
                    match.re is not _ANY_WORD or _among(" ".join(words[:n]), _SURE_PLACES)):
                end = start + len(" ".join(words[:n]))
                if n < len(words) and words[n] in CITY_ORG_HEADS and _compound_of_next(sentence, end):
                    break  # "nottingham uni", "leeds council": the place names an organization
                if _OF_ORG_BEFORE.search(sentence, 0, start):
                    break  # "uni of leeds": the organization's name
                if sentence[start:end] == " ".join(words[:n]) and not taken.overlaps(start, end) and not any(
                        o.start < end and start < o.end for o in out):
                    out.append(Mention(start, end, _place_case(sentence[start:end]), place=match.re is _ANY_WORD))
                break
        else:
            if lowercase_writer and match.re is _LOWER_PLACE and _UNLISTED_HOME.match(sentence, match.start()) and (
                    end := _unlisted_place_end(sentence, start, words[0])) and not taken.overlaps(start, end):
                out.append(Mention(start, end, words[0].capitalize(), place=True))  # "moving back to sopot"
    return out


# where one lives or moves, said before a town no gazetteer holds
_UNLISTED_HOME = re.compile(r"(?:live[sd]?\s+in|living\s+in|based\s+in|resides?\s+in|"
                            r"(?:moved|moving|move|moves|relocated|relocating)\s+back\s+(?:to|2)|"
                            # "just moved to sopot" (not "our standup got moved to thurs")
                            r"(?<!got\s)(?<!been\s)(?<!was\s)(?<!were\s)(?<!be\s)(?<!is\s)(?:moved|relocated)\s+(?:to|2)|"
                            # "im in sopot now": where one is now, said of a word no dictionary holds
                            r"(?:i'?m|am|is|are|we're|were|they're|['’]s)\s+(?:now\s+|still\s+)?in(?=\s+\S+\s+now\b)|"
                            r"(?:flat|apartment|house|condo)\s+in)\b")  # "our new flat in shoreditch"


def _unlisted_place_end(sentence: str, start: int, word: str) -> int | None:
    """The end of a one-word town no gazetteer holds, after a verb of home ("moving back to sopot
    next week"): a word no dictionary or name list holds, ending the clause or before a word of time
    or company; None otherwise."""
    end = start + len(word)
    if len(word) < 4 or not _unknown_word(word) or not _HAS_VOWEL.search(word) or word in FIRST_NAMES or (
            word in WORLD_GIVEN_NAMES or in_nickname_table(word)):
        return None
    return end if _CLAUSE_END_AFTER.match(sentence, end) else None


_CLAUSE_END_AFTER = re.compile(
    r"\s*(?:$|[.,!?;:)(]|\s(?:now|next|last|this|in|for|with|w|and|soon|tomorrow|today|lol|haha|asap)\b)")


_OF_ORG_BEFORE = re.compile(rf"\b(?:{alternation(ORG_PREFIXES)})\s+of\s+$")


def _among(words: str, names: frozenset[str]) -> bool:
    """`words` are one of `names`, as written or with their marks dropped ("đà nẵng" as "da nang")."""
    return words in names or strip_accents(words) in names


def _compound_of_next(sentence: str, end: int) -> bool:
    """The parse makes the word ending at `end` part of the noun after it ("nottingham" of
    "nottingham uni"; not "london" of "moved to london health is better there")."""
    return any(t.idx + len(t) == end and t.dep_ == "compound" and t.head.i == t.i + 1 for t in parse(sentence))


_PLACE_AFTER = re.compile(
    rf"\b(?:in|to|from|near|around|outside|of)\s+(?P<place>[{_LO}][{_LO}'-]*(?:\s+[{_LO}][{_LO}'-]*){{0,2}})"
)
# where a place is expected, a place of the gazetteer with or without its marks, or another name
# of a larger city ("in saigon", "moved to lisboa")
_LOWER_PLACE_NAMES = PLACES | FOLDED_PLACES | frozenset(PLACE_OTHER_NAMES)
# a first word of a place: the parse is read only then
_PLACE_HEADS = frozenset(p.split()[0] for p in _LOWER_PLACE_NAMES)
# places said in lower case without a preposition: another name of a large city ("bangalore") or a
# name of several words ("new york"), none opening with a given name; not a one-word town, which is
# also many a family name or word ("preston", "turkey")
_SURE_PLACES = frozenset(p for p in (*PLACE_OTHER_NAMES, *(p for p in PLACES if " " in p))
                         if p.split()[0] not in GIVEN_NAMES and not is_common_word(p.split()[0]))
_SURE_PLACE_HEADS = frozenset(p.split()[0] for p in _SURE_PLACES)
_ANY_WORD = re.compile(rf"(?<![\w'’-])(?=(?P<place>[{_LO}][{_LO}'-]*(?:\s+[{_LO}][{_LO}'-]*){{0,3}}))")
_LOWER_JOINERS = frozenset({"de", "da", "do", "dos", "das", "del", "la", "le", "el", "of", "the", "on", "upon", "am"})


def _named_at(sentence: str, start: int) -> bool:
    """The parser reads the word at `start` as a name or noun object of its preposition, bare."""
    return any(t.idx == start and t.pos_ in ("PROPN", "NOUN") and t.dep_ in ("pobj", "compound")
               and not any(c.dep_ in ("det", "amod", "poss", "nummod") for c in t.children)
               for t in parse(sentence))


def _place_case(text: str) -> str:
    """A lower-case place as it is written: "new york" → "New York", "rio de janeiro" → "Rio de Janeiro"."""
    words = text.split()
    return " ".join(w if i and w in _LOWER_JOINERS else w[:1].upper() + w[1:] for i, w in enumerate(words))


# "my sis dunya", "my lil bro kuba", "our boss priya": a lower-case word right after a kin or role
# word of the writer's (or his / her) is that person's name when no dictionary holds it
_LOWER_KIN_NAME = re.compile(
    # (or "new" opening a note: "new gf maja helped me paint")
    rf"(?:\b(?:my|our|his|her|their|[{_LO}]{{3,}}['’]s)\s+|^\W*(?=new\s))(?:(?:lil|little|big|baby|older|younger|new|best|ex)\s+)?"
    rf"(?:{alternation(k for k in KINSHIP if k.isalpha())}|ex)\s+"
    rf"(?P<name>[{_LO}][{_LO}'-]{{2,}})\b(?!['’]s\b)"
)

# "ilse (my sister) got her license", "tomas, my husband, is away": a kin word set off right after a
# lower-case given name (not chat's "ngl, my husband, ...")
_LOWER_NAME_KIN_AFTER = re.compile(
    rf"(?<![\w'’])(?P<name>[{_LO}][{_LO}'-]{{2,}})\s*(?:\(|,|[—–]|\s-)\s*(?:my|our|his|her|their)\s+"
    rf"(?:(?:lil|little|big|baby|older|younger|new|best|ex)\s+)?(?:{alternation(k for k in KINSHIP if k.isalpha())})"
    r"\s*(?:\)|,|[—–]|\s-)"
)

# the word after a lower-case given name that is her family name when no dictionary holds it
_LOWER_FAMILY_NAME = re.compile(rf"\s(?P<name>(?:[od]'|mc)?[{_LO}][{_LO}-]{{3,}})\b(?!-)")


# "got a cat called mochi", "our dog named biscuit": after a pet word and "called" / "named", the
# lower-case word is the pet's name whatever else it means
_LOWER_PET_NAME = re.compile(
    rf"\b(?:{alternation(PET_TERMS)})\s*,?\s+(?:called|named)\s+"
    rf"(?P<name>[{_LO}][{_LO}'-]{{1,}})\b"
)


# "a gym ... its called iron house", "a local football club, the harbour rovers": an organization
# named in lower case after the noun that says what it is, up to three words
_LOWER_ORG_NAMED = re.compile(
    rf"\b(?:a|an|my|his|her|their|our|[{_LO}]+['’]s)\s+(?:[\w-]+\s+){{0,2}}?(?:{alternation(ORG_NOUNS)})\b"
    r"(?:(?:\s+(?:there|here|nearby|downtown|in\s+town))?\s*,?\s*(?:called|named)\s+(?:the\s+)?|[^.!?;]{0,40}?\b(?:it'?s|it\s+is|is|was)\s+(?:called|named)\s+(?:the\s+)?"
    rf"|\s*,\s*the\s+)(?P<name>[{_LO}][\wà-ÿ'&-]*(?:\s+[{_LO}][\wà-ÿ'&-]*){{0,2}})"
)
_NOT_IN_A_NAME = frozenset({"and", "but", "lol", "which", "who", "that", "in", "at", "on", "for", "with", "so", "its",
                            "it", "is", "was", "haha", "lmao", "tho", "though", "because", "bc", "since", "now",
                            "by", "my", "me", "him", "her", "us", "them", "about", "to", "from", "of", "near",
                            "next", "opposite", "behind", "across", "round", "around", "off", "down", "up"})


def _lower_named_organizations(sentence: str, taken: _Spans) -> list[Mention]:
    out = []
    for match in _LOWER_ORG_NAMED.finditer(sentence):
        words = []
        for word in match.group("name").split():
            if word in _NOT_IN_A_NAME or word in STOP_CAPS and words:
                break
            words.append(word)
        if not words or all(is_common_word(w) for w in words):
            continue
        start = match.start("name")
        end = start + len(" ".join(words))
        if sentence[start:end] == " ".join(words) and not taken.overlaps(start, end):
            out.append(Mention(start, end, " ".join(w[:1].upper() + w[1:] for w in words), organization=True))
    return out


# "two cats now, tito and nala": the lower-case words listed right after pets are their names when
# no dictionary holds them ("two cats now, both lazy and fat" names none)
_LOWER_PET_LIST = re.compile(
    rf"\b(?:{alternation(PET_TERMS)})s\b(?:\s+(?:now|too|at\s+home))?\s*[,:—–-]\s*"
    rf"(?P<list>[{_LO}][{_LO}'-]+(?:\s*,\s*[{_LO}][{_LO}'-]+)*\s*,?\s+(?:and|&|n)\s+[{_LO}][{_LO}'-]+)\b"
)


_PET_RIGHT_AFTER = re.compile(rf"\s+(?:{alternation(PET_TERMS)})s?(?![\w-])", re.I)  # not "pet-sits"


def _a_breed(sentence: str, mention: Mention) -> bool:
    """"Odile's Siamese cat", "a Bengal kitten": one capitalized word right before a word for a pet
    says what kind of pet it is, and names no one (not "my dog Rex")."""
    return (" " not in mention.text.strip() and not mention.known and not mention.title
            and sentence[mention.start:mention.start + 1].isupper()
            and bool(_PET_RIGHT_AFTER.match(sentence, mention.end))
            and sentence[mention.end:mention.end + 2] not in ("'s", "’s"))


_PET_BEFORE = re.compile(rf"\b(?:{alternation(PET_TERMS)})s?\b")
_NAMED_AS_BEFORE = re.compile(r"\b(?:(?:named|called|call|name)\s+(?:him|her|it)|(?:is|was|been)\s+(?:called|named)|"
                              r"name\s+is)\s+$", re.I)


def _parsed_as_noun(sentence: str, start: int) -> bool:
    return any(t.idx == start and t.pos_ in ("NOUN", "PROPN") for t in parse(sentence))


# "our dog mochi is 10", "my cat, pickle, hates the vet": a lower-case word right after someone's
# pet word is the pet's name when no dictionary holds it ("our dog food ran out" names none), or
# when commas set it off as the pet word's apposition
_LOWER_OWN_PET = re.compile(
    rf"\b(?:my|our|his|her|their|[{_LO}]{{3,}}['’]s)\s+(?:(?:new|old|little|baby)\s+)?"
    rf"(?:{alternation(PET_TERMS)})\s*,?\s+(?P<name>[{_LO}][{_LO}'-]{{2,}})\b(?!['’]s\b)"
)


_COMMA_AFTER = re.compile(r"\s*,")
def _subject_of_a_verb(sentence: str, start: int) -> bool:
    """The word at `start` is the singular subject of the verb right after it ("my dog pudding ate …")."""
    tokens = list(parse(sentence))
    for k, token in enumerate(tokens):
        if token.idx == start:
            after = tokens[k + 1] if k + 1 < len(tokens) else None
            return (token.dep_ in ("nsubj", "nsubjpass") and token.tag_ != "NNS" and after is not None
                    and after.pos_ in ("VERB", "AUX") and after.i == token.head.i)
    return False


def _parsed_as_pets_name(sentence: str, start: int, apposed: bool) -> bool:
    return any(t.idx == start and t.pos_ in ("NOUN", "PROPN") and t.tag_ != "NNS" and (
        t.dep_ == "appos" if apposed else t.dep_ in ("nsubj", "nsubjpass", "appos")) for t in parse(sentence))


def _parsed_as_name(sentence: str, start: int) -> bool:
    """The parser reads the word at `start` as a proper noun: "my wife maja works at …" names her
    though "maja" is also a word of the dictionary ("my wife today said …" names no one)."""
    return any(t.idx == start and t.pos_ == "PROPN" for t in parse(sentence))


def _names_whom(sentence: str, start: int) -> bool:
    """The word at `start`, right after a kin word, names the relative though a town has its name
    too: a verb or the clause's end follows it ("my neighbour guadalupe moved in"; not "my cousin
    lima trip")."""
    tokens = list(parse(sentence))
    for k, token in enumerate(tokens):
        if token.idx == start:
            after = tokens[k + 1] if k + 1 < len(tokens) else None
            return token.dep_ != "compound" and (after is None or after.pos_ in ("VERB", "AUX", "PUNCT", "CCONJ"))
    return False


def _lower_kin_names(sentence: str, taken: _Spans, own: frozenset[str] = frozenset()) -> list[Mention]:
    out = []
    for match in _LOWER_KIN_NAME.finditer(sentence):
        word, start, end = match.group("name"), match.start("name"), match.end("name")
        if word[-2:] in ("'s", "’s"):  # "my friend tom's dog": the friend is Tom, the dog his
            word, end = word[:-2], end - 2
        if len(word) < 2 or taken.overlaps(start, end) or word in STOP_CAPS or word in KINSHIP or (
                word in PLACES and not _names_whom(sentence, start)):
            continue
        if word in FIRST_NAMES or in_nickname_table(word) or not (is_common_word(word) or is_word_form(word)) or (
                _parsed_as_name(sentence, start)):
            family = _family_name_after(sentence, end, own)
            if family and not taken.overlaps(end, family):
                end = family  # "my gf maja kowalska": her family name too
            out.append(Mention(start, end, title_case(sentence[start:end])))
    for match in _LOWER_NAME_KIN_AFTER.finditer(sentence):
        word, start, end = match.group("name"), match.start("name"), match.end("name")
        if not taken.overlaps(start, end) and word not in STOP_CAPS and word not in KINSHIP and (
                word in GIVEN_NAMES or in_nickname_table(word)):  # not chat's "ngl, my husband, ..."
            out.append(Mention(start, end, title_case(word)))
    for match in _LOWER_PET_NAME.finditer(sentence):
        word, start, end = match.group("name"), match.start("name"), match.end("name")
        if not taken.overlaps(start, end) and word not in STOP_CAPS and not is_common_word(word):
            out.append(Mention(start, end, title_case(word)))
    for match in _LOWER_OWN_PET.finditer(sentence):
        word, start, end = match.group("name"), match.start("name"), match.end("name")
        apposed = is_word_form(word)  # a word of the dictionary only set off by commas, or as the subject
        if apposed and not (sentence[start - 2 : start].strip() == "," and _COMMA_AFTER.match(sentence, end)):
            if word in PET_GOODS or not _subject_of_a_verb(sentence, start):
                continue
            apposed = False  # "my dog pudding ate my slipper": the subject, the pet word its compound
        if (not taken.overlaps(start, end) and word not in STOP_CAPS and not is_common_word(word)
                and not any(m.start == start for m in out) and _parsed_as_pets_name(sentence, start, apposed)):
            out.append(Mention(start, end, title_case(word)))
    for match in _LOWER_PET_LIST.finditer(sentence):
        names = [w for w in re.finditer(rf"[{_LO}][{_LO}'-]+", match.group("list")) if w.group() not in ("and", "n")]
        spans = [(match.start("list") + w.start(), match.start("list") + w.end()) for w in names]
        nouns = {t.idx for t in parse(sentence) if t.pos_ in ("PROPN", "NOUN")}
        if all(a in nouns and not is_common_word(sentence[a:b]) and sentence[a:b] not in PLACES for a, b in spans):
            out += [Mention(a, b, title_case(sentence[a:b])) for a, b in spans if not taken.overlaps(a, b)]
    return out


# Organizations written in lower case ("startin at mercadona", "the hanoi book club", "the university
# of warsaw"): after a preposition, a phrase that ends in an organization word and holds a place or
# a word no dictionary has; or one such word alone right after a word of work or study.
_JOINED_OR_LEFT = frozenset({"joined", "join", "joining", "quit", "left", "leaving"})
_LEAD_WORD = re.compile(rf"\b(?:at|for|with|to|into|by|{alternation(_JOINED_OR_LEFT)})\b")
_LOWER_ORG = re.compile(
    rf"(?P<lead>{_LEAD_WORD.pattern})\s+(?:the\s+)?"
    rf"(?P<org>[{_LO}][\wà-ÿ'&-]*(?:\s+(?:of\s+)?[{_LO}][\wà-ÿ'&-]*){{0,3}})"
)
_WORK_BEFORE = re.compile(
    r"\b(?:work\w*|job|start\w*|join\w*|intern\w*|been|stud\w*|shifts?|hired|employed|no\s+longer|day|week|month|"
    r"boss|manager|team|colleagues?|coworkers?|notice|promot\w*|interview\w*|offer|position|role|contract)"
    r"\s+(?:\w+\s+){0,2}$"
)
# "second year at", "finished at", "graduated from": a school's place, right before
_STUDY_BEFORE = re.compile(
    r"\b(?:yr|year|semester|term|degree|course|finish\w*|graduat\w*|enrol\w*|uni|masters?|phd|exams?|freshers|"
    r"week)\s+(?:\w+\s+){0,1}$")


_VOWELS = re.compile(r"[aeiouà-ÿ]")


def _initials_word(word: str) -> bool:
    """Two to four letters that are no word, name or chat spelling ("ucd", "lse", "ucl")."""
    return (2 <= len(word) <= 4 and word.isalpha() and len(_VOWELS.findall(word)) <= 1
            and not is_word_form(word) and not is_common_word(word)
            and word not in FIRST_NAMES and word not in CHAT_FORMS and not in_nickname_table(word)
            and word not in ORG_PREFIXES and word not in ORG_SUFFIXES)


# "a chef at wagamama", "shes a nurse at", "junior dev for": what someone works as, right before
_OCCUPATION_BEFORE = re.compile(rf"\b(?:{alternation(OCCUPATIONS)})s?\s+$")
# from a writer who does not capitalize, right after a verb of work, a bare word that is a place's name
# is the employer ("i work at carrefour")
_WORK_RIGHT_BEFORE = re.compile(r"\b(?:work(?:s|ed|ing)?|job|start(?:s|ed|ing|in')?|intern(?:s|ed|ing)?|notice)\s+$")



def _is_verb_at(sentence: str, start: int, known: bool = False) -> bool:
    """The parser reads the word at `start` as a verb ("left tesco", not "two left feet"); with
    `known`, one whose lemma is a verb of the lemma tables."""
    return any(t.idx == start and t.pos_ == "VERB" and (not known or verb_lemma(t.lemma_)) for t in parse(sentence))


def _unknown_word(word: str) -> bool:
    return (len(word) >= 4 and word not in STOP_CAPS and word not in PLACES and not is_common_word(word)
            and not is_word_form(word))


_NOT_OF = frozenset({"for", "in", "at", "to", "with", "from", "on", "into", "by"})


_NOT_A_NAMES_START = frozenset({"local", "new", "old", "big", "small", "nearby", "same", "other", "another", "my",
                                "his", "her", "our", "their", "your", "a", "an", "this", "that", "some", "private",
                                "public", "main", "central", "city", "uni", "university", "two", "three", "four",
                                "five", "every", "each", "all", "both", "several", "many", "few", "any", "no",
                                "corner", "family", "friends", "mates", "full", "minimum", "maximum", "square",
                                "half", "least", "top", "high", "low", "peak", "first", "last", "very"})


def _lower_organizations(sentence: str, taken: _Spans, lowercase_writer: bool = False) -> list[Mention]:
    out = []
    # each lead word starts a search of its own: "quit my job at biedronka" reads "at biedronka" too
    matches = (m for lead in _LEAD_WORD.finditer(sentence) if (m := _LOWER_ORG.match(sentence, lead.start())))
    for match in matches:
        words = match.group("org").split()
        start = match.start("org")
        for n in range(len(words), 0, -1):
            phrase = words[:n]
            end = start + len(" ".join(phrase))
            if sentence[start:end] != " ".join(phrase) or taken.overlaps(start, end):
                continue
            if any(w in _NOT_OF for w in phrase[1:]):
                continue  # "unijos for law": a name holds no preposition but "of"
            named = any(w in PLACES or _unknown_word(w) for w in phrase if w != "of")
            lead, before = match.group("lead"), sentence[: match.start()]
            bare = not sentence[match.end("lead"):start].strip()  # "at decathlon", not "at the clinic"
            # "a barista at kafka coffee": right after a job, a name before the kind of business, even a word
            employer = n == 2 and lead in ("at", "for") and bare and not is_common_word(phrase[0]) and (
                _OCCUPATION_BEFORE.search(before) or _WORK_RIGHT_BEFORE.search(before))
            # "started at maple grove vet hospital": after a word of work, with no article, words of any kind
            # before the kind of business name one ("local", "new" are no name's)
            hired_at = (n > 1 and lead == "at" and bare and _WORK_RIGHT_BEFORE.search(before)
                        and phrase[0] not in _NOT_A_NAMES_START)
            if n > 1 and phrase[-1] in ORG_SUFFIXES and (named or employer or hired_at) and (hired_at or not any(
                    is_common_word(w.split("'")[0]) for w in phrase[:-1])) or (
                    n > 2 and phrase[0] in ORG_PREFIXES and phrase[1] == "of" and " ".join(phrase[2:]) in PLACES):
                out.append(Mention(start, end, " ".join(w if w == "of" else title_case(w) for w in phrase)))
                break
            # one unknown word: an employer after a word of work ("startin at mercadona"), or one
            # joined or left ("finally quit tesco")
            if n == 1 and lowercase_writer and lead == "at" and bare and _WORK_RIGHT_BEFORE.search(before) and (
                    phrase[0] in PLACES and len(phrase[0]) >= 4 and any(
                        t.idx == start and t.pos_ in ("NOUN", "PROPN") for t in parse(sentence))):
                out.append(Mention(start, end, title_case(phrase[0])))  # "i work at carrefour"
                break
            # "first week at ucd", "final yr at lse": a school or employer by its initials, in lower case
            the = sentence[match.end("lead"):start].strip() == "the"  # "hired by the nhs": initials take "the"
            if n == 1 and lowercase_writer and lead in ("at", "from", "by") and (bare or the) and _initials_word(
                    phrase[0]) and (
                    _WORK_BEFORE.search(before) or _STUDY_BEFORE.search(before)):
                out.append(Mention(start, end, phrase[0].upper(), organization=True))
                break
            if n > 1 and lowercase_writer and _named_at_work(sentence, lead, before, phrase, end):
                out.append(Mention(start, end, " ".join(w if w == "of" else title_case(w) for w in phrase),
                                   organization=True))
                break
            if n == 1 and _unknown_word(phrase[0]) and (lead in _JOINED_OR_LEFT and _is_verb_at(
                    sentence, match.start("lead")) or lead in ("at", "for") and (
                    _WORK_BEFORE.search(before) or _OCCUPATION_BEFORE.search(before))):
                out.append(Mention(start, end, title_case(phrase[0])))
                break
    return out


# where an employer's name said in lower case stops: a preposition, a day or a time, a verb, "and", "lol"
_ENDS_A_NAME = frozenset({
    "on", "in", "at", "for", "with", "from", "by", "near", "off", "as", "to", "into", "downtown", "today", "tonight",
    "tomorrow", "yesterday", "next", "last", "this", "mon", "monday", "tue", "tues", "tuesday", "wed", "wednesday",
    "thu", "thurs", "thursday", "fri", "friday", "sat", "saturday", "sun", "sunday", "week", "weekend", "morning",
    "night", "now", "again", "til", "till", "until", "lol", "lmao", "haha", "tho", "rn", "is", "was", "are", "were",
    "has", "have", "had", "will", "and", "but", "so", "n", "or", "doing", "starting", "since", "finally", "already",
    "officially", "soon", "yet"})
_ENDS_A_NAME_AFTER = re.compile(rf"\s*$|\s*[,.!?;:()—–-]|\s+(?:{alternation(_ENDS_A_NAME)})\b")
# the last word of what is no name but a part of a workplace or a time ("at the front desk", "the coffee shop")
_NO_NAMES_END = frozenset({"shop", "store", "place", "office", "desk", "site", "front", "back", "end", "top",
                           "bottom", "moment", "time", "home", "nights", "weekends", "start", "beginning", "level",
                           "pace", "house", "flat", "apartment", "counter", "till", "register", "bar", "door",
                           "speed", "capacity", "wage", "rate", "price", "cost", "hour", "hours", "one", "half",
                           "least", "most", "best", "worst", "bucks", "dollars", "pounds", "euros", "am", "pm",
                           "noon", "midnight", "dawn", "dusk", "lunch", "dinner", "breakfast", "conversion",
                           "party", "fair", "floor", "kitchen", "garden", "loft"})
# a word of work right before the employer ("started at", "hired at", "an apprenticeship with",
# "transferred to")
_HIRED_BEFORE = re.compile(
    r"\b(?:work(?:s|ed|ing)?|job|start(?:s|ed|ing|in')?|hired|intern(?:s|ed|ing)?|internship|apprenticeship|"
    r"placement|shifts?)\s+$")
_TRAINEE_BEFORE = re.compile(r"\b(?:apprenticeship|internship|placement|traineeship)\s+$")
_MOVED_BY_WORK_BEFORE = re.compile(r"\b(?:transferred|seconded)\s+$")  # not "promoted to head chef": a post
# an occupation said of someone as what they are or do: "i'm a line cook at", "works as a porter at"
_AS_AN_OCCUPATION_BEFORE = re.compile(
    rf"\b(?:i'm|im|am|is|'s|was|are|were|be|been|became|become|as)\s+(?:an?\s+|the\s+)?(?:[\w-]+\s+){{0,2}}?"
    rf"(?:{alternation(OCCUPATIONS)})\s+$", re.I)
# what a phrase after "at" holds when it names no employer: a number, a time, a verb, a function word
_NOT_IN_AN_EMPLOYERS_NAME = frozenset({"NUM", "VERB", "AUX", "ADV", "ADP", "DET", "PRON", "PART", "CCONJ", "SCONJ",
                                       "INTJ"})


def _named_at_work(sentence: str, lead: str, before: str, phrase: list[str], end: int) -> bool:
    """From a writer who does not capitalize, right after a word of work or an occupation, the words up
    to where the sentence goes on name the employer, whatever words they are ("started at the bluebell
    deli on king st", "my job at harbour lights cafe is so slow", "an apprenticeship w ashcombe
    joinery"); not "at the front desk", "at full speed", "a builder for the loft conversion"."""
    after_work = (lead in ("at", "for") and _HIRED_BEFORE.search(before)
                  or lead == "at" and _AS_AN_OCCUPATION_BEFORE.search(before)
                  or lead == "with" and _TRAINEE_BEFORE.search(before)
                  or lead == "to" and _MOVED_BY_WORK_BEFORE.search(before))
    if not (after_work and len(phrase) <= 3 and phrase[0] not in _NOT_A_NAMES_START
            and not any(w in _ENDS_A_NAME for w in phrase)
            and not (phrase[-1] in _NO_NAMES_END and all(is_dictionary_word(w) for w in phrase))
            and all(re.fullmatch(r"[\wà-ÿ'&-]+", w) and not any(c.isdigit() for c in w) for w in phrase)
            and _ENDS_A_NAME_AFTER.match(sentence, end) is not None):
        return False
    start = end - len(" ".join(phrase))
    tags = [t.pos_ for t in parse(sentence) if start <= t.idx < end]
    return bool(tags) and not any(tag in _NOT_IN_AN_EMPLOYERS_NAME for tag in tags)


class _Spans:
    """Non-overlapping (start, end) spans with an O(log n) overlap test."""

    def __init__(self, mentions: list[Mention]):
        ordered = sorted((m.start, m.end) for m in mentions)
        self._starts = [s for s, _ in ordered]
        self._ends = [e for _, e in ordered]

    def overlaps(self, start: int, end: int) -> bool:
        i = bisect_right(self._starts, start) - 1
        if i >= 0 and self._ends[i] > start:
            return True
        return i + 1 < len(self._starts) and self._starts[i + 1] < end


def _capital_runs(sentence: str, tokens: list, taken: _Spans) -> list[list[int]]:
    """Token index runs of capitalized words joined by single spaces (connectors allowed)."""
    runs: list[list[int]] = []
    current: list[int] = []
    for k, (start, end, text) in enumerate(tokens):
        if taken.overlaps(start, end):
            runs.append(current)
            current = []
            continue
        capital = _is_capital(text)
        if (
            current
            and _joined(sentence, tokens[current[-1]], start)
            and (capital or _connector(text, tokens[current[-1]][2]))
        ):
            current.append(k)
        else:
            runs.append(current)
            current = [k] if capital else []
        if capital and text.endswith("'s") and not (current == [k] and _common_possessive(text)) and not (
                _institution_next(sentence, tokens, current, k)):
            runs.append(current)
            current = []
    runs.append(current)
    return [_trim_connectors(run, tokens) for run in runs if run]


# what a saint's or founder's possessive opens the name of ("St Mary's Hospital", "Nora's Bakery")
_INSTITUTION_HEADS = frozenset({"school", "college", "hospital", "church", "cathedral", "chapel", "academy",
                                "infirmary", "hospice", "bakery", "cafe", "café", "restaurant", "pub", "inn"})
_SAINTED_HEADS = ORG_SUFFIXES | _INSTITUTION_HEADS
_PLACE_PREPOSITIONS = frozenset({"at", "in", "from", "to", "near", "opposite", "outside", "the"})


def _institution_next(sentence: str, tokens: list, run: list[int], k: int) -> bool:
    """A capitalized institution word right after a possessive continues the name ("St Mary's
    Hospital"; "at Guy's Hospital", "Nora's Bakery" opening a sentence): the saint or founder is
    part of it, not its owner. Not after a kin word or "my" ("my daughter Lily's School")."""
    if k + 1 >= len(tokens) or not _joined(sentence, tokens[k], tokens[k + 1][0]):
        return False
    word = tokens[k + 1][2]
    if not (word[:1].isupper() and word.lower() in _INSTITUTION_HEADS):
        return False
    if tokens[run[0]][2].lower().rstrip(".") in ("st", "saint"):
        return True
    before = sentence[: tokens[run[0]][0]].rstrip().lower()
    return not before or before.endswith((".", "!", "?", ":")) or before.rsplit(None, 1)[-1] in _PLACE_PREPOSITIONS


def _common_possessive(word: str) -> bool:
    """"Children's", "King's", "Women's": a common noun's possessive opening a longer name ("the Children's
    Memorial Hospital", "King's College"); not someone's ("Ana's", "Mum's"), and never after a given
    name ("Dan Carter's Facebook post": the run ends there)."""
    base = word[:-2].lower()
    return (base not in KINSHIP and not _given_name_word(base) and base not in PLACES
            and (is_dictionary_word(base) or base in ("children", "women", "men")))  # plurals the word list lacks


def _is_capital(text: str) -> bool:
    if not text[:1].isupper():
        return False
    if "'" in text:
        suffix = text.rsplit("'", 1)[1]
        return suffix.lower() not in _CONTRACTION_SUFFIXES
    return True


def _connector(text: str, previous: str) -> bool:
    return text in NAME_CONNECTORS or (text == "of" and previous.lower() in OF_HEADS)


def _joined(sentence: str, previous: tuple, start: int) -> bool:
    gap = sentence[previous[1] : start]
    if gap in (" ", " & ", " + "):  # "Marks & Spencer", "Foster + Partners"
        return True
    prev = previous[2]
    return gap == ". " and (prev.lower() in HONORIFICS or (len(prev) == 1 and prev.isupper()))


def _trim_connectors(run: list[int], tokens: list) -> list[int]:
    while run and not _is_capital(tokens[run[-1]][2]):
        run = run[:-1]
    return run


_OF_AFTER = re.compile(rf" of (?:the )?[{_UP}]")


def _job_title(words: list[str]) -> bool:
    """An occupation ranked or qualified ("Senior Engineer", "Chief Operating Officer") or of
    something ("Head of Finance", "Director of Operations"); not an occupation before a family
    name ("Judge Baker")."""
    low = [w.lower() for w in words]
    head = low[: low.index("of")] if "of" in low[1:] else low
    # "Operations Manager", "Depot Manager", "Warehouse Supervisor": a post over a field of work
    if 2 <= len(head) == len(low) <= 3 and head[-1] in _POSTS and not any(
            w in FIRST_NAMES or w in PLACES or w in ORG_SUFFIXES for w in head[:-1]):
        return True
    return len(words) > 1 and bool(head) and (len(head) < len(low) or head[0] in TITLE_MODIFIERS) and (
        head[-1] in OCCUPATIONS and all(w in OCCUPATIONS or w in TITLE_MODIFIERS for w in head))


_POSTS = frozenset({"manager", "director", "supervisor", "officer", "coordinator", "administrator", "executive",
                    "secretary", "analyst", "specialist", "technician", "controller", "lecturer"})


_AS_BEFORE = re.compile(r"\bas\s+(?:an?\s+|the\s+)?$", re.I)
# a post's head and "of" right before a capitalized word: "Head of", "Director of" (not "CEO of Apple": a
# chief executive is of a firm, not of a field)
_POST_OF_BEFORE = re.compile(r"\b(?i:head|director|manager|dean|professor|lecturer|coordinator|lead|minister|"
                             r"vice\s+president|vp)\s+of\s+$")


def _post_held(sentence: str, tokens: list, run: list[int], words: list[str]) -> bool:
    """"as Estates Manager", ", School Administrator,": a post named in capitals, words of the dictionary
    ending in an occupation, after "as" or set off by commas; not "Tom Baker", not "the Hungry Chef"."""
    low = [w.lower() for w in words]
    before, after = sentence[: tokens[run[0]][0]], sentence[tokens[run[-1]][1]:]
    if len(low) == 1 and low[0] in OCCUPATIONS and not _given_name_word(low[0]):
        # "my appointment as Lecturer", "my resignation as Treasurer"; not "known to all as Chef"
        return bool(_AS_BEFORE.search(before)) and not _NICKNAMED_AS.search(before)
    if not 2 <= len(low) <= 3 or low[-1] not in OCCUPATIONS or _given_name_word(low[0]) or not all(
            is_dictionary_word(w) or w.endswith("s") and is_dictionary_word(w[:-1]) for w in low):  # "Claims"
        return False
    # "Eleanor Hart, Estates Manager, Calder Freight." or "…, Estates Manager.": after a name, not after "my boss,"
    return bool(_AS_BEFORE.search(before)) or before.rstrip().endswith(",") and after.lstrip()[:1] in (
        ",", ".", "") and not _OWNED_BEFORE.search(before)


_OWNED_BEFORE = re.compile(r"\b(?:my|his|her|our|their|your|a|an|the)\s+(?:[\w-]+\s+){0,2}?[\w-]+\s*,\s*$", re.I)
_NICKNAMED_AS = re.compile(r"\b(?:known|referred\s+to|addressed|refer\s+to\s+\w+|know\s+\w+)(?:\s+\w+){0,3}\s+as\s+$",
                          re.I)


def _given_name_word(word: str) -> bool:
    """A given name some table holds ("bill", "faith", "grant"), though the dictionary holds the word too."""
    return word in FIRST_NAMES or word in WORLD_GIVEN_NAMES or in_nickname_table(word)


# a month written short ("Jan", "Sept"; not "May", also a name and a verb)
_SHORT_MONTHS = frozenset(m for m in MONTHS if len(m) <= 4) - {"may", "june", "july"}
_TIME_BEFORE = re.compile(r"\b(?:in|by|early|late|mid|(?:end|start|beginning)\s+of)[\s-]+$", re.I)
_DAY_AFTER = re.compile(r"\.?\s+\d{1,2}(?:st|nd|rd|th)?\b")


def _short_month(sentence: str, start: int, word: str) -> bool:
    """"in Jan", "by Sept", "Feb 3rd": a month written short, not the name Jan ("Jan's wedding")."""
    end = start + len(word)
    return (word.lower() in _SHORT_MONTHS and not sentence.startswith(("'s", "’s"), end)
            and bool(_TIME_BEFORE.search(sentence, 0, start) or _DAY_AFTER.match(sentence, end)))


def _run_to_mention(sentence: str, tokens: list, run: list[int], ctx: NameContext) -> Mention | None:
    words = [_strip_possessive(tokens[k][2]) for k in run]
    full = " ".join(words).lower()
    start, end = tokens[run[0]][0], tokens[run[0]][1]
    if len(run) == 1 and full in STOP_CAPS and _NAMED_AS_BEFORE.search(sentence, 0, start) and _PET_BEFORE.search(
            sentence[:start].lower()):
        return Mention(start, end, words[0])  # "a parrot, and we named him Professor": a title given as a pet's name
    if len(run) == 1 and full in KINSHIP and sentence[:start].rstrip().endswith("(") and _ALIAS_CLOSE.match(
            sentence[end:]):
        return Mention(start, end, words[0])  # "Ana Lima (Mum)": what the speaker calls her
    first = 0
    if full not in PLACES:
        while first < len(run) and words[first].lower() in STOP_CAPS and not (
                first == 0 and words[0].lower() == "st" and len(run) > 2
                and words[-1].lower() in _SAINTED_HEADS):  # "St Anne's College"
            first += 1
        # "Left Acme last month", "Joined Vitrio": a verb opening a chat sentence is no part of the name
        if run[0] == 0 and first == 0 and len(run) > 1 and (_opening_verb(words[0])
                                                             or _opens_as_imperative(sentence, words[0])) and not (
                words[0].lower().endswith("ing") and words[-1].lower() in ORG_SUFFIXES
                and not _opens_as_a_verb(sentence, words)):  # "Building Trust Inc"; not "Joining Kestrel Labs"
            first = 1
    last = len(run)
    while last > first and words[last - 1].lower() in STOP_CAPS:
        last -= 1
    titled_after = last - first > 1 and words[last - 1].lower() in HONORIFICS_AFTER_WORD
    last -= titled_after  # "Kemal Hoca", "Ottarine Maam": a title after the name is no part of it
    if first >= last or _calendar_phrase(sentence, tokens, run, words, first, last):
        return None
    if last - first == 1 and _short_month(sentence, tokens[run[first]][0], tokens[run[first]][2]):
        return None  # "starting in Jan", "by Sept", "Feb 3rd": a month
    if " ".join(words[first:last]).lower() in PET_TERMS and (kind := _KIND_BEFORE.search(
            sentence, 0, tokens[run[first]][0])) and not set(kind.group(1).split()) & _SAID_OF_PEOPLE:
        return None  # "a black Labrador named Pelleas", "our Dalmatian": the kind; not "my sister Kitty"
    if _POST_OF_BEFORE.search(sentence, 0, tokens[run[first]][0]) and all(
            is_word_form(w) and w.lower() not in PLACES for w in words[first:last]) and (
            words[last - 1].lower() not in ORG_SUFFIXES):
        return None  # "Head of Procurement", "Director of Human Resources": the field of a post
    if _job_title(words[first:last]) or _post_held(sentence, tokens, run, words[first:last]) or (
            last - first == 1 and words[first].lower() in OCCUPATIONS and _OF_AFTER.match(
            sentence, tokens[run[first]][1])):
        return None  # "Head of Finance", "Chief Operating Officer": what someone is, not who or where
    # "Cousin Emeka", "Uncle Tunde": a kin title is no part of the name but marks a person, like "Dr."
    kin_title = last - first > 1 and words[first].lower() in KIN_TITLES and not (
        # "Lola Brandt": a title that is also a given name, before a family name, is her given name
        last - first == 2 and words[first].lower() in GIVEN_NAMES and words[first + 1].lower() not in GIVEN_NAMES
        and words[first + 1].lower() in WORLD_FAMILY_NAMES)
    first += kin_title
    honorific = first > 0 and words[first - 1].lower() in HONORIFICS or kin_title
    kept = run[first:last]
    # The span covers "Dr."; the name keeps it only when nothing else is left ("Dr. Silva").
    start = tokens[run[first - 1]][0] if honorific else tokens[kept[0]][0]
    name_start = start if len(kept) == 1 and not kin_title else tokens[kept[0]][0]
    end = tokens[kept[-1]][0] + len(words[last - 1])
    if len(kept) == 1 and HONORIFIC_SUFFIX.search(words[first]):
        return Mention(start, end, sentence[start:end], honorific=True)  # "Tanaka-san": a title after the name
    # "pani Zofia", "seu Jorge": a title in lower case before the name's capitals
    titled_before = not honorific and bool(_LOWER_TITLE_BEFORE.search(sentence, 0, start))
    if len(kept) == 1 and not honorific and not titled_after and not titled_before and not _single_word_ok(
            sentence, tokens, run, first, ctx):
        return None
    # the span takes the title after the name in too: the sentence reads "⟨Kemal Tamsk⟩", not "⟨Kemal Tamsk⟩ Hoca"
    span_end = tokens[run[last]][1] if titled_after else end
    return Mention(start, span_end, sentence[name_start:end], honorific=honorific,
                   person=titled_after or titled_before)


# English ones are words or brands in lower case too ("I miss Paris", "ms Teams", "dr Pepper", "madame Tussauds")
_NOT_TITLES_IN_LOWER_CASE = word_set("mr mrs ms miss mx dr doctor prof professor sir dame madame monsieur mme")
_LOWER_TITLE_BEFORE = re.compile(
    rf"(?<![\w.])(?:{alternation((HONORIFICS | TITLES_IN_LOWER_CASE) - _NOT_TITLES_IN_LOWER_CASE)})\s+$")
_KIND_BEFORE = re.compile(r"\b(?:an?|my|our|his|her|their|your)\s+((?:[a-z-]+\s+){0,2})$", re.I)
# the kin table holds friend, neighbour, colleague, flatmate ...; "classmate" it does not
_SAID_OF_PEOPLE = frozenset(KINSHIP) | OCCUPATIONS | PERSON_NOUNS["female"] | PERSON_NOUNS["male"] | {"classmate"}
_CALENDAR_AFTER = re.compile(r" ([A-Z]\w*)")


def _calendar_phrase(sentence: str, tokens: list, run: list[int], words: list[str], first: int, last: int) -> bool:
    """A holiday or calendar phrase, no name: "New Year" (a calendar word trimmed off its end),
    "Mother" of "Mother's Day", "Eve" of "Christmas Eve" or of "New Year's Eve"."""
    if any(w.lower() in CALENDAR_TAILS for w in words[last:]):
        return True
    after = _CALENDAR_AFTER.match(sentence, tokens[run[-1]][1])
    if tokens[run[-1]][2].endswith("'s") and after and after.group(1).lower() in CALENDAR_TAILS:
        return True
    if last - first != 1 or words[first].lower() not in CALENDAR_TAILS:
        return False
    if first > 0:
        return True
    before = run[0] - 1
    return before >= 0 and tokens[before][2].endswith("'s") and _is_capital(tokens[before][2]) and (
        sentence[tokens[before][1] : tokens[run[0]][0]] == " ")


def _opening_verb(word: str) -> bool:
    low = word.lower()
    return low not in FIRST_NAMES and low not in AMBIGUOUS_NAMES and (
        low in IRREGULAR_PAST or (low.endswith("ed") and len(low) > 4 and low not in ED_BASE_VERBS)
        # "Leaving Wellington, …", "Starting Monday at …": a verb in -ing opening a chat sentence
        or low.endswith("ing") and len(low) > 5 and (verb_lemma(low[:-3]) or verb_lemma(low[:-3] + "e")
                                                     or low[-4] == low[-5] and verb_lemma(low[:-4])))


def _opens_as_a_verb(sentence: str, words: list[str]) -> bool:
    """The parser reads the sentence's first word as its main verb in -ing, with no subject, and
    what follows holds a word of a name no dictionary has ("Joining Kestrel Labs next week"; not
    "Training Ground Labs hired me", "Walking Football Club tonight", "Reading FC away at Leeds")."""
    if words[0].lower() in PLACES or not any(not is_dictionary_word(w.lower()) for w in words[1:-1]):
        return False
    first = parse(sentence)[0]
    return first.tag_ == "VBG" and first.dep_ == "ROOT"


def _opens_as_imperative(sentence: str, word: str) -> bool:
    """"Meet Kiko, our new puppy": the parser reads the opening word as a verb in its base form,
    one no list of given names holds."""
    low = word.lower()
    if not sentence.startswith(word) or low in FIRST_NAMES or low in AMBIGUOUS_NAMES or not is_dictionary_word(low):
        return False
    doc = parse(low + sentence[len(word):])  # read without the capital that makes it look like a name
    return doc[0].tag_ == "VB" and doc[0].dep_ == "ROOT"


def _strip_possessive(word: str) -> str:
    return word[:-2] if word.endswith("'s") else word


# after a possessive "'s": what a person has ("Kasia's new flat", "Tunde's new partner"), not a verb's
# "is" / "has" ("Gardening's such fun") nor a firm's ("Spotify's office", "Deliveroo's new home")
OWNED_BY_A_PERSON_AFTER = re.compile(
    r"'s\s+(?:(?:new|old|own|first|tiny|little|rented|shared|current)\s+)?(?:flat|apartment|house|bedsit|"
    r"condo|tenancy|landlord|wife|husband|boyfriend|girlfriend|fianc[ée]e?|partner)\b", re.I)


def _single_word_ok(sentence: str, tokens: list, run: list[int], first: int, ctx: NameContext) -> bool:
    """A lone capitalized word is a name mid-sentence; at the start of a sentence (possibly after
    a stripped "Yesterday"/"So") it needs evidence."""
    if run[0] != 0:
        return True
    k = run[first]
    if first > 0 and tokens[run[0]][2].lower() in GREETING_WORDS:
        return True
    word = _strip_possessive(tokens[k][2])
    low = word.lower()
    if low in AMBIGUOUS_NAMES:
        return False
    if low in GIVEN_NAMES or low in PLACES or (
            word.isupper() and len(word) > 1 and low not in KINSHIP):
        return True
    end = tokens[k][0] + len(word)
    return (bool(_PERSON_AFTER.match(sentence[end:]) or _STATED_AFTER.match(sentence[end:])
                 or KIN_OWNER_AFTER.match(sentence[end:]))
            or ctx.seen_mid_sentence(word) and not _parsed_as_modifier(sentence, tokens[k][0])
            or low not in KIN_TITLES and low not in KINSHIP and low not in HONORIFICS
            # not a verb opening a chat sentence the parser reads as a name with the next one ("Finished KUL!")
            and (_parsed_as_person(sentence, tokens[k][0]) and not (_opening_verb(word) and is_dictionary_word(low))
                 or not is_dictionary_word(word) and opens_as_subject_of_a_life(sentence, tokens[k][0]))
            or names_a_pet(sentence, tokens[k][0], end)  # "Biscuit, our old beagle, ..."
            # "Kasia's new flat is in X": a word no dictionary holds, owning something, names someone
            or tokens[k][2].endswith("'s") and not is_word_form(low) and low not in KIN_TITLES
            and low not in KINSHIP and low not in STOP_CAPS and OWNED_BY_A_PERSON_AFTER.match(sentence, end))


_MODIFIER_TAGS = frozenset({"ADJ", "ADV", "DET", "ADP", "AUX", "VERB", "PRON", "CCONJ", "SCONJ", "NUM", "PART"})


def _parsed_as_modifier(sentence: str, start: int) -> bool:
    """The parser reads the sentence's opening word as an adjective, verb or function word ("New
    hobby alert!"): seen capitalized elsewhere (in "New Year's Eve") it is still no name here."""
    token = next((t for t in parse(sentence) if t.idx == start), None)
    return token is not None and token.pos_ in _MODIFIER_TAGS


def _parsed_as_person(sentence: str, start: int) -> bool:
    """The parser reads the sentence's opening word as a proper noun naming a person ("Kenji moved
    to Osaka"): a given name no list holds."""
    token = next((t for t in parse(sentence) if t.idx == start), None)
    return token is not None and token.pos_ == "PROPN" and token.ent_type_ == "PERSON"


# a third person's kin or social word right before ", Name" at a sentence's end ("her bf of six years,")
_OWNED_KIN_END = re.compile(  # not "my mom, Caroline.": the writer's own kin before a name is often said to them
    rf"\b(?:his|her|their|\w+'s)\s+(?:[\w-]+\s+){{0,3}}(?:{alternation(KINSHIP)})"
    r"(?:\s+of\s+(?:[\w-]+\s+){0,3}[\w-]+)?$",
    re.I,
)


_A_KIN_OR_PET_END = re.compile(
    rf"\b(?:an?)\s+(?:[\w-]+\s+){{0,2}}(?:{alternation(set(KINSHIP) | PET_TERMS)})$"
    # "with Odile's Siamese cat, Marmalade."
    rf"|\b(?:my|our|his|her|their|[\w-]+['’]s)\s+(?:[\w-]+\s+){{0,2}}(?:{alternation(PET_TERMS)})$", re.I)
_ORG_NOUN_END = re.compile(rf"\b(?:an?)\s+(?:[\w-]+\s+){{0,3}}(?:{alternation(ORG_NOUNS)})$", re.I)
# what is said to someone, whose name then follows: "you're such a good friend, Maya", "congrats on the new company"
_SAID_TO_LISTENER = re.compile(
    r"\b(?:you|you're|youre|your|that's|thats|this\s+is|what\s+an?|such\s+an?|congrats|congratulations|thanks|thank|"
    r"lovely|cute|gorgeous|beautiful|nice)\b", re.I)


def _is_vocative(sentence: str, mention: Mention, mentions: list[Mention]) -> bool:
    """Is the mention the listener? "Hey Mel!", "Thanks, Mel!", "You're right, Caroline.", "Jon, you..."."""
    before, after = sentence[: mention.start], sentence[mention.end :]
    if _SALUTATION_BEFORE.search(before) and after.lstrip()[:1] in (",", ":", "!"):
        return True  # "Dear Mrs. Rahimi, ...": whom a letter is to
    if mention.title or " " in mention.text.strip() or mention.text.lower() in PLACES:
        return False
    if _GREETING_BEFORE.search(before[-40:]):
        return True
    if _INTERJECTION_BEFORE.match(before) and after.lstrip()[:1] in (",", "!", ".") and not _DENIED_AFTER.match(after):
        return True
    if before.rstrip().endswith(",") and _SENTENCE_END.match(after):
        head = before.rstrip()[:-1].rstrip()
        if _OWNED_KIN_END.search(head):
            return False  # "engaged to her bf of six years, Ikenna": whom the kin word names
        if (_ORG_NOUN_END.search(head) or _A_KIN_OR_PET_END.search(head)) and not _SAID_TO_LISTENER.search(head):
            return False  # "I freelance for a translation agency, Verbalia.", "we adopted a dog, Rex.": its name
        return not any(m.end == len(head) for m in mentions if m is not mention)
    return (not before.strip(" \"'(") and after.lstrip().startswith(",") and not _APPOSITION.match(after)
            and not _TOLD_OF_AFTER.match(after))


# "Teodor, he's a carpenter": a name set before a description of him, not the one spoken to ("Jess, she's
# asking about you" stays a call)
_TOLD_OF_AFTER = re.compile(r"^\s*,\s*(?:he|she)(?:'s|\s+is|\s+was)\s+(?:an?|my|our|from)\s", re.I)


def alias_pairs(sentence: str, mentions: list[Mention]) -> list[tuple[Mention, Mention]]:
    """Adjacent mentions where the second is parenthesized: "Guili (Guilherme Maturana)", "Guili
    (Guilherme Maturana to his parents)"; or set
    off as an apposition and abbreviated by the other: "UMich — the University of Michigan"."""
    pairs = []
    for first, second in zip(mentions, mentions[1:], strict=False):
        gap = sentence[first.end : second.start]
        after = sentence[second.end :]
        short_then_full = " " not in first.text.strip() and len(second.text.split()) >= 2
        if _ALIAS_GAP.match(gap) and (_ALIAS_CLOSE.match(after) or short_then_full and (
                _FULL_NAME_SAID_TO.match(after) or _NAME_REMARK.match(after) or _ALIAS_REMARK.match(after) and (
                    gap.strip() != "(" or _goes_by(first, second)))) or _APPOSITION_GAP.match(gap) and (
                is_acronym_of(first.text, second.text) or is_acronym_of(second.text, first.text)) or (
                short_then_full and _known_from_there(first, second, gap, after)):
            pairs.append((first, second))
    return pairs


def _known_from_there(short: Mention, full: Mention, gap: str, after: str) -> bool:
    """"tomek from work (tomasz oriel)": the full name in brackets after where one knows someone from;
    not a place's, nor that of a Tomek known by another full name."""
    return bool(_WHERE_FROM_GAP.match(gap) and (_ALIAS_CLOSE.match(after) or _NAME_REMARK.match(after))) and (
        _goes_by(short, full) and not (short.place or short.organization or full.place or full.organization)
        and not (" " in short.known and short.known.lower() != full.text.lower()))


def _goes_by(short: Mention, full: Mention) -> bool:
    """Could `short` be what the person named `full` goes by: one of its words, or a short form of
    its first word ("Tomek" for Tomasz Oriel, "Quyên" for Nguyen Thi Quyên)?"""
    words = [w for w in re.split(r"[\s-]+", full.text) if w]
    key = strip_accents(short.text.strip()).lower()
    return any(strip_accents(w).lower() == key for w in words) or first_names_compatible(
        short.text.strip(), words[0], either_way=False)


_APPOSITION_GAP = re.compile(r"^\s*[—–,(-]\s*(?:the\s+|aka\s+|i\.e\.,?\s+)?$", re.I)


# "Kolya — that's what his friends call Nikolai", "Alexander, who everyone calls Sasha",
# "Alexander (known as Sasha)", "Sasha is short for Alexander": the short name is an alias.
_CALLERS = (r"(?:everyone|everybody|people|we|they|i|all\s+of\s+us|"
            r"(?:his|her|their|our|my|the)\s+(?:whole\s+|entire\s+)?\w+)"
            r"(?:\s+(?:all|just|usually|always|only|still))*")  # "who we all just call Jojo"
_SHORT_FIRST = re.compile(
    rf"^\s*(?:[—–,(-]\s*)?(?:that's|that\s+is|which\s+is)\s+what\s+{_CALLERS}\s+calls?\s+$"
    r"|^\s*(?:is|'s)\s+(?:short|a\s+nickname|the\s+nickname)\s+for\s+$",
    re.I,
)
_FULL_FIRST = re.compile(
    rf"^\s*[,(—–-]?\s*(?:who|whom)\s+{_CALLERS}\s+calls?\s+$"
    r"|^\s*[,(]?\s*(?:a\.?k\.?a\.?|also\s+known\s+as|better\s+known\s+as|"
    r"known(?:\s+to\s+(?:the\s+|his\s+|her\s+|their\s+)?\w+)?\s+as|nicknamed|"  # "(known to his mates as Baz)"
    r"who\s+goes\s+by|goes\s+by|or\s+as\s+\w+\s+calls?\s+(?:him|her|them))\s+$",
    re.I,
)


def stated_aliases(sentence: str, mentions: list[Mention]) -> list[tuple[Mention, Mention]]:
    """(short, full) pairs the sentence states outright: "Sasha — that's what everyone calls
    Alexander" → (Sasha, Alexander); "Alexander, who everyone calls Sasha" → (Sasha, Alexander);
    "Teresa Vidal (Tess to everyone)" → (Tess, Teresa Vidal)."""
    pairs = []
    for k, (first, second) in enumerate(zip(mentions, mentions[1:], strict=False)):
        gap = sentence[first.end : second.start]
        if k and _FULL_FIRST.match(gap) and sentence[mentions[k - 1].end : first.start] == " of " and (
                first.text.lower() in PLACES):
            first = mentions[k - 1]  # "Liam Burke of Sligo (known to his mates as Baz)": his, not the town's
        if _SHORT_FIRST.match(gap):
            pairs.append((first, second))
        elif _FULL_FIRST.match(gap) or (_SHORT_AFTER_GAP.match(gap) and (
                _SHORT_AFTER_USE.match(sentence[second.end :]) or _apposed_short_form(sentence, first, second))
                and _shorter(second, first)) or bracketed_nickname(sentence, first, second):
            pairs.append((second, first))
    return pairs


def _shorter(short: Mention, full: Mention) -> bool:
    """"Teresa Vidal" → "Tess", "Teodoro" → "Teo": fewer words, or one word and fewer letters."""
    words, full_words = len(short.text.split()), len(full.text.split())
    return words < full_words or words == 1 and len(short.text.strip()) < len(full.text.strip())


# "Maximiliano Ortiz, Maxi, moved to Rosario": a short form of the given name set off by commas; not a
# list's next person ("Maximiliano Ortiz, Max and Leo")
_APPOSITION_CLOSE = re.compile(r"^\s*(?:\)|,\s+(?:and\s+(?:I|me)\b|(?!and\b|or\b|&)[a-z]))")


def _apposed_short_form(sentence: str, full: Mention, short: Mention) -> bool:
    words = full.text.split()
    return (len(words) >= 2 and len(short.text.split()) == 1 and not short.known
            and bool(_APPOSITION_CLOSE.match(sentence[short.end:]))
            and first_names_compatible(short.text, words[0], either_way=False))


# 'Rhys Morgan on cameras ("Big Rhys")', "Robert Hale (“Bobby”)": a quoted name in brackets
# after a person, a few words on at most.
_NICK_OPEN = re.compile(r"^[^()\"“”.!?;:]{0,40}\(\s*[\"“']$")
_NICK_CLOSE = re.compile(r"^[\"”']\s*\)")


def bracketed_nickname(sentence: str, full: Mention, nick: Mention) -> bool:
    """`nick` is the quoted, bracketed nickname of the person `full` names: it carries his first
    name or a short form of it ("Big Rhys", "Little Rhys", "Bobby")."""
    if full.title or len(full.text.split()) < 2 or not _NICK_OPEN.match(sentence[full.end : nick.start]):
        return False
    if not _NICK_CLOSE.match(sentence[nick.end :]) or len(nick.text.split()) > 3:
        return False
    first = full.text.split()[0]
    return any(first_names_compatible(word, first) for word in nick.text.split())


# A nickname declared for the writer ("call me Aga", "I go by Quino") or for the person a
# pronoun stands for ("everyone calls him Bill", "no one calls her anything except Trish",
# "he goes by Bob", "she's known as Tess"): the text between the previous name (or the start of
# the sentence) and the nickname.
_CALL_WHO = re.compile(
    r"\b(?:call|calls|called|calling)\s+(?P<who>me|him|her)\s+(?:anything\s+(?:but|except|other\s+than)\s+|"
    r"just\s+|simply\s+|only\s+|by\s+)?[\"']?$",
    re.I,
)
_GOES_BY_WHO = re.compile(
    r"\b(?P<who>I|he|she)\s+(?:\w+\s+)?(?:go|goes|went|going)\s+by\s+(?:the\s+name\s+(?:of\s+)?)?[\"']?$"
    r"|\b(?P<who2>I|he|she)(?:'s|'m|\s+(?:is|am|was))\s+(?:also\s+|better\s+|usually\s+|mostly\s+)?"
    r"(?:known\s+as|nicknamed|called)\s+[\"']?$"
    # "two Odiles at work, so I'm 'Fenny' there": a name the writer says in quotes right after "I'm"
    r"|\b(?P<who3>I)(?:'m|’m|\s+am)\s+(?:now\s+|just\s+)?[\"'‘“]$",
    re.I,
)
# "Teresa Vidal (Tess to everyone)", "Katherine, Kit for short": the short name said right after
# the full one, with who uses it.
_SHORT_AFTER_GAP = re.compile(r"^\s*[(,—–-]\s*$")
_SHORT_AFTER_USE = re.compile(
    r"^\s*(?:,\s*)?(?:to\s+(?:everyone|everybody|all(?:\s+of\s+us)?|most\s+people|friends|family|the\s+family|"
    r"us|me|him|her|them|(?:his|her|their|our|my|the)\s+(?:whole\s+|entire\s+)?(?:friends|mates|family|colleagues|pals|teammates|"
    r"students|kids|grandkids|buddies))\b|for\s+short\b|at\s+(?:home|work|school)\b|in\s+the\s+family\b)",
    re.I,
)


def declared_nicknames(sentence: str, mentions: list[Mention]) -> list[tuple[int, str]]:
    """(index of the nickname mention, whose it is) for each nickname the sentence declares
    through a pronoun: "i" (the writer), "m" or "f" (the person the pronoun stands for)."""
    out = []
    for k, mention in enumerate(mentions):
        before = sentence[mentions[k - 1].end if k else 0 : mention.start]
        called = _CALL_WHO.search(before)
        # "we call him Mati": what one calls a person is a name of theirs, though a town has it too
        # (not "got a puppy and he's calling him Boston": the pet's)
        if not _nickname_shaped(mention, town_too=called is not None and not _PET_BEFORE.search(sentence)):
            continue
        match = called or _GOES_BY_WHO.search(before)
        if match is None:
            continue
        who = (match.groupdict().get("who") or match.groupdict().get("who2") or match.groupdict().get("who3")
               or "").lower()
        out.append((k, "i" if who in ("i", "me") else "m" if who in ("he", "him") else "f"))
    return out


def _nickname_shaped(mention: Mention, town_too: bool = False) -> bool:
    words = mention.text.split()
    return (not mention.title and not mention.honorific and not mention.known and 1 <= len(words) <= 2
            and words[0][:1].isupper() and mention.text.lower() not in KINSHIP
            and (town_too or mention.text.lower() not in PLACES) and words[0].lower() not in STOP_CAPS)
