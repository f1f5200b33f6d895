"""The frame engine: what a sentence says of a person and a place or organization (lives in, works
at, studies at, member of, and the ending of each), read off the dependency parse with the frames
of `frames.toml`; and the pets a sentence names.

It runs after the surface rules. For each place or organization named in the sentence it walks up
the arcs to the verb that governs it (the way: "Montevideo" → "in" → "place" → "on" → "signed"),
finds whom that verb is said of (its subject and the names coordinated with it, a subject it
shares with the verb it hangs from, "who" of a relative clause, the one a "where" clause is about,
the person a transfer moves, "my" / "Kenji's" on a noun of the way, or the owner of a frame's noun
said with "is": "Home is X"; "I", "we" and a sentence with no subject are the writer) and asks
each frame in turn whether a lemma of the way triggers it. When the way, the verb or a verb above
it says the state is not current ("visited", "grew up in", "might move to") nothing is linked,
unless it says the state ended ("graduated from", "quit the choir", "no longer ... since"): then
the state is taken back (its closed edge keeps the past). A state verb said in the past ("lived
in X", "used to work at X", "had studied at X") links the pair by the frame's past relation
("lived_in"), in place of a present a rule read. Other pairs a rule linked are left alone, but
for a frame that overrides the rule's reading ("spending her first semester at ⟨university⟩" is no
job).

Where no frame fires and none was turned down, the semantic back-off (when an embedder is given)
compares the clause with the frames' prototype sentences and with sentences of what is no state; a
frame wins only above a threshold and ahead of the rest. Each link says how it was found
(`method`: frame / semantic with its cosine).
"""

from __future__ import annotations

import dataclasses
import difflib
import re
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import cache, lru_cache
from types import MappingProxyType

import numpy as np

from memories.extraction.offline.dates import WEEKDAYS
from memories.extraction.offline.lexicon import (
    FEMALE_KIN,
    FEMALE_NAMES,
    FRAME_DATA,
    KIN_MODIFIERS,
    KIN_TITLES,
    KINSHIP,
    MALE_KIN,
    MALE_NAMES,
    MOVED_BY,
    OCCUPATIONS,
    ORG_NOUNS,
    ORG_SUFFIXES,
    PET_TERMS,
    PLACE_SUFFIXES,
    PLACES,
    STREET_WORDS,
)
from memories.extraction.offline.parse import died, opening_verb_without_subject, parse, stray_subject
from memories.extraction.offline.text import SPEAKER
from memories.roles import role_of_term

Embed = Callable[[Sequence[str]], Sequence[Sequence[float]]]

# the back-off links a pair when its clause is this close to a frame's nearest prototype (cosine)
# and closer by MARGIN than to any other frame's or to what is not a state; set on our own
# sentences (tests/golden) and the dev stories
SEMANTIC_THRESHOLD = 0.62
SEMANTIC_MARGIN = 0.04

_FIRST_PERSON = frozenset({"i", "me", "my", "we", "us", "our", "myself", "ourselves"})
_SUBJECTS = ("nsubj", "nsubjpass")
# a verb without a subject of its own shares the one of the verb it hangs from by these arcs
_SHARES_SUBJECT = ("conj", "xcomp", "advcl", "pcomp", "acl", "acomp")  # "I am pleased to accept"
_STANDS_IN = {"place": "the city", "organization": "the company"}


@dataclass
class Candidate:
    subject: int
    target: int
    kind: str
    lemmas: frozenset[str]
    prep: str  # the preposition the object hangs from ("in" of "lives in X"), or ""
    names: str  # the object's own words, lower case
    settlement: bool  # the object is a town, city, region or country, or a street, lake or park
    text: str  # the clause with the entities stood in for, for the back-off
    linked: frozenset[str] = frozenset()  # what the rules already link the pair by
    blocked: bool = False  # the way or the verb says the state is not current
    chain: frozenset[str] = frozenset()  # the lemmas of the way, the verbs above and their modifiers
    below: dict | None = None  # lemma on the way → the preposition right below it ("base" → "on")
    of_noun: bool = False  # the object hangs from a noun by "of" ("the Madrid office of X")
    past: bool = False  # a state verb said in the past ("lived in X", "used to work at X")
    past_job: bool = False  # that state is a job said with "be" ("was a nurse at X")
    durative: bool = False  # "have been at X since May": the object right under the verb, over a span
    habitual: bool = False  # "goes to X every week", "have been going to X": the verb says a habit
    purpose: bool = False  # the way's verb is what one leaves to do ("left to join X in Y"): no ending of it
    carries: bool = False  # the verb has an object of its own ("transferred the money to X")


@dataclass(frozen=True, eq=False)  # one object per frame: compared and hashed as itself
class Frame:
    name: str
    relation: str
    slot: str
    objects: frozenset[str]
    object_words: frozenset[str]
    triggers: frozenset[str]
    prepositions: frozenset[str]
    prototypes: tuple[str, ...]
    fact: str  # the fact of a frame without a slot: "{s} is a member of {o}"
    overrides: frozenset[str]  # a rule's link this frame replaces when a strong trigger of its fires
    weak: frozenset[str]  # triggers too general to override a rule ("be", "go")
    sure: frozenset[str]  # triggers that fire whatever the object's name ("enrolled at X")
    trigger_preps: dict  # trigger → the prepositions it needs right below it ("based in")
    prep_triggers: dict  # a preposition outside `prepositions` → the triggers it counts under ("transferred to")
    endings: frozenset[str]  # lemmas that end the state ("graduated from X", "quit the choir")
    ending_fact: str  # the fact of an ending of a frame without a slot
    ending_relation: str  # the closing relation an ending states ("former_employee_of")
    ends_from: frozenset[str]  # triggers that end the state said with "from" ("moved from X")
    settlements: bool  # a town, city, region or country (the gazetteer's) may be its object
    past: str  # the relation of the state said as one that was ("lived_in")
    durative: frozenset[str]  # triggers that count only said with "have" over a state's span
    habitual: frozenset[str]  # triggers that count only said as a habit ("goes to the choir every week")
    yields_to_jobs: bool  # an occupation on the way ("a hydrologist at the X Institute") is a job, not this

    def admits(self, candidate: Candidate) -> bool:
        """Whether the pair's object is of a kind this frame links."""
        # a town's name typed an organization, said of a job that was ("used to work at Carrefour"),
        # is the organization's: the rule read that job as current
        if candidate.kind not in self.objects or (candidate.settlement and not self.settlements and not (
                candidate.kind == "organization" and candidate.past)):
            return False
        if not self.settlements and candidate.kind == "place" and any(
                prep == "in" and lemma in ORG_NOUNS for lemma, prep in (candidate.below or {}).items()):
            return False  # "a chef at a bistro in ⟨district⟩": where the business is, not the business
        return (not self.object_words or bool(candidate.lemmas & self.sure)
                or bool((set(candidate.names.split()) | candidate.lemmas) & self.object_words))


@dataclass(frozen=True)
class Frames:
    frames: tuple[Frame, ...]
    blocked: frozenset[str]
    blocked_preps: frozenset[str]
    stay_words: frozenset[str]
    modifiers: frozenset[str]
    verb_preps: frozenset[str]
    past_states: frozenset[str]
    spans: frozenset[str]
    habits: frozenset[str]
    present: frozenset[str]
    had: frozenset[str]
    named_home: frozenset[str]  # blocked verbs that say a home with "home" as their object ("calls X home")
    other: tuple[str, ...]


@dataclass(frozen=True)
class Link:
    """A person linked to a place or organization by a frame."""

    subject: int
    frame: Frame
    target: int
    method: str  # "frame" (a trigger on the way) or "semantic" (the back-off)
    score: float = 1.0
    replaces: frozenset[str] = frozenset()  # the rule's links of the pair it replaces
    ends: bool = False  # the state ends ("left the choir"): the link is taken back, not made
    past: bool = False  # the state was ("lived in X"): linked by the frame's past relation


@cache
def frames() -> Frames:
    data = FRAME_DATA
    said = {t for f in data["frame"] for t in f["triggers"]}

    def triggers(f: dict) -> frozenset[str]:
        # "occupations": every occupation word of the lexicon that no frame names a trigger of
        return frozenset(f["triggers"]) | (OCCUPATIONS - said if f.get("occupations") else frozenset())

    return Frames(
        frames=tuple(
            Frame(name=f["name"], relation=f["relation"], slot=f.get("slot", ""), objects=frozenset(f["objects"]),
                  object_words=frozenset(f.get("object_words", ())), triggers=triggers(f),
                  prepositions=frozenset(f.get("prepositions", ())), prototypes=tuple(f["prototypes"]),
                  fact=f.get("fact", ""), settlements=f.get("settlements", True),
                  overrides=frozenset(f.get("overrides", ())), weak=frozenset(f.get("weak", ())),
                  sure=frozenset(f.get("sure", ())), trigger_preps=dict(f.get("trigger_preps", {})),
                  prep_triggers=dict(f.get("prep_triggers", {})),
                  endings=frozenset(f.get("endings", ())),
                  ending_fact=f.get("ending_fact", ""), ending_relation=f.get("ending_relation", ""),
                  ends_from=frozenset(f.get("ends_from", ())), past=f.get("past", ""),
                  durative=frozenset(f.get("durative", ())), habitual=frozenset(f.get("habitual", ())),
                  yields_to_jobs=f.get("yields_to_jobs", False))
            for f in data["frame"]
        ),
        blocked=frozenset(data["blocked"]["lemmas"]),
        blocked_preps=frozenset(data["blocked"]["preps"]),
        stay_words=frozenset(data["blocked"]["stays"]),
        modifiers=frozenset(data["blocked"]["modifiers"]),
        verb_preps=frozenset(data["blocked"]["verb_preps"]),
        past_states=frozenset(data["blocked"]["past_states"]),
        spans=frozenset(data["blocked"]["spans"]),
        habits=frozenset(data["blocked"]["habits"]),
        present=frozenset(data["blocked"]["present"]),
        had=frozenset(data["blocked"]["had"]),
        named_home=frozenset(data["blocked"]["named_home"]),
        other=tuple(data["other"]["prototypes"]),
    )


# --- which token is which entity ----------------------------------------------------------------

_WORD = re.compile(r"\x02\d+\x03|\w+|'\w+|[^\w\s]")  # "She's" as "She" "'s", like "⟨1⟩" "'s"


def _token_ids(sentence) -> Mapping[int, int]:
    """token index → entity index: the mentions by their spans, first-person words as the writer
    (or as the signer of a letter to the writer), and the pronouns the extractor resolved (found where
    the tagged sentence has a placeholder in place of a pronoun). Read once per sentence: each reader
    of the parse asks for it."""
    spans = tuple((m.start, m.end, idx) for m, idx in zip(sentence.mentions, sentence.ids, strict=True)
                  if idx is not None)
    return _read_token_ids(sentence.text, sentence.tagged, spans)


