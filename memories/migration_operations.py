"""Migration operations that need a clear message when the server can't support them."""

from django.db import migrations


class EnsureVectorExtension(migrations.RunSQL):
    """CREATE EXTENSION vector, failing with an explanation when the server lacks pgvector."""

    def __init__(self):
        super().__init__(sql="CREATE EXTENSION IF NOT EXISTS vector", reverse_sql=migrations.RunSQL.noop)

    def database_forwards(self, app_label, schema_editor, from_state, to_state):
        with schema_editor.connection.cursor() as cursor:
            cursor.execute("SELECT 1 FROM pg_available_extensions WHERE name = 'vector'")
            if cursor.fetchone() is None:
                raise RuntimeError(
                    "This PostgreSQL server has no 'vector' extension (pgvector). Install pgvector "
                    "on the server named by DATABASE_URL, or unset DATABASE_URL to use the embedded "
                    "PostgreSQL 16 + pgvector under ./var/pgdata."
                )
        super().database_forwards(app_label, schema_editor, from_state, to_state)
