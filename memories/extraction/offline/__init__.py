"""Deterministic offline extractor for English: what the write pipeline uses when no LLM is
configured (or both LLM paths fail).

A pure function of its inputs — no database, network or model — built from regular expressions
and small word lists, fast enough to run on every message of a large import. The pipeline:

1. normalize and split the message into sentences (`text`);
2. find proper names, group aliases ("Guili (Guilherme Maturana)"), type entities from context
   (`names`, `entities`);
3. replace mentions by placeholders and resolve he/she/him/her (`entities`);
4. rewrite I/me/my/we as the speaker with verb agreement (`grammar`);
5. per sentence: kinship ("my wife Ana"), clause rules with slots ("moved to Austin" →
   lives_in), and a subject-centric fact for anything else that states something
   (`clauses`, `patterns`, `facts`);
6. with the message time, relative dates in facts are resolved ("yesterday (2023-05-07)",
   `dates`).
"""

from __future__ import annotations

import copy
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime

from memories.extraction.limits import extraction_within_limits
from memories.extraction.offline.classify import is_question
from memories.extraction.offline.corrections import correction_in, split_correction
from memories.extraction.offline.entities import build_registry, gender_of
from memories.extraction.offline.facts import (
    EXPLICIT,
    LETTER_CLOSINGS,
    Collector,
    adopted_pets,
    households,
    linked_by_frames,
    pet_kind_facts,
    process_sentence,
    relatives_named_after,
    signed_post,
)
from memories.extraction.offline.frames import Embed
from memories.extraction.offline.grammar import rewrite_first_person, rewrite_second_person
from memories.extraction.offline.lexicon import FIRST_NAMES, KINSHIP, PARENT_NAMES, PLACE_OTHER_NAMES, sexes_cross
from memories.extraction.offline.parse import cessations, deaths, is_dictionary_word, parse_soon, studies_over
from memories.extraction.offline.pronouns import PronounState, carry_subject, tag_sentence
from memories.extraction.offline.text import SPEAKER, normalize_message, ph, restore_possessives, split_sentences
from memories.extraction.schema import ExtractedCorrection, ExtractedEntity, Extraction
from memories.naming import UPPER_LETTERS, first_names_compatible, in_nickname_table, mentions, title_sex
from memories.roles import PARTNER_SLOT

__all__ = ["Statement", "extract_offline", "parse_ahead", "read_statement"]

DEFAULT_SPEAKER = "User"