@lru_cache(maxsize=256)
def _read_token_ids(text: str, tagged: str, spans: tuple[tuple[int, int, int], ...]) -> Mapping[int, int]:
    doc = parse(text)
    ids: dict[int, int] = {}
    for start, end, idx in spans:
        span = doc.char_span(start, end, alignment_mode="expand")
        for token in span or ():
            ids[token.i] = idx
    if tagged:
        said = [(m.group(), m.start()) for m in _WORD.finditer(text)]
        words = [m.group() for m in _WORD.finditer(tagged)]
        matcher = difflib.SequenceMatcher(a=[w for w, _ in said], b=words, autojunk=False)
        for op, a0, a1, b0, b1 in matcher.get_opcodes():
            # "her" → "⟨1⟩", or a possessive "your" → "⟨1⟩" "'s"; the last of several words when the
            # words before it were left out of the tagged sentence ("Dear Mr. X, your" → "⟨1⟩" "'s")
            if op == "replace" and words[b0].startswith("\x02") and (
                    b1 - b0 == 1 or b1 - b0 == 2 and words[b0 + 1].lower() == "'s"):
                a0 = a1 - 1
                token = doc.char_span(said[a0][1], said[a0][1] + len(said[a0][0]), alignment_mode="expand")
                if token is not None and token.root.pos_ == "PRON":
                    ids.setdefault(token.root.i, int(words[b0][1:-1]))
    for token in doc:  # the writer's, unless the tagged sentence gave them to a letter's signer
        if token.i not in ids and token.lower_ in _FIRST_PERSON:
            ids[token.i] = SPEAKER
    return MappingProxyType(ids)  # shared by every reader of the sentence: read-only


def _elided_subject(sentence) -> int:
    """Who a sentence without a subject is about: the person the extractor carried into it from the
    sentence before ("Kenji called. Moved to Osaka." → Kenji), else the writer."""
    lead = re.match(r"\x02(\d+)\x03", sentence.tagged or "")
    if lead and not sentence.text.lstrip().startswith(sentence.mentions[0].text if sentence.mentions else "\0"):
        return int(lead.group(1))
    return SPEAKER


# --- the way from an object to its verb and subject --------------------------------------------


def _is_verb(token) -> bool:
    return token.pos_ in ("VERB", "AUX") or token.dep_ == "ROOT" or _misread_verb(token)


# verbs of a state the parser may read as plural nouns after a name ("My brother Felix studies at X"
# as "Felix studies", a noun apposed to "brother")
_NOUN_LIKE_VERBS = frozenset({"studies", "works", "lives", "teaches", "trains", "volunteers", "lectures"})


def _misread_verb(token) -> bool:
    return (token.tag_ == "NNS" and token.lower_ in _NOUN_LIKE_VERBS and token.dep_ in ("appos", "compound")
            and token.i + 1 < len(token.doc) and token.doc[token.i + 1].pos_ == "ADP")


def _way(token) -> list:
    """The tokens from `token` (exclusive) up to the first verb (inclusive)."""
    way = []
    while token.head.i != token.i:
        token = token.head
        if token.dep_ == "acl" and token.lemma_.lower() in _NAMING_VERBS:
            continue  # "a band called X": the naming is no verb of the sentence; the noun it names is
        way.append(token)
        if _is_verb(token):
            break
    return way


def _with_conjuncts(token, ids: dict[int, int]) -> list[int]:
    """The entity of `token` and of the names coordinated with it ("Ana and I", "Hoa and Minh")."""
    out, todo = [], [token]
    while todo and len(out) < 8:
        current = todo.pop(0)
        # "My father and my stepmother, Ingrid, ...": a conjunct said by a noun stands for the name apposed to it
        named = current if current.i in ids else next((c for c in current.children if c.dep_ == "appos"
                                                        and c.i in ids), None)
        if named is not None and ids[named.i] not in out:
            out.append(ids[named.i])
        todo += [c for c in current.children if c.dep_ == "conj"]
    return out


def _subjects(verb, ids: dict[int, int], elided: int) -> list[int]:
    """Whom `verb` is said of: its own subject (with the names coordinated with it), the subject of
    the verb it hangs from, the noun a relative clause ("who moved to X") hangs from, or, with no
    subject in reach, `elided`."""
    if _misread_verb(verb):  # "My brother Felix studies at X": the name right before it
        before = verb.doc[verb.i - 1]
        return _with_conjuncts(before, ids) if before.i in ids else []
    for _ in range(6):
        subjects = [c for c in verb.children if c.dep_ in _SUBJECTS]
        if subjects:
            if subjects[0].lower_ in ("who", "that") and verb.dep_ == "relcl":
                head = verb.head
                if head.i not in ids and head.dep_ == "appos" and head.head.i in ids:
                    head = head.head  # "Dr. Arda, my neighbour, who teaches at X": the name the noun is apposed to
                return _with_conjuncts(head, ids)
            # "My daughter Soo-ah is ...", "The twins, Hoa and Minh, share ...": the subject, or
            # the name compounded or apposed to it
            for subject in subjects:
                for token in (subject, *(c for c in subject.children if c.dep_ in ("compound", "appos"))):
                    if token.i in ids:
                        return _with_conjuncts(token, ids)
            return _with_conjuncts(subjects[0], ids)  # "My father and my stepmother, Ingrid, live ..."
        if verb.dep_ in _SHARES_SUBJECT and verb.head.i != verb.i:
            if verb.head.lemma_.lower() in _NAMING_VERBS and any(c.dep_ == "oprd" for c in verb.head.children):
                return []  # "Bartholomew, we all call him Barty, is a nurse": not said of "we"
            verb = verb.head
            continue
        if verb.dep_ == "ROOT" and not any(t.dep_ in _SUBJECTS and not _of_a_later_conjunct(t, verb) for t in verb.doc):
            if verb.i == 1 and stray_subject(verb.doc[0]):  # "Rustam works as a driver …": said of him
                return _with_conjuncts(verb.doc[0], ids) if verb.doc[0].i in ids else []
            lead = {ids.get(t.i) for t in verb.doc[: verb.i]}
            if verb.i and len(lead) == 1 and None not in lead:
                return list(lead)  # "gilly moved to X": a name the parser took for no subject opens it
            return [elided]
        return []
    return []


def _misread_subject(doc, ids: dict[int, int], types: Sequence[str]) -> bool:
    """A sentence the parser gave no verb at its root, with a person named before that root: the
    parse lost the subject, so the writer is no better a guess."""
    root = next((t for t in doc if t.dep_ == "ROOT"), None)
    return root is not None and root.pos_ not in ("VERB", "AUX") and any(
        t.i in ids and types[ids[t.i]] == "person" and ids[t.i] != SPEAKER for t in doc[: root.i])


def _of_a_later_conjunct(subject, root) -> bool:
    """A subject of a verb coordinated after `root` ("Bought a flat in X, and Tom starts at Y"): it is
    that clause's own, so `root` still has none."""
    verb = subject.head
    return (verb.dep_ == "conj" and verb.head.i == root.i and verb.i > root.i and subject.i > root.i
            # not advice: "Move to X and you'll love it", "Work at X and they give you shares"
            and (subject.pos_ == "PROPN" or subject.lower_ in ("he", "she", "we")))


def _opens_without_subject(verb) -> bool:
    """A verb with no subject of its own that opens the sentence and hangs from the next clause."""
    opening = opening_verb_without_subject(verb.doc)
    return verb.dep_ == "advcl" and verb.head.i > verb.i and opening is not None and opening.i == verb.i


def _owner(way, ids: dict[int, int]) -> int | None:
    """"my flat in X", "Kenji's job at X": whose the noun of the way is."""
    for token in way:
        # "my sister" is no thing of mine; "transferred to our Madrid office": a workplace many share is
        # not whose the move is
        # "his cardiologist at X": whose doctor, not who works there ("my manager at X" still says mine)
        # ("my colleagues at X" are of my workplace: the one word of kin that says where one works)
        kin = token.lemma_.lower() in KINSHIP and token.lemma_.lower() not in _WORKMATES
        if token.pos_ in ("NOUN", "PROPN") and not kin and (
                token.lemma_.lower() not in _SHARED_WORKPLACES) and not _serves_a_client(token):
            for child in token.children:
                if child.dep_ == "poss" and child.i in ids:
                    return ids[child.i]
    return None


_WORKMATES = frozenset({"colleague", "coworker", "co-worker", "workmate"})
_DONE_BY_AN_EMPLOYER = frozenset({"lay", "dismiss", "terminate", "fire", "sack"})


def _serves_a_client(token) -> bool:
    """A role someone holds for another ("his cardiologist", "my lawyer"), not a colleague's ("my manager")."""
    return role_of_term(token.lemma_.lower()) not in ("", "manager", "advisor")


_LEAVINGS = frozenset({"leave", "quit", "resign", "finish"})
_SHARED_WORKPLACES = frozenset({"office", "department", "branch", "company", "firm", "site", "depot",
                                "headquarters", "hq", "plant", "factory", "store", "lab"})


def _verb_chain(verb) -> list:
    """The verb and the verbs it hangs from ("want" of "want to move to X", "thinking" of
    "thinking of moving")."""
    chain = [verb]
    for _ in range(6):
        if verb.dep_ == "xcomp" and any(c.dep_ == "dobj" for c in verb.head.children):
            break  # "quit his job to open a cafe": the purpose is an event of its own, not the quitting
        if verb.dep_ == "advcl" and verb.i < verb.head.i and _names_its_own(verb.head, verb):
            break  # "Having been made a partner at X, I left Y": a clause set before the verb is its own event
        if verb.head.i == verb.i or not (verb.dep_ in ("xcomp", "pcomp", "prep", "pobj", "acomp") or (
                # a clause with a subject of its own says its own thing ("I no longer teach — I'm a
                # designer at X"); one without shares what the verb it hangs from is said under
                verb.dep_ in ("ccomp", "advcl", "conj") and not any(c.dep_ in _SUBJECTS for c in verb.children))):
            break
        # "(I'm) no longer at X, started at Y": the negation of the verb above is not the clause's;
        # "left X, starting at Y in Z": a participle after a leaving is an event of its own
        through = verb.dep_ == "conj" or verb.dep_ == "advcl" and (any(
            c.dep_ == "neg" or any(g.dep_ == "neg" for g in c.children) for c in verb.head.children)
            or verb.tag_ == "VBG" and verb.i > verb.head.i and verb.head.lemma_.lower() in _LEAVINGS)
        verb = verb.head
        if not through:  # "sold our flat and moved to X": the selling is another event
            chain.append(verb)
    return chain


def _names_its_own(head, clause) -> bool:
    """Whether the verb names a place or organization of its own outside `clause` ("I left Y"), not a
    date ("Having worked at X for ten years, I retired in May": the retiring ends X)."""
    inside = {t.i for t in clause.subtree}
    return any(t.pos_ == "PROPN" and t.ent_type_ not in ("DATE", "TIME") and t.i not in inside
               for c in head.children if c.dep_ in ("dobj", "prep") for t in c.subtree)


def _chain_words(chain) -> frozenset[str]:
    """The lemmas of the way and of the verbs above it (`chain`), with their negations and adverbs."""
    words = set()
    for token in chain:
        words.add(token.lemma_.lower())
        words.update(c.lower_ for c in token.children if c.dep_ in ("neg", "advmod", "prt", "prep", "npadvmod"))
        words.update(g.lower_ for c in token.children if c.dep_ == "advmod" for g in c.children)
        words.update(g.lemma_.lower() for c in token.children if c.dep_ == "prep" for g in c.children
                     if g.dep_ == "pobj")  # "for a work trip"
    return frozenset(words)


