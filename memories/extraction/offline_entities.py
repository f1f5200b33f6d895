"""The entities of one message: canonical names and aliases, types from context, and the tagged
sentences (mentions replaced by placeholders, he/she/him/her resolved)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from memories.extraction.offline_lexicon import (
    FEMALE_KIN,
    FEMALE_NAMES,
    FIRST_NAMES,
    KIN_MODIFIERS,
    KINSHIP,
    MALE_KIN,
    MALE_NAMES,
    ORG_PREFIXES,
    ORG_SUFFIXES,
    PET_TERMS,
    PLACE_PREFIXES,
    PLACE_SUFFIXES,
    PLACES,
)
from memories.extraction.offline_names import Mention, NameContext, alias_pairs, find_mentions
from memories.extraction.offline_text import PH, SPEAKER, normalize_message, ph, split_sentences

TYPE_PRIORITY = ("pet", "person", "organization", "place", "concept")


def _alternation(words) -> str:
    return "|".join(re.escape(w) for w in sorted(words, key=len, reverse=True))


KIN_ALT = _alternation(KINSHIP)
PET_ALT = _alternation(PET_TERMS)
MOD_ALT = _alternation(KIN_MODIFIERS)
_OWNER = r"(?:my|his|her|their|our|your|\w+'s)"
_KIN_BEFORE = re.compile(rf"{_OWNER}\s+(?:(?:{MOD_ALT})[\s-]+)*(?P<kin>{KIN_ALT}|{PET_ALT})\s*,?\s*\(?\s*$")
_PET_NAMED_BEFORE = re.compile(rf"\b(?:{PET_ALT})\s*,?\s*(?:named|called)\s*$")
_KIN_AFTER = re.compile(
    rf"^\s*(?:,|\(|'s|\s(?:is|was))\s*(?:also\s+)?{_OWNER}\s+(?:(?:{MOD_ALT})[\s-]+)*(?P<kin>{KIN_ALT}|{PET_ALT})\b"
)


def _phrases_before(phrases: str) -> re.Pattern:
    alternatives = "|".join(sorted(phrases.split(","), key=len, reverse=True))
    return re.compile(rf"\b(?:{alternatives})(?:\s+the)?\s*$")


_ORG_STRONG = _phrases_before(
    "works at,work at,working at,worked at,works for,work for,working for,worked for,employed by,employed at,"
    "hired by,job at,job with,intern at,internship at,position at,role at,interview at,interview with,"
    "studies at,study at,studying at,student at,enrolled at,graduated from,joined,join,joining,founded,"
    "co-founded,cofounded,ceo of,cto of,founder of,resigned from,fired from,laid off from,retired from,"
    "employee of,started at,started working at,engineer at,manager at,designer at,developer at,"
    "teacher at,nurse at,head of engineering at,company,startup,firm"
)
_ORG_WEAK = _phrases_before("left,quit,leaving,leave")
_PLACE_STRONG = _phrases_before(
    "lives in,live in,living in,lived in,resides in,based in,born in,raised in,grew up in,stay in,"
    "staying in,located in,moved to,move to,moving to,moved back to,relocated to,relocating to,moved from,"
    "moved away from,moved out of,trip to,flew to,flight to,vacation in,vacationing in,traveled to,"
    "travelled to,traveling to,travelling to,hometown of,city of,drove to,road trip to,is from,am from,"
    "are from,'m from,comes from,come from,originally from,streets of,visited,visiting"
)
_PLACE_WEAK = _phrases_before("in,to,from,near,went to,around,across,outside,into,visit,at")
_PERSON_BEFORE = _phrases_before(
    "with,told,asked,met,hired,called,texted,talked to,spoke to,spoke with,talk to,talking to,dating,"
    "married,married to,thanks,thank,and"
)
_PERSON_AFTER = re.compile(
    r"^(?:'s)?\s+(?:said|says|told|tells|asked|asks|texted|called|thinks|thought|wants|wanted|hired|"
    r"recruited|who|and i|and me|is my|was my)\b"
)
_BY_BEFORE = re.compile(r"\bby\s*$")


@dataclass
class Entity:
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
        self.entities = [Entity(speaker, forced="person")]
        self._index = {speaker.lower(): SPEAKER}

    def names(self) -> list[str]:
        return [e.name for e in self.entities]

    def lookup(self, name: str) -> int | None:
        return self._index.get(name.lower())

    def ensure(self, name: str) -> int:
        idx = self.lookup(name)
        if idx is None:
            idx = len(self.entities)
            self.entities.append(Entity(name))
            self._index[name.lower()] = idx
        return idx

    def add_alias(self, idx: int, alias: str) -> None:
        entity = self.entities[idx]
        if alias.lower() != entity.name.lower() and alias not in entity.aliases:
            entity.aliases.append(alias)
        self._index.setdefault(alias.lower(), idx)

    def is_person(self, idx: int) -> bool:
        return self.entities[idx].type == "person"


@dataclass
class Sentence:
    text: str
    mentions: list[Mention]
    ids: list[int | None] = field(default_factory=list)  # entity index per mention (None: vocative)
    tagged: str = ""


# --- canonical names ------------------------------------------------------------------------------

def _canonical_map(sentences: list[Sentence], speaker: str, known_names: Sequence[str]) -> dict[str, str]:
    """lower(surface) → canonical name, from known names, parenthesized aliases and first names."""
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
    full_names = [n for n in [speaker, *known_names] if len(n.split()) > 1]
    full_names += [m.text for s in sentences for m in s.mentions if len(m.text.split()) > 1 and not m.title]
    by_first: dict[str, set[str]] = {}
    for name in full_names:
        by_first.setdefault(name.split()[0].lower(), set()).add(canon.get(name.lower(), name))
    for sentence in sentences:
        for mention in sentence.mentions:
            key = mention.text.lower()
            if key not in canon and " " not in key and len(by_first.get(key, ())) == 1:
                canon[key] = next(iter(by_first[key]))
    return canon


def build_registry(message: str, speaker: str, recent: Sequence[str], known: Sequence[str]) -> tuple:
    """Split, find names, group aliases, type entities. Returns (registry, sentences, name context)."""
    texts = [normalize_message(t) for t in recent[-5:]]
    ctx = NameContext(speaker, known, [message, *texts])
    sentences = [Sentence(s, find_mentions(s, ctx)) for s in split_sentences(message)]
    registry = Registry(speaker)
    canon = _canonical_map(sentences, speaker, known)
    for sentence in sentences:
        for mention in sentence.mentions:
            sentence.ids.append(None if mention.vocative else _register(registry, canon, mention))
    for sentence in sentences:
        for mention, idx in zip(sentence.mentions, sentence.ids, strict=True):
            if idx is not None and idx != SPEAKER:
                _vote(registry.entities[idx], sentence.text, mention)
    return registry, sentences, ctx


def _register(registry: Registry, canon: dict[str, str], mention: Mention) -> int:
    name = canon.get(mention.text.lower(), mention.text)
    idx = registry.ensure(name)
    registry.add_alias(idx, mention.text)
    return idx


# --- types ----------------------------------------------------------------------------------------

def _vote(entity: Entity, sentence: str, mention: Mention) -> None:
    before = sentence[max(0, mention.start - 48) : mention.start].lower()
    after = sentence[mention.end : mention.end + 40].lower()
    words = mention.text.lower().replace(".", "").split()
    if mention.title:
        entity.vote("concept", 60)
    if mention.honorific:
        entity.vote("person", 90)
    _vote_kinship(entity, before, after)
    _vote_name_shape(entity, words, mention.text)
    _vote_context(entity, before, after)


def _vote_kinship(entity: Entity, before: str, after: str) -> None:
    if _PET_NAMED_BEFORE.search(before):
        entity.vote("pet", 100)
        return
    match = _KIN_BEFORE.search(before) or _KIN_AFTER.match(after)
    if not match:
        return
    term = match.group("kin")
    if term in PET_TERMS:
        entity.vote("pet", 100)
        return
    entity.vote("person", 90)
    if not entity.gender:
        entity.gender = "f" if term in FEMALE_KIN else "m" if term in MALE_KIN else ""


def _vote_name_shape(entity: Entity, words: list[str], text: str) -> None:
    if words[-1] in ORG_SUFFIXES or (len(words) > 1 and words[0] in ORG_PREFIXES):
        entity.vote("organization", 80)
    if len(words) > 1 and (words[-1] in PLACE_SUFFIXES or words[0] in PLACE_PREFIXES):
        entity.vote("place", 70)
    if " ".join(words) in PLACES:
        entity.vote("place", 60)
    if words[0] in FIRST_NAMES:
        entity.vote("person", 55 if len(words) > 1 else 50)
        entity.gender = entity.gender or gender_of(words[0])
    if text.isupper() and len(text) > 1:
        entity.vote("concept", 20)
    entity.vote("concept", 10)


def _vote_context(entity: Entity, before: str, after: str) -> None:
    if _ORG_STRONG.search(before):
        entity.vote("organization", 70)
    elif _ORG_WEAK.search(before):
        entity.vote("organization", 35)
    if _PLACE_STRONG.search(before):
        entity.vote("place", 70)
    elif _PLACE_WEAK.search(before):
        entity.vote("place", 30)
    if _PERSON_AFTER.match(after) or _PERSON_BEFORE.search(before):
        entity.vote("person", 40)
    elif _BY_BEFORE.search(before):
        entity.vote("person", 20)


# --- tagging and pronouns -------------------------------------------------------------------------

_VOCATIVE_MARK = "\x04"
_VOCATIVE_GAP = re.compile(r"\s*,?\s*\x04\s*,?")
_ALIAS_COLLAPSE = re.compile(rf"{PH}\s*\(\s*(?:aka\s+|a\.k\.a\.?\s+)?\x02\1\x03\s*\)", re.I)
_PRONOUN = re.compile(rf"{PH}|\b(he|she|him|her|his|hers)\b", re.I)
_LEADING_SUBJECT = re.compile(rf"^\W*(?:[A-Za-z]+,\s*)?{PH}")
_NEXT_WORD = re.compile(r"\s+([a-z][\w'-]*)")
_NOT_A_NOUN = frozenset("""
to for with about and or but the a an that this up out in on at from into back again too so very yesterday
today now then when because if as off down over around last every some all how what why where who which by
of like more much well though there here anymore already just really since until before after is was
""".split())


class PronounState:
    """Person salience across the sentences of the message, with the recent messages as fallback."""

    def __init__(self, registry: Registry, ctx: NameContext, recent: Sequence[str]):
        self.registry = registry
        self.history: list[int] = []
        self._ctx = ctx
        self._recent = recent
        self._recent_people: list[tuple[str, str]] | None = None

    def antecedent(self, gender: str, exclude: int | None) -> int | None:
        for idx in reversed(self.history):
            if idx != exclude and self.registry.entities[idx].gender in ("", gender):
                return idx
        for name, name_gender in self._people_in_recent():
            if name_gender in ("", gender):
                idx = self.registry.ensure(name)
                entity = self.registry.entities[idx]
                if idx != exclude and idx != SPEAKER and entity.type in ("person", "concept"):
                    entity.forced, entity.gender = "person", entity.gender or name_gender
                    return idx
        return None

    def _people_in_recent(self) -> list[tuple[str, str]]:
        if self._recent_people is None:
            self._recent_people = [p for text in reversed(self._recent[-3:]) for p in self._people_in(text)]
        return self._recent_people

    def _people_in(self, text: str) -> list[tuple[str, str]]:
        """(name, gender) of person-like mentions in one earlier message, latest first."""
        out = []
        for sentence in reversed(split_sentences(normalize_message(text))):
            for mention in reversed(find_mentions(sentence, self._ctx)):
                first = mention.text.split()[0].lower()
                name = mention.known or mention.text
                if mention.vocative or name.lower() == self._ctx.speaker.lower():
                    continue
                if first in FIRST_NAMES or mention.known or mention.honorific:
                    out.append((name, gender_of(first)))
        return out


def gender_of(first_name: str) -> str:
    return "f" if first_name in FEMALE_NAMES else "m" if first_name in MALE_NAMES else ""


def tag_sentence(sentence: Sentence, state: PronounState) -> str:
    """Mentions → placeholders (vocatives dropped), "Guili (Guilherme)" collapsed, pronouns resolved."""
    pieces, pos = [], 0
    for mention, idx in zip(sentence.mentions, sentence.ids, strict=True):
        pieces.append(sentence.text[pos : mention.start])
        pieces.append(_VOCATIVE_MARK if idx is None else ph(idx))
        pos = mention.end
    pieces.append(sentence.text[pos:])
    tagged = _VOCATIVE_GAP.sub(" ", "".join(pieces))
    tagged = _ALIAS_COLLAPSE.sub(lambda m: ph(int(m.group(1))), tagged)
    sentence.tagged = _resolve_pronouns(tagged.strip(), state)
    return sentence.tagged


def _resolve_pronouns(tagged: str, state: PronounState) -> str:
    lead = _LEADING_SUBJECT.match(tagged)
    subject = int(lead.group(1)) if lead else None

    def replace(match: re.Match) -> str:
        if match.group(1) is not None:
            idx = int(match.group(1))
            if idx != SPEAKER and state.registry.is_person(idx):
                state.history.append(idx)
            return match.group()
        word = match.group(2).lower()
        possessive = word in ("his", "hers") or (word == "her" and _her_is_possessive(tagged, match.end()))
        is_object = word == "him" or (word == "her" and not possessive)
        idx = state.antecedent("m" if word in ("he", "him", "his") else "f", subject if is_object else None)
        if idx is None:
            return match.group()
        state.history.append(idx)
        return ph(idx) + ("'s" if possessive else "")

    return _PRONOUN.sub(replace, tagged)


def _her_is_possessive(tagged: str, end: int) -> bool:
    match = _NEXT_WORD.match(tagged, end)
    if not match:
        return False
    word = match.group(1)
    return word not in _NOT_A_NOUN and not word.endswith("ly")
