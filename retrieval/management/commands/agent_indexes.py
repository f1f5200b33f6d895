from django.conf import settings
from django.core.management.base import BaseCommand

from memories.management.options import agent_option
from retrieval.vector_indexes import agent_indexes, agent_indexes_ensure


class Command(BaseCommand):
    help = ("Build the per-agent HNSW indexes now (CONCURRENTLY: writes go on) for every agent, or one, "
            "with at least ANAMNESIS_AGENT_INDEX_MIN_ROWS facts or events (default "
            f"{settings.ANAMNESIS_AGENT_INDEX_MIN_ROWS}); rebuild invalid ones; drop those of deleted agents. "
            "The beat job does the same every 10 minutes.")

    def add_arguments(self, parser):
        parser.add_argument("--agent", help="slug of the one agent to index")
        parser.add_argument("--list", action="store_true", help="only list the existing indexes")

    def handle(self, *args, **opts):
        agent = agent_option(opts["agent"])
        if not opts["list"]:
            done = agent_indexes_ensure(agent=agent)
            for name in done["built"]:
                self.stdout.write(f"built {name}")
            for name in done["dropped"]:
                self.stdout.write(f"dropped {name}")
        for index in sorted(agent_indexes(), key=lambda i: (i.agent_id, i.kind)):
            state = "valid" if index.valid else "INVALID (building, or a failed build)"
            self.stdout.write(f"{index.name}: agent {index.agent_id}, {index.kind}s, {state}")
