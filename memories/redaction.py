"""Finding and redacting a forgotten person's names in any text or JSON value. Pure functions.

Names are matched as whole runs of words, case- and accent-insensitively ("Zoë" matches the alias
"zoe", "Zoe's" is redacted to "[redacted]'s"), whatever their length: a two-letter nickname is
as much a name as a full one. Underscores and hyphens separate words, so a name inside an
identifier ("note-ilse-brandt-1", "ilse_brandt") is found too. Some names match only capitalized
(a family name alone, "Brandt": see memories.name_forms). The matcher never holds the names
themselves, only keyed digests of their normalized forms, so a forget can leave a tombstone that
recognizes the names later without storing them (memories.models.ForgetTombstone).

Also here: entity keys made opaque (`KeyRewriter`), the keyed digest that replaces a forgotten
message's external id and idempotency key (`request_key_digest`), and the phone numbers and
e-mail addresses in a message that names her (`redact_contacts`).
"""

from __future__ import annotations

import hashlib
import hmac
import re
from collections.abc import Iterable

from memories.naming import normalize_alias, unfolded_alias

REDACTED = "[redacted]"
MAX_NAME_WORDS = 8
_WORD = re.compile(r"[^\W_]+")


def name_digest(normalized: str, *, key: bytes) -> str:
    """The keyed digest of a normalized name (what a tombstone stores)."""
    return hmac.new(key, normalized.encode("utf-8"), hashlib.sha256).hexdigest()


