"""English morphology for the offline extractor: third-person conjugation and the first-person
rewrite ("I'm moving to Austin with my wife" → "⟨speaker⟩ is moving to Austin with ⟨speaker⟩'s wife").
"""

from __future__ import annotations

import re

from memories.extraction.offline.lexicon import (
    ADVERBS,
    COLLOQUIAL_VERBS,
    ED_BASE_VERBS,
    IRREGULAR_PAST,
    KINSHIP,
    LY_VERBS,
    MODALS,
    PAST_PARTICIPLES,
    SAME_FORM_VERBS,
)
from memories.extraction.offline.text import SPEAKER, ph

_IRREGULAR_3SG = {
    "am": "is",
    "are": "is",
    "be": "is",
    "were": "was",
    "have": "has",
    "do": "does",
    "go": "goes",
}
_NEGATIVE_3SG = {
    "don't": "doesn't",
    "haven't": "hasn't",
    "aren't": "isn't",
    "weren't": "wasn't",
    "ain't": "isn't",
}
_ES_ENDING = re.compile(r"(?:s|sh|ch|x|z|o)$")
_Y_ENDING = re.compile(r"[^aeiou]y$")
_TOKEN = re.compile(r"\x02\d+\x03|[^\W\d_]\w*(?:'\w+)*|\s+|.", re.S)
_BY_MYSELF = re.compile(r"\bby (?:myself|ourselves)\b", re.I)
_WE_ALL = re.compile(
    r"\b(we(?:'re|'ve|'d|'ll)?|us|We(?:'re|'ve|'d|'ll)?)\s+((?:can|will|should|could|would|must|might|are|were|have|"
    r"had|do)\s+)?(?:all|both)\b"
)
_OF_US = re.compile(r"\b(all|both|each|some|many|most|none|any|one) of us\b", re.I)
_COMPOUND = frozenset({"and", "or", "nor", "&"})
_SUBJECT_OPENERS = frozenset(
    {
        ",",
        ";",
        "(",
        "-",
        "my",
        "our",
        "his",
        "her",
        "their",
        "your",
        "with",
        "both",
        "and",
        "s",
        "me",
        "the",
        "then",
        "so",
        "but",
        "when",
        "since",
        "because",
        "that",
    }
)
_PEOPLE = frozenset(KINSHIP) | frozenset(
    [
        "friends",
        "family",
        "kids",
        "children",
        "parents",
        "colleagues",
        "coworkers",
        "folks",
        "guys",
        "team",
        "everyone",
        "others",
        "he",
        "she",
        "they",
        "him",
        "her",
        "them",
    ]
)
_CONTRACTIONS_3SG = {"m": "is", "re": "is", "ve": "has", "ll": "will"}
_CONTRACTIONS_PLURAL = {"m": "am", "re": "are", "ve": "have", "ll": "will"}
_POSSESSIVE = frozenset({"my", "mine", "our", "ours"})
_OBJECT = frozenset({"me", "us"})


def third_person(word: str) -> str:
    """The he/she form of a verb that followed "I" or "we" ("love" → "loves", "am" → "is");
    past tenses, modals and non-verbs come back unchanged."""
    low = word.lower()
    if low in _IRREGULAR_3SG:
        return _IRREGULAR_3SG[low]
    if low in _NEGATIVE_3SG:
        return _NEGATIVE_3SG[low]
    if low in COLLOQUIAL_VERBS:
        return COLLOQUIAL_VERBS[low]
    if not _is_present_base(low):
        return word
    if _ES_ENDING.search(low):
        return word + "es"
    if _Y_ENDING.search(low):
        return word[:-1] + "ies"
    return word + "s"


def _is_present_base(low: str) -> bool:
    if "'" in low or not low.isalpha():
        return False
    if low in MODALS or low in IRREGULAR_PAST or low in SAME_FORM_VERBS or low in PAST_PARTICIPLES:
        return False
    return not is_past(low)


def is_adverb(low: str) -> bool:
    return low in ADVERBS or (low.endswith("ly") and low not in LY_VERBS and len(low) > 3)


def is_past(low: str) -> bool:
    return low in IRREGULAR_PAST or (low.endswith("ed") and len(low) > 3 and low not in ED_BASE_VERBS)


