"""Pure helpers for entity names: normalization, keys, pronouns and relationship terms."""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache

SPEAKER_PRONOUNS = frozenset({"i", "me", "my", "mine", "myself", "eu", "user", "the user", "speaker"})
RELATIONSHIP_TERMS = frozenset({
    "wife", "husband", "girlfriend", "boyfriend", "partner", "spouse", "mom", "mother", "dad", "father",
    "brother", "sister", "son", "daughter", "friend", "best friend", "boss", "coworker", "colleague",
    "manager", "grandma", "grandmother", "grandpa", "grandfather", "aunt", "uncle", "cousin", "kids",
    "children", "parents", "family", "amigo", "amiga",
})
_HONORIFICS = re.compile(r"^(mr|mrs|ms|dr|prof)\.?\s+", re.IGNORECASE)
_NON_WORD = re.compile(r"[^\w\s]+")
_SPACES = re.compile(r"\s+")


def strip_accents(text: str) -> str:
    if text.isascii():
        return text
    return "".join(c for c in unicodedata.normalize("NFKD", text) if not unicodedata.combining(c))


def normalize_alias(name: str) -> str:
    """"São  Paulo!" → "sao paulo": the form aliases are stored and matched in."""
    # the same names and fact texts are compared again on every write: short ones are cached
    return _normalize_cached(name) if len(name) <= 256 else _normalize(name)


@lru_cache(maxsize=8192)
def _normalize_cached(name: str) -> str:
    return _normalize(name)


def _normalize(name: str) -> str:
    text = strip_accents(name).casefold()
    text = _NON_WORD.sub(" ", text.replace("'s ", " ").replace("’s ", " "))
    return _SPACES.sub(" ", text).strip()


def slugify(name: str) -> str:
    return normalize_alias(name).replace(" ", "_") or "unnamed"


def entity_key(entity_type: str, name: str) -> str:
    return f"{normalize_type(entity_type)}:{slugify(_HONORIFICS.sub('', name.strip()))}"


def normalize_type(entity_type: str) -> str:
    value = (entity_type or "concept").strip().lower()
    return re.sub(r"\s+", "_", value) or "concept"


def is_speaker_reference(name: str) -> bool:
    """"I", "me", "my", or a bare relationship term ("girlfriend") — both mean the speaker."""
    norm = normalize_alias(name)
    bare = norm.removeprefix("my ").strip()
    return norm in SPEAKER_PRONOUNS or norm in RELATIONSHIP_TERMS or bare in RELATIONSHIP_TERMS


def ngrams(text: str, max_len: int = 4) -> set[str]:
    """Every run of 1..max_len words of the normalized text: the word-boundary candidates that
    an alias lookup compares against."""
    words = normalize_alias(text).split()
    out: set[str] = set()
    for size in range(1, max_len + 1):
        for start in range(0, len(words) - size + 1):
            out.add(" ".join(words[start : start + size]))
    return out


def mentions(text: str, name: str, min_length: int = 3) -> bool:
    """Word-boundary, case- and accent-insensitive test that `name` appears in `text`."""
    norm_name = normalize_alias(name)
    if len(norm_name) < min_length:
        return False
    return f" {norm_name} " in f" {normalize_alias(text)} "
