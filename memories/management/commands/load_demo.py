from datetime import UTC, datetime

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand

from memories.services.agents import agent_get_or_create
from memories.services.write import memory_write

DEMO_MESSAGES = [
    ("2024-03-01T09:00:00Z", "Rafael", "I live in Curitiba with my wife Ana."),
    ("2024-03-01T09:05:00Z", "Rafael", "I work at Vertix as a software engineer."),
    ("2024-03-02T18:30:00Z", "Rafael", "My friend Guili (Guilherme Maturana) plays guitar in a jazz band."),
    ("2024-03-10T12:00:00Z", "Rafael", "Ana loves jazz and she is an architect."),
    ("2024-04-02T10:00:00Z", "Rafael", "Clara Rezende left Vertix and joined Orion Tech as head of engineering."),
    ("2024-04-02T10:02:00Z", "Rafael", "Thiago Nogueira hired her personally."),
    ("2024-05-20T08:00:00Z", "Rafael", "I moved to São Paulo last week."),
    ("2024-06-15T20:00:00Z", "Rafael", "Guili is coming to visit us in June."),
]
DEMO_USER, DEMO_PASSWORD = "admin", "anamnesis-demo"


class Command(BaseCommand):
    help = "Load a small demo agent through the write pipeline (idempotent) and a demo superuser."

    def handle(self, *args, **options):
        agent = agent_get_or_create(slug="demo", name="Demo agent")
        for index, (at, speaker, text) in enumerate(DEMO_MESSAGES):
            memory_write(agent=agent, message=text, speaker_name=speaker, external_id=f"demo-{index}",
                         occurred_at=datetime.fromisoformat(at).astimezone(UTC))
        user_model = get_user_model()
        if not user_model.objects.filter(username=DEMO_USER).exists():
            user_model.objects.create_superuser(DEMO_USER, "admin@example.com", DEMO_PASSWORD)
        self.stdout.write(f"Demo agent 'demo' loaded ({len(DEMO_MESSAGES)} messages).")
        self.stdout.write(f"Admin login: {DEMO_USER} / {DEMO_PASSWORD}")
