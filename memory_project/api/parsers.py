"""Request bodies: JSON only, size-capped before reading, and free of characters PostgreSQL
cannot store (NUL, lone surrogates) anywhere in the document."""

from __future__ import annotations

import re

from django.conf import settings
from rest_framework import exceptions
from rest_framework.parsers import JSONParser

from memories.errors import PayloadTooLarge

DEFAULT_MAX_BODY_BYTES = 256 * 1024
MAX_DEPTH = 32


# An agent import's body is an export file, read line by line (memories.api.views_portability).
IMPORT_PATH = re.compile(r"^/api/v1/agents/[-a-zA-Z0-9_]+/import/$")


def max_body_bytes(path: str = "") -> int:
    """The largest request body accepted at `path`: an agent import's limit, else the API's."""
    if path and IMPORT_PATH.match(path):
        return settings.ANAMNESIS_IMPORT_MAX_BYTES
    return getattr(settings, "DATA_UPLOAD_MAX_MEMORY_SIZE", None) or DEFAULT_MAX_BODY_BYTES


def _bad_char(text: str) -> str | None:
    if "\x00" in text:
        return "must not contain NUL (\\u0000) characters"
    if any("\ud800" <= ch <= "\udfff" for ch in text):
        return "must not contain unpaired surrogate characters"
    return None


def find_unstorable(value, path: str = "", depth: int = 0) -> tuple[str, str] | None:
    """The first (field path, problem) of a parsed JSON document that cannot be stored."""
    if depth > MAX_DEPTH:
        return path or "body", f"is nested deeper than {MAX_DEPTH} levels"
    if isinstance(value, str):
        problem = _bad_char(value)
        return (path or "body", problem) if problem else None
    if isinstance(value, dict):
        items = value.items()
    elif isinstance(value, list):
        items = enumerate(value)
    else:
        return None
    for key, item in items:
        child = f"{path}.{key}" if path else str(key)
        if isinstance(key, str) and _bad_char(key):
            return child, "key " + _bad_char(key)
        found = find_unstorable(item, child, depth + 1)
        if found:
            return found
    return None


class SafeJSONParser(JSONParser):
    def parse(self, stream, media_type=None, parser_context=None):
        request = (parser_context or {}).get("request")
        if request is not None:
            try:
                length = int(request.META.get("CONTENT_LENGTH") or 0)
            except ValueError:
                length = 0
            limit = max_body_bytes()
            if length > limit:
                raise PayloadTooLarge(f"request body is {length} bytes; the limit is {limit} bytes",
                                      {"body": f"at most {limit} bytes"})
        try:
            data = super().parse(stream, media_type, parser_context)
        except RecursionError as exc:
            raise exceptions.ParseError("JSON parse error - nested too deeply") from exc
        found = find_unstorable(data)
        if found:
            raise exceptions.ValidationError({found[0]: [found[1]]})
        return data
