"""Vectors kept in their rows (storage MAIN instead of the type's EXTENDED).

A fact or message row holds its text, its stored tsvector and a 1.5 kB vector: past PostgreSQL's
2 kB threshold, the largest value of storage EXTENDED, the vector, went to the TOAST table. Then
every distance measured against a row (the exact scans of an agent's messages and of the graph
signal's linked facts, the candidates' cosines at fusion) fetched its vector through the TOAST
index: three to four times the cost of the same scan over inline vectors. MAIN keeps a vector
inline unless the row could not fit a page otherwise; the values are the same.

New rows are stored so from now on. Rows stored before keep their vectors where they are until
the table is rewritten: `VACUUM FULL memories_fact, memories_event, memories_entity` (it locks
each table while it runs; README, Deploy and scale)."""

from django.db import migrations

COLUMNS = [("memories_fact", "embedding"), ("memories_event", "embedding"), ("memories_entity", "name_embedding")]


class Migration(migrations.Migration):

    dependencies = [
        ("memories", "0015_fact_access"),
    ]

    operations = [
        migrations.RunSQL(
            [f"ALTER TABLE {table} ALTER COLUMN {column} SET STORAGE MAIN" for table, column in COLUMNS],
            reverse_sql=[f"ALTER TABLE {table} ALTER COLUMN {column} SET STORAGE EXTENDED" for table, column in COLUMNS],
        ),
    ]