def extract_offline(
    message: str,
    *,
    speaker: str,
    recent_messages: Sequence[str] = (),
    known_names: Sequence[str] = (),
    occurred_at: datetime | None = None,
    known_aliases: Mapping[str, str] | None = None,
    known_types: Mapping[str, str] | None = None,
    embed: Embed | None = None,
) -> Extraction:
    """Entities, facts and relations of one chat message, without an LLM.

    `speaker` is who wrote the message (first-person words resolve to it); `recent_messages`
    (oldest first) only help resolve pronouns and recognize names; `known_names` are names the
    agent already knows, recognized even at the start of a sentence and used as canonical forms;
    `occurred_at` is when the message was sent: relative dates in facts ("yesterday", "last
    week", "3 days ago") get the resolved date appended ("yesterday (2023-05-07)");
    `known_aliases` maps other names of known entities found in the message ("Paddy", "Dr.
    Lee", "BofA") to their canonical names, and `known_types` gives the stored type of a
    canonical name, a prior the sentence's own cues can outvote. With `embed` (texts → vectors),
    a person and a place or organization of one clause that no rule or frame links are compared
    with the frames' prototype sentences (the semantic back-off, frames.py).
    """
    speaker = (speaker or "").strip() or DEFAULT_SPEAKER
    text = normalize_message(message or "")
    if not text:
        return Extraction()
    known = [n.strip() for n in known_names if n and n.strip()]
    people = {n for n in known if (known_types or {}).get(n, "person") == "person"}
    text = restore_possessives(text, [*people, *(a for a, n in (known_aliases or {}).items() if n in people),
                                      *_names_said(text)])
    registry, sentences, ctx = build_registry(text, speaker, list(recent_messages), known,
                                              dict(known_aliases or {}), dict(known_types or {}), written=message)
    state = PronounState(registry, ctx, list(recent_messages))
    day = occurred_at.date() if isinstance(occurred_at, datetime) else occurred_at
    out = Collector(registry, day)
    corrections: list[ExtractedCorrection] = []
    denials: set[int] = set()
    listener = _addressee(sentences, registry, sorted(people), text)
    letter = bool(sentences) and _DEAR.match(sentences[0].text) is not None
    # a letter to the writer that someone signs: its "I" and "we" are the signer's, not the writer's
    signer = letter_signer(text, registry) if listener == SPEAKER else None
    # the lines under the signature ("Head of Lettings, ⟨org⟩", an address) are the signer's, never the
    # writer's: skipped up to a next letter's "Dear"
    letter_end = _letter_end(sentences) if listener == SPEAKER else len(sentences)
    under_signature = _under_signature(sentences, letter_end)
    for k, sentence in enumerate(sentences):
        if k in denials or k in under_signature:
            continue  # the "Not Braga." of "It's Porto. Not Braga."
        in_letter = k <= letter_end  # what the writer says after a letter they pasted is their own again
        if in_letter and listener == SPEAKER and signer is None and _SAID_IN_FIRST_PERSON.search(sentence.text):
            continue  # a letter to the writer that no one we can name signs: its "I" is no one we know
        plain = tag_sentence(sentence, state)
        if signer is not None and in_letter:
            plain, _ = rewrite_first_person(plain, signer)
        addressed = rewrite_second_person(plain, listener) if listener is not None and (
            in_letter or listener != SPEAKER) else plain
        sentence.tagged = addressed
        carry_subject(sentence, sentences[k - 1] if k else None, registry)
        pair = correction_in(sentence.tagged)
        if pair is None and k + 1 < len(sentences):
            following = sentences[k + 1]
            pair = split_correction(sentence.tagged, following.text,
                                    [(m.text, i) for m, i in zip(following.mentions, following.ids, strict=True)])
            if pair is not None:
                denials.add(k + 1)
        if pair:
            right, wrong = _whole_names(registry, *pair, known_names)
            corrections.append(ExtractedCorrection(wrong=registry.names()[wrong], right=registry.names()[right]))
            out.used.update((right, wrong))
            continue  # "Sorry, I meant Oak Lawn, not Elmhurst" states nothing new of its own
        kept = copy.deepcopy((out.facts, out.relations, out.used, out.implied, out.people_before, out.engaged)) if (
            addressed != plain) else None
        _read_sentence(sentence, out, embed)
        if kept is not None and not _said_of(out, listener, kept[0], kept[1], letter):
            # the listener's "you" gave no state of theirs ("Good to see you"): read as it was said
            out.facts, out.relations, out.used, out.implied, out.people_before, out.engaged = kept
            sentence.tagged = plain
            carry_subject(sentence, sentences[k - 1] if k else None, registry)
            _read_sentence(sentence, out, embed)
    if listener != SPEAKER:  # "Dear Ruth, … Dr P. Brisco": her father's letter to her, not her own
        _own_signature(text, registry)
    _greeted_in_full(sentences, registry, out)
    if registry.entities[SPEAKER].aliases:
        # a name of the writer's this message gives ("Mr Tolland" of a letter, "Dr N. Kellaway" signed, "my name
        # is now …") is kept, though the message says nothing else of them
        out.used.add(SPEAKER)
    adopted_pets(sentences, out)
    relatives_named_after(sentences, out)
    pet_kind_facts(out, " ".join(s.tagged for s in sentences))
    _other_names_of_known(sentences, out)
    _addressed_known(sentences, registry, out, {n.lower() for n in people}, people)
    out.drop_overridden()
    entities = [
        ExtractedEntity(name=e.name, type=e.type, aliases=_with_city_name(e.name, e.type, e.aliases))
        for i, e in enumerate(registry.entities)
        if i in out.used
    ]
    return Extraction(
        entities=entities, facts=list(out.facts.values()), relations=list(out.relations.values()),
        corrections=corrections,
    )


_GREETED = re.compile(r"^\W*(?:dear|hi|hey|hello|hiya|congrats|congratulations)\W*(?:(?:mr|mrs|ms|miss|mx|dr)\.?\s+)?$",
                      re.I)  # "Dear Ms Vogel," where "Vogel" is a name the agent knows
