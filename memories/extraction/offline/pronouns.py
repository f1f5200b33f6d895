"""Tagging a sentence: name mentions become placeholders (vocatives are dropped) and
he/she/him/her/his resolve to the most recent compatible person of the message, or of the
recent messages when the message has none."""

from __future__ import annotations

import re
from collections.abc import Sequence

from memories.extraction.offline.entities import MessageEntity, Registry, Sentence, gender_of, vote_from_context
from memories.extraction.offline.grammar import is_past
from memories.extraction.offline.lexicon import (
    FEMALE_KIN,
    GIVEN_NAMES,
    MALE_KIN,
    PERSON_NOUNS,
    word_set,
)
from memories.extraction.offline.names import NameContext, find_mentions
from memories.extraction.offline.parse import entity_labels, parse, verb_lemma
from memories.extraction.offline.text import PH, SPEAKER, normalize_message, ph, split_sentences

_VOCATIVE_MARK = "\x04"
_VOCATIVE_GAP = re.compile(r"\s*(?:,\s*)?\x04\s*,?")
# a letter's "Dear ⟨listener⟩," before what it says: the salutation goes with the name
_SALUTATION_GAP = re.compile(r"^\W*dear\s*\x04\s*[,:]?\s*", re.I)
# "⟨1⟩ (⟨1⟩)", "⟨1⟩ (real name ⟨1⟩, nobody uses it)", "⟨1⟩ aka ⟨1⟩": one person said twice, said once
_ALIAS_COLLAPSE = re.compile(
    rf"{PH}\s*\(\s*(?:aka\s+|a\.k\.a\.?\s+|(?:real|full)\s+name\s+)?\x02\1\x03\s*"
    r"(?:,?\s*(?:if\s+(?:u|ur|you|you're|youre|ya)\b|(?:but\s+|though\s+|tho\s+)?(?:nobody|no\s+one)\s+(?:uses|calls)\b)"
    r"[^()]{0,30})?\)|\x02(\d+)\x03\s+(?:aka|a\.k\.a\.?)\s+\x02\2\x03", re.I)
# "⟨1⟩, we call her ⟨1⟩, just got a job": a nickname declared between a subject and its verb is
# an aside; what follows is said of the subject
_NAMER = (r"(?:we|i|everyone|everybody|people|they|most\s+people|all\s+of\s+us|"
          r"(?:his|her|my|our|their|the)\s+(?:friends|mates|family|kids|colleagues|team))")
_NAMED = (r"(?:all\s+|just\s+|usually\s+)?(?:call|calls|called)\s+(?:him|her|them)\s+"
          r"(?:\x02\1\x03|[\"'“]?[^\W\d_][\w'’.-]*[\"'”]?)")
_NAMING_ASIDE = re.compile(
    rf"{PH}\s*(?:,\s*{_NAMER}\s+{_NAMED}\s*,|\(\s*{_NAMER}\s+{_NAMED}\s*\)|[—–]\s*{_NAMER}\s+{_NAMED}\s*[—–])\s*",
    re.I,
)
_FEMALE_NOUNS = FEMALE_KIN | PERSON_NOUNS["female"]
_MALE_NOUNS = MALE_KIN | PERSON_NOUNS["male"]
# the words for a relative: said without a name, the relative is who a later she/he means
_RELATIVE_NOUNS = FEMALE_KIN | MALE_KIN
_PRONOUN = re.compile(
    rf"{PH}|\b(he|she|him|her|his|hers)\b|\b(?:a|an|the|this|that|some|another)\s+(?:[\w-]+\s+){{0,2}}?"
    r"(girl|boy|woman|man|lady|guy|kid|child|baby|teen|teenager|student|veteran|teacher|doctor|nurse|neighbor|"
    r"stranger|person|mom|mother|dad|father|sister|brother|son|daughter|wife|husband|girlfriend|boyfriend|"
    r"actress|actor|singer|author|writer|artist|player|coach)\b"
    # a relative the message does not name ("Mum says she is fine", "my sister says
    # she's fine", "Tom's wife … she"): she is that relative, no one named before
    rf"|\b(?:(?:my|our)\s+)?({'|'.join(sorted(_RELATIVE_NOUNS, key=len, reverse=True))})\b(?!['’]s)",
    re.I,
)
# a gendered word for a person just before a name: "my younger brother Ren", "a girlfriend over there now, Tali"
_GENDERED_BEFORE_NAME = (
    r"\b(" + "|".join(sorted(_RELATIVE_NOUNS | {"actress", "actor"}))
    + r")\s+(?:[a-z]+,?\s+){{0,3}}?(?:,\s*)?{name}\b"
)
BLOCKERS = {"f": -1, "m": -2, "": -3}
_LY_NOUNS = word_set("family belly jelly lily bully ally rally folly assembly supply reply monopoly")
_LEADING_SUBJECT = re.compile(rf"^\W*(?:[A-Za-z]+,\s*)?{PH}")
_NEXT_WORD = re.compile(r"\s+([a-z][\w'-]*)")
_NOT_A_NOUN = word_set("""
to for with about and or but the a an that this up out in on at from into back again too so very yesterday
today now then when because if as off down over around last every some all how what why where who which by
of like more much well though there here anymore already just really since until before after is was
tomorrow tonight later soon anyway either also first once twice every know feel anything everything
something nothing
""")


