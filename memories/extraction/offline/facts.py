"""From one tagged sentence to facts and relations: kinship, clause rules, and the plain
subject-centric fact for everything else."""

from __future__ import annotations

import re
from datetime import date

from memories.extraction.offline.classify import (
    addresses_listener,
    categorize,
    is_hedged,
    is_imperative,
    is_question,
    is_reaction,
    mentions_listener,
    strip_discourse,
)
from memories.extraction.offline.clauses import Clause, analyze, singular_predicate, split_clauses
from memories.extraction.offline.dates import SEASON, annotate_dates, time_said
from memories.extraction.offline.entities import PET_ALT, Registry, Sentence
from memories.extraction.offline.frames import (
    Embed,
    job_moves,
    kin_links,
    moved_out,
    named_after,
    partner_links,
    pet_endings,
    pet_links,
    pet_moves,
)
from memories.extraction.offline.frames import links as frame_links
from memories.extraction.offline.grammar import is_adverb, is_past, rewrite_first_person
from memories.extraction.offline.lexicon import FIRST_NAMES, OCCUPATIONS, word_set
from memories.extraction.offline.parse import (
    is_fragment,
    is_headline,
    note_label,
    opening_verb_without_subject,
    parse,
)
from memories.extraction.offline.patterns import (
    LAST_DAY,
    LEFT_UNNAMED,
    SLOT_TEMPLATES,
    WORKPLACE_RULE,
    RuleMatch,
    kinship_match,
    match_rules,
    scan_employment,
    scan_kinship,
    scan_located_in,
    scan_transfers,
)
from memories.extraction.offline.text import PH, PH_RE, SPEAKER, entity_ids, fact_key, ph, render
from memories.extraction.schema import ExtractedFact, ExtractedRelation
from memories.reconcile import CLOSING_RELATIONS
from memories.roles import ROLE_SLOT_PREFIX, role_slot

EXPLICIT, INFERRED, HEDGED = 0.95, 0.8, 0.6
_WORDS = re.compile(r"\x02\d+\x03|[^\W_][\w']*")
_WHO = re.compile(rf"{PH},?\s+who\s+(?:(?:also|now|still)\s+)?([^,;.!?]+)")
_EMBEDDED = re.compile(
    rf"\b(?:since|when|because|that|after|before|while|if|though|although|until|once|so|as)\s+"
    rf"(?:(?:now|then|also|finally|today|currently)\s+)?{PH}\s+",
    re.I,
)
_SUGGESTION = re.compile(
    r"^(?:(?:really|definitely|probably|totally)\s+)?(?:should|shall|ought|let's)\b", re.I
)
_FUNCTION_WORDS = word_set("""
is was are were be been being am has have had do does did will would can could shall should may might must
it its it's that that's this these those there here so very really too just also even still though a an the
to of in on at for with and or but not no as if then than what all more much some any lol haha yeah
definitely totally absolutely truly super pretty quite such way right now again always never ever
""")
# "is an architect", "was a teacher", "is 34", "is pregnant": one content word is enough after a
# copula when it names a role, an age or a life state.
_ROLE = re.compile(
    r"^(?:(?:also|now|still|actually|just|currently|already|finally|officially|newly)\s+)*"
    r"(?:is|was|has\s+been|had\s+been|used\s+to\s+be|became|becomes|will\s+be)\s+"
    r"(?:(?:also|now|still|actually|currently|already|finally|officially|newly|not|no\s+longer)\s+)*"
    r"(?:(?:an?|the|\x02\d+\x03's)\s+(?P<role>[\w-]+)|(?P<age>\d{1,3})|(?P<state>[a-z]+))"
    r"(?:\s+(?:now|again|too|apparently|these\s+days|nowadays))?\W*$",
    re.I,
)
# "I graduated!", "Mum retired": one verb that is a life event on its own
_LIFE_EVENT = re.compile(
    r"^(?:(?:has|have|had|just|finally|officially|now|also|recently|actually)\s+)*"
    r"(?:graduated|retired|eloped|resigned|remarried|emigrated)\W*$",
    re.I,
)
_NOT_ROLES = word_set("mess wreck bit lot joke thing while one same best worst way kind type sort fan pro")
_STATES = word_set("""
pregnant married engaged retired divorced separated single widowed vegan vegetarian sober unemployed
""")


class Collector:
    """Facts (deduplicated by text), relations (deduplicated) and the entities they use."""

    def __init__(self, registry: Registry, day: date | None = None):
        self.registry = registry
        self.day = day  # the message date: relative dates in facts are resolved against it
        self.facts: dict[str, ExtractedFact] = {}
        self.relations: dict[tuple[int, str, int], ExtractedRelation] = {}
        self.used: set[int] = set()
        self.implied: dict[tuple[int, str, int], str] = {}  # relation → the key of its slot fact
        self.people_before: list[int] = []  # the people named in the previous sentence
        self.engaged: int | None = None  # someone said to be engaged to no one named yet

    def fact(
        self,
        subject: int,
        tagged: str,
        *,
        confidence: float,
        category: str,
        slot: str = "",
        value: int | None = None,
        negated: bool = False,
    ) -> str:
        names = self.registry.names()
        text = render(tagged, names)
        if self.day is not None:
            text = annotate_dates(text, self.day)
        key = fact_key(text)
        if key in self.facts and slot and not self.facts[key].slot and (value is not None or negated):
            known = self.facts[key]  # the sentence said as a statement, now read as the slot it fills
            known.slot, known.value, known.negated = slot, names[value] if value is not None else "", negated
        if not key or key in self.facts:
            return key
        self.used.update([subject, *entity_ids(tagged), *([value] if value is not None else [])])
        self.facts[key] = ExtractedFact(
            subject=names[subject],
            text=text,
            confidence=confidence,
            importance_category=category,
            slot=slot if value is not None or negated else "",  # "left the clinic": a slot, no value
            value=names[value] if value is not None else "",
            negated=negated,
        )
        return key

    def relation(self, source: int, rel_type: str, target: int, *, implied: bool = False, method: str = "") -> None:
        key = (source, rel_type, target)
        if not implied:
            self.implied.pop(key, None)  # said outright too
        if source == target or key in self.relations:
            return
        if implied:
            self.implied[key] = ""
        names = self.registry.names()
        self.used.update([source, target])
        self.relations[(source, rel_type, target)] = ExtractedRelation(names[source], rel_type, names[target],
                                                                       method=method)

    def linked(self, a: int, b: int) -> frozenset[str]:
        """The relations of this message that join a and b (either way)."""
        return frozenset(r for s, r, t in self.relations if {s, t} == {a, b})

    def unlink(self, source: int, rel_type: str, target: int) -> None:
        """Take back a relation of this message: the slot fact that takes it back goes, the one that
        says it stays as a statement."""
        self.relations.pop((source, rel_type, target), None)
        names = self.registry.names()
        slot = CLOSING_RELATIONS.get(rel_type, rel_type)  # "former_employee_of" takes back works_at
        for key, fact in list(self.facts.items()):
            if fact.slot == slot and fact.value == names[target] and fact.subject == names[source]:
                if fact.negated:
                    del self.facts[key]
                else:  # what the sentence said stays, as a statement that fills no slot
                    fact.slot, fact.value = "", ""


    def drop_overridden(self) -> None:
        """An implied relation ("a nurse at ⟨org⟩ in ⟨city⟩" → lives in the city) gives way to
        what the message says outright about the same subject ("I live in ⟨suburb⟩")."""
        stated = {(s, r) for (s, r, t) in self.relations if (s, r, t) not in self.implied}
        for (source, rel_type, target), key in list(self.implied.items()):
            if (source, rel_type) in stated:
                self.relations.pop((source, rel_type, target), None)
                self.facts.pop(key, None)
        # "Ana and her partner Rui have separated": the couple the message names has ended
        for source, rel_type, target in list(self.relations):
            for opened in _ENDED_COUPLES.get(rel_type, ()):
                self.relations.pop((source, opened, target), None)
                self.relations.pop((target, opened, source), None)


