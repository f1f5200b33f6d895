from pathlib import Path

from django.core.management.base import BaseCommand, CommandError
from tqdm import tqdm

from memories.errors import DomainError
from memories.importers.locomo import load_conversations
from memories.services.agents import agent_get_or_create
from memories.services.imports import conversation_import


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
        for conv in conversations:
            slug = agent if len(conversations) == 1 else f"{agent}-{conv.sample_id}"
            try:
                target = agent_get_or_create(slug=slug)
            except DomainError as exc:
                raise CommandError(exc.message) from exc
            turns = conv.turns[:limit] if limit else conv.turns
            with tqdm(total=len(turns), desc=slug, unit="turn", disable=opts["verbosity"] == 0) as bar:
                stats = conversation_import(agent=target, turns=turns, progress=bar.update)
            self.stdout.write(
                f"{slug}: {stats.imported} imported, {stats.skipped} already there, {stats.failed} failed "
                f"({stats.per_second:.1f} turns/s)"
            )