def _blocked(way, chain, data: Frames) -> bool:
    """Whether the way or the verbs above it say the state is not current: a blocked lemma ("visit",
    "think"), a modal or negation on them ("might", "not"), "until" on a verb, or a preposition of
    the way that points away ("moved from X"). `chain` is the way and the verbs above it."""
    for token in chain:
        if token.lemma_.lower() in data.named_home and any(c.dep_ in ("dobj", "oprd") and c.lower_ == "home"
                                                           for c in token.children):
            continue  # "calls Tamsk home": a verb of speech naming where one lives
        if token.lemma_.lower() == "wish" and any(t.lower_ == "luck" for c in token.children for t in (c, *c.children)):
            continue  # "starting at X on Monday, wish me luck": a greeting, no wish for the state
        if token.lemma_.lower() in data.blocked or token.lower_ in data.blocked or any(
                f"{token.lemma_.lower()} {c.lower_}" in data.blocked for c in token.children if c.dep_ == "prt"):
            return True  # "visited X", "stepped down as chair of X"
        for child in token.children:
            if child.dep_ in ("neg", "aux", "advmod", "mark", "amod") and (
                    child.lower_ in data.modifiers or child.lemma_.lower() in data.blocked):
                return True
            if token.lemma_.lower() == "look" and child.dep_ == "prep" and child.lower_ == "for":
                return True  # "looking for a job in Manchester" (not "your flat in Leeds looks amazing")
            if child.dep_ == "aux" and child.lower_ in ("'d", "’d") and token.tag_ == "VB":
                return True  # "I'd love a job in Rome" (not "she'd moved to Leeds": had)
            if child.dep_ == "prep" and child.lower_ in data.verb_preps:
                return True
            if any(c.dep_ in ("compound", "dobj") and c.lemma_.lower() in data.stay_words
                   for c in ((child, *child.children) if child.dep_ == "dobj" else (child,))):
                return True  # "rented a holiday flat in X", "a holiday flat in X"
    return any(t.dep_ == "prep" and t.lower_ in data.blocked_preps for t in way)


def _clause(verb, keep: set[int]) -> list:
    """The verb's clause in order: its subtree without clauses of their own hanging from it."""
    cut = set()
    for child in verb.children:
        if child.dep_ in ("relcl", "advcl", "ccomp", "parataxis") or (
                child.dep_ == "conj" and _is_verb(child)):
            cut.update(t.i for t in child.subtree)
    return [t for t in verb.subtree if t.i not in cut or t.i in keep]


# --- matching ------------------------------------------------------------------------------------


def candidates(sentence, types: Sequence[str], linked: Callable[[int, int], frozenset[str]]) -> list[Candidate]:
    """The (person, place or organization) pairs of the sentence a frame may link, with what the
    frames read of each. `types[i]` is entity i's type; `linked(a, b)` says by what relations a
    rule linked them."""
    if not any(i is not None and types[i] in _STANDS_IN for i in sentence.ids):
        return []  # no place or organization named: nothing to link (and no parse to read)
    data = frames()
    doc = parse(sentence.text)
    ids = _token_ids(sentence)
    elided = _elided_subject(sentence)
    out: list[Candidate] = []
    for token in doc:
        target = ids.get(token.i)
        if target is None or target == SPEAKER or types[target] not in _STANDS_IN:
            continue
        if ids.get(token.head.i) == target and token.head.i != token.i:
            continue  # not the head word of its name
        ways = [_apposed_way(doc, ids, token) or _way(token)]
        # "Bradford, where my mum still lives": the place a "where" clause hangs from is its verb's
        ways += [[c] for c in token.children if c.dep_ == "relcl" and any(
            g.lower_ == "where" and g.dep_ == "advmod" for g in c.children)]
        for way in ways:
            if not way or not _is_verb(way[-1]) or any(
                    ids.get(t.i, target) != target and types[ids[t.i]] != "concept" for t in way[:-1]):
                continue  # no verb governs it, or it hangs from another name ("Lima, Peru")
            out += _pair_candidates(doc, ids, types, linked, token, way, target, elided, data)
    if out and (containers := _containers(doc, ids, types)):
        # what is said of a unit is said of the institution it is part of
        out = [dataclasses.replace(c, target=outer, linked=linked(c.subject, outer), names=" ".join(
            t.lower_ for t in doc if ids.get(t.i) == outer)) if (outer := containers.get(c.target)) is not None else c
            for c in out]
    return out + _moved_into_a_house_in(doc, ids, types, linked, out)


_MOVES_IN = frozenset({"move", "relocate", "settle"})
_HOME_AFTER = re.compile(
    r"(?:care|nursing|residential|retirement|group)\s+home|sheltered\s+housing|hall\s+of\s+residence")


def _moved_into_a_house_in(doc, ids, types, linked, found: list[Candidate]) -> list[Candidate]:
    """"moved into residential care at ⟨Thornlea House⟩ in ⟨town⟩": one who moves into a named house
    or home in a town moves to the town, a pair the parse hangs from the house's name."""
    extra = []
    for c in found:
        if c.kind != "organization" or not c.lemmas & _MOVES_IN:
            continue
        named = [t for t in doc if ids.get(t.i) == c.target]
        if _HOME_AFTER.match(" ".join(t.lower_ for t in doc[named[-1].i + 1 : named[-1].i + 4])):
            extra.append(dataclasses.replace(c, kind="place"))  # "moved to ⟨Thornlea House⟩ care home": a home
        # "⟨house⟩ in ⟨town⟩", "⟨house⟩, a care home in ⟨town⟩"
        heads = [*named, *(a for t in named for a in t.children if a.dep_ == "appos" and a.i not in ids)]
        towns = [ids.get(o.i) for t in heads for p in t.children if p.dep_ == "prep" and p.lower_ == "in"
                 for o in p.children if o.dep_ == "pobj"]
        # "moved to ⟨Thornlea House⟩ care home, ⟨town⟩": the town set off after the house
        after = next((t for t in doc[named[-1].i + 1 : named[-1].i + 4] if t.text == "," or t.i in ids), None)
        if after is not None and after.text == "," and after.i + 1 < len(doc):
            towns.append(ids.get(doc[after.i + 1].i))
        for town in dict.fromkeys(towns):
            if town is not None and town != c.subject and types[town] == "place":
                names = " ".join(t.lower_ for t in doc if ids.get(t.i) == town)
                extra.append(dataclasses.replace(c, target=town, kind="place", names=names, prep="in",
                                                 settlement=names in PLACES, linked=linked(c.subject, town)))
    return extra


# "the Department of Botany at ⟨university⟩", "the School of Law of ⟨university⟩": a unit named for its
# field is part of the institution named with it, where one works or studies
_UNIT_HEADS = frozenset({"department", "dept", "school", "faculty", "division", "centre", "center", "institute",
                         "unit", "laboratory", "lab"})


def _containers(doc, ids: Mapping[int, int], types: Sequence[str]) -> dict[int, int]:
    """Unit → the organization it is part of, said with "at" / "of" / "in" or a comma after the
    unit's name ("the School of Law, ⟨university⟩"); a street → the town after it ("Saltwick Lane, ⟨town⟩")."""
    out = {}
    for token in doc:
        outer = ids.get(token.i)
        if outer is None or outer == SPEAKER or types[outer] not in _STANDS_IN or ids.get(token.head.i) == outer:
            continue  # no place or organization, or not the head word of its name
        unit = None
        if token.dep_ == "pobj" and token.head.lower_ in ("at", "of", "in"):
            unit = ids.get(token.head.head.i)
        first = min(t.i for t in doc if ids.get(t.i) == outer)
        last = max(t.i for t in doc if ids.get(t.i) == outer)
        # "the Institute of X, Wexley Freight and Tallis Foods": a list, not a unit and its institution
        listed = last + 1 < len(doc) and (doc[last + 1].lower_ in ("and", "or", "&") or doc[last + 1].text == "," and (
            last + 2 < len(doc) and doc[last + 2].i in ids))
        if unit is None and first >= 2 and doc[first - 1].text == "," and not listed:
            unit = ids.get(doc[first - 2].i)
        if unit is None or unit in (outer, SPEAKER) or types[unit] != types[outer]:
            continue
        words = [t.lower_ for t in doc if ids.get(t.i) == unit]
        if types[outer] == "organization" and len(words) >= 3 and words[0] in _UNIT_HEADS and words[1] == "of":
            out[unit] = outer
        elif types[outer] == "place" and len(words) >= 2 and words[-1] in STREET_WORDS and doc[first - 1].text == ",":
            out[unit] = outer  # "a cottage at 3 Saltwick Lane, Tresswick": the home is in the town
    return out


def _copula_noun(verb, ids: dict[int, int], data: Frames):
    """(noun, owner) when `verb` is "is" said of a frame's noun ("Home is X", "our flat is in X",
    "my job is at X"): the owner is the noun's "my" / "X's", or the writer for a bare "Home"."""
    if verb.lemma_ != "be":
        return None
    nouns = {t for f in data.frames for t in f.triggers}
    # "My husband Ahmed's new employer is X": the parser may hang the noun apposed to the subject
    said = [n for c in verb.children if c.dep_ in _SUBJECTS for n in (c, *(a for a in c.children if a.dep_ == "appos"))]
    for child in said:
        # not "his cardiologist at X is Dr. Y": whose doctor, not who works there
        if (child.pos_ == "NOUN" and child.i not in ids and child.lemma_.lower() in nouns
                and not _serves_a_client(child)):
            owners = [ids[c.i] for c in child.children if c.dep_ == "poss" and c.i in ids]
            if owners:
                return child, owners[0]
            if not any(c.dep_ in ("det", "poss") for c in child.children):  # not "emre's new job", unnamed
                return child, SPEAKER
    return None


def _pair_candidates(doc, ids, types, linked, token, way, target: int, elided: int, data: Frames) -> list[Candidate]:
    """The candidates of one object reached by one way: one per person the way's verb is said of."""
    verb = way[-1]
    owner = _owner(way, ids)
    if owner is None and (said := _copula_noun(verb, ids, data)) is not None:
        noun, owner = said  # "Home is Marrakech now", "my new job is at Flutterwave"
        way = [*way[:-1], noun, verb]
    moved = [ids[t.i] for c in verb.children if c.dep_ == "dobj"
             for t in (c, *(g for g in c.children if g.dep_ in ("compound", "appos")))
             if t.i in ids and types[ids[t.i]] == "person"][:1]
    if verb.lemma_.lower() in _DONE_BY_AN_EMPLOYER and not moved and not any(
            c.dep_ == "nsubjpass" for c in verb.children):
        return []  # "our manager Tom laid off two people at X": the one who lays off keeps the job
    if verb.lemma_.lower() in MOVED_BY and moved:
        subjects = moved  # "the bank transferred Ana to Porto": Ana moves
    else:
        subjects = _subjects(verb, ids, elided)
        shared = any(verb.lemma_.lower() in f.triggers for f in data.frames) or any(
            c.dep_ == "poss" and c.lower_ == "our" for t in way for c in t.children)  # "me and Jo ... our new flat"
        if owner is not None and (owner not in subjects or not shared):
            # "Ben and I are moving in, his place in X": both; "me and Jo went to see his flat in X": his
            subjects = [owner]
        if _opens_without_subject(verb) and not any(types[s] == "person" for s in subjects):
            subjects = [elided]  # "Moved back to Kumasi, London was too dear": no place moved
        elif subjects == [elided] and _misread_subject(doc, ids, types):
            subjects = []  # "X's brother Duc studies at Y", its verb read as a name: not the writer
    return [_candidate(doc, ids, types, linked, token, way, subject, target, data)
            for subject in subjects if subject != target and types[subject] == "person"]


_COUNTERFACTUAL = frozenset({"wish", "dream", "imagine", "pretend"})


def _lemmas_of(token) -> tuple[str, ...]:
    """The token's lemma, and for a gerund the parser read as a noun ("first week teaching at X") the
    verb's: the stem with and without a final "e" ("teach", "mak(e)"), undoubled ("run" of "running")."""
    lemma = token.lemma_.lower()
    if token.pos_ != "NOUN" or not lemma.endswith("ing") or len(lemma) < 6:
        return (lemma,)
    stem = lemma[:-3]
    return lemma, stem, stem + "e", *((stem[:-1],) if stem[-1] == stem[-2] else ())


