import gzip
import os
import time
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from memories import selectors
from memories.management.cli import cli_errors
from memories.selectors.export import agent_export
from memories.services.facts import facts_access_fold
from memories.services.portability import export_forgets_apply


class Command(BaseCommand):
    help = ("Write one agent's memory as JSON Lines (a versioned header, then every row: entities, aliases, "
            "messages and their write jobs, every fact and relationship version, merges, erasure receipts, "
            "audit entries): to standard output, or to --out (gzipped when it ends in .gz).")

    def add_arguments(self, parser):
        parser.add_argument("agent", help="agent slug")
        parser.add_argument("--out", help="file to write (written whole, or not at all); default standard output")

    def handle(self, *args, agent, out, **opts):
        started = time.perf_counter()
        with cli_errors():
            target = selectors.agent_by_slug(slug=agent)
            if target is None:
                raise CommandError(f"no agent {agent!r}")
            redacted = export_forgets_apply(agent=target)  # what a forget has not reached yet goes first
            facts_access_fold(agent=target)  # the facts' retrieval counts as of now
            if not out:
                try:
                    for line in agent_export(agent=target):
                        self.stdout.write(line, ending="")
                except BrokenPipeError:  # the reader stopped early (`| head`): nothing to report
                    os.dup2(os.open(os.devnull, os.O_WRONLY), 1)
                return
            path = Path(out)
            partial = path.with_name(f".{path.name}.{os.getpid()}.partial")
            lines = 0
            try:
                with (gzip.open if path.suffix == ".gz" else open)(partial, "wt", encoding="utf-8") as stream:
                    for line in agent_export(agent=target):
                        stream.write(line)
                        lines += 1
                partial.replace(path)
            finally:
                partial.unlink(missing_ok=True)
        note = f"; {redacted} message(s) a forget had not reached yet redacted first" if redacted else ""
        self.stderr.write(f"{agent}: {lines} lines, {path.stat().st_size:,} bytes in "
                          f"{time.perf_counter() - started:.1f} s → {path}{note}")
