"""How a message names people and things the agent may already know, in English: runs of
capitalized words (a title kept), read by the write path's alias lookup and by retrieval's
entity hints. Pure functions over text."""

from __future__ import annotations

import re

from memories.extraction.offline.lexicon import STOP_CAPS

_TITLE = r"(?:Mr|Mrs|Ms|Miss|Mx|Dr|Doctor|Prof|Professor)\.?\s+"



_CAP_WORD = r"[A-ZÀ-Þ][\w'’-]*"



_NAME_RUN = re.compile(rf"(?<![\w'’])(?:{_TITLE})?{_CAP_WORD}(?:\s+{_CAP_WORD}){{0,2}}")



def name_runs(text: str) -> list[str]:
    """Runs of one to three capitalized words (a leading title kept, a possessive "'s" and a
    sentence's opening filler such as "So" or "Yesterday" dropped): the names that an alias
    lookup by n-grams can miss ("Paddy", "Dr. Fisher", "BofA")."""
    out = []
    for match in _NAME_RUN.finditer(text):
        words = [re.sub(r"['’]s$", "", w) for w in match.group().split()]
        titled = re.match(_TITLE, match.group()) is not None
        while not titled and words and words[0].lower().strip("'’") in STOP_CAPS:
            words = words[1:]
        while words and words[-1].lower() in STOP_CAPS:
            words = words[:-1]
        if words and not (len(words) == 1 and titled):
            out.append(" ".join(words))
    return list(dict.fromkeys(out))
