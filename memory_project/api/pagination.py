"""Cursor pagination for every list: stable under concurrent inserts, newest first by id."""

from rest_framework.exceptions import NotFound
from rest_framework.pagination import CursorPagination

from memories.api.fields import MAX_ID


class IdCursorPagination(CursorPagination):
    ordering = "-id"
    page_size = 50
    page_size_query_param = "page_size"
    max_page_size = 500

    def decode_cursor(self, request):
        cursor = super().decode_cursor(request)
        if cursor is not None and cursor.position is not None:
            # the position is an id: anything else would reach the database as a bad value
            position = cursor.position
            if not (position.isascii() and position.isdigit()) or int(position) > MAX_ID:
                raise NotFound(self.invalid_cursor_message)
        return cursor
