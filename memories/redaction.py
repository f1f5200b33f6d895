"""Finding and redacting a forgotten person's names in any text or JSON value. Pure functions.

Names are matched as whole runs of words, case- and accent-insensitively ("Zoë" matches the alias
"zoe", "Zoe's" is redacted to "[redacted]'s"), whatever their length: a two-letter nickname is
as much a name as a full one. The matcher never holds the names themselves, only keyed digests of
their normalized forms, so a forget can leave a tombstone that recognizes the names later without
storing them (memories.models.ForgetTombstone).
"""

from __future__ import annotations

import hashlib
import hmac
import re
from collections.abc import Iterable

from memories.naming import normalize_alias, unfolded_alias

REDACTED = "[redacted]"
MAX_NAME_WORDS = 8
_WORD = re.compile(r"\w+")


def name_digest(normalized: str, *, key: bytes) -> str:
    """The keyed digest of a normalized name (what a tombstone stores)."""
    return hmac.new(key, normalized.encode("utf-8"), hashlib.sha256).hexdigest()


class NameMatcher:
    """Recognizes any of a set of names in text. Built from names (`from_names`) or from the
    digests a tombstone kept (`from_digests`)."""

    def __init__(self, digests: Iterable[str], *, key: bytes, max_words: int):
        self.digests = frozenset(digests)
        self.key = key
        self.max_words = max(1, min(max_words, MAX_NAME_WORDS))

    @classmethod
    def from_names(cls, names: Iterable[str], *, key: bytes) -> NameMatcher:
        normalized = {normalize_alias(n) for n in names if n}
        normalized = {n for n in normalized if n and n != "redacted"}
        return cls({name_digest(n, key=key) for n in normalized}, key=key,
                   max_words=max((len(n.split()) for n in normalized), default=1))

    @classmethod
    def from_digests(cls, digests: Iterable[str], *, key: bytes, max_words: int) -> NameMatcher:
        return cls(digests, key=key, max_words=max_words)

    def __bool__(self) -> bool:
        return bool(self.digests)

    def spans(self, text: str) -> list[tuple[int, int]]:
        """(start, end) of each name occurrence, longest first at each position, not overlapping."""
        if not self.digests or not text:
            return []
        words = [(m.start(), m.end(), normalize_alias(m.group()), unfolded_alias(m.group()))
                 for m in _WORD.finditer(text)]
        found, i = [], 0
        while i < len(words):
            hit = 0
            for size in range(min(self.max_words, len(words) - i), 0, -1):
                if self._known(words[i:i + size]):
                    hit = size
                    break
            if hit:
                found.append((words[i][0], words[i + hit - 1][1]))
                i += hit
            else:
                i += 1
        return found

    def _known(self, words: list[tuple]) -> bool:
        """One of the names, in today's normal form or in the unfolded one a tombstone written
        before "ł" folded to "l" digested."""
        candidate = " ".join(w[2] for w in words if w[2])
        if candidate and name_digest(candidate, key=self.key) in self.digests:
            return True
        unfolded = " ".join(w[3] for w in words if w[3])
        return unfolded != candidate and bool(unfolded) and name_digest(unfolded, key=self.key) in self.digests

    def search(self, text: str | None) -> bool:
        return bool(text) and bool(self.spans(text))

    def redact(self, text: str) -> str:
        """The text with each name occurrence replaced by [redacted]."""
        spans = self.spans(text)
        if not spans:
            return text
        out, last = [], 0
        for start, end in spans:
            out.append(text[last:start])
            out.append(REDACTED)
            last = end
        out.append(text[last:])
        return "".join(out)

    def redact_json(self, value):
        """A JSON value with names redacted in every string and key; numbers, ids and the shape
        are kept."""
        if isinstance(value, str):
            return self.redact(value)
        if isinstance(value, list):
            return [self.redact_json(v) for v in value]
        if isinstance(value, dict):
            return {self.redact(k) if isinstance(k, str) else k: self.redact_json(v) for k, v in value.items()}
        return value

    def json_mentions(self, value) -> bool:
        if isinstance(value, str):
            return self.search(value)
        if isinstance(value, list):
            return any(self.json_mentions(v) for v in value)
        if isinstance(value, dict):
            return any((isinstance(k, str) and self.search(k)) or self.json_mentions(v) for k, v in value.items())
        return False