class PronounState:
    """Person salience across the sentences of the message, with the recent messages as fallback."""

    def __init__(self, registry: Registry, ctx: NameContext, recent: Sequence[str]):
        self.registry = registry
        self.history: list[int] = []
        self.places: list[int] = []  # the places named so far, for "moved there"
        self._ctx = ctx
        self._recent = recent
        self._recent_people: list[tuple[str, str]] | None = None

    def note_places(self, tagged: str) -> None:
        for found in re.finditer(r"\x02(\d+)\x03", tagged):
            idx = int(found.group(1))
            if self.registry.entities[idx].type == "place":
                self.places.append(idx)

    def antecedent(self, gender: str, exclude: int | None) -> int | None:
        """Most recent compatible person; an unnamed "a girl" in between blocks resolution."""
        for idx in reversed(self.history):
            if idx < 0:
                if idx in (BLOCKERS[gender], BLOCKERS[""]):
                    return None
                continue
            if idx != exclude and self._gender(idx) in ("", gender):
                return idx
        for name, name_gender in self._people_in_recent():
            if name_gender in ("", gender):
                idx = self.registry.ensure(name)
                entity = self.registry.entities[idx]
                if idx != exclude and idx != SPEAKER and entity.type in ("person", "concept"):
                    entity.forced, entity.gender = "person", entity.gender or name_gender
                    return idx
        return None

    def _gender(self, idx: int) -> str:
        """The entity's gender, or the one an earlier message gave it ("my brother Ren", "a girlfriend
        now, Tali Berg"): in "Ren and Tali got engaged! He's changed jobs", "he" is Ren."""
        entity = self.registry.entities[idx]
        if entity.gender or not self._recent:
            return entity.gender
        first = re.escape(entity.name.split()[0])
        said = _GENDERED_BEFORE_NAME.format(name=first)
        for text in reversed(self._recent[-3:]):
            for match in re.finditer(said, text, re.I):
                return "f" if match.group(1).lower() in _FEMALE_NOUNS else "m"
        return ""

    def _people_in_recent(self) -> list[tuple[str, str]]:
        if self._recent_people is None:
            self._recent_people = [p for text in reversed(self._recent[-3:]) for p in self._people_in(text)]
        return self._recent_people

    def _people_in(self, text: str) -> list[tuple[str, str]]:
        """(name, gender) of person-like mentions in one earlier message, latest first."""
        out = []
        for sentence in reversed(split_sentences(normalize_message(text))):
            mentions = find_mentions(sentence, self._ctx)
            people = [(s, e) for s, e, kind in entity_labels(sentence) if kind == "person"] if mentions else []
            for mention in reversed(mentions):
                first = mention.text.split()[0].lower()
                name = mention.known or mention.text
                if mention.vocative or name.lower() == self._ctx.speaker.lower() or self._ctx.known_types.get(
                        name.lower()) in ("place", "organization"):
                    continue  # a place or organization the agent knows is no one a "she" means
                labelled = any(s <= mention.start and mention.end <= e for s, e in people)
                parsed = " " in mention.text.strip() and labelled and _typed_person(sentence, mention)
                if first in GIVEN_NAMES or mention.known or mention.honorific or parsed:
                    out.append((name, gender_of(first)))
        return out


def _typed_person(sentence: str, mention) -> bool:
    """Does the sentence's own context (not only the parser) make the mention a person?"""
    entity = MessageEntity(mention.text)
    vote_from_context(entity, sentence, mention)
    entity.vote("person", 25)  # the parser's PERSON label
    return entity.type == "person"