_ENDED_COUPLES = {"former_partner_of": ("partner_of", "engaged_to", "spouse_of"), "former_spouse_of": ("spouse_of",)}


# "we" opening a clause ("We relocated to ⟨city⟩", "..., so we're moving to ⟨city⟩")
_WE_SUBJECT = re.compile(r"(?:^|[,;:—–-]\s*|\b(?:and|so|but|then|now|since)\s+)we(?:'re|'ve|'d|'ll)?\s", re.I)
# "we all ...", "we're both ...", "all of us ...": the speaker and the people just named
_WE_GROUP = re.compile(r"\bwe(?:'re|'ve|'d|'ll)?\s+(?:(?:are|were|have|had|will|would)\s+)?(?:all|both)\b|"
                       r"\b(?:all|both)\s+of\s+us\b", re.I)


def process_sentence(sentence: Sentence, out: Collector) -> None:
    if is_question(sentence.text):
        return
    group = _we_group(sentence, out)
    _process(sentence, out, group)
    out.people_before = [i for i in entity_ids(sentence.tagged) if i != SPEAKER and out.registry.is_person(i)]


def households(sentence: Sentence, out: Collector, before: set) -> None:
    """"We moved to ⟨city⟩", "we live in ⟨city⟩": a home of the writer's that the sentence found
    (by a rule or a frame) said with "we" is the household's (the write moves the writer's partner
    with them)."""
    if _WE_SUBJECT.search(sentence.tagged):
        for key in set(out.relations) - before:
            if key[0] == SPEAKER and key[1] == "lives_in":
                out.relations[key].household = True
    # "my aunt lives in ⟨Cork⟩ with her husband ⟨Dermot⟩": whom one lives with lives there too
    homes = [(s, t) for (s, r, t) in set(out.relations) - before if r == "lives_in" and out.registry.is_person(s)]
    if len(homes) == 1:
        subject, place = homes[0]
        for match in _LIVES_WITH.finditer(sentence.tagged):
            if int(match.group("place")) != place:
                continue
            other = int(match.group("who"))
            if other not in (subject, SPEAKER) and out.registry.is_person(other):
                out.relation(other, "lives_in", place, method="frame")


# "... with her husband ⟨Dermot⟩", "w my bf ⟨Kemal⟩" (not "with ⟨Tom⟩'s help")
_LIVES_WITH = re.compile(
    r"\x02(?P<place>\d+)\x03\s+(?:(?:now|together|too)\s+)?(?:with|w/?)\s+(?:(?:my|his|her|their|our|\x02\d+\x03's)\s+)?"
    r"(?:[\w-]+\s+){0,2}?\x02(?P<who>\d+)\x03(?!['’]s)",
    re.I)


# "Yours sincerely, ⟨2⟩, Practice Manager.": a letter signed with a post and no employer
# how a letter closes before its signature ("Yours sincerely,", "Kind regards,")
LETTER_CLOSINGS = (r"yours\s+(?:sincerely|faithfully|truly)|(?:kind|best|warm|warmest)\s+regards|regards|best\s+wishes|"
                   r"with\s+(?:thanks|best\s+wishes)|many\s+thanks")
_SIGNED_WITH_POST = re.compile(
    rf"^(?i:{LETTER_CLOSINGS}|sincerely)\s*,\s*{PH}\s*,\s*"
    r"(?P<post>(?:[A-Z][\w-]*\s+){0,3}[A-Z][\w-]*|\x02\d+\x03)\s*[.'’\"”]*\s*$"  # the post in capitals
)


def signed_post(sentence: Sentence, out: Collector) -> None:
    """A letter signed with a post ("Kind regards, ⟨2⟩, Practice Manager."): the signer holds it, a
    fact of its own, when nothing else in the sentence said who the signer is."""
    match = _SIGNED_WITH_POST.match(sentence.tagged.strip())
    if match is None:
        return
    signer, post = int(match.group(1)), match.group("post")
    if said := PH_RE.fullmatch(post):  # "Headteacher" read as a name of its own
        post = out.registry.names()[int(said.group(1))]
        if out.registry.entities[int(said.group(1))].type in ("place", "organization") or (
                post.split()[0].lower() in FIRST_NAMES):
            return
    if signer == SPEAKER or not out.registry.is_person(signer) or post.split()[-1].lower() not in OCCUPATIONS:
        return
    if any(r[0] == signer for r in out.relations) or any(f.subject == out.registry.names()[signer]
                                                      for f in out.facts.values()):
        return  # "…, Claims Officer, ⟨org⟩": the rules said it
    out.fact(signer, f"{ph(signer)} is the {post}", confidence=EXPLICIT, category="biographical_milestone")


def _we_group(sentence: Sentence, out: Collector) -> list[int]:
    """Who "we all" / "we both" names besides the speaker: the people of the same sentence before
    it, else those of the previous sentence of the message."""
    match = _WE_GROUP.search(sentence.tagged)
    if not match:
        return []
    earlier = [i for i in entity_ids(sentence.tagged[: match.start()]) if i != SPEAKER and out.registry.is_person(i)]
    return list(dict.fromkeys(earlier or out.people_before))


def _process(sentence: Sentence, out: Collector, group: list[int]) -> None:
    text, used_we = rewrite_first_person(strip_discourse(sentence.tagged))
    base = INFERRED if used_we else EXPLICIT
    # "Been seeing a physio named ⟨2⟩": the writer, left out, is who has or sees the one named
    _kinship(f"{ph(SPEAKER)} {text[:1].lower()}{text[1:]}" if _writer_left_out(sentence, text) else text, out)
    _new_doctor(sentence, text, out)
    _partners_said_around(text, out)
    _taken_up(sentence.text, text, out, base)
    _dismissals(text, out, base)
    _job_endings(text, out, base)
    _behind(text, out)
    for inner, outer in scan_located_in(text, out.registry):
        out.relation(inner, "located_in", outer)
    for person, org in scan_employment(text, out.registry):
        out.relation(person, "works_at", org)
        _slot_fact(person, "works_at", org, False, "biographical_milestone", out, base)
    for person, place in scan_transfers(text, out.registry):
        out.relation(person, "lives_in", place)
        _slot_fact(person, "lives_in", place, False, "biographical_milestone", out, base)
    _who_clauses(text, out, base)
    _apposed_posts(text, out, base)
    _address_is(sentence.tagged, out, base)  # before a headline is cut: "New address: ..."
    body = _DISLOCATED.sub(r"\g<s>", strip_discourse(text))  # "⟨1⟩, he's a welder" read as "⟨1⟩'s a welder"
    if not _WORDS.search(body):
        return
    _home_is(body, out, base)
    if aged := _AGE_INTRO.match(body):  # "I'm 66, a librarian at ⟨org⟩" → "I'm 66" + "I'm a librarian at ⟨org⟩"
        subject = int(aged.group("s")) if aged.group("s") else SPEAKER
        out.fact(subject, f"{ph(subject)} is {aged.group('age')}", confidence=base, category="biographical_milestone")
        if aged.group("s") is None and _descriptors(subject, aged.group("rest"), out, base):
            return  # "27, frontend dev at ⟨org⟩, living in ⟨city⟩": the writer, left out
        body = f"{aged.group('lead') or ''}{ph(subject)} is {aged.group('rest')}"
    if intro := _SELF_INTRO.match(body):
        if intro.group("rest").startswith("\x02"):  # "I'm Hannah, I live in ⟨city⟩ ..."
            body = intro.group("lead") + intro.group("rest")
        else:  # "I'm Grace, a solicitor at ⟨org⟩" → "I'm a solicitor at ⟨org⟩"
            body = f"{intro.group('lead')}{ph(int(intro.group('s')))} is {intro.group('rest')}"
            _descriptors(int(intro.group("s")), intro.group("rest"), out, base)
    elif (
        not body.startswith("\x02")
        and any(i != SPEAKER for i in entity_ids(body))  # every rule needs an entity: parse only then
        and is_fragment(sentence.text)
        and _descriptors(SPEAKER, body, out, base)
    ):
        return  # "product designer at ⟨org⟩, living in ⟨city⟩": the speaker, left out
    _embedded_clauses(body, out, base)
    clauses = _clauses(body, out.registry)
    if not any(hits for _, hits in clauses) and (lead := _LEADING_PHRASE.match(body)):
        # "Since the reshuffle ⟨0⟩ reports to ⟨2⟩": the clause read with its phrase of time last
        moved = f"{body[lead.end():].rstrip(' .!')} {lead.group().strip().lower()}"
        again = _clauses(moved, out.registry)
        if any(hits for _, hits in again):
            body, clauses = moved, again
    for clause, _ in clauses:
        if clause is not None:
            _reciprocal(clause, out)
    if any(hits or (clause is not None and LEFT_UNNAMED.match(clause.predicate)) for clause, hits in clauses):
        for clause, hits in clauses:
            if clause is not None:
                if group and hits and clause.subjects == [SPEAKER]:
                    clause = Clause(clause.text, [SPEAKER, *group], clause.predicate, clause.kind)
                _clause_facts(clause, hits, out, base)
    elif own_subjects := _clauses_of_their_own(clauses, out.registry):
        for clause in own_subjects:  # "Had lunch with Bastian, he's a welder now": a fact for each of them
            _clause_facts(clause, [], out, base)
    else:
        _sentence_fact(body, out, base, note=note_label(sentence.text))


