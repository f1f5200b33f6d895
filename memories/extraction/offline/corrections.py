"""Corrections of a name said earlier: "Sorry, I meant Oak Lawn, not Elmhurst.", "Wait — it's
Lyft, not Uber.", "Correction: Riverside, not Ridgeway.", "It's Porto. Not Braga." → (right, wrong)
entity indices.

Only names count (both sides must be entities of the message), and the sentence must be a
correction: a cue ("sorry", "wait", "correction", "oops", "actually", "my bad") or "I meant". What
the correction changes is decided by the write pipeline, against what was stored recently.
"""

from __future__ import annotations

import re

_E = r"\x02(?P<{}>\d+)\x03"
_CUE = r"(?:sorry|oops|whoops|wait|actually|correction|my\s+bad|scratch\s+that|no|typo|erratum)"
_LEAD = rf"^(?:{_CUE}\b[\s,:;!.—–-]*)*"
_SAYS = (r"(?:i\s+meant(?:\s+to\s+say)?|i\s+mean|it'?s|it\s+is|it\s+was|that'?s|that\s+is|that\s+should\s+be|"
         r"should\s+be|make\s+that|"
         # "his surname is Varga, not Vargas": one part of a name corrected
         r"(?:\x02\d+\x03's|his|her|their|my)\s+(?:sur|last\s+|family\s+|first\s+|middle\s+|full\s+)?name\s+"
         r"(?:is|was|'s))")
_DET = r"(?:(?:the|at|in|to|from|with)\s+)?"
# what may follow the pair: an aside of the writer's ("..., I always mix them up", "— my bad"),
# which states nothing of the names
_ASIDE = (r"(?:\s*[,;—–-]+\s*(?:(?:i|\x02\d+\x03)\s+(?:always|keeps?|kept|mix(?:es|ed)?|gets?|got|confuse[ds]?)\b"
          r"|my\s+bad|sorry|oops|lol|haha)[^.!?]{0,80})?")
_RESTATES = (r"(?:is|was|are|were|'s|works?\s+(?:at|for)|worked\s+(?:at|for)|lives?\s+in|lived\s+in|moved\s+to|"
             r"goes\s+to|studies\s+at|studied\s+at|called|named)")
_PATTERNS = (
    # I meant ⟨X⟩, not ⟨Y⟩ / it's ⟨X⟩ not ⟨Y⟩ / Correction: ⟨X⟩, not ⟨Y⟩
    re.compile(rf"{_LEAD}(?P<says>{_SAYS}\s+)?{_DET}{_E.format('right')}\s*,?\s*(?:and\s+)?not\s+{_DET}"
               rf"{_E.format('wrong')}{_ASIDE}\s*[.!?]*\s*$", re.I),
    # not ⟨Y⟩, ⟨X⟩ / ⟨Y⟩ → I meant ⟨X⟩ / I said ⟨Y⟩ but I meant ⟨X⟩
    re.compile(rf"{_LEAD}(?:(?P<says>{_SAYS})\s+)?not\s+{_DET}{_E.format('wrong')}\s*[,;—–-]+\s*(?:but\s+)?{_DET}"
               rf"{_E.format('right')}{_ASIDE}\s*[.!?]*\s*$", re.I),
    # Actually he works at ⟨X⟩, not ⟨Y⟩ / Sorry, my doctor is ⟨X⟩, not ⟨Y⟩ / It's ⟨X⟩ actually, not ⟨Y⟩:
    # the statement said again, its value corrected (a verb that states a value, so "actually I
    # prefer ⟨X⟩, not ⟨Y⟩" is no correction)
    re.compile(rf"{_LEAD}(?P<says>(?:[^\x02.!?]|\x02\d+\x03(?:'s)?){{0,60}}?\b{_RESTATES}\s+(?:actually\s+)?){_DET}{_E.format('right')}(?:\s+actually)?"
               rf"\s*,?\s*(?:and\s+)?not\s+{_DET}{_E.format('wrong')}{_ASIDE}\s*[.!?]*\s*$", re.I),
    re.compile(rf"{_LEAD}(?:i\s+)?(?:said|wrote|typed)\s+{_DET}{_E.format('wrong')}\s*,?\s*(?:but|when)\s+"
               rf"(?P<says>i\s+meant)\s+{_DET}{_E.format('right')}\s*[.!?]*\s*$", re.I),
)


def correction_in(tagged: str) -> tuple[int, int] | None:
    """(right, wrong) entity indices when the tagged sentence corrects one name by another."""
    text = tagged.strip()
    for pattern in _PATTERNS:
        match = pattern.match(text)
        if match is None:
            continue
        says = match.group("says") or ""
        if not (re.match(r"i\s+mean", says, re.I) or _has_cue(text) or _ACTUALLY.search(text)
                or _OPENS_WITH_NOT.match(text)):
            continue
        right, wrong = int(match.group("right")), int(match.group("wrong"))
        if right != wrong:
            return right, wrong
    return None


_ACTUALLY = re.compile(r"\bactually\b", re.I)  # "it's ⟨X⟩ actually, not ⟨Y⟩": the cue inside
_OPENS_WITH_NOT = re.compile(r"^\W*not\s", re.I)  # "Not ⟨Y⟩, ⟨X⟩.": the denial that opens it is the cue


def _has_cue(text: str) -> bool:
    return re.match(rf"^{_CUE}\b", text, re.I) is not None


_SAID_ALONE = re.compile(rf"{_LEAD}(?:{_SAYS})\s+{_DET}{_E.format('right')}\s*[.!]*\s*$", re.I)
_NOT_ALONE = re.compile(rf"^\W*(?:and\s+)?not\s+{_DET}(?P<name>.+?)\s*[.!]*\s*$", re.I)


def split_correction(tagged: str, following: str,
                     following_names: list[tuple[str, int | None]]) -> tuple[int, int] | None:
    """"It's Porto. Not Braga.": the right name said on its own, then a sentence that is only "Not
    ⟨wrong⟩" — the bare denial is the correction cue. `following_names` are the (text, entity
    index) mentions of that next sentence."""
    said, denied = _SAID_ALONE.match(tagged.strip()), _NOT_ALONE.match(following.strip())
    if said is None or denied is None or len(following_names) != 1:
        return None
    text, wrong = following_names[0]
    right = int(said.group("right"))
    if wrong is None or wrong == right or denied.group("name").strip().lower() != text.lower():
        return None
    return right, wrong
