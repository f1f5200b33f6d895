import json

from django.core.management.base import BaseCommand, CommandError
from django.utils.dateparse import parse_datetime

from memories.management.cli import cli_errors
from memories.models import Agent
from retrieval.services import memory_retrieve


class Command(BaseCommand):
    help = "Retrieve context for a query and print it with the score breakdown of every fact."

    def add_arguments(self, parser):
        parser.add_argument("query")
        parser.add_argument("--agent", required=True)
        parser.add_argument("--as-of", help="ISO-8601 with timezone: what the agent knew then")
        parser.add_argument("--valid-at",
                            help="ISO-8601 with timezone: about this moment of the world (default: --as-of)")
        parser.add_argument("--recorded-as-of", help="ISO-8601 with timezone: with what the database held then")
        parser.add_argument("--limit", type=int, default=10)
        parser.add_argument("--json", action="store_true")

    def handle(self, *args, query, agent, as_of, limit, **opts):
        with cli_errors():  # an unmigrated database: "run migrate", not a traceback
            target = Agent.objects.filter(slug=agent).first()
        if target is None:
            raise CommandError(f"no agent {agent!r}")
        clocks = {name: _moment(opts.get(name) if name != "as_of" else as_of, name)
                  for name in ("as_of", "valid_at", "recorded_as_of")}
        with cli_errors():
            result = memory_retrieve(agent=target, query=query, limit=limit, **clocks)
        if opts["json"]:
            self.stdout.write(json.dumps(result.as_dict(), indent=2, default=str))
            return
        self.stdout.write(result.context or "(nothing relevant)")
        self.stdout.write("")
        for item in sorted(result.facts + result.events, key=lambda x: x.rank):
            scores = " ".join(f"{k}={v:.3f}" for k, v in item.scores.items())
            self.stdout.write(f"#{item.rank} {item.text[:70]!r} · {scores}")
        self.stdout.write(f"{result.total_candidates} candidates · {result.duration_ms:.0f} ms · "
                          f"{result.context_tokens} context tokens · trace {result.trace_id}")


def _moment(value: str | None, name: str):
    if not value:
        return None
    moment = parse_datetime(value)
    if moment is None or moment.tzinfo is None:
        flag = "--" + name.replace("_", "-")
        raise CommandError(f"{flag} must be ISO-8601 with a timezone, e.g. 2024-05-01T00:00:00Z")
    return moment