_DISLOCATED = re.compile(r"^(?P<s>\x02(?P<i>\d+)\x03)\s*,\s*\x02(?P=i)\x03")


def _clauses_of_their_own(clauses: list[tuple[Clause | None, list[RuleMatch]]], registry: Registry) -> list[Clause]:
    """The clauses of a sentence no rule read, when each after the first names its own subject and each
    says enough, and a person other than the first clause's subject opens a later one: each is a fact of its subject,
    not a part of the first one's. Otherwise none (the sentence stays one fact)."""
    read = [clause for clause, _ in clauses]
    if len(read) < 2 or any(c is None or c.kind in ("owner", "elided") or not _enough_content(c.predicate)
                            for c in read) or any(c.kind != "direct" for c in read[1:]):
        return []  # a clause that takes its subject from the one before stays with it
    first = set(read[0].subjects)
    later = {s for c in read[1:] if c.kind == "direct" for s in c.subjects} - first
    return read if any(registry.is_person(s) for s in later) else []


_ACQUIRED_PET = re.compile(
    # the owners said, or none at the start of a chat sentence ("adopted a kitten!!"): the writer
    # ("guess who got a puppy?": chat's way to say the writer did)
    rf"(?:(?P<owners>{PH}(?:\s*(?:,|and|&)\s*\x02\d+\x03)*)\s+(?:\w+\s+){{0,2}}?|^\W*(?:guess\s+who\s+)?(?:just\s+|finally\s+)?)"
    rf"(?:adopted|adopts?|adopting|got|have|has|"
    # not "still got the plush toy rabbit from grandma": a toy
    rf"rescued|bought|brought(?:\s+home)?|took\s+(?:in|on)|taken\s+(?:in|on)|welcomed)\s+(?:an?|another|our|two|three|\w+)\s+"
    rf"(?:(?!(?:stuffed|toy|plush|soft|cuddly|robot|robotic|fake|ceramic|wooden|inflatable)\b)[\w-]+\s+){{0,2}}?"
    rf"(?:{PET_ALT})s?\b(?!\s*(?:,\s*)?(?:named|called)\b(?!\s+(?:him|her|it)\b))",
    re.I,
)


def adopted_pets(sentences: list[Sentence], out: Collector) -> None:
    """"Dan and I got a dog! He's a brown terrier called Pip": the pet the message names
    afterwards belongs to whoever adopted it (each of a couple), when no one else owns it. A name
    given right after the adoption ("Meet Bobby", "her name is Pickles", "named him Spike") is the
    pet's, whatever else the name could be."""
    owners: list[int] = []
    owned = {target for (_, rel, target) in out.relations if rel == "has_pet"}
    since = 0  # sentences since the adoption
    guessed = False  # the adoption was asked as "guess who …?"
    for sentence in sentences:
        text, _ = rewrite_first_person(sentence.tagged)
        after = list(sentence.ids)
        since += 1
        if not owners and (match := _ACQUIRED_PET.search(text)):
            owners = [int(i) for i in re.findall(r"\x02(\d+)\x03", match.group("owners") or ph(SPEAKER))]
            after = [int(i) for i in re.findall(r"\x02(\d+)\x03", text[match.end():])]  # "..., her name is X"
            _pets_named(text, match.end(), owners, out)
            since = 0
            guessed = re.match(r"\W*guess\s+who\b", text, re.I) is not None
        elif owners and since == 1 and guessed and (answer := re.fullmatch(r"\W*\x02(\d+)\x03\W*", text)):
            # "Guess who got a puppy? Marisol!": the answer is who got it, not the pet
            owners, after = [int(answer.group(1))], []
            if out.registry.entities[owners[0]].type == "pet" and not out.registry.entities[owners[0]].forced:
                out.registry.entities[owners[0]].forced = "person"
        elif owners and since == 1:
            _pets_named(text, 0, owners, out)  # "We adopted a terrier! Meet Bobby."
        if owners:
            for idx in after:
                if idx is not None and idx not in owned and out.registry.entities[idx].type == "pet":
                    for owner in owners:
                        out.relation(owner, "has_pet", idx)
                    owned.add(idx)


def _pets_named(text: str, start: int, owners: list[int], out: Collector) -> None:
    """The names given from `start` on to the animal just adopted are a pet's (not a name the
    sentence already settled, as "my sister Ana")."""
    for named in _PET_NAMED.finditer(text, start):
        idx = int(named.group("pet") or named.group("alone"))
        entity = out.registry.entities[idx]
        # "Meet Biscotti", a word a bakery could be named (not "Meet Greenhollow Park, our new walk")
        if not entity.forced and idx not in owners and entity.type != "place":
            entity.forced = "pet"


# a name given to the animal just adopted: "Meet ⟨1⟩", "her name is ⟨1⟩", "named him ⟨1⟩", "called ⟨1⟩"
_PET_NAMED = re.compile(
    r"^\W*\x02(?P<alone>\d+)\x03\W*$|"  # the name alone: "…and took her in. Pumpkin!"
    r"(?:^\W*meet|\b(?:his|her|its)\s+name(?:\s+is|'s)|^\W*name\s+is|\bnamed(?:\s+(?:him|her|it))?|"
    r"\bcalled\s+(?:him|her|it)|\b(?:he|she|it)(?:'s|\s+is)\s+called)\s+\x02(?P<pet>\d+)\x03",
    re.I)  # not "Tom called ⟨Priya⟩"


def pet_kind_facts(out: Collector, text: str) -> None:
    """A pet the message links to its owner, with no fact of its own saying what animal it is
    ("we took in a kitten, her name is pumpkin"), gets one: the kind the message names nearest before
    the pet's name ("⟨1⟩ is ⟨0⟩'s cat")."""
    names = out.registry.names()
    for owner, rel, pet in list(out.relations):
        if rel != "has_pet":
            continue
        said = [f for f in out.facts.values() if f.subject == names[pet]]
        if any(_PET_WORD.search(f.text) for f in said):
            continue
        at = text.find(f"\x02{pet}\x03")
        kinds = [m for m in _PET_WORD.finditer(text) if at < 0 or m.start() < at] or list(_PET_WORD.finditer(text))
        if kinds:
            kind = kinds[-1].group().lower()
            if kind == "pig" and text[:kinds[-1].start()].lower().endswith("guinea "):
                kind = "guinea pig"
            out.fact(pet, f"{ph(pet)} is {ph(owner)}'s {kind}", confidence=EXPLICIT, category="biographical_milestone")