_LETTER_OR_NEWS = re.compile(r"^\W*dear\b|\bcongrat", re.I)
_YOU = re.compile(r"\b(?:you|your|yours)\b", re.I)
_ANOTHER_AFTER = re.compile(r"\s*(?:and|&|,\s*[A-Z])")


def _addressee(sentences, registry, others: Sequence[str] = (), written: str = "") -> int | None:
    """The one person a letter ("Dear Ms. Abbott, your lease …") or a message of congratulations
    ("Hi Tom, congrats on your new job at …") is addressed to by name: "you" and "your" in it are
    theirs. None for several ("Dear Ana and Rui"), or for a greeting that brings no news of them
    ("Hi Lou! So nice to catch up")."""
    text = written or " ".join(s.text for s in sentences)
    if not sentences or not _LETTER_OR_NEWS.search(" ".join(s.text for s in sentences[:2])) or not _YOU.search(text):
        return None
    first = sentences[0]
    greeted = [m for m, idx in zip(first.mentions, first.ids, strict=True)
               if (idx is None and m.vocative or idx is not None and m.known) and _GREETED.match(first.text[:m.start])]
    writer = registry.entities[SPEAKER].name
    if len(greeted) == 1 and not _ANOTHER_AFTER.match(first.text, greeted[0].end) and _own_name_greeted(
            greeted[0].known or greeted[0].text.strip(), writer, text, others):
        return SPEAKER
    # one person, by a given name or a title ("Dear Team", "Dear Customer" are no one; "Hi Tom, Ana," two)
    if len(greeted) != 1 or _ANOTHER_AFTER.match(first.text, greeted[0].end) or not (
            greeted[0].honorific or " " in greeted[0].text.strip() or greeted[0].text.lower() in FIRST_NAMES
            or greeted[0].known or not is_dictionary_word(greeted[0].text.lower())):
        return None
    mention = greeted[0]
    name = mention.known or mention.text.strip()
    if _to_the_writer(name, writer, text):
        registry.add_alias(SPEAKER, name)  # "Dear Mr Tolland" pasted by Oliver Tolland: his name in letters
        return SPEAKER
    idx = registry.lookup(name)
    if idx is None:
        idx = registry.ensure(name)
        registry.entities[idx].forced = "person"
    return idx if idx != SPEAKER and registry.is_person(idx) else None


# "Yours sincerely, Daniel Okoro": who signs a letter
_SIGNED = re.compile(
    rf"\b(?i:(?:{LETTER_CLOSINGS})\s*,\s*|(?:best|cheers|thanks|love|warmly|all\s+the\s+best)\s*,?[ \t]*\n\s*)"
    rf"(?P<title>(?i:mr|mrs|ms|miss|dr|prof)\.?\s+)?(?P<name>[{UPPER_LETTERS}][\w.'’-]*(?:\s+[{UPPER_LETTERS}][\w'’-]*)*)"
    )  # an e-mail's "Best,\nDan" too, on a line of its own; a name in capitals
_TITLE = re.compile(r"^(?:mr|mrs|ms|miss|mx|dr|prof)\.?\s+", re.I)


def _to_the_writer(name: str, writer: str, text: str) -> bool:
    """"Dear Ms. Mould, … Yours sincerely, Daniel Okoro" pasted by Kezia Mould: a letter to the writer,
    by her title and family name, signed by someone else. Its "you" and "your" are hers.
    Not "Dear Mr. Mould" from a writer whose given name is a woman's (or of no sex we know), nor a letter
    she signs herself."""
    bare = _TITLE.sub("", name).strip()
    family = writer.split()[1:]
    title = _TITLE.match(name)
    if not title or " " in bare or not family or bare.lower() != family[-1].lower():
        return False
    said = title_sex(name)
    if said and gender_of(writer.split()[0].lower()) != said:
        return False  # "Dear Mr. Mould" pasted by Hannah Mould (or by Sam Mould, of either sex): another's letter
    return _SIGNED.search(text) is not None and not _signed_by_the_writer(writer, text)


