from django.core.management.base import BaseCommand, CommandError

from memories.errors import DomainError
from memories.management.options import agent_option
from memories.models import ApiKeyScope
from memories.services.api_keys import api_key_create


class Command(BaseCommand):
    help = ("Create an API key for one agent (--agent SLUG) or for all (--all) and print it once; "
            "send it as 'Authorization: Bearer <key>'. Only its hash is stored.")

    def add_arguments(self, parser):
        target = parser.add_mutually_exclusive_group(required=True)
        target.add_argument("--agent", help="slug of the one agent the key may use")
        target.add_argument("--all", action="store_true", help="the key may use every agent")
        parser.add_argument("--scope", required=True, choices=ApiKeyScope.values,
                            help="read: GET only; write: + events, retrieve, corrections; admin: + merge, forget, "
                                 "agent creation")
        parser.add_argument("--name", default="", help="a label for the key (who or what uses it)")
        parser.add_argument("--quiet", action="store_true", help="print only the key")

    def handle(self, *args, **opts):
        agent = agent_option(opts["agent"])
        try:
            key, plaintext = api_key_create(agent=agent, scope=opts["scope"], name=opts["name"], actor="cli")
        except DomainError as exc:
            raise CommandError(exc.message) from exc
        if opts["quiet"]:
            self.stdout.write(plaintext)
            return
        target = agent.slug if agent else "all agents"
        self.stdout.write(f"API key {key.prefix}… (id {key.id}, scope {key.scope}, {target}) — shown only once:")
        self.stdout.write(plaintext)