def _candidate(doc, ids, types, linked, token, way, subject: int, target: int, data: Frames) -> Candidate:
    """What the frames read of one (subject, object) pair."""
    verb = way[-1]
    chain = [*way, *_verb_chain(verb)]
    # "I wish I worked at X", "I dreamt I lived in Y": what one wishes is not so, now or then
    wished = chain[-1].dep_ == "ccomp" and chain[-1].head.lemma_.lower() in _COUNTERFACTUAL
    blocked = wished or _blocked(way, chain, data)
    keep = {t.i for t in way} | {token.i}
    words = []
    for t in _clause(verb, keep):
        who = ids.get(t.i)
        if t.dep_ == "det" and ids.get(t.head.i) == target:
            continue  # "the" of "the Goethe-Institut": the stand-in has its own
        if who == target:
            if not words or words[-1] != _STANDS_IN[types[target]]:
                words.append(_STANDS_IN[types[target]])
        elif who is not None and types[who] == "person" and t.dep_ in (*_SUBJECTS, "poss"):
            words.append(("my" if t.dep_ == "poss" else "i") if who == SPEAKER else
                         ("her" if t.dep_ == "poss" else "she"))
        elif who is None:
            words.append(t.lower_)
    name_words = " ".join(t.lower_ for t in doc if ids.get(t.i) == target)
    # the way, and what the verb takes as its object ("signed the lease on a place in X")
    lemmas = frozenset(lemma for t in [*way, *(c for c in verb.children if c.dep_ == "dobj"
                                                and ids.get(c.i) != target)]
                       if not _someone_else(t, ids, subject) for lemma in _lemmas_of(t))
    if (verb.dep_ == "ROOT" and verb.lower_ in _YEAR_OF_STUDY and verb.i and _ORDINAL.fullmatch(doc[verb.i - 1].lower_)
            and re.fullmatch(r"[a-z]{2,5}", name_words) and "works_at" not in linked(subject, target)):
        lemmas |= {"year_of_study"}  # "final year at TUM", "my 2nd yr at dcu": said without a verb, a school's initials
    prep = way[0].lower_ if way[0].dep_ in ("prep", "agent") else ""
    # a town, a country, or a place whose last word says it is one ("Mill Street", "Riverside Park"),
    # but no organization named after one ("University of Cape Town")
    settlement = (name_words in PLACES or name_words.rsplit(" ", 1)[-1] in PLACE_SUFFIXES) and not (
        set(name_words.split()) & ORG_SUFFIXES)
    below = {up.lemma_.lower(): down.lower_ for down, up in zip(way, way[1:], strict=False) if down.dep_ == "prep"}
    # "the Madrid office of X"; "Finance Director of X", a post named in capitals
    of_noun = prep == "of" and len(way) > 1 and (way[1].pos_ == "NOUN" or (
        way[1].i in ids and types[ids[way[1].i]] == "concept"))
    said = _chain_words(chain)
    past = not wished and _was(verb, said, data)
    return Candidate(subject, target, types[target], lemmas, prep, name_words, settlement,
                     " ".join(words), linked(subject, target), blocked, said, below, of_noun,
                     past, past and _job_said_with_be(verb), len(way) == 2 and _durative(verb, data),
                     _habitual(verb, data), _left_to_do(verb),
                     any(c.dep_ == "dobj" and ids.get(c.i) != target for c in verb.children))


def _left_to_do(verb) -> bool:
    """"she left to join X in Y", "I'm quitting to start at X": the verb is what the leaving
    is for, so the leaving ends nothing under it."""
    return (verb.dep_ in ("xcomp", "advcl") and verb.head.lemma_.lower() in _LEAVINGS
            and any(c.dep_ == "aux" and c.lower_ == "to" for c in verb.children))


_LEARNING = frozenset({"train", "trainee", "learn", "qualify"})
_YEAR_OF_STUDY = frozenset({"year", "yr", "semester", "sem", "term"})
_ORDINAL = re.compile(r"first|second|third|fourth|fifth|final|\d(?:st|nd|rd|th)")


def _someone_else(token, ids, subject: int) -> bool:
    """An occupation said as the verb's object ("I met the manager at X", "spoke to a teacher at X"):
    the one who holds it is someone other than the verb's subject. Not so when said with "as"
    ("hired as a teacher at X") or owned by the subject ("she called her manager at X")."""
    if token.pos_ != "NOUN" or token.lemma_.lower() not in OCCUPATIONS:
        return False
    if token.dep_ not in ("dobj", "pobj", "dative") or (token.dep_ == "pobj" and token.head.lower_ == "as"):
        return False
    verb = token.head if token.dep_ != "pobj" else token.head.head
    if token.dep_ == "dobj" and not (any(c.dep_ in _SUBJECTS for c in verb.children)
                                     or verb.tag_ in ("VBD", "VBZ", "VBP", "VBN", "VBG")):
        return False  # "Firmware engineer at X": a heading misread as a verb and its object
    return not any(c.dep_ == "poss" and ids.get(c.i) == subject for c in token.children)


def _apposed_way(doc, ids, token) -> list | None:
    """"I'm in a choir, the Coro X, ...": a name right after "⟨noun⟩," that the parser hung from the
    verb as its own object (an apposition misread) is reached through that noun, as if apposed."""
    if token.dep_ not in ("dobj", "attr") or not _is_verb(token.head):
        return None
    k = min(t.i for t in doc if ids.get(t.i) == ids.get(token.i)) - 1
    if k >= 0 and doc[k].dep_ == "det":
        k -= 1
    if k >= 1 and doc[k].text == "," and doc[k - 1].pos_ == "NOUN" and doc[k - 1].i not in ids:
        noun = doc[k - 1]
        return [noun, *_way(noun)]
    return None


def _durative(verb, data: Frames) -> bool:
    """"have been at X since May", "has been in X for two years": "have" and a state's span."""
    # "been at X 3 yrs now": chat drops the "I've" of a sentence that opens so
    dropped = verb.i == 0 and verb.lower_ == "been" and not any(c.dep_ in _SUBJECTS for c in verb.children)
    if verb.lemma_ == "be" and verb.tag_ in ("VBZ", "VBP") and any(
            c.dep_ == "advmod" and c.lower_ in data.present for c in verb.children) and not any(
            c.dep_ == "prep" and c.lower_ in ("for", "on") for c in verb.children) and not any(
            t.lemma_.lower() in data.blocked or t.lower_ in _STAY_ENDS for t in verb.subtree):
        # "she's in Glasgow now", "he's at X now": the state of today, said as such; not "in Paris now
        # for a week", "now on holiday", "now, flying home tomorrow", "now, sightseeing with the kids"
        return True
    if not dropped and not any(c.dep_ == "aux" and c.lemma_ == "have" for c in verb.children):
        return False
    # with the "I've" dropped, only a counted span says a state ("for 4 years", not "for ages with my sister")
    spans = data.spans & _COUNTED_SPANS if dropped else data.spans
    for prep in (c for c in verb.children if c.dep_ in ("prep", "npadvmod", "dobj")):
        if prep.lower_ == "since":
            return True
        if prep.lower_ == "for" and any(g.lemma_.lower() in spans for g in prep.subtree):
            return True
        if prep.dep_ != "prep" and any(g.lemma_.lower() in spans for g in prep.subtree):
            return True  # "have been at X two years"
    return False


_STAY_ENDS = frozenset({"tomorrow", "tonight", "sightseeing", "sightsee", "weekend", "till", "until", "til"})


def _habitual(verb, data: Frames) -> bool:
    """"has been going to X", "goes to X every month", "attends X on Tuesdays": a habit, not a visit."""
    auxes = {c.lower_ for c in verb.children if c.dep_ == "aux"}
    if verb.tag_ == "VBG" and "been" in auxes:
        return True
    said = [t for c in verb.children if c.dep_ != "conj" for t in c.subtree]
    return any(t.lower_ in data.habits and t.head.lower_ not in ("time", "times")  # not "every time I'm in town"
               for t in said)


def _job_said_with_be(verb) -> bool:
    """"was a nurse at X": a job said with "be" is a state, as "worked at X" is."""
    return verb.lemma_ == "be" and any(c.dep_ == "attr" and c.lemma_.lower() in OCCUPATIONS for c in verb.children)


_FORMERLY = frozenset({"previously", "formerly"})
# a state held, not an event ("previously joined X as an intern" says nothing of now)
_HELD = frozenset({"hold", "have", "be", "serve", "run", "lead", "head", "manage", "teach", "work", "live", "study"})
_COUNTED_SPANS = frozenset({"year", "yr", "yrs", "month", "decade"})


def _was(verb, said: frozenset[str], data: Frames) -> bool:
    """Whether `verb` says a state that was: a state verb in the simple past ("lived in X"), after
    "used to" or "had" ("had worked at X"), neither negated nor said with "still" / "now"."""
    near = {c.lower_ for v in {verb, verb.head if verb.dep_ == "xcomp" else verb} for c in v.children
            if c.dep_ in ("advmod", "neg")}
    if (said & _FORMERLY and verb.tag_ in ("VBD", "VBN") and verb.lemma_.lower() in _HELD and not said & _NEGATIONS
            and not near & _STILL):
        return True  # "previously held roles at X", "was formerly with X": a state held that was
    if (verb.lemma_ == "have" and verb.tag_ == "VBD" and not said & _NEGATIONS and not near & _STILL
            and any(c.dep_ == "dobj" and c.lemma_.lower() in data.had for c in verb.children)):
        return True  # "had a job in Lagos", "had a flat in Porto": what one had then
    if not (_job_said_with_be(verb) or verb.lemma_.lower() in data.past_states) or said & _NEGATIONS or near & _STILL:
        return False
    auxes = [c for c in verb.children if c.dep_ in ("aux", "auxpass") and c.tag_ != "TO"]
    if auxes:
        return any(a.lower_ == "had" for a in auxes) and verb.tag_ == "VBN"
    return verb.tag_ == "VBD" or (verb.dep_ == "xcomp" and verb.head.lower_ == "used")


def _frame_named(name: str) -> Frame:
    return next(f for f in frames().frames if f.name == name)


def _takes_prep(frame: Frame, candidate: Candidate) -> bool:
    """The frame takes the object's preposition: one of its own, "of" after a noun, or one it takes
    right below a trigger of `prep_triggers` with no object of the verb's own ("transferred to X")."""
    if not frame.prepositions or not candidate.prep or candidate.prep in frame.prepositions or candidate.of_noun:
        return True
    below = candidate.below or {}
    return not candidate.carries and any(below.get(t) == candidate.prep
                                         for t in frame.prep_triggers.get(candidate.prep, ()))


def frame_for(candidate: Candidate) -> Frame | None:
    """The first frame whose trigger is on the way and whose object the pair's is."""
    for frame in frames().frames:
        if not frame.admits(candidate):
            continue
        if not _takes_prep(frame, candidate):
            continue
        triggers = (frame.triggers | (frame.durative if candidate.durative else frozenset())
                    | (frame.habitual if candidate.habitual else frozenset()))
        hits = {t for t in candidate.lemmas & triggers
                if t not in frame.trigger_preps or (candidate.below or {}).get(t) in frame.trigger_preps[t]}
        if hits and hits <= frame.durative and not frame.settlements and candidate.kind == "place" and (
                candidate.prep == "in"):
            continue  # "I've been in Tamsk for three years": a place one has been in over years is a home
        if hits and frame.yields_to_jobs and candidate.lemmas & (OCCUPATIONS | _POSTS_HELD) and not (
                candidate.lemmas & frame.sure or candidate.chain & _LEARNING):  # "training to be a teacher at ⟨uni⟩"
            continue
        if hits:
            return frame
    return None


# the nouns of a post held ("accepted the position of research fellow at ⟨university⟩"): a job there
_POSTS_HELD = frozenset({"job", "position", "post", "role", "appointment", "fellowship", "lectureship",
                         "professorship", "employment", "contract"})