_PET_WORD = re.compile(rf"(?<![\w'-])(?:{PET_ALT})(?![\w'-])", re.I)


# "⟨0⟩ is 66, a reference librarian at ⟨org⟩", or a fragment that opens with the writer's age: "27,
# frontend dev at ⟨org⟩, living in ⟨city⟩"
_AGE_INTRO = re.compile(
    r"^(?:(?P<lead>.*?)\x02(?P<s>\d+)\x03 is |(?=\d))(?P<age>\d{1,2}|1[01]\d)\s*,\s*"
    r"(?P<rest>(?:an?\s+)?[a-z][\w-]*\s.+)$"
)
# "Home is now ⟨town⟩", "⟨0⟩'s new home is in ⟨town⟩"
_HOME_IS = re.compile(
    rf"^(?:{PH}'s\s+)?(?:new\s+)?home\s+(?:is|'s)\s+(?:(?:now|officially|finally)\s+)*(?:in\s+)?(?=\x02)", re.I
)


def _home_is(body: str, out: Collector, base: float) -> None:
    """Where one's home is, said of the home: its owner (the writer when none is said) lives there."""
    if not (match := _HOME_IS.match(body)):
        return
    subject = int(match.group(1)) if match.group(1) else SPEAKER
    home = out.registry.entities[int(re.match(r"\x02(\d+)\x03", body[match.end():]).group(1))]
    if home.type in ("organization", "concept") and not home.forced:
        home.forced = "place"  # a home is somewhere: "Home is Tlemcen now" names a town, whatever its shape says
    predicate = "lives in " + body[match.end() :]
    hits = [h for h in match_rules(predicate, out.registry) if h.rule.group == "residence"]
    if hits:
        _clause_facts(Clause(body, [subject], predicate, "direct"), hits, out, base)


# "my new address: 18 ⟨street⟩, ⟨town⟩", "Our address is now ⟨street⟩": where the owner lives
_ADDRESS_IS = re.compile(
    rf"(?:^(?=(?:new|home)\s)|\b(?P<own>my|our)\s+|{PH}'s\s+)(?:(?:new|home|postal|current|forwarding)\s+)*address\s*"
    r"(?:is|'s|will\s+be|:|—|–)\s*(?:now\s+)?(?:\d{1,4}[a-z]?,?\s+)?\x02(?P<home>\d+)\x03"
    r"(?:\s*,\s*\x02(?P<town>\d+)\x03)?", re.I)


def _address_is(body: str, out: Collector, base: float) -> None:
    """One's address said as such: its owner (the writer when none is said) lives in its town, or at it."""
    if not (match := _ADDRESS_IS.search(body)):
        return
    subject = int(match.group(2)) if match.group(2) else SPEAKER  # "Tom's new address", else the writer's
    home = int(match.group("town") or match.group("home"))
    if subject != SPEAKER and not out.registry.is_person(subject):
        return
    place = out.registry.entities[home]
    if place.type in ("organization", "concept") and not place.forced:
        place.forced = "place"  # an address is somewhere, whatever its shape says
    out.relation(subject, "lives_in", home)
    if (match.group("own") or "").lower() == "our":
        out.relations[(subject, "lives_in", home)].household = True  # the household's address
    _slot_fact(subject, "lives_in", home, False, "biographical_milestone", out, base)


# "⟨1⟩, a paediatric nurse, ...", "⟨1⟩ — an architect at ⟨2⟩ —": what someone is, set off after the name
_APPOSED_POST = re.compile(
    rf"{PH}\s*(?:,|[—–])\s*(?P<post>(?:an?|the)\s+(?:[\w-]+\s+){{0,3}}?(?P<job>[\w-]+))"
    r"(?P<rest>\s+(?:at|for|with)\s+\x02\d+\x03)?\s*(?=[,.;!?—–)]|$)")


def _apposed_posts(text: str, out: Collector, base: float) -> None:
    """A post set off after a person's name is what that person is ("⟨1⟩, a pharmacist", "⟨1⟩, a
    nurse at ⟨2⟩"), not what the sentence's subject is."""
    for match in _APPOSED_POST.finditer(text):
        who, job = int(match.group(1)), match.group("job").lower()
        if who == SPEAKER or not out.registry.is_person(who) or not (
                job in OCCUPATIONS or len(job) > 5 and any(job.endswith(j) for j in OCCUPATIONS if len(j) >= 5)):
            continue
        if match.group("rest"):
            _descriptors(who, match.group("post") + match.group("rest"), out, base)
        else:
            out.fact(who, f"{ph(who)} is {match.group('post')}", confidence=base, category="biographical_milestone")


_SELF_INTRO = re.compile(r"^(?P<lead>.*?)\x02(?P<s>\d+)\x03 is \x02(?P=s)\x03\s*,\s*(?P<rest>.+)$")
_DESCRIPTOR_GROUPS = frozenset({"work", "residence", "origin", "study", "birth"})
_ROLE_SUFFIXES = ("ist", "ian", "ant", "or", "eer")


def _descriptors(subject: int, rest: str, out: Collector, base: float) -> bool:
    """A list of what someone is, after "I'm Ben," or with the subject left out: "product
    designer at ⟨org⟩, living in ⟨city⟩, originally from ⟨place⟩". Each comma piece is read as
    "⟨subject⟩ is <piece>"; only work, residence, origin and study rules count, and a role needs
    a word naming an occupation ("designer at", not "dinner at")."""
    found = False
    for piece in re.split(r"\s*,\s*", rest):
        piece = piece.strip(" .!?;")
        hits = [h for h in match_rules("is " + piece, out.registry) if h.rule.group in _DESCRIPTOR_GROUPS]
        if any(h.rule.name in ("role_at", "with_org") for h in hits) and not _names_role(piece):
            hits = [h for h in hits if h.rule.group != "work" and not h.implied]
        if not hits and (home := _ROLE_IN.match(piece)) and _names_role(piece, "in"):
            obj = int(home.group("obj"))  # "a retired teacher in ⟨city⟩"
            if out.registry.entities[obj].type == "place":
                hits = [RuleMatch(WORKPLACE_RULE, obj, False, implied=True)]
        if hits and all(h.rule.retract for h in hits):  # "last day at ⟨org⟩ today": only the retraction
            found = True
            _hit_effects(subject, hits, out, base, primary=None)
        elif hits:
            found = True
            predicate = "is " + piece[:1].lower() + piece[1:]
            _clause_facts(Clause(f"{ph(subject)} {predicate}", [subject], predicate, "elided"), hits, out, base)
    return found


_ROLE_IN = re.compile(r"^(?:an?\s+|the\s+)?(?:[\w-]+\s+){0,3}?[\w-]+\s+in\s+\x02(?P<obj>\d+)\x03$")


def _names_role(piece: str, preps: str = "at|for|with") -> bool:
    """The word before the preposition names an occupation."""
    match = re.search(rf"([A-Za-z-]+)\s+(?:{preps})\s+\x02", piece)
    word = match.group(1).lower() if match else ""
    return (
        word in OCCUPATIONS
        or (len(word) > 4 and word.endswith(_ROLE_SUFFIXES))
        or any(word.endswith(job) for job in OCCUPATIONS if len(job) >= 5)  # "schoolteacher"
    )


def _clauses(body: str, registry: Registry) -> list[tuple[Clause | None, list[RuleMatch]]]:
    out: list[tuple[Clause | None, list[RuleMatch]]] = []
    inherited: list[int] | None = None
    for i, piece in enumerate(split_clauses(body)):
        clause = analyze(piece, inherited, first=i == 0)
        hits = []
        if clause is not None and clause.kind != "owner":
            hits = match_rules(clause.predicate, registry)
            inherited = clause.subjects
        out.append((clause, hits))
    return out


