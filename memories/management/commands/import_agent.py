import gzip
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from memories.management.cli import cli_errors
from memories.services.portability import agent_import, import_rows_summary


class Command(BaseCommand):
    help = ("Create a new agent from an export file (`export_agent`; .gz read as gzip): every row with new ids "
            "and its clocks as exported, vectors and keyword postings built here. One transaction: a bad file "
            "stores nothing and names its line.")

    def add_arguments(self, parser):
        parser.add_argument("path")
        parser.add_argument("--as", dest="slug", required=True, help="slug of the new agent (must not exist)")

    def handle(self, *args, path, slug, **opts):
        file = Path(path)
        if not file.is_file():
            raise CommandError(f"no such file: {path}")
        opener = gzip.open if file.suffix == ".gz" else open
        with cli_errors(), opener(file, "rb") as lines:
            report = agent_import(slug=slug, lines=lines, actor="cli")
        self.stdout.write(f"{slug}: {import_rows_summary(report)}; {report.vectors} vectors computed, "
                          f"{report.jobs_queued} unfinished write jobs queued, in {report.seconds:.1f} s "
                          f"(from {report.source['agent']['slug']!r}, exported {report.source['exported_at']})")