_vectors: dict[int, tuple] = {}
_vectors_lock = threading.Lock()


def _units(vectors) -> np.ndarray:
    """Rows scaled to unit length, so a dot product is their cosine."""
    matrix = np.asarray(vectors, dtype=np.float32)
    return matrix / np.maximum(np.linalg.norm(matrix, axis=1, keepdims=True), 1e-12)


def _prototype_vectors(embed: Embed) -> tuple[tuple, np.ndarray]:
    """The frame (None: no state) of each prototype sentence, and their unit vectors as rows;
    embedded once per embedder."""
    key = id(getattr(embed, "__self__", embed))
    with _vectors_lock:
        known = _vectors.get(key)
    if known is not None:
        return known
    data = frames()
    labelled = [(f, p) for f in data.frames for p in f.prototypes] + [(None, p) for p in data.other]
    vectors = embed([p for _, p in labelled])
    known = (tuple(f for f, _ in labelled), _units(vectors))
    with _vectors_lock:
        _vectors[key] = known
    return known


def semantic_frames(pending: Sequence[Candidate], embed: Embed) -> list[tuple[Frame, float] | None]:
    """The back-off: per candidate, the frame whose prototypes its clause is nearest (above the
    threshold, by the margin, and admitting the object's kind), else None."""
    if not pending:
        return []
    labels, prototypes = _prototype_vectors(embed)
    out = []
    for candidate, scores in zip(pending, _units(embed([c.text for c in pending])) @ prototypes.T, strict=True):
        best: dict[Frame | None, float] = {}
        for frame, score in zip(labels, scores.tolist(), strict=True):
            best[frame] = max(best.get(frame, -1.0), score)
        ranked = sorted(best.items(), key=lambda kv: kv[1], reverse=True)
        top = ranked[0] if ranked else (None, 0.0)
        runner = ranked[1][1] if len(ranked) > 1 else -1.0
        # every frame competes, the ones that cannot take this object too: "a member of ⟨org⟩"
        # nearest to the club frame is no job there because the org is no club
        if (top[0] is not None and top[0].admits(candidate) and top[1] >= SEMANTIC_THRESHOLD
                and top[1] - runner >= SEMANTIC_MARGIN):
            out.append((top[0], round(top[1], 3)))
        else:
            out.append(None)
    return out


def _overridden(candidate: Candidate, frame: Frame) -> frozenset[str]:
    """The rule's links of the pair `frame` replaces: those it overrides, when one of its strong
    triggers is on the way and none of the overridden frames' is ("spending her first semester at
    ⟨university⟩" is no job there; "lecturer at ⟨university⟩" is)."""
    replaced = candidate.linked & frame.overrides
    others = [f for f in frames().frames if f.relation in replaced]
    # a weak trigger will do when the name says what the place is ("started at ⟨University of X⟩")
    named = set(candidate.names.split()) & frame.object_words
    if not replaced or not candidate.lemmas & (frame.triggers - (frame.weak - _BEGIN if named else frame.weak)) or any(
            candidate.lemmas & (f.triggers - frame.triggers) for f in others):
        return frozenset()
    return replaced


_BEGIN = frozenset({"start", "begin", "go"})
# what one loses when "lose" ends a state
_LOST_STATES = frozenset({"job", "position", "role", "post", "contract", "gig", "place", "seat", "spot",
                          "membership", "scholarship", "lease"})
_AROUND = frozenset({"after", "before", "during", "since", "despite"})
_NEGATIONS = frozenset({"not", "n't", "no", "never"})
_NO_MORE = frozenset({"longer", "anymore", "more", "since"})
_STILL = frozenset({"still", "now", "currently"})
# words that block a link because the state is over: with an ending they say the same
_PAST_WORDS = frozenset({"ex", "former", "previous", "old", "past", "until", "before", "after", "never", "back",
                         "away"})


def ending_for(candidate: Candidate) -> Frame | None:
    """The frame whose state the sentence ends for the pair: an ending lemma of a frame that takes
    the object ("graduated from ⟨school⟩", "quit ⟨club⟩", "left ⟨city⟩"), or a frame's trigger
    said with "no longer" / "not ... anymore" / "not ... since"."""
    stopped = candidate.chain & _NEGATIONS and candidate.chain & _NO_MORE
    towards = candidate.prep in ("to", "into", "towards", "toward") or (
        candidate.prep in ("for", "with") and "leave" in candidate.chain)
    if towards and not stopped or candidate.purpose:
        return None  # "left for ⟨X⟩" goes to it; "stopped working for ⟨X⟩", "no longer with ⟨X⟩" are over
    data = frames()
    if "works_at" in candidate.linked:
        return None  # a rule read a job there in this very clause
    if "as" in candidate.lemmas and set(candidate.names.split()) & _frame_named("member_of").object_words:
        return None  # "my resignation as Treasurer of ⟨the club⟩": the post is given up, not the club
    for frame in data.frames:
        if not frame.endings or not frame.admits(candidate):
            continue
        # an ending of two words is a verb and its particle ("step down", "lay off")
        phrasal = {e for e in frame.endings if " " in e and set(e.split()) <= candidate.chain}
        if candidate.chain & (data.blocked - frame.endings - {w for e in phrasal for w in e.split()} - _PAST_WORDS):
            continue  # "left ⟨city⟩ for a work trip", "thinking of quitting ⟨club⟩"
        if candidate.prep in ("from", "out") and candidate.lemmas & frame.ends_from:
            return frame  # "moved from ⟨city⟩ to ...", "moved out of ⟨city⟩"
        # a state said with "be" ("I'm not at ⟨org⟩ anymore") is ended by the stop words alone
        said = candidate.chain & ((frame.triggers - frame.weak) | frame.durative | {"part", "member"})
        # "graduated from X", "not part of X since May", "was a member of X until 2015", "retired
        # after 35 years at X"; not "left ⟨org⟩ after the ⟨other⟩ takeover", which ends nothing of the other
        ending = candidate.chain & frame.endings | phrasal
        if ending == {"lose"} and not candidate.lemmas & _LOST_STATES:
            ending = frozenset()  # "lost my job at X" ends it; "we've lost every game" does not
        ended = ending and not (
            set((candidate.below or {}).values()) & _AROUND and not candidate.lemmas & data.spans)
        if ended or said and (stopped or "until" in candidate.chain):
            return frame
    return None


def links(sentence, types: Sequence[str], linked: Callable[[int, int], frozenset[str]],
          embed: Embed | None = None) -> list[Link]:
    """What the frames link in `sentence` that the rules did not (or linked by a relation the
    frame overrides)."""
    found, pending = [], []
    for candidate in candidates(sentence, types, linked):
        if candidate.past:  # what a rule read as the present ("used to work at X") was
            frame = _frame_named("works_at") if candidate.past_job else frame_for(candidate)
            if frame is not None and frame.admits(candidate) and frame.past and not candidate.linked - {frame.relation}:
                found.append(Link(candidate.subject, frame, candidate.target, "frame", past=True,
                                  replaces=candidate.linked))
            continue
        if candidate.blocked:
            if (ended := ending_for(candidate)) is not None:
                found.append(Link(candidate.subject, ended, candidate.target, "frame", ends=True,
                                  replaces=candidate.linked & (ended.overrides | {ended.relation})))
            continue
        frame = frame_for(candidate)
        if candidate.linked:
            # (also when a rule linked both: "is a student at X" read as a job and as study)
            if frame is not None and (replaced := _overridden(candidate, frame)):
                found.append(Link(candidate.subject, frame, candidate.target, "frame", replaces=replaced))
        elif frame is not None:
            found.append(Link(candidate.subject, frame, candidate.target, "frame"))
        elif (was := _now_instead(candidate, found)) is not None:
            found.append(Link(candidate.subject, was, candidate.target, "frame"))
        elif not any(f.admits(candidate) and candidate.lemmas & f.triggers for f in frames().frames):
            pending.append(candidate)  # a trigger a frame turned down ("based on") is no case for a guess
    if embed is not None:
        for candidate, hit in zip(pending, semantic_frames(pending, embed), strict=True):
            if hit is not None:
                found.append(Link(candidate.subject, hit[0], candidate.target, "semantic", hit[1]))
    return found


def _now_instead(candidate: Candidate, found: list[Link]) -> Frame | None:
    """"I used to live in X, now I'm in Y": after a state the sentence says was, "now" and "be" with
    an object that state's frame takes say the state holds there now."""
    if not (candidate.chain & {"now", "nowadays"} and "be" in candidate.lemmas) or (
            set(candidate.text.split()) & frames().blocked):  # "now I'm in Y for a conference"
        return None
    for link in found:
        if link.past and link.subject == candidate.subject and link.frame.admits(candidate) and (
                not link.frame.prepositions or candidate.prep in link.frame.prepositions):
            return link.frame
    return None


# --- pets -----------------------------------------------------------------------------------------

_NAMING_VERBS = frozenset({"name", "call"})


def _pet_noun(token) -> bool:
    return token.pos_ in ("NOUN", "PROPN") and token.lemma_.lower() in PET_TERMS  # "a black Labrador"


def _taken_in(verb) -> bool:
    """"adopted", "got", "took in", "have taken on", "was acquired": an animal comes to live with someone."""
    lemma = verb.lemma_.lower()
    return lemma in _TAKEN_IN or lemma == "acquire" or lemma == "take" and any(
        c.dep_ == "prt" and c.lower_ in ("in", "on") for c in verb.children)


_TAKEN_IN = frozenset({"adopt", "foster", "get", "buy"})  # not "met a cat called X", "rescued a hiker named X"


def _named_pet_tokens(doc) -> list[tuple[object, object]]:
    """(name token, pet noun) pairs the parse ties: "our dog, Rex" / "Rex, our dog" / "my hamster
    Bolt" (apposed or compounded), "Rex is our dog" (said of the name, or of a pronoun), and
    "got a greyhound and called him Sultan" (named after a pet the sentence brings)."""
    pairs = []
    for token in doc:
        if not _pet_noun(token):
            continue
        # not the breed of "a Border terrier", "a Maine Coon cat": a kind said with "a"
        breed = any(c.dep_ == "det" and c.lower_ in ("a", "an", "another") for c in token.children)
        for child in token.children:
            if child.dep_ in ("appos", "compound") and child.pos_ == "PROPN" and not (
                    breed and child.dep_ == "compound" and child.i < token.i):
                pairs.append((child, token))
                if child.dep_ == "appos" and token.tag_ == "NNS":  # "our two spaniels, Hazel and Pickle"
                    pairs += [(c, token) for c in child.conjuncts if c.pos_ == "PROPN"]
        if token.dep_ in ("appos", "compound") and token.head.pos_ == "PROPN":
            pairs.append((token.head, token))
        # "to keep a rescue whippet, Pilchard, at …": a name set off right after the pet, which the
        # parse hangs on the verb instead of the noun
        after = token.doc[token.i + 1: token.i + 3]
        if (len(after) == 2 and after[0].text == "," and after[1].pos_ == "PROPN" and after[1].head in (
                token, token.head) and after[1].dep_ in ("oprd", "appos", "npadvmod", "dobj")
                and (token.i + 3 >= len(token.doc) or token.doc[token.i + 3].is_punct)):
            pairs.append((after[1], token))
        if token.dep_ == "attr":
            pairs += [(_antecedent(c), token) for c in token.head.children if c.dep_ == "nsubj"]
    pets = [t for t in doc if _pet_noun(t)]
    for token in doc:
        # a naming someone did ("we named her X"), not a name a thing goes by ("a cat called X")
        if token.lemma_.lower() in _NAMING_VERBS and pets and token.dep_ not in ("acl", "relcl", "amod"):
            pairs += [(c, pets[0]) for c in token.children if c.dep_ in ("oprd", "dobj", "attr") and c.pos_ == "PROPN"]
    return pairs


