"""Text plumbing for the offline extractor: normalization, sentence splitting, entity placeholders.

Inside the extractor every entity mention is replaced by a placeholder `\\x02<index>\\x03`
(index 0 is always the speaker), so patterns can match "⟨entity⟩ moved to ⟨entity⟩" without
caring how the names are spelled; `render` turns placeholders back into canonical names.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from functools import cache

from memories.extraction.offline.lexicon import (
    ABBREVIATIONS,
    CHAT_FORMS,
    CORP_ABBREVIATIONS,
    FIRST_NAMES,
    GIVEN_NAMES,
    KINSHIP,
    PET_TERMS,
    STOP_CAPS,
    alternation,
)
from memories.extraction.offline.parse import is_common_word, is_dictionary_word, is_word_form, verb_lemma
from memories.naming import UPPER_LETTERS, normalize_alias

_UP = UPPER_LETTERS  # a capital letter, in a character class

SPEAKER = 0
PH = r"\x02(\d+)\x03"
PH_RE = re.compile(PH)

_QUOTES = str.maketrans({"’": "'", "‘": "'", "´": "'", "“": '"', "”": '"', "\u00a0": " ", "…": "..."})
_EMOJI = re.compile("[\U0001f000-\U0001faff\u2600-\u27bf\ufe0f\u200d]+")
# an emoji between a word and a capital ends a sentence: "we made it 🎉 She's a nurse now"
_EMOJI_BREAK = re.compile("(?<=[\\w)])[ \t]*[\U0001f000-\U0001faff\u2600-\u27bf\ufe0f\u200d]+[ \t]+(?=[" + _UP + "])")
_INLINE_SPACE = re.compile(r"[ \t\r\f\v]+")
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")  # \x02-\x04 are our placeholder marks
_BOUNDARY = re.compile(r"[.!?]+[\"')\]]*(?=\s|$)|\n+")
_WORD_BEFORE = re.compile(r"(\w+(?:\.\w+)*)$")
_SPACE_BEFORE_PUNCT = re.compile(r"\s+([,.;:!?)])")
_TRAILING = re.compile(r"[\s,;:.!?\-–—]+$")
_TRAILING_FILLER = re.compile(r"(?:[\s,]+(?:lol|lmao|haha\w*|hehe|xd|:\)|:d|:p|;\))+)+\W*$", re.I)
_LEADING = re.compile(r"^[\s,;:.!?\-–—\"'(]+")
_MULTI_SPACE = re.compile(r"\s{2,}")
_NON_WORD = re.compile(r"[^\w\s]+")


def ph(index: int) -> str:
    return f"\x02{index}\x03"


def normalize_message(text: str) -> str:
    """Straight quotes, no emoji or control characters, single spaces (newlines kept: they end
    sentences); chat spellings in lower case read as the words they stand for ("im", "w/", "workin")."""
    text = _CONTROL.sub(" ", _EMOJI.sub(" ", _EMOJI_BREAK.sub(". ", text.translate(_QUOTES))))
    text = _CHAT_FORM.sub(_chat_form, text)
    text = _TWO_FOR_TO.sub(_two_for_to, text)
    text = _kin_s_before_kin().sub(r"\1's", text)
    text = _LABEL_OPENING.sub("", text)
    text = _COLON_BEFORE_VERB.sub(lambda m: f"{m['pre']}. ", text)
    text = _NOTICE_OPENING.sub(lambda m: m["first"], text)
    text = _LAST_DAY_OPENING.sub(lambda m: f"{'My' if m['l'] == 'L' else 'my'} last day at", text)
    text = _NO_LONGER_OPENING.sub(lambda m: f"{'I' if m['n'] == 'N' else 'i'}'m no longer {m['prep']}", text)
    text = _IS_BEFORE_PLACE.sub(_is_before_place, text)
    text = _NICKNAME_INSIDE.sub(lambda m: f'{m["given"]} {m["family"]} ("{m["q"] or m["s"] or m["p"]}")', text)
    return _INLINE_SPACE.sub(" ", _DROPPED_G.sub(_with_g, text)).strip()


# "Tariq's in Glasgow now": an "'s" before a preposition is "is" (a possessive needs its noun), which
# the parser would read as "Tariq's" owning nothing; not "at Tariq's in Glasgow" (his place)
_IS_BEFORE_PLACE = re.compile(
    r"(?P<pre>(?:(?<=\s)|^)(?P<before>[^\W\d_]+\s+)?)(?P<who>[^\W\d_]{2,})['’]s"
    r"(?=\s+(?:in|at|from|back|still|away)\s+(?![\d-])(?!(?:january|february|march|april|may|june|july|august|"
    r"september|october|november|december)\b)(?i:[a-z]))")
_PLACE_PREPOSITIONS = frozenset({"at", "to", "from", "by", "near", "round", "around", "over", "outside", "in"})
# "let's", "it's": no name; "my master's in marine biology": a degree
_OWNING_WORDS = frozenset({"let", "it", "that", "master", "bachelor"})


def _is_before_place(m: re.Match) -> str:
    before = (m["before"] or "").strip().lower()
    who = m["who"].lower()
    if before in _PLACE_PREPOSITIONS or before in ("the", "a", "an", "st", "st.") or who in _OWNING_WORDS or (
            who not in GIVEN_NAMES and who not in KINSHIP):
        return m.group()  # "St Mary's in June", "McDonald's in Leeds": a place's name, no one's "is"
    return f"{m['pre']}{m['who']} is"


# a word that cannot follow a possessive: "Jules is", "Nicholas and"
_NOT_OWNED = frozenset({"is", "was", "are", "were", "and", "or", "but", "has", "had", "have", "will", "would",
                        "can", "could", "did", "does", "do", "to", "of", "in", "on", "at", "for", "with", "from",
                        "the", "a", "an", "this", "that", "these", "today", "tonight", "said", "says", "told",
                        "asked", "went", "got", "just", "too", "also", "who", "moved", "started", "left"})
_S_BEFORE_WORD = re.compile(r"(?<![\w'’])(?P<base>[^\W\d_]{3,})s(?=[ \t]+(?P<next>[^\W\d_]+))")


def _owned_form(base: str, following: str) -> bool:
    """"radeks startup": the word is a possessive without its apostrophe, not a word or a name of
    its own ("roses", "bills", "lucas") nor a verb's subject ("carlos moved")."""
    word = f"{base}s".lower()
    return (following.lower() not in _NOT_OWNED and word not in FIRST_NAMES and not is_dictionary_word(word)
            and not is_word_form(word) and not is_common_word(word))