def tag_sentence(sentence: Sentence, state: PronounState) -> str:
    """Mentions → placeholders (vocatives dropped), "Guili (Guilherme)" collapsed, pronouns resolved."""
    pieces, pos = [], 0
    for mention, idx in zip(sentence.mentions, sentence.ids, strict=True):
        pieces.append(sentence.text[pos : mention.start])
        pieces.append(_VOCATIVE_MARK if idx is None else ph(idx))
        pos = mention.end
    pieces.append(sentence.text[pos:])
    tagged = _VOCATIVE_GAP.sub(" ", _SALUTATION_GAP.sub("", "".join(pieces)))
    tagged = _ALIAS_COLLAPSE.sub(lambda m: ph(int(m.group(1) or m.group(2))), tagged)
    tagged = _NAMING_ASIDE.sub(lambda m: ph(int(m.group(1))) + " ", tagged)
    sentence.tagged = _resolve_there(_resolve_pronouns(tagged.strip(), state), state)
    return sentence.tagged


# "Priya got a job in ⟨Inverness⟩, so we relocated there": "there" after a verb of a home is the place
# the message named last
_HOME_THERE = re.compile(
    r"\b(?P<verb>(?:moved|moving|move|moves|relocated|relocating|settled|settling)(?:\s+(?:up|down|over|back|out))?"
    r"|(?:live|lives|living|lived))\s+there\b(?!\s+(?:is|are|was|were)\b)", re.I)


def _resolve_there(tagged: str, state: PronounState) -> str:
    """Notes the places the sentence names; "moved there" / "lives there" → "moved to ⟨k⟩" /
    "lives in ⟨k⟩" with the place named last before it in the message (none: left as said)."""
    out, pos = [], 0
    for match in _HOME_THERE.finditer(tagged):
        state.note_places(tagged[pos:match.start()])
        place = state.places[-1] if state.places else None
        out.append(tagged[pos:match.start()])
        if place is None:
            out.append(match.group())
        else:
            lives = match.group("verb").lower().startswith("liv")
            out.append(f"{match.group('verb')} {'in' if lives else 'to'} {ph(place)}")
        pos = match.end()
    state.note_places(tagged[pos:])
    out.append(tagged[pos:])
    return "".join(out)


# "Handed in his notice ...": a sentence that opens with a past verb and has no subject of its own
_SUBJECTLESS_PAST = re.compile(r"^(?:(?:just|finally|actually|then|also|and)\s+)*(?P<verb>[A-Z][a-z]+)\b")
# "My younger brother ⟨1⟩ ...": the named person is the subject
_OWN_PERSON_SUBJECT = re.compile(rf"^\W*(?:my|our)\s+(?:[\w-]+\s+){{1,3}}?(?:,\s*)?{PH}(?!')", re.I)
_SUBJECTLESS_WHERE = re.compile(
    r"^(?P<verb>working|living|studying|based|starting)\s+(?:for|at|in|with)\s+(?:the\s+)?\x02", re.I
)
_THIRD_POSSESSIVE = re.compile(r"\b(?:his|her)\b", re.I)
_SUBJECTLESS_THIRD = re.compile(r"^(?:(?:just|finally|also|now|still|then)\s+)*(?P<verb>[A-Za-z][a-z]+s)\s+"
                                r"(?!of\b)(?:in|at|to|for|with|from|a|an|the|his|her|\x02)", re.I)


def _third_singular(word: str) -> bool:
    """"Starts", "lives", "teaches", "goes": a verb's form for he or she, not a plural noun ("Lots of")."""
    low = word.lower()
    stems = (low[:-1], low[:-2] if low.endswith("es") else "", low[:-3] + "y" if low.endswith("ies") else "")
    return any(stem and verb_lemma(stem) for stem in stems) and low not in _PLURALS_FIRST


def _heads_its_sentence(text: str, word: str) -> bool:
    """The word is the sentence's verb, not the subject of another ("Studies at X show ...")."""
    token = next((t for t in parse(text) if t.text == word), None)
    return token is not None and token.dep_ == "ROOT"


# words that open a note as nouns more often than as verbs ("Plans for the weekend", "Thanks to ...")
_PLURALS_FIRST = frozenset({"thanks", "plans", "news", "lots", "loads", "tons", "updates", "photos", "pics", "cheers",
                            "drinks", "results", "congrats", "hugs", "kisses", "greetings", "regards", "details",
                            "exams", "holidays", "bills", "shifts"})