def _antecedent(subject):
    """"Walked Pepper at dawn, she's our old collie": a pronoun said of a pet noun stands for the
    proper noun last named before it in the sentence (else for itself)."""
    if subject.pos_ != "PRON" or subject.lower_ not in ("he", "she", "it"):
        return subject
    return next((t for t in reversed(subject.doc[: subject.i]) if t.pos_ == "PROPN" and t.dep_ != "compound"),
                subject)


def names_a_pet(text: str, start: int, end: int) -> bool:
    """The name at text[start:end] is a pet's, by the parse ("Meet Haru, our new dog")."""
    return any(start <= idx < end for idx in _pet_name_starts(text))


@lru_cache(maxsize=512)
def _pet_name_starts(text: str) -> tuple[int, ...]:
    """Where the pet names of a sentence start (read once per sentence, asked per mention)."""
    return tuple(name.idx for name, _ in _named_pet_tokens(parse(text)))


def pet_links(sentence, types: Sequence[str]) -> list[tuple[int, int]]:
    """(owner, pet) pairs: the pet named as above, its owner the "my" / "X's" on the pet noun or the
    name, else who named it or got it."""
    if not any(i is not None and types[i] == "pet" for i in sentence.ids):
        return []
    doc = parse(sentence.text)
    ids = _token_ids(sentence)
    out = []
    pairs = _named_pet_tokens(doc)
    paired = {name.i for name, _ in pairs}
    # "adopted a sugar glider named X": an animal no list holds, typed a pet by its name's words
    pairs += [(t, t.head.head) for t in doc if t.i in ids and t.i not in paired and types[ids[t.i]] == "pet"
              and t.dep_ == "oprd" and t.head.dep_ == "acl" and t.head.lemma_.lower() in _NAMING_VERBS
              and t.head.head.pos_ == "NOUN" and t.head.head.dep_ == "dobj"
              and _taken_in(t.head.head.head)]
    # "her cat, a Maine Coon named Pixie": a pet named after its kind, apposed to what someone owns
    pairs += [(t, t.head.head) for t in doc if t.i in ids and t.i not in paired and types[ids[t.i]] == "pet"
              and t.dep_ == "oprd" and t.head.dep_ == "acl" and t.head.lemma_.lower() in _NAMING_VERBS
              and _pet_noun(t.head.head) and t.head.head.dep_ == "appos" and (t, t.head.head) not in pairs]
    for name, noun in pairs:
        pet = ids.get(name.i)
        if pet is None or types[pet] != "pet":
            continue
        kinds = (noun, name, noun.head) if noun.dep_ == "appos" and noun.head.pos_ == "NOUN" else (noun, name)
        owners = [ids[c.i] for t in kinds for c in t.children if c.dep_ == "poss" and c.i in ids and (
            # "his dog, a collie named Meg": "his" is the one the sentence is about, not someone before
            t is not noun.head or c.pos_ != "PRON" or ids[c.i] in _said_of_in(doc, ids))]
        if not owners:
            verb = noun.head if noun.dep_ in ("dobj", "attr") else name.head
            # "Mum got me a hamster", "bought Dad a budgie": an animal got for someone is theirs
            given = [ids[c.i] for c in verb.children if c.dep_ == "dative" and c.i in ids] if (
                noun.dep_ == "dobj" and _taken_in(verb)) else []
            owners = given or [ids[c.i] for c in verb.children if c.dep_ in _SUBJECTS and c.i in ids]
            opening = verb.dep_ == "ROOT" or verb.i == 0
            if not owners and opening and (_taken_in(verb) or verb.lemma_.lower() in _NAMING_VERBS) and not any(
                    c.dep_ in _SUBJECTS for c in verb.children):
                owners = [_elided_subject(sentence)]  # "adopted a whippet named socks, shes 9": the writer's
        if owners and owners[0] != pet and types[owners[0]] == "person":
            out.append((owners[0], pet))
    return out


def _said_of_in(doc, ids) -> set[int]:
    """The entities that are a verb's subject in the parse."""
    return {ids[t.i] for t in doc if t.dep_ in _SUBJECTS and t.i in ids}


def pet_endings(sentence, types: Sequence[str]) -> list[tuple[int | None, int]]:
    """(owner, pet) of each pet the sentence says died or was given up ("our cat Whiskers passed
    away", "we had to rehome Pipoca"): the owner is the "my" / "X's" on the pet's name or kind, or
    whoever gave it up; None when the sentence does not say."""
    if not any(i is not None and types[i] == "pet" for i in sentence.ids):
        return []
    data = FRAME_DATA["pet_endings"]
    doc = parse(sentence.text)
    ids = _token_ids(sentence)
    out = []
    def done_to(verb) -> bool:  # rehomed, put down, put to sleep, given away
        said = {c.lower_ for c in verb.children if c.dep_ in ("prt", "advmod")} | {
            g.lower_ for c in verb.children if c.dep_ in ("prep", "advcl") for g in (c, *c.children)}
        return verb.lemma_.lower() in data["lemmas"] or bool(said & set(data["particles"].get(verb.lemma_.lower(), ())))

    for token in doc:
        pet = ids.get(token.i)
        if pet is None or types[pet] != "pet":
            continue
        role = token  # "our dog Bruno had to be put to sleep", "rehomed our cat Figa": what the kind noun is
        if token.dep_ in ("appos", "compound") and _pet_noun(token.head):
            role = token.head
        elif token.dep_ == "npadvmod":
            role = next((c for c in token.head.children if c.dep_ == "dobj" and _pet_noun(c)), token)
        if role.dep_ not in (*_SUBJECTS, "dobj"):
            continue
        verb = role.head
        if role.dep_ == "nsubj":  # what the pet did: died ("Rex passed away"; not "Rex gave up the ball")
            if not (died(verb, list(verb.children)) or any(  # "Rex had to be put down"
                    c.dep_ == "xcomp" and any(a.dep_ == "auxpass" for a in c.children) and done_to(c)
                    for c in verb.children)):
                continue
        elif not done_to(verb):
            continue
        kinds = [role] * (role is not token) + [c for c in token.children if c.dep_ in ("compound", "appos")
                                                 or _pet_noun(c)]
        owners = [ids[c.i] for t in (token, *kinds) for c in t.children if c.dep_ == "poss" and c.i in ids]
        if not owners and role.dep_ == "dobj":
            owners = [ids[c.i] for c in verb.children if c.dep_ == "nsubj" and c.i in ids]
        owner = owners[0] if owners and types[owners[0]] == "person" else None
        if (owner, pet) not in out:
            out.append((owner, pet))
    return out


def pet_moves(sentence, types: Sequence[str]) -> list[tuple[int, int | None]]:
    """(pet, new keeper) of each pet the sentence says went to live with someone else ("Zora has gone
    to live with Pilar", "our cat went to live with my aunt"): its owner no longer
    has it, the one it lives with now does (None when unnamed). Not a move denied or only planned ("is
    not going to live with"), nor a stay ("for two weeks", "while we are away")."""
    if not any(i is not None and types[i] == "pet" for i in sentence.ids):
        return []
    doc = parse(sentence.text)
    ids = _token_ids(sentence)
    out = []
    for token in doc:
        pet = ids.get(token.i)
        if pet is None or types[pet] != "pet":
            continue
        role = token.head if token.dep_ in ("appos", "compound") and _pet_noun(token.head) else token  # "our dog, X,"
        if role.dep_ != "nsubj" or role.head.lemma_.lower() not in ("go", "move") or any(
                c.dep_ in ("neg", "aux") and c.lower_ in frames().modifiers for c in role.head.children):
            continue
        for live in role.head.children:
            if live.dep_ in ("advcl", "xcomp") and live.lemma_.lower() == "live" and not _a_stay(role.head):
                withs = [c for c in live.children if c.dep_ == "prep" and c.lower_ == "with"]
                if withs:
                    keepers = [ids[n.i] for w in withs for g in w.children if g.dep_ == "pobj"  # "her son Mirek"
                               for n in (g, *(c for c in g.children if c.dep_ in ("appos", "compound"))) if n.i in ids]
                    keeper = keepers[0] if keepers and types[keepers[0]] == "person" else None
                    out.append((pet, keeper))
    return out


_SPANS = frozenset({"day", "week", "weekend", "month", "night", "while", "summer", "holiday", "holidays"})


def _a_stay(verb) -> bool:
    """A stay, not a move: "for two weeks", "while we are in Spain", "until I'm back"."""
    return any(t.lower_ in ("while", "until", "till")
               or t.lemma_.lower() in _SPANS and "for" in (t.head.lower_, t.head.head.lower_) for t in verb.subtree)


def moved_out(sentence, types: Sequence[str]) -> list[int]:
    """The people other than the writer the sentence says moved out ("Pelleas moved out last week",
    "my flatmate has moved out of the flat"): a shared home they no longer share. Not "moved out of
    ⟨a town⟩" (a move, the frames' own), nor "will move out", "didn't move out"."""
    if not any(i is not None and i != SPEAKER and types[i] == "person" for i in sentence.ids):
        return []
    doc = parse(sentence.text)
    ids = _token_ids(sentence)
    modifiers = frames().modifiers
    out = []
    for verb in doc:
        if verb.lemma_.lower() not in ("move", "clear") or not any(
                c.dep_ in ("prt", "advmod") and c.lower_ == "out" for c in verb.children):
            continue
        if any(c.lower_ in modifiers for c in verb.children if c.dep_ in ("aux", "neg", "advmod")):
            continue
        outs = [c for c in verb.children if c.lower_ == "out"]
        places = [t for c in outs for t in c.subtree if t.i in ids and types[ids[t.i]] == "place"]
        if places:
            continue
        for who in _subjects(verb, ids, SPEAKER):
            if who != SPEAKER and types[who] == "person" and who not in out:
                out.append(who)
    return out


# verbs by which a person goes from one employer to another ("moved from X to Y", "left X to join Y");
# not "switched from ⟨a phone network⟩ to ⟨another⟩", a service changed
_JOB_MOVES = frozenset({"move", "go", "jump", "hop", "transfer", "leave", "quit"})
_SCHOOL_WORDS = frozenset({"university", "uni", "college", "school", "academy", "polytechnic"})


def job_moves(sentence, types: Sequence[str]) -> list[tuple[int, int, int]]:
    """(person, organization left, organization joined) of a job changed in one clause: "I moved
    from ⟨Infosys⟩ to ⟨Thoughtworks⟩", "he quit ⟨X⟩ to join ⟨Y⟩" (not "left ⟨X⟩ for ⟨the Maldives⟩").
    Not what might be ("I could move from X to Y"), nor a thing or a service moved between companies
    ("moved my savings from X to Y", "switched from X to Y"), nor a school changed."""
    orgs = [i for i in sentence.ids if i is not None and i != SPEAKER and types[i] == "organization"]
    if len(set(orgs)) < 2:
        return []
    doc = parse(sentence.text)
    ids = _token_ids(sentence)
    modifiers = frames().modifiers
    said = {i: m.text for m, i in zip(sentence.mentions, sentence.ids, strict=True) if i is not None}
    out = []

    def org(token) -> int | None:
        return ids.get(token.i) if ids.get(token.i) in orgs else None

    for verb in doc:
        lemma = verb.lemma_.lower()
        if lemma not in _JOB_MOVES or any(c.lower_ in modifiers for c in verb.children if c.dep_ in ("aux", "neg")):
            continue
        if lemma not in ("leave", "quit") and any(c.dep_ == "dobj" for c in verb.children):
            continue  # "moved my savings from Barclays to Monzo"
        left = joined = None
        for c in verb.children:
            if c.dep_ == "prep" and c.lower_ == "from":
                left = next((org(g) for g in c.children if g.dep_ == "pobj" and org(g) is not None), left)
            elif c.dep_ == "dobj" and verb.lemma_.lower() in ("leave", "quit") and org(c) is not None:
                left = org(c)
            elif c.dep_ == "prep" and c.lower_ == "to" and lemma not in ("leave", "quit"):
                joined = next((org(g) for g in c.children if g.dep_ == "pobj" and org(g) is not None), joined)
            elif c.dep_ in ("xcomp", "advcl") and c.lemma_.lower() == "join":
                joined = next((org(g) for g in c.children if g.dep_ == "dobj" and org(g) is not None), joined)
        if left is None or joined is None or left == joined or any(
                _SCHOOL_WORDS & set(said.get(i, "").lower().split()) for i in (left, joined)):
            continue  # "transferred from Leeds University to Durham University": a study, no job
        for who in _subjects(verb, ids, _elided_subject(sentence)):
            if types[who] == "person":
                out.append((who, left, joined))
    return out