class _Rewriter:
    """One pass over the tokens of a tagged sentence."""

    def __init__(self, text: str, who: int = SPEAKER):
        self.who = who
        text = _OF_US.sub(
            lambda m: "everyone" if m.group(1).lower() == "all" else m.group(1) + " of them", text
        )
        text = _WE_ALL.sub(lambda m: m.group(1) + (" " + m.group(2).strip() if m.group(2) else ""), text)
        self.tokens = _TOKEN.findall(_BY_MYSELF.sub("alone", text))
        self.used_we = False

    def run(self) -> str:
        out = []
        for i, tok in enumerate(self.tokens):
            out.append(self._token(i, tok))
        return "".join(out)

    def _token(self, i: int, tok: str) -> str:
        low = tok.lower()
        base, _, contraction = low.partition("'")
        if base in ("i", "we"):
            return self._subject(i, base, contraction)
        if low in _POSSESSIVE:
            self.used_we = self.used_we or low in ("our", "ours")
            return ph(self.who) + "'s"
        if (tok in _OBJECT or tok in ("Me", "Us")) and not self._hyphenated(i):
            self.used_we = self.used_we or low == "us"
            return ph(self.who)
        if low in ("myself", "ourselves"):
            return "themself" if low == "myself" else "themselves"
        return tok

    def _subject(self, i: int, base: str, contraction: str) -> str:
        self.used_we = self.used_we or base == "we"
        compound = self._is_compound(i)
        if contraction:
            return ph(self.who) + " " + self._expand(i, contraction, compound)
        if not compound:
            self._conjugate_next(i)
        return ph(self.who)

    def _expand(self, i: int, contraction: str, compound: bool) -> str:
        if contraction == "d":  # "I'd been" → had; "I'd love" → would
            nxt = self._next_word(i)
            return _had_or_would(self.tokens[nxt] if nxt is not None else "")
        table = _CONTRACTIONS_PLURAL if compound else _CONTRACTIONS_3SG
        return table.get(contraction, contraction)

    def _conjugate_next(self, i: int) -> None:
        j = self._next_word(i)
        if j is not None:
            self.tokens[j] = third_person(self.tokens[j])

    def _next_word(self, i: int) -> int | None:
        """Index of the verb after token i, skipping spaces and adverbs; None at punctuation."""
        for j in range(i + 1, len(self.tokens)):
            tok = self.tokens[j]
            if tok.isspace():
                continue
            low = tok.lower()
            if not (tok[0].isalpha() and tok[0].islower()):
                return None
            if is_adverb(low):
                continue
            return j
        return None

    def _is_compound(self, i: int) -> bool:
        """True for "Ana and I", "my wife and I"; false for "...countries and I'm excited"."""
        j = self._previous_index(i)
        if j is None or self.tokens[j].lower() not in _COMPOUND:
            return False
        k = self._previous_index(j)
        if k is None:
            return False
        before = self.tokens[k]
        if not (before.startswith("\x02") or before[:1].isupper() or before.lower() in _PEOPLE):
            return False
        return self._opens_subject(self._previous_index(k))

    def _opens_subject(self, k: int | None) -> bool:
        """The word before "Ana" in "... Ana and I": a subject starts there, not an object ("I'm Ana")."""
        if k is None:
            return True
        word = self.tokens[k]
        if word.lower() in _SUBJECT_OPENERS:
            return True
        return word[:1].isupper() and word != "I" and not word.lower().startswith("i'")

    def _hyphenated(self, i: int) -> bool:
        """A hyphenated "me" ("me-time") is part of a word, not the speaker."""
        return (i + 1 < len(self.tokens) and self.tokens[i + 1] == "-") or (
            i > 0 and self.tokens[i - 1] == "-"
        )

    def _previous_index(self, i: int) -> int | None:
        for j in range(i - 1, -1, -1):
            if not self.tokens[j].isspace():
                return j
        return None


def _had_or_would(verb: str) -> str:
    """What "'d" stands for before `verb`: "had" before a participle ("I'd been"), else "would"."""
    low = verb.lower()
    return "had" if low in PAST_PARTICIPLES or is_past(low) else "would"


def rewrite_first_person(tagged: str, who: int = SPEAKER) -> tuple[str, bool]:
    """I/me/my/we/our → the speaker placeholder (or `who`'s: the signer of a letter the writer pasted),
    with verb agreement. Returns the new text and whether "we/our/us" was used (a weaker, inferred
    attribution)."""
    rewriter = _Rewriter(tagged, who)
    return rewriter.run(), rewriter.used_we


_YOU_SUBJECT_AFTER = frozenset({",", ";", ":", "(", "-", "—", "and", "but", "so", "that", "when", "if", "because",
                                "since", "as", "now", "then", "once", "while", "hope", "heard", "hear", "know"})
_PLURAL_YOU = frozenset({"guys", "all", "both", "two", "lot", "folks", "people"})
_NAMED_AFTER = re.compile(r"\s*(?:\x02\d+\x03|(?:your|his|her)\s)")
_NOT_VERBS = frozenset({"and", "or", "nor", "but", "too", "also", "who", "that", "the", "a", "an", "to", "in", "at"})


def rewrite_second_person(tagged: str, listener: int) -> str:
    """you/your → the listener the message is addressed to ("Dear ⟨5⟩, your lease begins…" →
    "⟨5⟩'s lease begins…"), with verb agreement ("you are" → "⟨5⟩ is", "you've" → "⟨5⟩ has").
    Not "you guys", "you all": more than one listener."""
    tokens = _TOKEN.findall(tagged)
    words = [i for i, t in enumerate(tokens) if not t.isspace()]
    if any(tokens[j].lower() in _PLURAL_YOU or tokens[j].lower() in _COMPOUND and not _NAMED_AFTER.match(
            "".join(tokens[j + 1:])) for i, j in zip(words, words[1:], strict=False) if tokens[i].lower() == "you"):
        return tagged  # "you guys", "you or anyone": more than the one listener ("you and ⟨3⟩" is them and ⟨3⟩)
    out = list(tokens)
    for n, i in enumerate(words):
        low = tokens[i].lower()
        base, _, contraction = low.partition("'")
        if low in ("your", "yours"):
            out[i] = ph(listener) + "'s"
        elif low == "yourself":
            out[i] = "themself"
        elif base == "you":
            before = tokens[words[n - 1]].lower() if n else ""
            nxt = words[n + 1] if n + 1 < len(words) else None
            subject = (not before or before in _YOU_SUBJECT_AFTER or before in MODALS) and (
                nxt is not None and tokens[nxt][:1].isalpha() and tokens[nxt][:1].islower())
            if contraction:
                if contraction == "d":
                    out[i] = ph(listener) + " " + _had_or_would(tokens[nxt] if nxt is not None else "")
                else:
                    out[i] = ph(listener) + " " + _CONTRACTIONS_3SG.get(contraction, contraction)
            else:
                out[i] = ph(listener)
                if subject and before not in MODALS:
                    j = next((w for w in words[n + 1:] if not is_adverb(tokens[w].lower())), None)
                    if j is not None and tokens[j][:1].isalpha() and tokens[j][:1].islower() and (
                            tokens[j].lower() not in _NOT_VERBS):
                        out[j] = third_person(tokens[j])
    return "".join(out)