def _signed_by_the_writer(writer: str, text: str) -> bool:
    """A letter the writer signs: after a closing ("Yours, Kezia Mould"), or by her given name as
    its last words ("… Love, Kezia", "… — Kez")."""
    signed = _SIGNED.search(text)
    last = re.split(r"[,\n—–]", text.strip().rstrip(".!x "))[-1].split()
    names = signed["name"].split("\n")[0].split() if signed is not None else last if len(last) <= 2 else []
    if not names:
        return False
    given, family = writer.split()[0], writer.split()[1:]
    if len(names) > 1 and family and names[-1].lower() != family[-1].lower():
        return False  # "Marta Ilves": someone else
    said = names[0].rstrip(".")
    # "Kezia", "Kez", "K. Mould" (not "Dr P. Brisco" to Ruth Brisco, her father)
    return said.lower() == given.lower() or first_names_compatible(said, given, either_way=False) or (
        len(said) == 1 and len(names) > 1 and said.lower() == given[0].lower())


def _own_name_greeted(name: str, writer: str, text: str, others: Sequence[str] = ()) -> bool:
    """"Dear Oliver, … Best wishes, Marta Ilves" pasted by Oliver Tolland: a letter to the writer by his
    own given name or full name, signed by someone else (no one writes "Dear Oliver" to himself). Not
    "Dear Sarah, … Lots of love" (no one signs: a letter to a friend of her name, perhaps), nor by a given
    name another person the agent knows has too (`others`)."""
    words = [w.lower() for w in writer.split()]
    if not words or [w.lower() for w in name.split()] not in (words[:1], words) or _signed_by_the_writer(writer, text):
        return False
    return _SIGNED.search(text) is not None and (len(name.split()) > 1 or not any(
        o.lower() != writer.lower() and o.split()[0].lower() == words[0] for o in others))


_DEAR = re.compile(r"\W*dear\b", re.I)  # a letter's opening
_SALUTATION = re.compile(r"\W*dear\s+(?P<who>[^,:\n]{3,120})(?:[,:\n]|$)", re.I)


def _greeted_in_full(sentences, registry, out: Collector) -> None:
    """"Dear Mrs Wenonah Dunstable and Mr Orrin Dunstable, …": the people a letter greets by their full
    names are kept, with the titles they are greeted by ("Mrs Dunstable"), though it says nothing else
    of them: later letters name them so."""
    first = sentences[0] if sentences else None
    greeting = _SALUTATION.match(first.text) if first is not None else None
    if greeting is None:
        return
    for mention, idx in zip(first.mentions, first.ids, strict=True):
        if idx is None or idx == SPEAKER or mention.start >= greeting.end("who") or not registry.is_person(idx):
            continue
        if len(_TITLE.sub("", registry.entities[idx].name).split()) >= 2:
            out.used.add(idx)


def _own_signature(text: str, registry) -> None:
    """"Yours sincerely, Dr N. Kellaway" signed by Norah Kellaway: the form she signs with (a title, an
    initial for her given name) is a name of hers."""
    signed = _SIGNED.search(text)
    writer = registry.entities[SPEAKER].name.split()
    if signed is None or len(writer) < 2:
        return
    said = ((signed["title"] or "") + signed["name"]).split("\n")[0].strip()
    words = _TITLE.sub("", said).split()
    if len(words) != 2 or words[1].lower() != writer[-1].lower() or said.lower() == " ".join(writer).lower():
        return
    if _signs_as(" ".join(writer), " ".join(words), signed["title"] or ""):  # not her husband's "Mr A. Brown"
        registry.add_alias(SPEAKER, said)


_SAID_IN_FIRST_PERSON = re.compile(
    r"\b(?:I|I'm|I've|I'll|I'd|[Mm]e|[Mm]y|[Mm]ine|[Ww]e|[Ww]e're|[Ww]e've|[Uu]s|[Oo]urs?)\b")  # not "the US"
_CLOSING = re.compile(_SIGNED.pattern.split("(?P<title>")[0])


def _letter_end(sentences) -> int:
    """The sentence of a letter's signature: the closing with the name, or the name after the closing."""
    for k, sentence in enumerate(sentences):
        if _SIGNED.search(sentence.text):
            return k
        if _CLOSING.search(sentence.text + "\n"):
            return k + 1
    return len(sentences)


def _under_signature(sentences, end: int) -> set[int]:
    """The short lines under a letter's signature ("Head of Lettings, ⟨org⟩", an address): not what
    the writer goes on to say after the letter ("So happy!! My sister …"), nor a next letter."""
    out = set()
    for k in range(end + 1, len(sentences)):
        text = sentences[k].text
        if len(text.split()) > 8 or _SAID_IN_FIRST_PERSON.search(text) or _DEAR.match(text):
            break
        out.add(k)
    return out


