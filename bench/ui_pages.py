"""UI render times on the demo: every page of every demo agent, rendered through Django's test
client as a logged-in operator, p50 / max per page over a few rounds. Prints figures; asserts
nothing. Loads the demo first (idempotent).

    .venv/bin/python bench/ui_pages.py [--rounds 5]
"""

import argparse
import statistics
import time

from _setup import django_setup, machine_speed


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    django_setup()
    from django.contrib.auth import get_user_model
    from django.core.management import call_command
    from django.test import Client
    from django.urls import reverse

    from memories.models import Agent, Entity, Fact, PipelineRun

    print(machine_speed(), flush=True)
    call_command("load_demo", verbosity=0)
    client = Client(HTTP_HOST="127.0.0.1")
    client.force_login(get_user_model().objects.get(username="admin"))
    pages: dict[str, list[str]] = {"overview": [reverse("ui:overview")]}
    for agent in Agent.objects.order_by("slug"):
        slug = agent.slug
        entity = Entity.objects.filter(agent=agent, merged_into__isnull=True).order_by("-importance", "id").first()
        fact = Fact.objects.filter(agent=agent, supersedes__isnull=False).order_by("id").first() or \
            Fact.objects.filter(agent=agent).first()
        run = PipelineRun.objects.filter(agent=agent).order_by("-id").first()
        first_said = Fact.objects.filter(agent=agent).order_by("learned_at").values_list(
            "learned_at", flat=True).first()
        urls = {
            "agent home": reverse("ui:agent_home", args=[slug]),
            "graph": reverse("ui:graph", args=[slug]) + (f"?entity={entity.id}&depth=2" if entity else ""),
            "traces": reverse("ui:traces", args=[slug]),
            "time travel": reverse("ui:time_travel", args=[slug]) + (
                f"?as_of={first_said.isoformat()}" if first_said else ""),
            "ask": reverse("ui:ask", args=[slug]) + "?q=Where+does+she+live%3F",
        }
        if entity:
            urls["entity"] = reverse("ui:entity", args=[slug, entity.id])
            urls["graph data"] = reverse("ui:graph_data", args=[slug]) + f"?entity={entity.id}&depth=3"
        if fact:
            urls["fact chain"] = reverse("ui:fact", args=[slug, fact.id])
        if run:
            urls["trace"] = reverse("ui:trace", args=[slug, run.id])
        for name, url in urls.items():
            pages.setdefault(name, []).append(url)
    worst = 0.0
    for name, urls in pages.items():
        timings = []
        for _ in range(args.rounds):
            for url in urls:
                started = time.perf_counter()
                response = client.get(url)
                timings.append((time.perf_counter() - started) * 1000)
                assert response.status_code == 200, (url, response.status_code)
        worst = max(worst, max(timings))
        print(f"{name:12s} {len(urls)} url(s) × {args.rounds}: p50 {statistics.median(timings):6.1f} ms, "
              f"max {max(timings):6.1f} ms", flush=True)
    print(f"slowest page render: {worst:.1f} ms")


if __name__ == "__main__":
    main()