# a phrase of time before the subject: "Since the reshuffle", "After the move", "Last year"
_LEADING_PHRASE = re.compile(
    r"^(?:(?:since|after|before|during|following|until|over|by)\s+(?:[\w'-]+\s+){1,4}?|"
    rf"(?:last|this|next)\s+(?:week|weekend|month|year|{SEASON})\s+)(?=\x02\d+\x03\s)",
    re.I,
)


def _writer_left_out(sentence: Sentence, text: str) -> bool:
    """A sentence that opens with its verb and has no subject ("Got a puppy called ⟨2⟩")."""
    if text.startswith("\x02"):
        return False
    verb = opening_verb_without_subject(parse(sentence.text))
    return verb is not None and verb.dep_ in ("ROOT", "advcl")


def _kinship(text: str, out: Collector) -> None:
    """Kinship and pets: ⟨0⟩'s wife ⟨2⟩ → ⟨0⟩ spouse_of ⟨2⟩ plus the fact "Ana is Rafael's wife"."""
    _kin_hits(scan_kinship(text), out)


def relatives_named_after(sentences: list[Sentence], out: Collector) -> None:
    """"I have a younger sister. Her name is ⟨1⟩.": the relative named a clause or sentence after it
    was brought up."""
    types = [e.type for e in out.registry.entities]
    for k, sentence in enumerate(sentences):
        _kin_hits([kinship_match(owner, name, kin, mods) for owner, name, kin, mods
                   in named_after(sentences[k - 1] if k else None, sentence, types)
                   if not out.linked(owner, name)], out)


def _kin_hits(hits, out: Collector) -> None:
    for hit in hits:
        entity = out.registry.entities[hit.name]
        if hit.name != SPEAKER:
            entity.forced = "pet" if hit.pet else "person"
        source, target = (hit.name, hit.owner) if hit.reverse else (hit.owner, hit.name)
        out.relation(source, hit.rel, target)
        if hit.role:  # a role is the owner's slot with one current holder: "my new dentist is ⟨2⟩"
            out.fact(
                hit.owner,
                f"{ph(hit.name)} is {ph(hit.owner)}'s {hit.term}",
                confidence=EXPLICIT,
                category="relationship_change" if "new" in hit.term.split() else "biographical_milestone",
                slot=role_slot(hit.role),
                value=hit.name,
            )
            continue
        out.fact(
            hit.name,
            f"{ph(hit.name)} is {ph(hit.owner)}'s {hit.term}",
            confidence=EXPLICIT,
            category="biographical_milestone",
        )


# "New hobby alert: watercolor painting!": the writer's own new pastime, said without a subject
_NEW_PASTIME = re.compile(
    r"^(?:(?:a|my)\s+)?new\s+(?P<what>hobby|obsession|passion|interest|habit|sport|pastime|craft)"
    r"(?:\s+alert)?\b[^:]{0,40}:\s*\w",
    re.I,
)
# "⟨1⟩'s got ⟨0⟩ into kayaking", "⟨1⟩ introduced ⟨0⟩ to pottery": a pastime someone else started
_GOT_INTO = re.compile(
    rf"{PH}(?:'s|\s+has|\s+have|\s+finally|\s+just)*\s+(?:got|gotten|getting|introduced|hooked)\s+{PH}\s+"
    r"(?:into|to|on)\s+(?P<what>[^\x02,;.!?—–()]{3,60}?)(?=\s*(?:[,;.!?—–(]|\s+(?:instead|now|too|lately)\b|$))",
    re.I,
)


def _taken_up(raw: str, text: str, out: Collector, base: float) -> None:
    """Pastimes the writer takes up in words that name no subject for them: "New hobby alert:
    watercolor painting!" and "⟨1⟩'s got ⟨0⟩ into kayaking" are facts about the writer (the one
    who took it up), not about "New" or about ⟨1⟩. The announcement is read off the raw sentence:
    its first word may have been taken for a name."""
    if (match := _NEW_PASTIME.match(raw)) and ":" in text:
        rest = text.split(":", 1)[1].strip().rstrip(".!")
        if len(rest) >= 3:
            out.fact(SPEAKER, f"{ph(SPEAKER)} has a new {match.group('what').lower()}: {rest}",
                     confidence=base, category="stable_preference")
    for match in _GOT_INTO.finditer(text):
        guide, learner = int(match.group(1)), int(match.group(2))
        if guide != learner and (learner == SPEAKER or out.registry.is_person(learner)):
            out.fact(learner, f"{ph(learner)} got into {match.group('what')} through {ph(guide)}",
                     confidence=base, category="stable_preference")


# "Two years with ⟨2⟩ today", "⟨0⟩ has been with ⟨2⟩ for five years": a couple's time together
_TIME_TOGETHER = re.compile(
    rf"^(?:(?:celebrating|happy|it's\s+been|been)\s+)?(?:\w+|\d+)\s+(?:years?|months?)\s+(?:together\s+)?with\s+{PH}|"
    rf"^{PH}\s+(?:has|have)\s+been\s+(?:together\s+)?with\s+{PH}\s+(?:for\s+(?:\w+\s+)?(?:\w+|\d+)\s+"
    r"(?:years?|months?)|since\s+(?:university|uni|college|school|high\s+school|we\s+were))",
    re.I,
)
# "⟨2⟩'s engaged!", "⟨2⟩ is getting married" (to no one named) … "The lucky man is ⟨3⟩"
_ENGAGED_ALONE = re.compile(
    rf"{PH}(?:'s|\s+is|\s+has|\s+just|\s+got|\s+finally)*\s+(?:got\s+)?(?:engaged|getting\s+married)\b(?!\s*,?\s+to\b)",
    re.I,
)
_LUCKY = r"(?:man|woman|guy|girl|lady|fella|fellow|one|groom|bride|bride-to-be|groom-to-be)"
_LUCKY_ONE = re.compile(
    rf"\bthe\s+lucky\s+{_LUCKY}\s+is\s+{PH}|{PH}\s+is\s+the\s+lucky\s+{_LUCKY}\b", re.I
)


def _partners_said_around(text: str, out: Collector) -> None:
    """Couples said without a couple's verb: "Two years with ⟨2⟩ as of today" (the writer's
    partner), "⟨2⟩'s engaged! The lucky man is ⟨3⟩" (across sentences of one message)."""
    if (together := _TIME_TOGETHER.match(text)) and together.group(1) is not None:
        partner = int(together.group(1))
        if partner != SPEAKER and out.registry.is_person(partner):
            out.relation(SPEAKER, "partner_of", partner)
    elif together:
        first, second = int(together.group(2)), int(together.group(3))
        if first != second and all(i == SPEAKER or out.registry.is_person(i) for i in (first, second)):
            out.relation(first, "partner_of", second)
    if (lucky := _LUCKY_ONE.search(text)) and out.engaged is not None:
        chosen = int(lucky.group(1) or lucky.group(2))
        if chosen not in (out.engaged, SPEAKER):
            out.registry.entities[chosen].forced = "person"  # "Theo Park is the lucky guy"
            out.relation(out.engaged, "engaged_to", chosen)
        out.engaged = None
    elif (alone := _ENGAGED_ALONE.search(text)) and (int(alone.group(1)) == SPEAKER
                                                      or out.registry.is_person(int(alone.group(1)))):
        out.engaged = int(alone.group(1))


# "⟨0⟩ has been moved to ⟨3⟩", "⟨0⟩ switched over to ⟨3⟩": a patient handed to another doctor
_SWITCHED_TO = re.compile(
    rf"{PH}\s+(?:(?:has|have|had|was|were|got|gotten|been|just|now|finally|since)\s+){{0,3}}"
    rf"(?:moved|switched|transferred|reassigned|changed|handed)\s+(?:over\s+)?to\s+{PH}",
    re.I,
)
_DOCTOR_TITLE = re.compile(r"(?:dr\b|doctor\b)", re.I)