def letter_signer(text: str, registry) -> int | None:
    """Who signs a letter ("Yours sincerely, Dr N. Kellaway"): the person of the message by that name."""
    signed = _SIGNED.search(text)
    if signed is None:
        return None
    name = signed["name"].strip().split("\n")[0].strip()  # "Mr T. Ilves\nHead of Lettings": his post below
    idx = registry.lookup(name)
    if idx is None:
        idx = next((i for i, e in enumerate(registry.entities)
                    if i != SPEAKER and registry.is_person(i) and _signs_as(e.name, name, signed["title"] or "")), None)
    if idx is None and _like_a_signer(name):
        # "Mr A. Keverne", whom the message names nowhere else: with his title, which no "Alice" bears
        idx = registry.ensure(f"{signed['title'].strip()} {name}" if signed["title"] else name)
        registry.entities[idx].forced = "person"
    return idx if idx != SPEAKER and idx is not None and registry.is_person(idx) else None


def _like_a_signer(name: str) -> bool:
    """A person's name under a letter ("Mr A. Keverne", "Marta Ilves"), not "The Admissions Team"."""
    words = name.split()
    return 2 <= len(words) <= 3 and not any(is_dictionary_word(w.lower()) and w.lower() not in FIRST_NAMES
                                            for w in words[1:]) and (
        re.fullmatch(r"[^\W\d_]\.?", words[0]) is not None or words[0].lower() in FIRST_NAMES
        or not is_dictionary_word(words[0].lower()))


def _signs_as(person: str, signed: str, title: str) -> bool:
    """Whether `person` ("Norah Kellaway") may sign as `signed` ("N. Kellaway", "Norah Kellaway") with
    `title`: the same family name, the given name or its initial, and a title that fits her sex (not
    "Mr A. Keverne" for Alice Keverne)."""
    words, said = person.split(), signed.split()
    if len(words) < 2 or len(said) != 2 or words[-1].lower() != said[-1].lower():
        return False
    given = said[0].rstrip(".").lower()
    if given != words[0].lower() and not (len(given) == 1 and words[0][0].lower() == given):
        return False
    sex, titled = gender_of(words[0].lower()), title_sex(f"{title.strip()} {signed}")
    return not (sex and titled and sex != titled)


def _read_sentence(sentence, out: Collector, embed: Embed | None) -> None:
    """What one tagged sentence says, into `out`."""
    before = set(out.relations)
    process_sentence(sentence, out)
    linked_by_frames(sentence, out, embed)
    households(sentence, out, before)
    signed_post(sentence, out)
    _attach_cessations(sentence.text, out.registry, out)
    _attach_deaths(sentence.text, out.registry, out)
    _attach_studies_over(sentence.text, out.registry, out)


def _said_of(out: Collector, listener: int, facts_before, relations_before, letter: bool = False) -> bool:
    """Whether the sentence just read gave the listener a state: a relation, or a fact with a slot or
    an ending; in a letter, also anything it says of them ("your blood tests show …", "referred you to …")."""
    name = out.registry.names()[listener]
    new_facts = [f for key, f in out.facts.items() if key not in facts_before]
    return any(listener in (s, t) for (s, _, t) in set(out.relations) - set(relations_before)) or any(
        f.subject == name and (f.slot or f.negated or f.ends) for f in new_facts) or letter and any(
        re.search(rf"(?<!\w){re.escape(name)}(?!\w)", f.text) for f in new_facts)


_CAPITALIZED = re.compile(rf"(?<![\w'’])[{UPPER_LETTERS}][^\W\d_]{{2,}}(?![\w'’])")


def _names_said(text: str) -> list[str]:
    """Capitalized words of the message that no dictionary holds, or that are given names ("Tomek",
    "Beto"): the names a chat possessive without its apostrophe may be made of."""
    return [w for w in _CAPITALIZED.findall(text) if w.lower() in FIRST_NAMES or not is_dictionary_word(w.lower())]


@dataclass(frozen=True)
class Statement:
    """What a stand-alone statement about one subject says, read as a write would read it: the
    slot it fills and its value ("Helena works at Vertix" → works_at, Vertix), and the relations
    between the subject and others it states, with the others' types."""

    slot: str = ""
    value: str = ""
    relations: tuple[tuple[str, str, str], ...] = ()  # (source, rel_type, target), one end the subject
    types: Mapping[str, str] = field(default_factory=dict)  # name → entity type