def restore_possessives(text: str, names: Iterable[str]) -> str:
    """"betos best friend", "tomeks startup": in chat, a person's name with an "s" and no apostrophe
    before a noun is their possessive ("beto's best friend"), when the name is a given name said in
    the message or known and the word with its "s" is no name of its own."""
    firsts = {w.lower() for n in names for w in n.split()[:1] if len(w) >= 3}
    if not firsts:
        return text

    def owned(m: re.Match) -> str:
        base = m["base"]
        if base.lower() not in firsts or f"{base}s".lower() in firsts or not _owned_form(base, m["next"]):
            return m.group()
        return f"{base}'s"

    return _S_BEFORE_WORD.sub(owned, text)


def possessive_stems(text: str) -> set[str]:
    """The words a chat possessive without its apostrophe may stand for ("radeks startup" →
    "radek"), normalized, for looking up the names an agent knows."""
    return {normalize_alias(m["base"]) for m in _S_BEFORE_WORD.finditer(text) if _owned_form(m["base"], m["next"])}


# "update: quit my job", "big news - ...", "job update for the group: ...": a label before what a chat
# message says (not a note's "For the file:")
_LABEL_OPENING = re.compile(
    r"(?:^|(?<=[.!?]\s))(?i:(?:(?:big|quick|small|life|little|some|good|sad|work|job|house|home|family|baby|health|"
    r"school|uni|flat|move|moving|dating|weekly|monthly)\s+){0,2}(?:update|news|btw|fyi|psa|ps|edit)"
    r"(?:\s+(?:for|to)\s+(?:the\s+|you\s+)?(?:group|chat|all|everyone|everybody|guys|folks|family|fam|gang|lot|team)"
    r"(?:\s+chat)?)?)"
    r"\s*(?::|\s[-—–])\s+")
# "I've decided: leaving the firm and moving to X": after a writer's decision said so, a colon before
# a clause that opens with a verb in -ing ends the sentence; the clause is said of the writer
_COLON_BEFORE_VERB = re.compile(
    r"(?:^|(?<=[.!?]\s))(?P<pre>(?i:(?:ok(?:ay)?|right|so|well)?[\s,]*(?:(?:team|everyone|all|guys|folks)[\s,]+)?"
    r"(?:it'?s\s+(?:official|happening|settled|done|decided)|i'?m\s+(?:doing\s+it|going\s+for\s+it)|"
    r"i'?ve\s+(?:decided|done\s+it|made\s+up\s+my\s+mind|made\s+(?:the|a)\s+decision)|decision\s+(?:made|taken)))"
    r")\s*:\s+(?=[A-Za-z][a-z]+ing\s+(?:[A-Z]|(?:the|a|an|my|our|to|from|in|into|at|back|out|up|down|home|away|"
    r"over)\b))")