def carry_subject(sentence: Sentence, previous: Sentence | None, registry: Registry) -> None:
    """"Olek went for it! Quit his job at ⟨org⟩ and moved to ⟨city⟩": a subjectless
    sentence right after one whose subject is a third person, speaking of his/her own things, is that
    person's (chat drops the subject it just named), not the writer's. Without the his/her ("Went
    hiking with Tom") the dropped subject stays the writer. A bare participle of where one works or
    lives ("Sara done at uni. working for ⟨org⟩ in ⟨city⟩ now") continues the person named too."""
    if previous is None or not previous.tagged:
        return
    lead = _LEADING_SUBJECT.match(previous.tagged) or _OWN_PERSON_SUBJECT.match(previous.tagged)
    if not lead or (idx := int(lead.group(1))) == SPEAKER or not registry.is_person(idx):
        return
    tagged = sentence.tagged
    if opening := _SUBJECTLESS_WHERE.match(tagged):
        start = opening.start("verb")
    elif (opening := _SUBJECTLESS_THIRD.match(tagged)) and _third_singular(opening.group("verb")) and not re.search(
            rf"{re.escape(ph(idx))}(?!'s)", tagged) and _heads_its_sentence(sentence.text, opening.group("verb")):
        # "My brother ⟨1⟩ got a new job. Starts at ⟨org⟩ on Monday": a verb of the third person
        # singular says whose the sentence is, which "Start at ⟨org⟩ on Monday" would not
        start = opening.start("verb")
    elif (opening := _SUBJECTLESS_PAST.match(tagged)) and is_past(opening.group("verb").lower()):
        if not _THIRD_POSSESSIVE.search(sentence.text) or f"{ph(idx)}'s" not in tagged:
            return  # no his/her, or the his/her is someone else's
        if re.search(rf"{re.escape(ph(idx))}(?!'s)", tagged):
            return  # the person is the object ("Helped her with her move")
        start = opening.start("verb")
    else:
        return
    sentence.tagged = f"{tagged[:start]}{ph(idx)} {tagged[start].lower()}{tagged[start + 1:]}"


def _resolve_pronouns(tagged: str, state: PronounState) -> str:
    lead = _LEADING_SUBJECT.match(tagged)
    subject = int(lead.group(1)) if lead else None

    def replace(match: re.Match) -> str:
        if match.group(1) is not None:
            _note_mention(int(match.group(1)), state)
        elif match.group(3) is not None:
            _note_unnamed_person(match.group(3).lower(), state)
        elif match.group(4) is not None:
            _note_unnamed_person(match.group(4).lower(), state)
        else:
            return _pronoun(match, tagged, subject, state)
        return match.group()

    return _PRONOUN.sub(replace, tagged)


def _note_mention(idx: int, state: PronounState) -> None:
    if idx != SPEAKER and state.registry.is_person(idx):
        state.history.append(idx)


def _note_unnamed_person(noun: str, state: PronounState) -> None:
    """An unnamed person blocks resolution: in "a trans girl ... her family", "her" is the girl."""
    state.history.append(BLOCKERS["f" if noun in _FEMALE_NOUNS else "m" if noun in _MALE_NOUNS else ""])


def _pronoun(match: re.Match, tagged: str, subject: int | None, state: PronounState) -> str:
    """he/she → ⟨k⟩, his/her (possessive) → ⟨k⟩'s, him/her (object) → ⟨k⟩ but never the clause's
    own subject ("Thiago hired her" is not Thiago)."""
    word = match.group(2).lower()
    possessive = word in ("his", "hers") or (word == "her" and _her_is_possessive(tagged, match.end()))
    if possessive and _NAME_GIVEN_AFTER.match(tagged, match.end()):
        return match.group()  # "we took in a kitten, her name is ⟨1⟩": whose name is the one it gives
    is_object = word == "him" or (word == "her" and not possessive)
    if is_object and _NAMING_BEFORE.search(tagged, 0, match.start()) and tagged[match.end():].lstrip(" ").startswith(
            "\x02"):
        return match.group()  # "my husband Pelham has named him ⟨Pip⟩": the one named, not someone before
    idx = state.antecedent("m" if word in ("he", "him", "his") else "f", subject if is_object else None)
    if idx is None:
        return match.group()
    state.history.append(idx)
    return ph(idx) + ("'s" if possessive else "")


_NAMING_BEFORE = re.compile(r"\b(?:named|names|renamed)\s+$", re.I)


_NAME_GIVEN_AFTER = re.compile(r"\s+name(?:\s+is|'s|\s+was)\s+\x02", re.I)


def _her_is_possessive(tagged: str, end: int) -> bool:
    match = _NEXT_WORD.match(tagged, end)
    if not match:
        return False
    word = match.group(1)
    return word not in _NOT_A_NOUN and (not word.endswith("ly") or word in _LY_NOUNS)