def _with_city_name(name: str, entity_type: str, aliases) -> list[str]:
    """A place's names, with the city's own name when it is named another way ("Lisboa" is
    Lisbon, "Saigon" Ho Chi Minh City): either name then finds the one place."""
    city = PLACE_OTHER_NAMES.get(name.lower()) if entity_type == "place" else None
    return [*aliases, city] if city and city not in aliases else list(aliases)


def parse_ahead(message: str) -> None:
    """Start parsing the message's sentences on the parser's own thread: `extract_offline` then
    finds them parsed, or waits for the parse under way instead of doing it again."""
    parse_soon(split_sentences(normalize_message(message or "")))


def read_statement(text: str, *, subject: str, known_names: Sequence[str] = ()) -> Statement:
    """Read `text` as `subject`'s own statement (an operator's corrected fact, a reinstated one).
    What cannot be stored (a name longer than a name can be) is left out, as a write leaves it."""
    extraction = extract_offline(text, speaker=subject, known_names=[subject, *known_names])
    extraction_within_limits(extraction)
    fact = next((f for f in extraction.facts if f.slot and not f.negated), None)
    relations = tuple((r.source, r.rel_type, r.target) for r in extraction.relations if subject in (r.source, r.target))
    return Statement(slot=fact.slot if fact else "", value=fact.value if fact else "", relations=relations,
                     types={e.name: e.type for e in extraction.entities})


def _whole_names(registry, right: int, wrong: int, known_names: Sequence[str]) -> tuple[int, int]:
    """"His surname is Varga, not Vargas": a corrected word of the one full name that carries it
    ("Tomas Vargas") corrects that name, to the same name with the right word ("Tomas Varga")."""
    names = registry.names()
    right_word, wrong_word = names[right], names[wrong]
    if len(wrong_word.split()) != 1:
        return right, wrong
    has_word = re.compile(rf"(?<![\w'’-]){re.escape(wrong_word)}(?![\w'’-])", re.I)
    full = {n for n in [*known_names, *names[1:]] if len(n.split()) > 1 and has_word.search(n)}
    if len(full) != 1:
        return right, wrong
    wrong_full = full.pop()
    if len(right_word.split()) > 1:  # the right word already read as its whole name ("Varga": Tomas Varga)
        return (right, registry.ensure(wrong_full)) if _one_word_apart(wrong_full, right_word) else (right, wrong)
    wrong_idx = registry.ensure(wrong_full)
    right_idx = registry.ensure(has_word.sub(right_word, wrong_full))
    if registry.entities[wrong_idx].type != "concept":
        registry.entities[right_idx].forced = registry.entities[wrong_idx].type
    return right_idx, wrong_idx


def _one_word_apart(a: str, b: str) -> bool:
    """"Tomas Vargas" / "Tomas Varga": the same number of words, all but one the same."""
    wa, wb = a.lower().split(), b.lower().split()
    return len(wa) == len(wb) and sum(x != y for x, y in zip(wa, wb, strict=True)) == 1


_FIRST_PERSON = frozenset({"", "i", "we", "me", "us"})


_INITIAL_AND_NAME = re.compile(rf"[{UPPER_LETTERS}]\.\s+[{UPPER_LETTERS}][\w'’-]+")


def _other_names_of_known(sentences, out: Collector) -> None:
    """A known person signing with an initial ("Yours sincerely, H. Whitby" for Hugo Whitby) is kept
    even where the sentence states nothing of them: the write learns the other name. Not in a question
    ("any books by A. Smith?" asks about someone else)."""
    for sentence in sentences:
        if is_question(sentence.text):
            continue
        for mention, idx in zip(sentence.mentions, sentence.ids, strict=True):
            if (idx is not None and idx != SPEAKER and mention.known
                    and _INITIAL_AND_NAME.fullmatch(mention.text.strip())):
                out.used.add(idx)