def _new_doctor(sentence: Sentence, text: str, out: Collector) -> None:
    """"Dr. Ole retired, so I was switched to Dr. Brun": the one someone is moved or switched
    to, titled Dr., is their doctor now (the role has one holder: the old doctor's edge ends)."""
    titled = {idx for mention, idx in zip(sentence.mentions, sentence.ids, strict=True)
              if idx is not None and _DOCTOR_TITLE.match(sentence.text[mention.start:mention.end])}
    for match in _SWITCHED_TO.finditer(text):
        patient, doctor = int(match.group(1)), int(match.group(2))
        if doctor not in titled or patient == doctor or not (patient == SPEAKER or out.registry.is_person(patient)):
            continue
        out.registry.entities[doctor].forced = "person"
        out.relation(doctor, "doctor_of", patient)
        out.fact(patient, f"{ph(doctor)} is {ph(patient)}'s doctor", confidence=EXPLICIT,
                 category="relationship_change", slot=role_slot("doctor"), value=doctor)


# "⟨Acme⟩ laid off 200 people, including ⟨0⟩", "⟨Acme⟩ let ⟨0⟩ go": an organization ends someone's job.
_DISMISSED = re.compile(
    rf"{PH}\s+(?:(?:just|finally|recently|also|then)\s+)?(?:laid\s+off|lays\s+off|fired|fires|let\s+go(?:\s+of)?|"
    rf"made\s+redundant|dismissed|sacked|cut)\s+(?:(?:[^.;!?\x02]{{0,60}}?\b(?:including|among\s+them|"
    rf"and|as\s+well\s+as)\s+)?{PH}(?!'s\b)|{PH}\s+(?:off|go)\b)",  # not "fired ⟨0⟩'s brother ⟨2⟩": the brother
    re.I,
)
_DISMISSED_NOUNS = frozenset({"organization", "concept"})


# "⟨Hafen Academy⟩ is behind ⟨0⟩ now", "⟨X⟩ is officially done with ⟨0⟩": whatever the person held there is over
# (not "⟨club⟩ is behind ⟨0⟩ on this": support)
_BEHIND = re.compile(rf"{PH}\s+(?:is|'s)\s+(?:(?:now|officially|finally|all)\s+)*(?:behind|done\s+with)\s+{PH}"
                     r"(?=\s*(?:now|at\s+last|for\s+good|forever)?\s*(?:[.!,;]|$))", re.I)


def _behind(text: str, out: Collector) -> None:
    for match in _BEHIND.finditer(text):
        place, person = int(match.group(1)), int(match.group(2))
        if out.registry.entities[place].type in ("organization", "place", "concept") and (
                person == SPEAKER or out.registry.is_person(person)):
            out.relation(person, "finished_with", place)


def _dismissals(text: str, out: Collector, base: float) -> None:
    for match in _DISMISSED.finditer(text):
        org, person = int(match.group(1)), int(match.group(2) or match.group(3))
        if out.registry.entities[org].type not in _DISMISSED_NOUNS or org == person:
            continue
        if person != SPEAKER and not out.registry.is_person(person):
            continue
        out.relation(person, "former_employee_of", org)
        _slot_fact(person, "works_at", org, True, "relationship_change", out, base)


# "⟨0⟩ is officially retired", "Heather retired at Christmas" (not "a retired teacher", and "retired
# from ⟨org⟩" is the rule that names the employer)
_RETIRED = re.compile(
    rf"{PH}\s+(?:(?:has|had|is|was|'s|just|finally|officially|now|recently|also|fully|happily)\s+)*retired\b"
    r"(?!\s+(?:from\b|[\w-]+(?:er|or|ist|ian|ant|eer)\b))",
    re.I,
)


def _job_endings(text: str, out: Collector, base: float) -> None:
    """A job ends without a leaving verb: "today was ⟨0⟩'s last day at the library", "⟨0⟩ is
    officially retired". With the employer named, it is a cessation of that job; without, the
    current employer's slot is retracted (whichever it is)."""
    ended: dict[int, int | None] = {}
    for match in LAST_DAY.finditer(text):
        ended[int(match.group("s"))] = int(match.group("org")) if match.group("org") else None
    for match in _RETIRED.finditer(text):
        ended.setdefault(int(match.group(1)), None)
    for person, org in ended.items():
        if not out.registry.is_person(person):
            continue
        if org is not None and out.registry.entities[org].type in _DISMISSED_NOUNS:
            out.relation(person, "former_employee_of", org)
            _slot_fact(person, "works_at", org, True, "relationship_change", out, base)
        elif org is None:  # a retraction of its own: the sentence's fact stays as it was said
            out.fact(person, f"{ph(person)} left {ph(person)}'s job", confidence=base, category="relationship_change",
                     slot="works_at", negated=True)


def _who_clauses(text: str, out: Collector, base: float) -> None:
    """Relative clauses: in "⟨1⟩, who lives in ⟨2⟩, ..." the rules apply to ⟨1⟩."""
    for match in _WHO.finditer(text):
        subject, predicate = int(match.group(1)), match.group(2).strip()
        hits = match_rules(predicate, out.registry)
        if hits:
            _clause_facts(
                Clause(f"{ph(subject)} {predicate}", [subject], predicate, "elided"), hits, out, base
            )


def _embedded_clauses(body: str, out: Collector, base: float) -> None:
    """Subordinate clauses (since ⟨0⟩ lost ⟨0⟩'s job at ⟨3⟩, ...): their relations and slot facts."""
    for match in _EMBEDDED.finditer(body):
        hits = match_rules(body[match.end() :], out.registry)
        _hit_effects(int(match.group(1)), hits, out, base, primary=None)


# "Sam and I broke up", "Ana and Ben got married": a couple as the subject, the verb says what
# happened between them. Checked in this order; a negation before the verb keeps it from firing.
_RECIPROCAL = (
    ("former_partner_of", r"broke\s+up|split\s+up|separated|"
                          r"split(?=\s*(?:[.!,;]|$)|\s+(?:after|last|this|for\s+good)\b)|"
                          r"(?:decided|agreed)\s+to\s+(?:separate|split|divorce)|"
                          r"(?:got\s+|are\s+getting\s+|were\s+)?divorced|called\s+it\s+quits|"
                          # "our" is the writer's placeholder by now: "ended ⟨0⟩'s relationship"
                          r"(?:called|broken?)\s+off\s+(?:the|our|their|\x02\d+\x03's)\s+(?:engagement|wedding)|"
                          r"end(?:ed|s)?\s+(?:the|our|their|\x02\d+\x03's)\s+(?:engagement|relationship|marriage)|"
                          r"ended\s+things|"
                          r"(?:are|were|'re)(?:n't|\s+not|\s+no\s+longer)\s+together|"
                          r"(?:are|were|'re)\s+(?:so\s+|officially\s+|really\s+)?done(?:\s+for\s+good)?(?=\s*(?:[.!,;]|$))|"
                          # not "are finished, we can start dessert"; not "over" ("Tom and Ana are over": visiting)
                          r"(?:are|were|'re)\s+(?:so\s+|officially\s+|really\s+)?(?:finished|through)"
                          r"(?:\s+for\s+good)?(?=\s*(?:[.!;]|$))"),
    ("spouse_of", r"got\s+married|are\s+married|were\s+married|married|wed|tied\s+the\s+knot|eloped"),
    ("engaged_to", r"got\s+engaged|are\s+engaged|became\s+engaged"),
    ("partner_of", r"(?:are|were|started|have\s+been|'re)\s+(?:\w+\s+)?(?:dating|seeing\s+each\s+other|together)|"
                   # "Ana and I are official", "are a thing now", "are an item": a couple's start in chat
                   r"(?:are|'re)\s+(?:now\s+|finally\s+|officially\s+|so\s+)?(?:official|a\s+(?:thing|couple)|an\s+item)"
                   r"(?=\s*(?:[.!,;]|now\b|as\s+of\b|$))|"
                   r"(?:admitted|announced|said)\s+(?:that\s+)?(?:they|we)(?:'re|\s+are)\s+dating|"
                   r"(?:moved|moving|move)\s+in\s+together|"
                   # "Ana and I are expecting!", "are having a baby": a couple's child on the way
                   r"(?:are|'re)\s+(?:finally\s+|officially\s+)?(?:expecting(?=\s*(?:[.!,;]|$)|\s+(?:a\s+(?:baby|boy|girl|"
                   r"child)|our\s+(?:first|second|third))\b(?![\s-]*(?:shower|sitter|delivery|monitor)))|"
                   r"having\s+a\s+(?:baby|boy|girl|child)\b(?![\s-]*(?:shower|sitter|monitor)))"),
)
_RECIPROCAL_RE = [
    (rel, re.compile(rf"^(?:(?!not\b|never\b|n't\b)[\w']+\s+){{0,4}}?(?:{verbs})\b", re.I))
    for rel, verbs in _RECIPROCAL
]


