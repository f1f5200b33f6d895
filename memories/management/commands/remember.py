import json

from django.core.management.base import BaseCommand, CommandError
from django.utils.dateparse import parse_datetime

from memories.management.cli import cli_errors
from memories.models import Agent
from memories.services.agents import agent_get_or_create
from memories.services.write import memory_write


class Command(BaseCommand):
    help = "Write one message through the write pipeline and print the WriteResult."

    def add_arguments(self, parser):
        parser.add_argument("message")
        parser.add_argument("--agent", required=True, help="agent slug")
        parser.add_argument("--create-agent", action="store_true", help="create the agent if it does not exist")
        parser.add_argument("--speaker", required=True)
        parser.add_argument("--at", help="when it was said, ISO-8601 (default: now)")
        parser.add_argument("--dry-run", action="store_true")
        parser.add_argument("--json", action="store_true", help="print the WriteResult as JSON")

    def handle(self, *args, **opts):
        occurred_at = None
        if opts["at"]:
            occurred_at = parse_datetime(opts["at"])
            if occurred_at is None or occurred_at.tzinfo is None:
                raise CommandError("--at must be an ISO-8601 datetime with a timezone, e.g. 2024-05-08T13:56:00Z")
        with cli_errors():
            agent = Agent.objects.filter(slug=opts["agent"]).first()
            if agent is None:
                if not opts["create_agent"]:
                    raise CommandError(f"no agent {opts['agent']!r} (add --create-agent to create it)")
                agent = agent_get_or_create(slug=opts["agent"])
            result = memory_write(agent=agent, message=opts["message"], speaker_name=opts["speaker"],
                                  occurred_at=occurred_at, dry_run=opts["dry_run"])
        if not result.success:
            raise CommandError(f"the write failed: {result.error}")
        if opts["json"]:
            self.stdout.write(json.dumps(result.as_dict(), indent=2, default=str))
            return
        path = result.extraction_path
        budget = next((s["data"].get("budget") for s in result.trace
                       if s["name"] == "extraction" and s["data"].get("fallback") == "budget"), None)
        if budget:
            path += f" ({budget})"
        self.stdout.write(f"event {result.event_id} · {path} · {result.duration_ms:.0f} ms · "
                          f"tokens {result.tokens_used['total_tokens']}")
        for label, changes in (("added", result.facts_added), ("updated", result.facts_updated),
                               ("unchanged", result.facts_unchanged), ("deleted", result.facts_deleted)):
            for change in changes:
                self.stdout.write(f"  {label:9} [{change.entity}] {change.text}")
        for skipped in result.facts_skipped:
            self.stdout.write(f"  skipped   {skipped['text'][:80]} ({skipped['reason']})")
        for rel in result.relationships:
            self.stdout.write(f"  relation  {rel['source']} -[{rel['rel_type']}]-> {rel['target']} ({rel['outcome']})")