# --- kinship --------------------------------------------------------------------------------------


def _kin_noun(token) -> bool:
    return token.pos_ in ("NOUN", "PROPN") and token.lemma_.lower() in KINSHIP


def _kin_owner(noun, ids: dict[int, int]) -> int | None:
    """Whose relative the kin noun says: its "my" / "X's"."""
    return next((ids[c.i] for c in noun.children if c.dep_ == "poss" and c.i in ids), None)


def _named(token, ids: dict[int, int]) -> int | None:
    """The entity a name token stands for, or the name apposed or compounded to it."""
    if token.i in ids:
        return ids[token.i]
    return next((ids[c.i] for c in token.children if c.dep_ in ("appos", "compound") and c.i in ids), None)


_BECOMING = frozenset({"be", "become", "stay", "remain"})


def kin_links(sentence, types: Sequence[str]) -> list[tuple[int, int, str, list[str]]]:
    """(owner, person, kin word, its modifiers) the parse ties: "my supervisor at the lab is X" and
    "X is my aunt" (said with "is" either way round, whatever stands between), "Luis and I are
    brothers" (the kin word said of two subjects), "Grandpa Vikram" (a kin word as a title: the
    writer's)."""
    if not any(i is not None and types[i] == "person" for i in sentence.ids):
        return []
    doc = parse(sentence.text)
    ids = _token_ids(sentence)
    out = []

    def add(owner, name, noun):
        if owner is None or name is None or owner == name or types[name] != "person" or (
                owner != SPEAKER and types[owner] != "person"):
            return
        mods = [c.lower_.rstrip("-") for c in noun.children if c.dep_ in ("amod", "compound", "nmod")
                and c.lower_.rstrip("-") in KIN_MODIFIERS]
        out.append((owner, name, noun.lemma_.lower(), mods))

    for token in doc:
        # a kin word that is part of a name the message resolved ("Lucía's boyfriend" for a known
        # person; not a title, "Cousin Emeka") says nothing new; "not Lucía's boyfriend" says no kinship
        if not _kin_noun(token) or token.i in ids and ids[token.i] != ids.get(token.head.i) or any(
                c.dep_ == "neg" for c in (token, *token.children)):
            continue
        head = token.head
        if token.dep_ == "attr" and head.lemma_ in _BECOMING:  # "X is my aunt", "Luis and I are brothers"
            subjects = [c for c in head.children if c.dep_ in _SUBJECTS]
            if not subjects or any(c.dep_ in ("neg", "advmod", "aux") and c.lower_ in frames().modifiers
                                   for c in head.children):
                continue  # "Kezia and I are not friends", "no longer friends with X"
            owner = _kin_owner(token, ids)
            with_whom = [g for c in token.children if c.dep_ == "prep" and c.lower_ == "with" for g in c.children
                         if g.dep_ == "pobj"]
            # "I'm best friends with X", "became friends with X"
            # (not "was friends with X in school": a friendship said in the past)
            if token.tag_ == "NNS" and owner is None and with_whom and not (head.lemma_ == "be" and head.tag_ == "VBD"):
                for subject in _with_conjuncts(subjects[0], ids)[:1]:
                    for other in _with_conjuncts(with_whom[0], ids):
                        add(subject, other, token)
            elif owner is not None:
                add(owner, _named(subjects[0], ids), token)
            elif token.tag_ == "NNS":
                people = _with_conjuncts(subjects[0], ids)
                for other in people[1:]:
                    add(people[0], other, token)
        elif token.dep_ in _SUBJECTS and head.lemma_ == "be":  # "my supervisor at the lab is Dr. X"
            for attr in (c for c in head.children if c.dep_ == "attr"):
                add(_kin_owner(token, ids), _named(attr, ids), token)
        elif token.dep_ == "compound" and token.lower_ in KIN_TITLES and head.i in ids and not any(
                c.dep_ == "poss" for c in head.children):
            add(SPEAKER, ids[head.i], token)  # "Grandpa Vikram tells the best stories"
        elif token.dep_ in ("compound", "appos") and head.i in ids:  # "my wife Ana", "Ana, my wife"
            after_verb = head.i > 0 and doc[head.i - 1].pos_ in ("VERB", "ADP")
            if after_verb and any(c.dep_ == "conj" and c.lower_ in ("i", "me") for c in token.children):
                continue  # "Leaving Dunedin, my sister and I drove north": a subject, misread as apposed
            owner = _kin_owner(token, ids)  # the writer is entity 0: None, not falsy, is "no owner"
            # "Leaving Dunedin, my partner Ana Lopes": the noun apposed to a name has its own
            own = next((ids[c.i] for c in token.children
                        if c.dep_ == "appos" and ids.get(c.i) not in (None, ids[head.i])), None) if after_verb else None
            add(owner if owner is not None else _kin_owner(head, ids), ids[head.i] if own is None else own, token)
        else:  # "my wife, Ana"; "my cousin from Tripoli, Nour" (the name read as apposed to the place)
            for name in (c for c in token.subtree if c.dep_ == "appos" and c.i in ids and (
                    c.head.i == token.i or c.head.dep_ == "pobj" and c.head.head.head.i == token.i
                    and types[ids.get(c.head.i, ids[c.i])] != "person")):
                add(_kin_owner(token, ids), ids[name.i], token)
    return out


def named_after(before, sentence, types: Sequence[str]) -> list[tuple[int, int, str, list[str]]]:
    """(owner, person, kin word, its modifiers): a relative brought up without a name ("I have a
    younger sister", "X has a new boyfriend") and named by the next clause or sentence ("her name is
    Y", "his name's Y"). The kin word is the last unnamed one before the naming."""
    doc = parse(sentence.text)
    ids = _token_ids(sentence)
    naming = next((t for t in doc if t.lemma_.lower() == "name" and t.dep_ == "nsubj" and t.head.lemma_ == "be"
                   and any(c.dep_ == "poss" and c.lower_ in ("his", "her") for c in t.children)), None)
    if naming is None:
        return []
    if any(t.pos_ == "NOUN" and any(c.dep_ == "poss" and c.lower_ in ("his", "her") for c in t.children)
           for t in doc[:naming.i]):
        return []  # "I have a son. His best friend is always over, his name is X": the friend's name
    other_sex = MALE_KIN if any(c.lower_ == "her" for c in naming.children) else FEMALE_KIN
    name = next((ids[c.i] for c in naming.head.children if c.dep_ in ("attr", "acomp", "dobj", "oprd")
                 and c.i in ids and types[ids[c.i]] == "person"), None)
    if name is None:
        return []
    for said, upto in ((sentence, naming.i), (before, None)):
        if said is None:
            continue
        said_doc, said_ids = parse(said.text), _token_ids(said)
        # "I have a brother and a sister. Her name is …": the last one the pronoun fits
        nouns = [t for t in said_doc[:upto] if _kin_noun(t) and t.lemma_.lower() not in other_sex
                 and (object_ := t.head if t.dep_ == "conj" else t).dep_ == "dobj"
                 and object_.head.lemma_ in ("have", "get")
                 and any(c.dep_ == "det" and c.lower_ in ("a", "an", "another") for c in t.children)
                 and not any(c.i in said_ids for c in t.subtree)]
        if nouns:
            noun = nouns[-1]
            verb = noun.head.head if noun.dep_ == "conj" else noun.head
            owner = next(iter(_subjects(verb, said_ids, _elided_subject(said))), None)
            if owner is None or owner == name or owner != SPEAKER and types[owner] != "person" or any(
                    c.dep_ == "neg" for c in verb.children):
                return []
            mods = [c.lower_.rstrip("-") for c in noun.children if c.dep_ in ("amod", "compound", "nmod")
                    and c.lower_.rstrip("-") in KIN_MODIFIERS]
            return [(owner, name, noun.lemma_.lower(), mods)]
    return []


# "got married to", "engaged to", "married X": the partner, whatever stands between
_PARTNERING = {"marry": "spouse_of", "wed": "spouse_of", "engage": "engaged_to"}
# ... and said as an adjective the parser leaves unlemmatized ("On 12 May I was married to X")
_PARTNERED = {"married": "spouse_of", "engaged": "engaged_to"}
_SEPARATING = frozenset({"separate", "divorce"})
# "my engagement to X", "announce his marriage to X": the partnership said as a noun
_PARTNER_NOUNS = {"marriage": "spouse_of", "engagement": "engaged_to"}
# verbs that make such a noun their object and may take the partner's "to" ("announce my marriage to X")
_ANNOUNCING = frozenset({"announce", "celebrate", "confirm"})
# what says such a partnership is not current: "my marriage to X ended", "is over", "was annulled"
_PARTNERSHIP_ENDS = frozenset({"end", "over", "break", "fail", "annul", "collapse", "dissolve", "call", "cancel",
                               "off", "apart", "through", "last", "dead", "mistake", "more", "fall"})
# verbs by which an engagement is arranged with someone ("Engagement fixed with X")
_ARRANGING = frozenset({"fix", "arrange", "finalise", "finalize", "settle", "seal"})
# ... and what on the noun says it was: "my first marriage to X", "her previous engagement"
_PARTNERSHIP_WAS = frozenset({"former", "previous", "first", "ex", "short", "brief", "old"})
# what a separation said under these is not ("I wonder if ...", "rumours that ... were false")
_DOUBTED = frozenset({"wonder", "doubt", "rumour", "rumor", "believe", "deny", "ask", "guess", "suppose", "false",
                      "pretend", "joke", "dream", "imagine", "worry", "fear", "assume", "expect"})


def _partner_named(token, ids: dict[int, int]) -> int | None:
    """The person a partner noun or name stands for: itself, the name apposed to it, or the name it
    is called ("a nurse called X")."""
    named = _named(token, ids)
    if named is not None:
        return named
    return next((ids[g.i] for c in token.children if c.dep_ == "acl" and c.lemma_.lower() in _NAMING_VERBS
                 for g in c.children if g.dep_ in ("oprd", "dobj", "attr") and g.i in ids), None)