# "Please be advised that Mr. X has resigned", "Kindly note that ...": a formal note's preamble before
# what it says (not a request of the reader)
_NOTICE_OPENING = re.compile(
    r"(?:^|(?<=[.!?]\s))(?:(?:please|kindly)\s+(?:be\s+advised|be\s+informed|be\s+aware|note)|"
    r"(?:we|i)\s+(?:wish\s+to\s+|would\s+like\s+to\s+|are\s+pleased\s+to\s+|regret\s+to\s+)?"
    r"(?:inform|advise|notify)\s+you|this\s+is\s+to\s+(?:inform\s+you|confirm|notify\s+you))\s+that\s+"
    r"(?!you\b|your\b)(?P<first>\w)",
    re.I)
# "Last day at X is Friday": the writer's last day, as "my last day at X" says it
_LAST_DAY_OPENING = re.compile(
    r"(?:^|(?<=[.!?]\s))(?P<l>[Ll])ast day at(?=\s)(?![^.!?]*\bfor\s+(?:my|his|her|our|their|[A-Z]))")
# "No longer at X, started at Y": a sentence that opens so is the writer's state ("I'm no longer at X")
_NO_LONGER_OPENING = re.compile(r"(?:^|(?<=[.!?]\s)|(?<=\n))(?P<n>[Nn])o longer (?P<prep>at|with|in|working)\b")
# 'Roberto "Beto" Salgado', "Roberto (Beto) Salgado": the nickname said inside the full name, read
# as said after it
_NICKNAME_INSIDE = re.compile(
    rf"\b(?P<given>[{_UP}][\w-]+) (?:\"(?P<q>[{_UP}][\w-]+)\"|'(?P<s>[{_UP}][\w-]+)'|\((?P<p>[{_UP}][\w-]+)\))"
    rf" (?P<family>[{_UP}][\w-]+)\b(?!')"
)
# after a name (a given name, or a word no dictionary holds), "w" before a verb is the initial of a
# family name ("danny w broke his ankle"), not "with"
_VERB_AFTER = re.compile(r"[ \t]+(?:is|was|has|had|just|got|gets|said|says|told|went|left|joined|quit|moved|"
                         r"broke|came|will)\b")
_NAME_BEFORE_W = re.compile(r"(?<![\w'’])([^\W\d_]{2,})[ \t]+$")


_OWNER_BEFORE = re.compile(r"(?<![\w'’])(?:my|his|her|our|their|your|[^\W\d_]+['’]s)[ \t]+$", re.I)


def _chat_form(m: re.Match) -> str:
    word = m.group()
    if word in ("cuz", "coz") and _OWNER_BEFORE.search(m.string, 0, m.start()):
        return "cousin"  # "my cuz tasha": a cousin, not "because"
    if word == "w" and _VERB_AFTER.match(m.string, m.end()) and (
            before := _NAME_BEFORE_W.search(m.string, 0, m.start())) and (
            before.group(1).lower() in FIRST_NAMES or not is_dictionary_word(before.group(1).lower())):
        return word
    return CHAT_FORMS[word]


_CHAT_FORM = re.compile(
    r"(?<![\w'/])(?:" + "|".join(re.escape(k) for k in sorted(CHAT_FORMS, key=len, reverse=True)) + r")(?![\w'/])")
# "moved 2 bristol", "going back 2 uni": "2" for "to" after a verb of going
_TWO_FOR_TO = re.compile(r"\b(moved|moving|went|going|back|relocated|relocating|headed|heading|came|coming)"
                         r" 2 (?=([^\W\d_][\w'-]*))", re.I)


def _two_for_to(match: re.Match) -> str:
    """Not a count: "moved 2 years ago", "went 2 times", "moving 2 boxes" keep their number."""
    word = match.group(2).lower()
    if word in ("more", "of", "or", "and") or word.endswith("s") and is_word_form(word):
        return match.group()
    return f"{match.group(1)} to "
# "my sisters bf", "his moms dog", "my wifes sister": a relative's, its apostrophe left out (not "my
# sisters and I", "my parents dog": a word said in the plural as often; not "my kids pet the cat", "my
# sisters boss him around": a word after it that is also a verb, but for a partner's)
_FAMILY = ("spouse_of", "partner_of", "parent_of", "sibling_of", "cousin_of", "grandparent_of", "aunt_or_uncle_of",
           "friend_of", "roommate_of")
_NOT_OWNED_PETS = ("pet", "fish", "horse", "pig", "snake", "shepherd", "bird", "chicken", "pup")


@cache
def _kin_s_before_kin() -> re.Pattern:
    """Built on first use: which kin words are also verbs is the parser's lemma table's to say."""
    owners = [w for w, (rel, _) in KINSHIP.items() if rel in _FAMILY and " " not in w and w.isalpha()
              and w not in ("parent", "grandparent", "kid", "child")]
    owned = [w for w, (rel, _) in KINSHIP.items() if rel in ("spouse_of", "partner_of", "former_partner_of")
             or " " not in w and not verb_lemma(w)] + [w for w in PET_TERMS if w not in _NOT_OWNED_PETS]
    return re.compile(rf"(?<![\w'’])((?i:my|his|her|our|their|your)\s+(?:{alternation(owners)}))s"
                      rf"(?=\s+(?:{alternation(owned)})(?![\w'’-]))")