def _reciprocal(clause: Clause, out: Collector) -> None:
    if len(clause.subjects) != 2 or not all(out.registry.is_person(i) for i in clause.subjects):
        return
    for rel, pattern in _RECIPROCAL_RE:
        if pattern.match(clause.predicate.strip()):
            first, second = sorted(clause.subjects, key=lambda i: i != SPEAKER)
            out.relation(first, rel, second)
            return


def _clause_facts(clause: Clause, hits: list[RuleMatch], out: Collector, base: float) -> None:
    if (
        addresses_listener(clause.predicate)
        or _SUGGESTION.match(clause.predicate)
        or is_reaction(clause.predicate)
    ):
        return
    confidence = _confidence(clause, base)
    for subject in clause.subjects:
        tagged = _clause_text(clause, subject)
        if hits:
            _rule_facts(subject, tagged, hits, out, confidence)
        elif LEFT_UNNAMED.match(clause.predicate) and out.registry.is_person(subject):
            out.fact(subject, tagged, confidence=confidence, category="relationship_change", slot="works_at",
                     negated=True)  # "left the clinic": the current employer, whichever it is
        elif _enough_content(clause.predicate):
            out.fact(subject, tagged, confidence=confidence, category=categorize(tagged, _is_past(clause)))


def _clause_text(clause: Clause, subject: int) -> str:
    if len(clause.subjects) > 1:
        return f"{ph(subject)} {singular_predicate(clause.predicate)}"
    if clause.kind in ("elided", "implicit"):
        return f"{ph(subject)} {clause.predicate}"
    return clause.text


def _rule_facts(subject: int, tagged: str, hits: list[RuleMatch], out: Collector, confidence: float) -> None:
    primary = next((h for h in hits if h.rule.slot and not h.future and not h.implied), None)
    category = (primary or hits[0]).rule.category
    if all(h.future for h in hits):
        confidence = min(confidence, INFERRED)
    if primary is None:
        out.fact(subject, tagged, confidence=confidence, category=category)
    else:
        out.fact(
            subject,
            tagged,
            confidence=confidence,
            category=category,
            slot=primary.rule.slot,
            value=primary.obj,
            negated=primary.rule.negated,
        )
    _hit_effects(subject, hits, out, confidence, primary)


def _hit_effects(
    subject: int, hits: list[RuleMatch], out: Collector, confidence: float, primary: RuleMatch | None
) -> None:
    """Relations of the hits, the negated fact of a retraction ("left ⟨2⟩"), and slot facts the
    clause fact does not already carry."""
    for hit in hits:
        if hit.future:
            continue
        rule = hit.rule
        if hit.implied:
            out.relation(subject, rule.rel, hit.obj, implied=True)
            key = _slot_fact(subject, rule.slot, hit.obj, False, rule.category, out, min(confidence, INFERRED))
            if (subject, rule.rel, hit.obj) in out.implied:
                out.implied[(subject, rule.rel, hit.obj)] = key
            continue
        if rule.rel:
            out.relation(*((hit.obj, rule.rel, subject) if rule.reverse else (subject, rule.rel, hit.obj)))
        if rule.retract:
            _slot_fact(subject, rule.retract, hit.obj, True, rule.category, out, confidence)
        elif rule.slot and hit is not primary:
            _slot_fact(subject, rule.slot, hit.obj, rule.negated, rule.category, out, confidence)


def linked_by_frames(sentence: Sentence, out: Collector, embed: Embed | None = None) -> None:
    """What the frame engine (frames.py) reads in the sentence beyond the rules: pets named in a
    clause of their own; a person's home, employer, school or club, with the slot fact that goes
    with it; a rule's reading a frame overrides; and the endings of those states."""
    if is_question(sentence.text):
        return
    types = [e.type for e in out.registry.entities]
    for owner, pet in pet_links(sentence, types):
        if not any(r == "has_pet" and t == pet for _, r, t in out.relations):
            out.relation(owner, "has_pet", pet, method="frame")
    for owner, pet in pet_endings(sentence, types):
        # whose pet: said, else who has it in this message, else the writer's
        owned = [s for s, r, t in out.relations if r == "has_pet" and t == pet]
        for who in [owner] if owner is not None else owned or [SPEAKER]:
            out.unlink(who, "has_pet", pet)
            out.relation(who, "former_owner_of", pet, method="frame")
    # "Zora has gone to live with ⟨Pilar⟩": whoever had her no longer does, the one she lives with does
    for pet, keeper in pet_moves(sentence, types):
        if keeper == SPEAKER:  # "our cat went to live with us when Grandma died": ours now
            out.relation(SPEAKER, "has_pet", pet, method="frame")
            continue
        owned = [s for s, r, t in out.relations if r == "has_pet" and t == pet and s != keeper]
        for who in owned or [SPEAKER]:  # said by one who never held it, it ends every holder's
            out.unlink(who, "has_pet", pet)
            out.relation(who, "former_owner_of", pet, method="frame")
        if keeper is not None and keeper != SPEAKER:
            out.relation(keeper, "has_pet", pet, method="frame")
    # "moved from ⟨Infosys⟩ to ⟨Thoughtworks⟩": one job left, another taken
    for who, left, joined in job_moves(sentence, types):
        for rel_type in ("works_at", "lives_in", "studies_at"):
            out.unlink(who, rel_type, joined)
        out.unlink(who, "works_at", left)
        out.relation(who, "former_employee_of", left, method="frame")
        out.relation(who, "works_at", joined, method="frame")
    # "Pelleas moved out": whoever shared a home with him no longer does
    for who in moved_out(sentence, types):
        if any(who in (s, t) and SPEAKER in (s, t) and r != "roommate_of" for s, r, t in out.relations):
            continue  # "my son Leo moved out": a child leaving home, no flatmate
        out.unlink(SPEAKER, "roommate_of", who)
        out.relation(SPEAKER, "former_roommate_of", who, method="frame")
    # kinship the parse ties where the surface patterns did not ("my supervisor at the lab is X")
    _kin_hits([kinship_match(owner, name, kin, mods) for owner, name, kin, mods in kin_links(sentence, types)
               if not out.linked(owner, name)], out)
    for person, rel_type, partner in partner_links(sentence, types):
        linked = out.linked(person, partner)
        if linked == {"partner_of"} and rel_type in ("engaged_to", "spouse_of"):
            # "got engaged to her boyfriend of six years, X": the engagement says more than the boyfriend
            for source, target in ((person, partner), (partner, person)):
                out.unlink(source, "partner_of", target)
            linked = frozenset()
        if not linked:
            out.relation(person, rel_type, partner, method="frame")
    # "my master's at UQ", "a nurse at NHS Fife": initials right after "at" stand for an institution, whatever
    # the name's shape voted (not "in IT", "in HR": a field)
    initials = {i for i in sentence.ids if i is not None and types[i] in ("concept", "place")
                and _INITIALS.fullmatch(name := out.registry.entities[i].name)
                and re.search(rf"\bat\s+(?:the\s+)?{re.escape(name)}\b", sentence.text)}
    types = ["organization" if i in initials else t for i, t in enumerate(types)]
    for link in frame_links(sentence, types, out.linked, embed):
        frame = link.frame
        if link.target in initials and not link.ends and frame.relation in _AT_AN_INSTITUTION:
            out.registry.entities[link.target].forced = "organization"
        for rel_type in link.replaces:
            out.unlink(link.subject, rel_type, link.target)
        if link.ends:
            _frame_ending(link, out)
            continue
        if link.past:  # "lived in ⟨city⟩": the state that was, beside whatever is now
            out.relation(link.subject, frame.past, link.target, method="frame")
            continue
        if frame.slot and any(s == link.subject and r == frame.relation for s, r, _ in out.relations):
            continue  # a slot holds one value: what the rules found for it in this message stands
        out.relation(link.subject, frame.relation, link.target,
                     method=link.method if link.method == "frame" else f"{link.method} {link.score:.2f}")
        confidence = INFERRED if link.method == "frame" else HEDGED  # the back-off is a guess
        if frame.slot:  # "I've been at ⟨org⟩ since March": the fact keeps when the state began
            _slot_fact(link.subject, frame.slot, link.target, False, "biographical_milestone", out, confidence,
                       when=time_said(_piece_with(sentence.tagged, link.target)).lower())
        elif frame.fact:
            out.fact(link.subject, frame.fact.format(s=ph(link.subject), o=ph(link.target)), confidence=confidence,
                     category="biographical_milestone")


