from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from memory_project import embedded_pg


class Command(BaseCommand):
    help = "Manage the embedded PostgreSQL 16 + pgvector server under ./var/pgdata."

    def add_arguments(self, parser):
        parser.add_argument("action", choices=["status", "start", "stop"])

    def handle(self, *args, action, **options):
        if settings.DATABASE_URL:
            raise CommandError("DATABASE_URL is set: the embedded server is not in use.")
        pgdata = settings.EMBEDDED_PGDATA
        if action == "start":
            state = embedded_pg.start(pgdata)
        elif action == "stop":
            state = embedded_pg.stop(pgdata)
        else:
            state = embedded_pg.status(pgdata)
        self.stdout.write(state.describe())
