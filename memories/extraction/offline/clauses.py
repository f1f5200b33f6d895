"""Clauses and their subjects, over tagged first-person-rewritten text.

"⟨1⟩ left ⟨2⟩ and joined ⟨3⟩ as head of engineering" → two clauses, the second inheriting the
subject ⟨1⟩. A clause's subject is the entity (or entities) it opens with; "⟨0⟩'s wife ⟨2⟩"
makes ⟨2⟩ the subject; "⟨0⟩'s kids ..." is about the speaker but fills no slot ("owner").
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from memories.extraction.offline.classify import addresses_listener
from memories.extraction.offline.entities import KIN_ALT, MOD_ALT, PET_ALT
from memories.extraction.offline.grammar import is_adverb, is_past, third_person
from memories.extraction.offline.lexicon import FIRST_NAMES, SAME_FORM_VERBS, word_set
from memories.extraction.offline.parse import is_dictionary_word
from memories.extraction.offline.text import PH, SPEAKER

_E = r"\x02(?P<{}>\d+)\x03"
_JOINER = re.compile(
    r"\s*;\s*|(?:\s*,)?\s+(?:and|but)\s+(?:then\s+)?|,\s+(?:then|so)\s+|,\s+(?=\x02)|\s+[—–-]+\s+|:\s+|"
    r",\s+(?=(?:now|these\s+days)\s+at\s|still\s+(?:on\s+\S+\s+own|alone)\s+in\s|(?:now|these\s+days|nowadays)\s+\x02)|"
    # "left ⟨org⟩, starting at ⟨org⟩": after a leaving, a verb in -ing and where it is done open a clause
    r"(?P<ing>,\s+)(?=[a-z]+ing\s+(?:at|for|in|to|with)\s+(?:the\s+)?\x02)|"
    # "moved out, got his own place in ⟨city⟩": after a move, chat runs the next clause on with a comma
    r"(?:(?<=\bout)|(?<=\bback)|(?<=\bup)|(?<=\baway)|(?<=\bhome))"
    r",\s+(?=(?:just\s+|finally\s+|then\s+)?(?:got|found|moved|started|joined|bought|rented)\s)"
)
_SUBJECT_HEAD = re.compile(rf"^{PH}(?:'s\s+[\w-]+(?:\s+{PH})?)?\s+")
_FIRST_WORDS = re.compile(r"[A-Za-z][\w']*")
_LEAD = re.compile(
    r"^(?:(?:yesterday|today|tonight|recently|lately|finally|now|earlier|later|then|also|last\s+\w+|this\s+\w+|"
    r"next\s+\w+|on\s+\w+|in\s+\d{4}|(?:starting|from|as\s+of)\s+(?!(?:at|for|in|to|with)\b)(?:next\s+)?\w+(?:\s+on)?|(?:a\s+few|a\s+couple\s+of|\w+)\s+\w+\s+ago|after\s+\w+|over\s+the\s+\w+)"
    r"(?:\s*,)?\s+)",
    re.I,
)
_KIN_SUBJECT = re.compile(
    rf"^{_E.format('own')}'s\s+(?:(?:{MOD_ALT})[\s-]+)*(?:{KIN_ALT}|{PET_ALT})\s*(?:,\s*)?{_E.format('s')}(?:\s*,)?\s+",
    re.I,
)
_APPOSITIVE = re.compile(rf"^{_E.format('s')}\s*,\s*(?:{PH}'s|an?|the)\s+[^,]{{1,40}},\s*")
_PEOPLE = rf"(?:{KIN_ALT}|friends|family|kids|children|parents|colleagues|coworkers|folks|team)"
_UNIT = rf"(?>\x02\d+\x03's\s+(?:(?:{MOD_ALT})[\s-]+)*{_PEOPLE}(?:\s*(?:,\s*)?\x02\d+\x03)?|\x02\d+\x03)"
_UNIT_RE = re.compile(
    rf"\x02(?P<owner>\d+)\x03's\s+(?:(?:{MOD_ALT})[\s-]+)*{_PEOPLE}(?:\s*(?:,\s*)?\x02(?P<named>\d+)\x03)?"
    rf"|\x02(?P<plain>\d+)\x03",
    re.I,
)
_COMPOUND = re.compile(rf"^{_UNIT}(?:\s*,\s*{_UNIT})*(?:\s*,)?\s+(?:and|&)\s+{_UNIT}\s+", re.I)
_UNITS_ONLY = re.compile(rf"^{_UNIT}(?:\s*(?:,|and|&)\s*{_UNIT})*$", re.I)
_IS_CONTRACTION = re.compile(
    rf"^{_E.format('s')}'s\s+(?=(?:been|got|gone|going|moving|moved|leaving|left|working|living|not|now|also|an?|"
    r"the|so|very|really|from|married|engaged|in|at|here|there|always|never|still|just|[a-z]+ing|\d+)\b)"
)
# "⟨1⟩ (my brother, not Ana's husband) joined ⟨2⟩": an aside after the name leaves it the subject
_ASIDE_SUBJECT = re.compile(rf"^{_E.format('s')}\s*\([^()]{{1,80}}\)\s+(?=[a-z])")
_OWNER = re.compile(rf"^{_E.format('s')}'s\s+")
_DIRECT = re.compile(rf"^{_E.format('s')}\s+")
_IMPLICIT_VERB = re.compile(
    # chat opens with an interjection or an adverb in -ly: "ok so finally moved to …", "omg just quit …"
    r"^(?:(?:ok|okay|omg|so|well|yeah|yay|ugh|lol|haha|wow|btw)\b[\s,!.]+)?"
    r"(?:(?:just|finally|recently|also|then|totally|really|actually|always|never|still|[a-z]{3,}ly)\s+)*([A-Za-z]+)\b",
    re.I,
)
_DONE_WITH = re.compile(r"(?:done|through)\s+(?:with|w/?)\s+(?:the\s+)?\x02", re.I)
# a chat sentence opening with a departure in -ing, the writer's: "Leaving ⟨1⟩ after forty years."
_LEAVING_OPENS = re.compile(r"(?:leaving|quitting|moving\s+(?:away\s+)?(?:to|from|out\s+of)|relocating\s+to)\s+"
                            r"(?:the\s+)?\x02\d+\x03(?!\s+(?:is|was|has|will|would)\b)", re.I)
_PAST_TIME = re.compile(r"\b(?:yesterday|last\s+\w+|\w+\s+ago|earlier|this\s+morning)\b", re.I)
_NOT_IMPLICIT = frozenset({"was", "were", "did", "said", "thought", "felt", "seemed", "sounded", "looked"})
_AUX_WORDS = word_set("""
is was has had will would can could does did doesn't didn't isn't wasn't hasn't won't can't couldn't
wouldn't got gets just also now still never always
""")
_KNOWN_3SG = word_set("""
lives works loves likes enjoys prefers studies hates owns says goes makes takes moves joins leaves visits
teaches runs manages plays writes reads wants needs thinks feels knows keeps spends starts helps
""")


@dataclass
class Clause:
    text: str  # tagged text to render
    subjects: list[int]
    predicate: str  # tagged text after the subject, where predicate rules match
    kind: str  # direct | owner | elided | implicit


def split_clauses(body: str) -> list[str]:
    """Cut at "and"/"but"/";" when what follows opens a clause (a verb, or a subject + verb)."""
    pieces, start = [], 0
    for match in _JOINER.finditer(body):
        if not opens_clause(body[match.end() : match.end() + 120]):
            continue
        if match.group("ing") is not None and (not _LEAVING.search(body, start, match.start()) or _HEDGED.search(
                body, start)):
            continue  # "used to live in ⟨city⟩, working for ⟨org⟩", "want to quit, starting at ⟨org⟩ maybe"
        left = body[start : match.start()].strip()
        if left and not _UNITS_ONLY.match(left):
            pieces.append(body[start : match.start()])
            start = match.end()
    pieces.append(body[start:])
    return [p.strip() for p in pieces if p.strip()]


# "I live in ⟨city⟩ and work as an engineer at ⟨org⟩": a second verb of the first person keeps its
# base form after the rewrite, and still opens a clause when a preposition follows
_BASE_VERB = re.compile(r"^(?:work|live|teach|study|lecture|volunteer)\s+(?:as|at|for|in|with|from)\b", re.I)


# "— she's a registrar at ⟨org⟩ now": "'s" before an article is "is", not a possessive
# and "he's at ⟨org⟩ now" ("'s" before "at ⟨entity⟩" is "is" too)
_CONTRACTED_IS = re.compile(
    rf"^{PH}'s\s+(?:(?:now|also|still|just)\s+)?(?:(?:an?|the|been|gone)\s|at\s+\x02)", re.I
)
# "left ⟨org⟩ after 15 yrs, now at ⟨org⟩": a fragment that says where the same subject is now
_NOW_AT = re.compile(
    r"^(?:(?:now|these\s+days)\s+at\s+(?:the\s+)?\x02|still\s+(?:on\s+\S+\s+own|alone)\s+in\s+\x02)", re.I
)


# ", starting at ⟨org⟩ in ⟨city⟩": a verb in -ing with what it is done at or to, after a leaving
_ING_AT = re.compile(
    r"^(?!according|regarding|including|concerning)[a-z]+ing\s+(?:at|for|in|to|with)\s+(?:the\s+)?\x02")
_LEAVING = re.compile(r"\b(?:left|quit|resigned|finished)\b", re.I)
_HEDGED = re.compile(r"\b(?:wants?|wanna|going\s+to|gonna|might|may|will|would|could|should|plan\w*|thinking|maybe|"
                     r"perhaps|if)\b", re.I)


def opens_clause(rest: str) -> bool:
    """Whether `rest` opens a clause of its own: a subject and a verb, or a verb."""
    if _NOW_AT.match(rest) or _ING_AT.match(rest):
        return True
    if lead := _LEAD.match(rest):  # ", so now ⟨0⟩ reports to ⟨2⟩", "..., starting Monday I'm ..."
        rest = rest[lead.end() :]
    if _BASE_VERB.match(rest) or _CONTRACTED_IS.match(rest):
        return True
    head = _SUBJECT_HEAD.match(rest)
    word = _first_non_adverb(rest[head.end() :] if head else rest)
    if not word:
        return False
    low = word.lower()
    if low in _AUX_WORDS or is_past(low) or low in _KNOWN_3SG:
        return True
    return bool(head) and low.endswith("s") and not low.endswith("ss") and len(low) > 2


def _first_non_adverb(text: str) -> str:
    for match in _FIRST_WORDS.finditer(text[:80]):
        if match.start() and text[match.start() - 1] not in " '":
            return ""
        word = match.group()
        if not is_adverb(word.lower()):
            return word
    return ""


def analyze(text: str, inherited: list[int] | None, first: bool) -> Clause | None:
    """Subject and predicate of a clause; None when it has no subject we can name."""
    lead = _LEAD.match(text)
    rest = text[lead.end() :] if lead else text
    if inherited and not _SUBJECT_HEAD.match(rest) and opens_clause(text) and not addresses_listener(text):
        if _BASE_VERB.match(text) and len(inherited) == 1:  # "... and work as" → "works as"
            text = singular_predicate(text)
        return Clause(text, inherited, text, "elided")
    clause = _explicit_subject(text, rest)
    if clause is None and first and not inherited and _NOW_AT.match(text):  # "Now at ⟨org⟩, still ⟨city⟩."
        return Clause(text, [SPEAKER], text[:1].lower() + text[1:], "implicit")
    if clause is None and first and _implicit_speaker(rest, bool(lead)):
        predicate = rest[:1].lower() + rest[1:]
        if _implicit_verb(rest).group(1).lower() == "been":  # "Always been into art" → has always been
            predicate = "has " + predicate
        clause = Clause(text, [SPEAKER], predicate, "implicit")
    return clause


# "⟨0⟩'s parents, ⟨1⟩ and ⟨2⟩, still live in ⟨3⟩": the named people are the subject
_NAMED_GROUP = re.compile(
    rf"^\x02\d+\x03's\s+(?:(?:{MOD_ALT})[\s-]+)*{_PEOPLE}s?\s*,\s*"
    r"(?P<names>\x02\d+\x03(?:\s*\([^()]{1,30}\))?(?:\s*(?:,|and|&)\s*\x02\d+\x03(?:\s*\([^()]{1,30}\))?)+)"
    r"\s*,\s*",
    re.I,
)


def _explicit_subject(text: str, rest: str) -> Clause | None:
    if match := _NAMED_GROUP.match(rest):
        ids = [int(i) for i in re.findall(PH, match.group("names"))]
        return Clause(text, list(dict.fromkeys(ids)), rest[match.end() :], "direct")
    if match := _COMPOUND.match(rest):
        return Clause(text, _compound_subjects(match.group()), rest[match.end() :], "direct")
    if match := _KIN_SUBJECT.match(rest):
        return Clause(text, [int(match.group("s"))], rest[match.end() :], "direct")
    if match := _APPOSITIVE.match(rest):
        return Clause(text, [int(match.group("s"))], rest[match.end() :], "direct")
    if match := _IS_CONTRACTION.match(rest):
        after = rest[match.end() :]
        verb = "has " if after.split(" ", 1)[0] in ("been", "got", "gone") else "is "
        return Clause(text, [int(match.group("s"))], verb + after, "direct")
    if match := _ASIDE_SUBJECT.match(rest):
        return Clause(text, [int(match.group("s"))], rest[match.end() :], "direct")
    if match := _OWNER.match(rest):
        return Clause(text, [int(match.group("s"))], rest[match.end() :], "owner")
    if match := _DIRECT.match(rest):
        return Clause(text, [int(match.group("s"))], rest[match.end() :], "direct")
    return None


def _compound_subjects(text: str) -> list[int]:
    """Members of a compound subject: "⟨0⟩ and ⟨0⟩'s brother ⟨1⟩" → [0, 1]; "⟨0⟩'s wife and ⟨0⟩" → [0]
    (an unnamed wife is no entity)."""
    ids = []
    for unit in _UNIT_RE.finditer(text):
        ids.append(int(unit.group("named") or unit.group("plain") or unit.group("owner")))
    return list(dict.fromkeys(ids))


def _implicit_verb(rest: str) -> re.Match | None:
    """The verb a subjectless sentence opens with, past its adverbs; a word in -ly counts as one only
    when it is an adverb ("officially", not "holly")."""
    match = _IMPLICIT_VERB.match(rest)
    if match and any(w.endswith("ly") and not _ly_adverb(w.lower())
                     for w in re.findall(r"[A-Za-z]+", rest[:match.start(1)])):
        return None
    return match


def _ly_adverb(word: str) -> bool:
    """An adverb made of an adjective ("officially", "happily", "gently"), not a name ("holly", "emily")."""
    return word not in FIRST_NAMES and (is_dictionary_word(word[:-2]) or is_dictionary_word(word[:-3] + "y")
                                        or is_dictionary_word(word[:-1] + "e"))


def _implicit_speaker(rest: str, lead: bool = False) -> bool:
    """Chat sentences without "I": "Talked to my friend...", "Went hiking", "Been busy", "finally
    quit ⟨1⟩" (after a word of time, only when the verb says what was done)."""
    match = _implicit_verb(rest)
    # lower case only from a writer who does not capitalize and names something ("quit ⟨1⟩ last week")
    if not match or not (rest[:1].isupper() or (rest[:1].islower() and "\x02" in rest)):
        return False
    low = match.group(1).lower()
    if low in ("done", "through") and _DONE_WITH.match(rest, match.start(1)):  # "Done with ⟨1⟩!"
        return True
    if low.endswith("ing") and _LEAVING_OPENS.match(rest, match.start(1)):  # "Leaving ⟨1⟩ after ten years."
        return True
    if low in SAME_FORM_VERBS:  # "quit ⟨1⟩ last week", "finally quit ⟨1⟩" are past; "Quit smoking!" is not
        return bool(_PAST_TIME.search(rest) or lead)
    return (is_past(low) or low == "been") and low not in _NOT_IMPLICIT


def singular_predicate(predicate: str) -> str:
    """The predicate of a compound subject, for one member: "live in ⟨2⟩" → "lives in ⟨2⟩"."""
    words = predicate.split(" ")
    for i, word in enumerate(words):
        low = word.lower()
        if is_adverb(low):  # "still live in ⟨3⟩" → "still lives in ⟨3⟩"
            continue
        if not (low.endswith("s") and not low.endswith("ss")):  # "lives" (after "I live") stays
            words[i] = third_person(word)
        break
    return " ".join(words)
