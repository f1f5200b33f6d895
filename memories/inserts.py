"""One row's INSERT as Django writes it, to run inside a larger statement.

`Model.objects.create` sends the INSERT alone; a write that stores a row and what hangs off it
(a fact and its entity links) or that inserts only when no row holds the key yet (an entity)
does it in one round trip with the INSERT's SQL wrapped: the same columns, values and
conversions as `save()`, with the id and the generated columns returned."""

from __future__ import annotations

from collections.abc import Sequence

from django.db import DEFAULT_DB_ALIAS
from django.db.models import Model
from django.db.models.constants import OnConflict
from django.db.models.sql import InsertQuery


def insert_sql(obj: Model, *, ignore_conflicts: bool = False) -> tuple[str, list]:
    """The INSERT of `obj` (unsaved; its id is the database's) with `RETURNING` the model's
    returned columns (its id and generated columns, in `_meta.db_returning_fields` order); with
    `ignore_conflicts`, a row whose unique key is taken is not inserted and returns nothing."""
    meta = obj._meta
    query = InsertQuery(type(obj), on_conflict=OnConflict.IGNORE if ignore_conflicts else None)
    query.insert_values([f for f in meta.local_concrete_fields if not f.generated and not f.primary_key], [obj])
    compiler = query.get_compiler(using=DEFAULT_DB_ALIAS)
    compiler.returning_fields = meta.db_returning_fields
    [(sql, params)] = compiler.as_sql()
    return sql, list(params)


def inserted(obj: Model, returned: Sequence) -> Model:
    """`obj` as saved: the returned columns of its INSERT set on it, as the database gave them
    (no field's `from_db_value`: none of the columns returned for the models this serves has one)."""
    for field, value in zip(obj._meta.db_returning_fields, returned, strict=True):
        setattr(obj, field.attname, value)
    obj._state.adding, obj._state.db = False, DEFAULT_DB_ALIAS
    return obj
