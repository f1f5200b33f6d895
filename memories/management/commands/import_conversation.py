import time
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError
from tqdm import tqdm

from memories.errors import DomainError
from memories.importers.locomo import load_conversations
from memories.services.agents import agent_get_or_create
from memories.services.imports import ConversationJob, conversations_import, default_import_workers


class Command(BaseCommand):
    help = (
        "Import a LoCoMo-format conversation file through the write pipeline, in time order. "
        "Resumable: turns already imported (same dia_id) are skipped."
    )

    def add_arguments(self, parser):
        parser.add_argument("path")
        parser.add_argument("--agent", required=True, help="agent slug; with several conversations in the "
                            "file each goes to SLUG-<sample_id> unless --sample picks one")
        parser.add_argument("--sample", help="import only this sample_id")
        parser.add_argument("--limit", type=int, help="import at most N turns per conversation")
        parser.add_argument("--workers", type=int, default=default_import_workers(),
                            help="processes importing conversations side by side, each conversation whole "
                                 "in one, in its own time order (default: one per core)")

    def handle(self, *args, path, agent, sample, limit, **opts):
        if not Path(path).exists():
            raise CommandError(f"no such file: {path}")
        try:
            conversations = load_conversations(path)
        except (ValueError, KeyError) as exc:
            raise CommandError(f"{path} is not a LoCoMo-format file: {exc}") from exc
        if sample:
            conversations = [c for c in conversations if c.sample_id == sample]
            if not conversations:
                raise CommandError(f"no conversation with sample_id {sample!r} in {path}")
        if opts["workers"] < 1:
            raise CommandError("--workers must be at least 1")
        jobs = []
        for conv in conversations:
            slug = agent if len(conversations) == 1 else f"{agent}-{conv.sample_id}"
            try:
                agent_get_or_create(slug=slug)
            except DomainError as exc:
                raise CommandError(exc.message) from exc
            jobs.append(ConversationJob(slug, conv.turns[:limit] if limit else conv.turns))

        def done(job, stats):
            self.stdout.write(
                f"{job.slug}: {stats.imported} imported, {stats.skipped} already there, {stats.failed} failed "
                f"({stats.per_second:.1f} turns/s)"
            )

        started = time.perf_counter()
        with tqdm(total=sum(len(job.turns) for job in jobs), unit="turn",
                  disable=opts["verbosity"] == 0) as bar:
            results = conversations_import(jobs, workers=opts["workers"], progress=bar.update, done=done)
        if len(jobs) > 1:
            imported = sum(stats.imported for stats in results.values())
            elapsed = time.perf_counter() - started
            self.stdout.write(f"{len(jobs)} conversations: {imported} imported in {elapsed:.1f} s "
                              f"({imported / elapsed if elapsed else 0:.1f} turns/s)")