class NameMatcher:
    """Recognizes any of a set of names in text. Built from names (`from_names`) or from the
    digests a tombstone kept (`from_digests`)."""

    def __init__(self, digests: Iterable[str], *, key: bytes, max_words: int, capitalized: Iterable[str] = ()):
        self.digests = frozenset(digests)
        self.capitalized = frozenset(capitalized) - self.digests  # matched only when written capitalized
        self.key = key
        self.max_words = max(1, min(max_words, MAX_NAME_WORDS))

    @classmethod
    def from_names(cls, names: Iterable[str], *, key: bytes, capitalized: Iterable[str] = ()) -> NameMatcher:
        """`names` in any case; `capitalized` only when their first word is written capitalized."""
        anycase, cased = _normalized(names), _normalized(capitalized)
        return cls({name_digest(n, key=key) for n in anycase}, key=key,
                   max_words=max((len(n.split()) for n in anycase | cased), default=1),
                   capitalized={name_digest(n, key=key) for n in cased})

    @classmethod
    def from_digests(cls, digests: Iterable[str], *, key: bytes, max_words: int,
                     capitalized: Iterable[str] = ()) -> NameMatcher:
        return cls(digests, key=key, max_words=max_words, capitalized=capitalized)

    def __bool__(self) -> bool:
        return bool(self.digests or self.capitalized)

    def spans(self, text: str) -> list[tuple[int, int]]:
        """(start, end) of each name occurrence, longest first at each position, not overlapping."""
        if not self or not text:
            return []
        words = [(m.start(), m.end(), normalize_alias(m.group()), unfolded_alias(m.group()), m.group()[:1].isupper())
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
        known = self.digests | self.capitalized if words[0][4] else self.digests
        candidate = " ".join(w[2] for w in words if w[2])
        if candidate and name_digest(candidate, key=self.key) in known:
            return True
        unfolded = " ".join(w[3] for w in words if w[3])
        return unfolded != candidate and bool(unfolded) and name_digest(unfolded, key=self.key) in known

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
        return _map_strings(value, self.redact, keys=True)

    def json_mentions(self, value) -> bool:
        if isinstance(value, str):
            return self.search(value)
        if isinstance(value, list):
            return any(self.json_mentions(v) for v in value)
        if isinstance(value, dict):
            return any((isinstance(k, str) and self.search(k)) or self.json_mentions(v) for k, v in value.items())
        return False


def _normalized(names: Iterable[str]) -> set[str]:
    """Normal forms, with an underscore read as a space (the matcher splits words on it)."""
    out = {" ".join(normalize_alias(n).replace("_", " ").split()) for n in names if n}
    return {n for n in out if n and n != "redacted"}


# --- entity keys ------------------------------------------------------------------------------

def opaque_key(entity_type: str, entity_id: int) -> str:
    """What a forgotten entity's key becomes wherever it was stored: `person:forgotten-12`."""
    return f"{entity_type}:forgotten-{entity_id}"


class KeyRewriter:
    """Replaces whole entity keys (`person:ilse_brandt`) by their opaque forms in text and JSON."""

    def __init__(self, mapping: dict[str, str]):
        self.mapping = {k: v for k, v in mapping.items() if k and k != v}
        keys = sorted(self.mapping, key=len, reverse=True)
        self._pattern = re.compile(
            r"(?<![\w:])(?:" + "|".join(re.escape(k) for k in keys) + r")(?![\w])") if keys else None

    def rewrite(self, text: str) -> str:
        if self._pattern is None or not text:
            return text
        return self._pattern.sub(lambda m: self.mapping[m.group()], text)

    def rewrite_json(self, value):
        if isinstance(value, str):
            return self.rewrite(value)
        if isinstance(value, list):
            return [self.rewrite_json(v) for v in value]
        if isinstance(value, dict):
            return {self.rewrite(k) if isinstance(k, str) else k: self.rewrite_json(v) for k, v in value.items()}
        return value


# --- a forgotten message's request keys -------------------------------------------------------

REDACTED_KEY_PREFIX = "redacted:"


def request_key_digest(value: str, *, key: bytes, field: str) -> str:
    """The keyed digest stored in place of a forgotten message's `external_id` or idempotency
    key (`field`): unique like the value, so a retry of the same request is still recognized as
    a replay, and unreadable without the server's secret key."""
    if value.startswith(REDACTED_KEY_PREFIX):
        return value
    digest = hmac.new(key, f"{field}\0{value}".encode(), hashlib.sha256).hexdigest()
    return f"{REDACTED_KEY_PREFIX}{digest}"


# --- contact details in a message that names her ---------------------------------------------

_EMAIL = re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+")
_PHONE = re.compile(r"(?<![\w+])\+?\d[\d\s()./-]{5,}\d(?!\w)")


_DATE = re.compile(r"\d{4}[-/.]\d{1,2}[-/.]\d{1,2}|\d{1,2}[-/.]\d{1,2}[-/.]\d{2,4}")


def _phone_or_keep(match: re.Match) -> str:
    value = match.group()
    if sum(c.isdigit() for c in value) < 7 or _DATE.fullmatch(value.strip()):
        return value
    return REDACTED


def redact_contacts(text: str) -> str:
    """E-mail addresses and phone numbers (7 digits or more, dates excepted) redacted in a message
    that names a forgotten person (holds "[redacted]"): whose number it is, the next sentence may
    say only with "her" ("[redacted] moved. Her number is [redacted].")."""
    if not text or REDACTED not in text:
        return text
    return _PHONE.sub(_phone_or_keep, _EMAIL.sub(REDACTED, text))


def redact_contacts_json(value):
    """`redact_contacts` on every string of a JSON value (a trace, a job result): a fact text there
    that names her ("[redacted]'s number is ...") loses the number as her message does."""
    return _map_strings(value, redact_contacts, keys=False)


def _map_strings(value, fn, *, keys: bool):
    """`fn` applied to every string of a JSON value (and to its keys with `keys`), the shape kept."""
    if isinstance(value, str):
        return fn(value)
    if isinstance(value, list):
        return [_map_strings(v, fn, keys=keys) for v in value]
    if isinstance(value, dict):
        return {fn(k) if keys and isinstance(k, str) else k: _map_strings(v, fn, keys=keys) for k, v in value.items()}
    return value