_INITIALS = re.compile(r"[A-Z]{2,5}")
_AT_AN_INSTITUTION = frozenset({"studies_at", "works_at", "member_of"})


def _frame_ending(link, out: Collector) -> None:
    """"Graduated from ⟨school⟩", "quit ⟨club⟩", "left ⟨city⟩": the slot's value is taken back (a
    negated slot fact); a frame without a slot ends its facts that name the object. What a rule
    read as a job left there ("left ⟨club⟩") is no job."""
    frame, subject, target = link.frame, link.subject, link.target
    if frame.relation != "works_at":  # "left ⟨club⟩" read by a rule as a job left: no job
        out.unlink(subject, "former_employee_of", target)
    names = out.registry.names()
    if frame.slot and any(f.negated and f.slot == frame.slot and f.value == names[target]
                          and f.subject == names[subject] for f in out.facts.values()):
        return  # a rule took it back already ("I don't live in ⟨city⟩ anymore")
    if frame.ending_relation:  # "lost my job at ⟨org⟩", "was a member of ⟨club⟩ until 2015"
        out.relation(subject, frame.ending_relation, target, method="frame")
    if frame.slot:
        _slot_fact(subject, frame.slot, target, True, "relationship_change", out, INFERRED)
    elif frame.ending_fact:
        key = out.fact(subject, frame.ending_fact.format(s=ph(subject), o=ph(target)), confidence=INFERRED,
                       category="relationship_change")
        if key in out.facts:
            out.facts[key].ends = [out.registry.names()[target]]


def _piece_with(tagged: str, idx: int) -> str:
    """The stretch of a tagged sentence between punctuation that holds entity `idx`."""
    return next((p for p in re.split(r"[,;:—–()]", tagged or "") if ph(idx) in p), "")


def _slot_fact(
    subject: int, slot: str, obj: int, negated: bool, category: str, out: Collector, confidence: float,
    when: str = "",
) -> str:
    templates = SLOT_TEMPLATES.get(slot) or _role_templates(slot)
    template = templates[1 if negated else 0]
    return out.fact(
        subject,
        template.format(s=ph(subject), o=ph(obj)) + (f" {when}" if when else ""),
        confidence=confidence,
        category=category,
        slot=slot,
        value=obj,
        negated=negated,
    )


def _role_templates(slot: str) -> tuple[str, str]:
    """A role slot's fact says who holds the role for the subject ("⟨2⟩ is ⟨0⟩'s manager")."""
    role = slot.removeprefix(ROLE_SLOT_PREFIX)
    return "{o} is {s}'s " + role, "{o} is no longer {s}'s " + role


_GERUND_START = re.compile(r"^(?:[A-Za-z]+ing)\b")


def _sentence_fact(body: str, out: Collector, base: float, note: str = "") -> None:
    """No rule fired: one fact for the whole sentence, about whoever it opens with (a `note` after
    a label, "Hobbies: ...", is the writer's)."""
    if _GERUND_START.match(body) and (hits := match_rules(body[:1].lower() + body[1:], out.registry)):
        # "Working remotely from ⟨city⟩ is great": the speaker's own activity as the subject
        predicate = body[:1].lower() + body[1:]
        _clause_facts(Clause(body, [SPEAKER], predicate, "implicit"), hits, out, base)
        return
    clause = analyze(body, None, first=True)
    if note and len(_WORDS.findall(body)) >= 4 and not any(i == SPEAKER or out.registry.is_person(i) for i in [
            *entity_ids(body), *(clause.subjects if clause else ())]):
        # "Hobbies: trail running, bonsai, ...": the writer's note, said with its label
        text = f"{ph(SPEAKER)}'s {note}: {body[:1].lower()}{body[1:]}"
        out.fact(SPEAKER, text, confidence=min(base, INFERRED), category=categorize(body, False))
        return
    if clause is not None:
        kind = "implicit" if clause.kind == "implicit" else "direct"
        _clause_facts(Clause(body, [_main_subject(clause.subjects)], clause.predicate, kind), [], out, base)
        return
    if mentions_listener(body) or is_imperative(body):
        return
    ids = entity_ids(body)
    words = len(_WORDS.findall(body))
    if SPEAKER in ids and words >= 5:
        out.fact(SPEAKER, body, confidence=min(base, INFERRED), category=categorize(body, False))
    elif [i for i in ids if i != SPEAKER] and words >= 4:
        subject = next(i for i in ids if i != SPEAKER)
        out.fact(subject, body, confidence=min(base, INFERRED), category=categorize(body, False))
    elif not ids and words >= 5 and is_headline(body):  # "New hobby alert: watercolor painting!"
        out.fact(SPEAKER, body, confidence=min(base, INFERRED), category=categorize(body, False))


def _main_subject(subjects: list[int]) -> int:
    return SPEAKER if SPEAKER in subjects else subjects[0]


def _confidence(clause: Clause, base: float) -> float:
    if is_hedged(clause.text):
        return HEDGED
    return min(base, INFERRED) if clause.kind == "implicit" else base


def _enough_content(predicate: str) -> bool:
    """At least two content words, one of them a plain word; a named entity counts double
    ("is in ⟨Lisbon⟩ now" passes, "and ⟨Oliver⟩" does not). A copula with a role, an age or a
    life state passes too ("is an architect", "is 34", "is pregnant"), and so does a life event
    said in one verb ("graduated", "retired")."""
    if _LIFE_EVENT.match(predicate):
        return True
    if match := _ROLE.match(predicate):
        role, state = (match.group("role") or "").lower(), (match.group("state") or "").lower()
        if match.group("age") or state in _STATES or (role and role not in _NOT_ROLES and role not in _FUNCTION_WORDS):
            return True
    words = [w for w in _WORDS.findall(predicate) if w.lower() not in _FUNCTION_WORDS]
    plain = [w for w in words if not w.startswith("\x02") and w.lower() not in ("and", "or")]
    return bool(plain) and sum(2 if w.startswith("\x02") else 1 for w in words) >= 2


def _is_past(clause: Clause) -> bool:
    for word in _WORDS.findall(clause.predicate)[:3]:
        low = word.lower()
        if not is_adverb(low):
            return is_past(low)
    return False