_DROPPED_G = re.compile(r"(?<![\w'])([a-z]{3,})in(?:'|(?![\w']))")


def _with_g(match: re.Match) -> str:
    """"workin" → "working", "gettin'" → "getting": a verb's -ing without its g; a word of its own
    ("cousin", "robin") or a name ("justin") is left alone."""
    word, stem = match.group(0).rstrip("'"), match.group(1)
    if is_dictionary_word(word) or not (verb_lemma(stem) or verb_lemma(stem + "e")
                                        or stem[-1] == stem[-2] and verb_lemma(stem[:-1])):
        return match.group(0)
    return word + "g"


# "Dear Mr Haddad, Please find enclosed ...": a letter's salutation on the line of its first sentence
_SALUTATION = re.compile(
    rf"^\W*(?i:dear|hi|hello|hey)\s+(?:[{_UP}][\w'’-]*\.?\s+){{0,3}}[{_UP}][\w'’-]*,\s+(?=[{_UP}])"
    rf"(?![{_UP}][\w'’-]*(?:\s*,|\s+(?:and|&)\s))")  # not "Hi Anna, Ben and Carla, ...": more names greeted


def split_sentences(text: str) -> list[str]:
    """Sentences of a chat message; abbreviations ("Dr.", "e.g.") and initials do not split; a
    letter's salutation is a sentence of its own."""
    if salutation := _SALUTATION.match(text):
        return [salutation.group().strip(), *split_sentences(text[salutation.end():])]
    sentences, start = [], 0
    for match in _BOUNDARY.finditer(text):
        if not _is_boundary(text, match):
            continue
        piece = text[start : match.end()].strip()
        if piece:
            sentences.append(piece)
        start = match.end()
    tail = text[start:].strip()
    if tail:
        sentences.append(tail)
    return sentences


_NEXT_WORD = re.compile(rf"\s+([{_UP}][\w'’-]*)")
_INITIAL_I = re.compile(r"(?:^|[.!?,:;'\"(‘“]\s*)$")


def _is_boundary(text: str, match: re.Match) -> bool:
    if match.group() != ".":
        return True
    before = _WORD_BEFORE.search(text, max(0, match.start() - 40), match.start())
    if not before:
        return True
    word = before.group(1)
    if word.lower() in ABBREVIATIONS or (len(word) == 1 and word.isupper() and word != "I"):
        return False
    following = _NEXT_WORD.match(text, match.end())
    if word == "I" and _INITIAL_I.search(text, 0, before.start(1)) and following and (
            following.group(1).lower() not in FIRST_NAMES | STOP_CAPS):
        return False  # "I. Brandt signed", "Regards, I. Brandt": an initial; not "I. Then …", "I. Sarah …"
    if word.lower() in CORP_ABBREVIATIONS:
        following = text[match.end() :].lstrip()[:1]
        return bool(following) and following.isupper()
    return True


_RENAMED = re.compile(
    r"(\x02(\d+)\x03)(?:\s*\(\s*(?:(?:also\s+|better\s+)?known\s+as\s+|a\.?k\.?a\.?\s+|nicknamed\s+)?\"?\x02\2\x03\"?\s*\)"
    r"|\s*,\s*(?:(?:also\s+|better\s+)?known\s+as|a\.?k\.?a\.?|nicknamed)\s+\"?\x02\2\x03\"?\s*(?:,|(?=[.!?]|$)))"
)


def render(tagged: str, names: Sequence[str]) -> str:
    """Placeholders → canonical names; tidy spacing and punctuation; capitalize the first letter."""
    # "⟨2⟩ (known as ⟨2⟩)", "⟨2⟩, aka ⟨2⟩,": a name given for one named just before says nothing more
    tagged = _RENAMED.sub(r"\1", tagged)
    text = PH_RE.sub(lambda m: names[int(m.group(1))], tagged)
    text = _SPACE_BEFORE_PUNCT.sub(r"\1", text)
    text = _MULTI_SPACE.sub(" ", text)
    text = _TRAILING.sub("", _LEADING.sub("", _TRAILING_FILLER.sub("", text)))
    text = text.replace("( ", "(").replace(" )", ")")
    return text[:1].upper() + text[1:]


def fact_key(text: str) -> str:
    """Dedup key: lower-case words only."""
    return " ".join(_NON_WORD.sub(" ", text.lower()).split())


def entity_ids(tagged: str) -> list[int]:
    return [int(i) for i in PH_RE.findall(tagged)]