def partner_links(sentence, types: Sequence[str]) -> list[tuple[int, str, int]]:
    """(person, relation, partner) of a marriage or engagement the parse ties, said with phrases
    between the verb and the partner ("got married in Lisbon last spring, to a sailor called X")."""
    if not any(i is not None and types[i] == "person" for i in sentence.ids):
        return []
    doc = parse(sentence.text)
    ids = _token_ids(sentence)
    data = frames()
    out = []
    for verb in doc:
        if verb.lemma_.lower() == "propose" and verb.pos_ == "VERB":
            out += _proposal(verb, ids, types)
            continue
        if verb.lemma_.lower() in _SEPARATING and verb.pos_ == "VERB" and not any(
                c.dep_ in ("prep", "dobj") or c.dep_ in ("neg", "aux", "advmod", "mark") and (
                    c.lower_ in data.modifiers or c.lower_ in ("if", "whether")) for c in verb.children) and not any(
                a.lemma_.lower() in data.blocked | _DOUBTED for a in verb.ancestors):
            # "(sorry to hear that) Ana and Rui have separated": a couple, wherever the clause hangs
            couple = [s for s in _subjects(verb, ids, _elided_subject(sentence)) if types[s] == "person"]
            if len(couple) == 2:
                out.append((couple[0], "former_partner_of", couple[1]))
            continue
        if verb.lower_ in _PARTNER_NOUNS and verb.pos_ in ("NOUN", "PROPN"):
            out += _partnership_named(verb, ids, types, sentence)
            continue
        if (dating := _dating(verb, ids, types)) is not None:
            # "been seeing X, he's lovely": an opening clause without a subject is the writer's
            who = [_elided_subject(sentence)] if _opens_without_subject(verb) else _subjects(
                verb, ids, _elided_subject(sentence))
            out += [(s, "partner_of", dating) for s in who if s != dating and (s == SPEAKER or types[s] == "person")]
            continue
        rel = _PARTNERING.get(verb.lemma_.lower()) or (
            _PARTNERED.get(verb.lower_) if verb.pos_ == "ADJ" and _said_married_now(verb) else None)
        if rel is None or verb.pos_ not in ("VERB", "ADJ") or any(
                c.dep_ in ("neg", "aux", "advmod") and c.lower_ in data.modifiers for c in verb.children):
            continue  # "not married", "will marry", "might get engaged"
        partners = [c for c in verb.children if c.dep_ == "dobj"]
        partners += [g for c in verb.children if c.dep_ == "prep" and c.lower_ == "to" for g in c.children
                     if g.dep_ == "pobj"]
        for partner in (_partner_named(p, ids) for p in partners):
            if partner is None or types[partner] != "person":
                continue
            # the subject of "got" in "X got engaged", which the parser at times hangs from the auxiliary
            said = [ids[t.i] for c in verb.children if c.dep_ in ("aux", "auxpass") for g in c.children
                    if g.dep_ in _SUBJECTS for t in (g, *g.children) if t.i in ids and t.dep_ in (*_SUBJECTS, "appos")]
            for subject in said[:1] or _subjects(verb, ids, _elided_subject(sentence)):
                if subject != partner and (subject == SPEAKER or types[subject] == "person"):
                    out.append((subject, rel, partner))
    return out


# "been seeing X", "met someone new, X": a couple begun, said without a word of partners
_WHEN_WORDS = frozenset({"tomorrow", "tonight", "today", "later", "next", "soon", "weekend", "morning", "afternoon",
                         "evening", *WEEKDAYS})


def _dating(verb, ids: dict[int, int], types: Sequence[str]) -> int | None:
    """The person the verb says someone is going out with: the object of "be seeing" with no day
    said ("is seeing a guy named X", "been seeing this lad X"; not "seeing Ana tomorrow", "seeing my
    sister", "seeing Dr. Lee"), or the someone of "met someone (new), X" / "met someone: X"."""
    lemma = verb.lemma_.lower()
    if verb.pos_ != "VERB" or lemma not in ("see", "meet") or any(
            c.dep_ in ("neg", "aux", "advmod", "mark") and c.lower_ in frames().modifiers for c in verb.children):
        return None
    objects = [c for c in verb.children if c.dep_ == "dobj"]
    if lemma == "see":
        if verb.tag_ != "VBG" or not any(c.dep_ == "aux" and c.lemma_ == "be" for c in verb.children) or any(
                t.lower_ in _WHEN_WORDS or t.like_num or t.dep_ == "prep" and t.lower_ not in ("from", "since")
                and not _a_span(t) for t in verb.subtree):
            return None  # not "seeing X at 7", "about the flat", "for dinner" (but "for a few weeks")
        named = [p for p in (_partner_named(o, ids) for o in objects if o.lemma_.lower() not in KINSHIP and not (
            o.lemma_.lower() in OCCUPATIONS or any(c.lower_.rstrip(".") in ("dr", "doctor") for c in o.subtree)))
                 if p is not None]
    else:
        someone = [o for o in objects if o.lower_ in ("someone", "somebody")]
        named = [ids[c.i] for o in someone for c in o.children if c.dep_ == "appos" and c.i in ids]
        doc = verb.doc
        after = [o.i + 1 + (o.i + 1 < len(doc) and doc[o.i + 1].lower_ == "new") for o in someone]
        named += [ids[k + 1] for k in after if k + 1 < len(doc) and doc[k].lower_ in (":", ",") and k + 1 in ids]
    if any(t.dep_ == "relcl" for t in verb.subtree):
        return None  # "met someone, X, who can fix our boiler": someone described, not a partner
    return next((p for p in named if types[p] == "person"), None)


def _a_span(prep) -> bool:
    """"for a few weeks", "for months": a preposition that says how long."""
    return prep.lower_ == "for" and any(t.lemma_.lower() in ("week", "month", "year", "while", "day", "ages")
                                        for t in prep.subtree)


def _partnership_named(noun, ids: dict[int, int], types: Sequence[str], sentence) -> list[tuple[int, str, int]]:
    """"my engagement to X is official", "Y wishes to announce her marriage to X", "Engagement
    fixed with X": the partner after "to" (on the noun, or on a verb of announcing it), or after "with"
    on a verb of arranging it; the other one the noun's "my" / "X's" / "his" / "her" (the subject of
    the verb of announcing), else the writer of a note that opens with it. Not a speaking or social
    engagement, an appointment with someone, one said to have ended, nor one of a list."""
    data = frames()
    head = noun.head if noun.dep_ != "ROOT" else noun
    around = [*noun.children, head, *head.children, *noun.ancestors]
    if any(t.lemma_.lower() in data.blocked | _DOUBTED or t.lower_ in data.modifiers for t in around) or any(
            t.lemma_.lower() in _PARTNERSHIP_ENDS or t.lower_ in _PARTNERSHIP_ENDS
            for t in (*noun.children, *head.subtree) if t.i != noun.i) or any(
            t.lower_ in _PARTNERSHIP_WAS or t.dep_ in ("compound", "amod", "nmod") for t in noun.children) or (
            head is not noun and any(c.lower_ in _PARTNERSHIP_WAS for c in head.children)):  # "... was short"
        return []
    preps = [c for c in noun.children if c.dep_ == "prep" and c.lower_ == "to"]
    if noun.dep_ == "dobj" and head.lemma_.lower() in _ANNOUNCING:  # "to announce his marriage to X"
        preps += [c for c in head.children if c.dep_ == "prep" and c.lower_ == "to"]
    # "Engagement fixed with X", "our engagement was arranged with X"
    arranged = [c for c in noun.children if c.dep_ == "acl"] + ([head] if noun.dep_ in _SUBJECTS else [])
    with_arranged = [p for v in arranged if v.lemma_.lower() in _ARRANGING for p in v.children
                     if p.dep_ == "prep" and p.lower_ == "with"]
    preps += with_arranged
    if any(t.dep_ == "prep" and t.lower_ == "as" for p in preps for t in p.head.children):
        return []  # "my engagement with X as her assistant": a post
    # the name itself, or hung on the post said after it ("to Ms. X, staff nurse at Y", read as X's nurse)
    objects = [g for p in preps for g in p.children if g.dep_ == "pobj"]
    if any(c.dep_ == "conj" for g in objects for c in g.children):
        return []  # "fixed with X and Y": two people, no one partner
    partners = [_named(g, ids) if _named(g, ids) is not None
                else next((ids[c.i] for c in g.children if c.dep_ == "nmod" and c.i in ids), None) for g in objects]
    partners = [p for p in partners if p is not None and types[p] == "person"]
    if len(partners) != 1:
        return []
    owner = next((c for c in noun.children if c.dep_ == "poss"), None)
    if owner is not None:
        owners = [ids[owner.i]] if owner.i in ids else (
            [o for o in _subjects(head, ids, _elided_subject(sentence)) if not _of_other_sex(o, owner, ids)]
            if owner.lower_ in ("his", "her") and head.lemma_.lower() in _ANNOUNCING else [])
    else:  # "Engagement fixed with X": the writer's, said as a note; not "the engagement with X"
        owners = [_elided_subject(sentence)] if with_arranged and (noun.dep_ == "ROOT" or noun.i == 0) else []
    rel = _PARTNER_NOUNS[noun.lower_]
    return [(o, rel, partners[0]) for o in owners[:1] if o != partners[0] and (o == SPEAKER or types[o] == "person")]


def _of_other_sex(entity: int, pronoun, ids: dict[int, int]) -> bool:
    """"Maria announced his engagement": a given name of one sex only, and the pronoun of the other."""
    first = next((t.lower_ for t in pronoun.doc if ids.get(t.i) == entity and t.is_alpha), "")
    only = (FEMALE_NAMES - MALE_NAMES) if pronoun.lower_ == "his" else (MALE_NAMES - FEMALE_NAMES)
    return first in only


def _said_married_now(adjective) -> bool:
    """"(On 12 May) I was married to X", "I'm engaged to X", "(I hereby inform the board) that I was
    married to X": the adjective said plainly of the sentence's subject, with at most the day it
    happened; not "I wish I was married to X", "if only ...", "it feels like I'm married to X", "from
    2001 to 2010 I was married to X"."""
    copula = adjective.head
    told = copula.dep_ == "ccomp" and copula.head.lemma_.lower() in _ANNOUNCING | {"inform", "notify"}
    return (adjective.dep_ == "acomp" and copula.lemma_ == "be" and (copula.dep_ == "ROOT" or told)
            and all(c.i == adjective.i or c.dep_ in ("nsubj", "nsubjpass", "punct") or c.dep_ == "prep"
                    and c.lower_ == "on" or told and c.dep_ == "mark" and c.lower_ == "that" for c in copula.children)
            and all(c.dep_ in ("prep", "punct") for c in adjective.children))


_ACCEPTED = re.compile(r"\b(?:said\s+yes|accepted)\b|\b(?:engaged|engagement)\b", re.I)
_WRITER_ACCEPTED = re.compile(r"\b(?:i|we)\s+(?:said\s+yes|accepted)\b|\bwe(?:'re|\s+are)\s+engaged\b", re.I)


def _proposal(verb, ids: dict[int, int], types: Sequence[str]) -> list[tuple[int, str, int]]:
    """"X proposed to Y and she said yes", "X proposed last night and I said yes": an engagement,
    when the sentence says the proposal was accepted; the one proposed to is named, or is the
    writer who accepted. A proposal alone may have been refused: it links no one."""
    if not _ACCEPTED.search(verb.doc.text):
        return []
    subjects = [i for i in _subjects(verb, ids, SPEAKER) if i is not None]  # "My brother Enzo proposed"
    if not subjects or (subjects[0] != SPEAKER and types[subjects[0]] != "person") or any(
            c.dep_ == "neg" for c in verb.children):
        return []
    to = [ids[g.i] for c in verb.children if c.dep_ == "prep" and c.lower_ == "to" for g in c.children
          if g.dep_ == "pobj" and g.i in ids]
    if not to and _WRITER_ACCEPTED.search(verb.doc.text):
        to = [SPEAKER]
    return [(to[0], "engaged_to", subjects[0])] if to and to[0] != subjects[0] and (
        to[0] == SPEAKER or types[to[0]] == "person") else []
