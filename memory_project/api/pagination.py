"""Cursor pagination for every list: stable under concurrent inserts, newest first by id. A cursor
that does not decode and a page_size that is not a positive number are a 400."""

import base64
from urllib import parse

from rest_framework.exceptions import NotFound, ValidationError
from rest_framework.pagination import CursorPagination

from memories.api.fields import MAX_ID


def _well_formed(encoded: str) -> bool:
    """A cursor this API handed out: base64 of a query string of the keys o, r and p only."""
    try:
        text = base64.b64decode(encoded.encode("ascii"), validate=True).decode("ascii")
    except (ValueError, UnicodeError):
        return False
    tokens = parse.parse_qs(text, keep_blank_values=True)
    return bool(tokens) and set(tokens) <= {"o", "r", "p"}


class IdCursorPagination(CursorPagination):
    ordering = "-id"
    page_size = 50
    page_size_query_param = "page_size"
    max_page_size = 500

    def decode_cursor(self, request):
        encoded = request.query_params.get(self.cursor_query_param)
        if encoded is not None and not _well_formed(encoded):
            raise ValidationError({"cursor": [self.invalid_cursor_message]})
        try:
            cursor = super().decode_cursor(request)
        except NotFound as exc:
            raise ValidationError({"cursor": [self.invalid_cursor_message]}) from exc
        if cursor is not None and cursor.position is not None:
            # the position is an id: anything else would reach the database as a bad value
            position = cursor.position
            if not (position.isascii() and position.isdigit()) or int(position) > MAX_ID:
                raise ValidationError({"cursor": [self.invalid_cursor_message]})
        return cursor

    def get_page_size(self, request):
        raw = request.query_params.get(self.page_size_query_param)
        if raw is not None and not (raw.isascii() and raw.isdigit() and 1 <= int(raw) <= self.max_page_size):
            problem = f"must be a whole number from 1 to {self.max_page_size}"
            raise ValidationError({self.page_size_query_param: [problem]})
        return super().get_page_size(request)
