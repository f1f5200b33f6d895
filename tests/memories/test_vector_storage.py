"""Every stored vector stays in its row (storage MAIN): a vector sent to the TOAST table costs an
index lookup each time a distance is measured against it, and an exact scan measures thousands.
A column added or altered later (ALTER COLUMN TYPE resets the storage to the type's default, EXTERNAL)
fails here until its migration sets MAIN again."""

from __future__ import annotations

import pytest
from django.apps import apps
from django.db import connection
from pgvector.django import VectorField


def _vector_columns() -> list[tuple[str, str]]:
    return [(model._meta.db_table, field.column) for model in apps.get_models()
            for field in model._meta.concrete_fields if isinstance(field, VectorField)]


@pytest.mark.django_db
def test_every_vector_column_keeps_its_vectors_in_the_row():
    columns = _vector_columns()
    assert {table for table, _ in columns} >= {"memories_fact", "memories_event", "memories_entity"}
    with connection.cursor() as cursor:
        cursor.execute("SELECT attrelid::regclass::text, attname, attstorage FROM pg_attribute "
                       "WHERE (attrelid::regclass::text, attname) IN (SELECT * FROM unnest(%s::text[], %s::text[]))",
                       [[t for t, _ in columns], [c for _, c in columns]])
        storage = {(table, column): mode for table, column, mode in cursor.fetchall()}
    assert storage == {column: "m" for column in columns}
