from django.core.management.base import BaseCommand

from memories.demo.load import DEMO_PASSWORD, DEMO_USER, demo_load
from memories.demo.stories import STORIES


class Command(BaseCommand):
    help = ("Load the demo through the write pipeline (idempotent): the `demo` agent, three agents with a few "
            "hundred dated messages and an operator's corrections, and a demo superuser.")

    def add_arguments(self, parser):
        parser.add_argument("--only", action="append", choices=["demo", *[s.slug for s in STORIES]],
                            help="load only this agent (repeatable)")

    def handle(self, *args, **options):
        demo_load(only=options.get("only"), say=self.stdout.write)
        self.stdout.write(f"Admin login: {DEMO_USER} / {DEMO_PASSWORD}")
