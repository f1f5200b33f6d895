"""Vectors kept in their rows (storage MAIN instead of pgvector's default, EXTERNAL).

A fact or message row holds its text, its stored tsvector and a 1.5 kB vector. A row over
PostgreSQL's ~2 kB threshold (41% of the facts of the 1M-fact bench corpus) had its vector moved to
the TOAST table, and every distance measured against that row (the exact scans of an agent's
messages and of the graph signal's linked facts, the candidates' cosines at fusion) fetched it
through the TOAST index. Under MAIN, PostgreSQL first compresses or moves out the row's EXTENDED
values (its text, its tsvector) and moves a vector out only if the row would still not fit a page;
the values are the same.

New rows are stored so from now on. Rows stored before keep their vectors where they are until
the table is rewritten (`VACUUM FULL`: README, Deploy and scale). `SET STORAGE` needs a brief
exclusive lock: the lock timeout makes the migration fail, to be run again, rather than queue
every query on the table behind a long index build holding it."""

from django.db import migrations

COLUMNS = [("memories_fact", "embedding"), ("memories_event", "embedding"), ("memories_entity", "name_embedding")]


class Migration(migrations.Migration):
    dependencies = [
        ("memories", "0015_fact_access"),
    ]

    operations = [
        migrations.RunSQL(
            ["SET LOCAL lock_timeout = '30s'"]
            + [f"ALTER TABLE {table} ALTER COLUMN {column} SET STORAGE MAIN" for table, column in COLUMNS],
            reverse_sql=["SET LOCAL lock_timeout = '30s'"]
            + [f"ALTER TABLE {table} ALTER COLUMN {column} SET STORAGE EXTERNAL" for table, column in COLUMNS],
        ),
    ]