def _addressed_known(sentences, registry, out: Collector, people: set[str], named: set[str] = frozenset()) -> None:
    """"Congrats Han!!", "Danny!!!", "Bex, your old boss called": a known person addressed or named by a
    short name of theirs is kept with it, though nothing is said of them: the write learns the other name."""
    for sentence in sentences:
        for mention, idx in zip(sentence.mentions, sentence.ids, strict=True):
            said = mention.text.strip()
            # "Ros, the vet rang for you": a name set off at the start, or called out
            addressed = mention.vocative or not sentence.text[:mention.start].strip(" \"'(") and (
                sentence.text[mention.end:].lstrip().startswith(","))
            if idx is not None and (idx in out.used or len(sentence.mentions) > 1 and not addressed):
                continue  # named where something is said of them, or beside others: the message's own reading stands
            known = mention.known or (_short_form_of_one(said, named, registry.entities[SPEAKER].name)
                                      if addressed else "")
            if (known and " " not in said and said.lower() != known.lower()
                    and known.lower() != registry.entities[SPEAKER].name.lower()
                    and said.lower() not in KINSHIP and said.lower() not in PARENT_NAMES
                    and known.lower() in people):
                idx = registry.ensure(known)
                registry.entities[idx].forced = registry.entities[idx].forced or "person"
                registry.add_alias(idx, said)
                out.used.add(idx)


def _short_form_of_one(said: str, people: set[str], writer: str) -> str:
    """The one known person, not the writer, whose given name `said` is a short form of ("Ros, the vet
    rang for you": Rosalind Varga); "" when none or several."""
    if said.lower() in FIRST_NAMES and not in_nickname_table(said.lower()):
        return ""  # a name of its own ("Marco") is no short form of another
    fits = {p for p in people if " " in p and p.lower() != writer.lower() and said.lower() != p.split()[0].lower()
            and first_names_compatible(said, p.split()[0], either_way=False)
            and not sexes_cross(said.lower(), p.split()[0].lower())}
    return next(iter(fits)) if len(fits) == 1 else ""


def _attach_cessations(text: str, registry, out: Collector) -> None:
    """What the sentence says someone stopped ("I gave up golf") rides on that subject's fact
    from this message; a subject the message does not name (he, she) stays unresolved."""
    for subject_text, terms in cessations(text):
        subject = SPEAKER if subject_text.lower() in _FIRST_PERSON else registry.lookup(subject_text)
        if subject is None:
            continue
        name = registry.entities[subject].name
        fact = next((f for f in reversed(out.facts.values()) if f.subject == name), None)
        if fact is None:  # "Dr. Ito switched me from X to Y": ride on the fact that names me
            fact = next((f for f in reversed(out.facts.values()) if mentions(f.text, name)), None)
            if fact is None:
                continue
            fact.ends_subject = name
        fact.ends = list(dict.fromkeys([*fact.ends, *terms]))



def _attach_studies_over(text: str, registry, out: Collector) -> None:
    """"graduated!!", said without where: the fact that says it retracts the subject's place of
    study, whichever it is (the write ends it when there is exactly one)."""
    for subject_text in studies_over(text):
        subject = SPEAKER if subject_text.lower() in ("", *_FIRST_PERSON) else registry.lookup(subject_text)
        if subject is None or (subject != SPEAKER and not registry.is_person(subject)):
            continue
        name = registry.entities[subject].name
        fact = next((f for f in reversed(out.facts.values()) if f.subject == name), None)
        if fact is not None and not fact.slot and not fact.ends:
            fact.slot, fact.value, fact.negated = "studies_at", "", True
        else:  # "graduated today!!": too little said for a fact of its own, or one that ends others
            out.fact(subject, f"{ph(subject)} finished {ph(subject)}'s studies", confidence=EXPLICIT,
                     category="biographical_milestone", slot="studies_at", negated=True)


def _attach_deaths(text: str, registry, out: Collector) -> None:
    """"Bob passed away", "my husband died": the fact that says it also retracts the partner slot of
    whoever's partnerships end (the one who died, or the writer whose partner did)."""
    for subject_text in deaths(text):
        subject = SPEAKER if subject_text.lower() in _FIRST_PERSON else registry.lookup(subject_text)
        if subject is None or (subject != SPEAKER and not registry.is_person(subject)):
            continue
        name = registry.entities[subject].name
        fact = next((f for f in reversed(out.facts.values()) if f.subject == name), None)
        if fact is None or (fact.slot and fact.slot != PARTNER_SLOT):
            continue
        fact.slot, fact.value, fact.negated = PARTNER_SLOT, "", True
