"""Retrieval latency: p50/p95 of `memory_retrieve` (no LLM, query embedding included) for one
agent with 10k and 100k active facts, with 9 other agents' rows in the same tables.

Facts are synthetic but realistic: texts combine real conversational sentences (LoCoMo turns,
read from ../shared, never shipped) with named subjects, and each embedding is the bundled
model's embedding of its sentence plus small noise (embedding 100k distinct texts would take
the bench an hour on 2 cores). As the write pipeline would, each fact is linked to its subject
and each subject's name is an alias, so questions naming a subject seed the graph signal with
an entity that holds a tenth of the agent's facts. The corpus is built once per size and reused.

    .venv/bin/python bench/retrieve_latency.py [--sizes 10000,100000] [--queries 200] [--as-of-queries 50]
"""

import argparse
import json
import random
import time

import numpy as np
from _setup import LOCOMO, django_setup, machine_speed, percentile

OTHER_AGENTS = 9
SUBJECTS = ["Caroline", "Melanie", "Jon", "Gina", "John", "Maria", "Ana", "Rafael", "Clara", "Thiago"]


def sentences():
    from memories.importers.locomo import load_conversations

    return [t.text for c in load_conversations(LOCOMO) for t in c.turns if len(t.text) > 20]


def build(agent, n, pool, vectors, rng):
    from django.db import transaction
    from django.utils import timezone

    from memories.models import Entity, Event, Fact, FactEntityLink
    from memories.services.keyword import keyword_stats_apply

    if not missing(agent, n):
        return
    entities = [Entity.objects.get_or_create(agent=agent, key=f"person:{s.lower()}",
                                             defaults={"type": "person", "display_name": s})[0] for s in SUBJECTS]
    now = timezone.now()
    existing = Fact.objects.filter(agent=agent).count()  # resume an interrupted build
    for start in range(existing, n, 5000):
        facts, events = [], []
        for i in range(start, min(n, start + 5000)):
            k = rng.randrange(len(pool))
            subject = entities[i % len(entities)]
            noise = np.random.default_rng(i).normal(scale=0.02, size=384)
            vec = vectors[k] + noise
            vec /= np.linalg.norm(vec)
            when = now - timezone.timedelta(minutes=i)
            facts.append(Fact(agent=agent, entity=subject, text=f"{subject.display_name}: {pool[k]}",
                              embedding=vec, valid_from=when, learned_at=when, recorded_at=now, confidence=0.95))
            if i % 4 == 0:
                events.append(Event(agent=agent, speaker=subject.display_name, text=pool[k], occurred_at=when,
                                    recorded_at=now, embedding=vec, external_id=f"b{i}"))
        with transaction.atomic():
            created = Fact.objects.bulk_create(facts)
            FactEntityLink.objects.bulk_create([FactEntityLink(fact=f, entity=f.entity, is_primary=True)
                                                for f in created])
            made = Event.objects.bulk_create(events)
            keyword_stats_apply(agent_id=agent.id, kind="fact", ids=[f.id for f in created])
            keyword_stats_apply(agent_id=agent.id, kind="event", ids=[e.id for e in made])
        print(f"  {agent.slug}: {min(n, start + 5000)}/{n} facts", flush=True)


def link_subjects(agent):
    """As the write pipeline does: each subject's name is an alias (the planner finds it in a
    question and seeds the graph signal) and each fact is linked to its subject. Backfills a
    corpus built before the bench did this."""
    from django.db import connection

    from memories.models import Entity, FactEntityLink
    from memories.services.entities import alias_register

    for entity in Entity.objects.filter(agent=agent):
        alias_register(agent=agent, entity=entity, names=[entity.display_name])
    if not FactEntityLink.objects.filter(fact__agent=agent).exists():
        with connection.cursor() as cursor:
            cursor.execute("INSERT INTO memories_factentitylink (fact_id, entity_id, is_primary) "
                           "SELECT id, entity_id, true FROM memories_fact WHERE agent_id = %s", [agent.id])


def missing(agent, n):
    from memories.models import Fact

    return Fact.objects.filter(agent=agent).count() < n


class vector_indexes_dropped:
    """Bulk loading into HNSW indexes row by row takes most of an hour here; building them
    once afterwards takes minutes. The shared indexes' definitions are read back from the
    database and recreated even if the load is interrupted; the agents' own indexes are dropped
    (main() builds them afterwards, as the beat job would)."""

    def __enter__(self):
        from django.db import connection

        from retrieval.vector_indexes import agent_indexes

        with connection.cursor() as cursor:
            cursor.execute("SELECT indexname, indexdef FROM pg_indexes WHERE tablename IN "
                           "('memories_fact', 'memories_event') AND indexdef ILIKE '%% USING hnsw %%'")
            own = {index.name for index in agent_indexes()}
            self.definitions = [(name, definition) for name, definition in cursor.fetchall() if name not in own]
            for name in [name for name, _ in self.definitions] + sorted(own):
                cursor.execute(f'DROP INDEX IF EXISTS "{name}"')

    def __exit__(self, *exc):
        from django.db import connection

        with connection.cursor() as cursor:
            cursor.execute("SET maintenance_work_mem = '2GB'")
            for name, definition in self.definitions:
                print(f"  rebuilding {name}…", flush=True)
                cursor.execute(definition)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", default="10000,100000")
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--as-of-queries", type=int, default=50, help="also time this many as_of queries (0: none)")
    parser.add_argument("--other-rows", type=int, default=10000, help="facts of each of the 9 other agents")
    args = parser.parse_args()
    django_setup()
    from django.db import connection
    from django.utils import timezone

    from memories.providers.embeddings import get_embedder
    from memories.services.agents import agent_get_or_create
    from retrieval.services import memory_retrieve
    from retrieval.vector_indexes import agent_indexes_ensure

    rng = random.Random(42)
    pool = sentences()
    print(machine_speed(), flush=True)
    print(f"embedding {len(pool)} sentences for the synthetic corpus…", flush=True)
    vectors = np.stack(get_embedder().embed(pool))
    sizes = [int(s) for s in args.sizes.split(",")]
    corpora = [(agent_get_or_create(slug=f"bench-other-{i}"), args.other_rows) for i in range(OTHER_AGENTS)]
    corpora += [(agent_get_or_create(slug=f"bench-latency-{size}"), size) for size in sizes]
    todo = [(agent, n) for agent, n in corpora if missing(agent, n)]
    if todo:
        with vector_indexes_dropped():
            for agent, n in todo:
                build(agent, n, pool, vectors, rng)
    for agent, _ in corpora:
        link_subjects(agent)
    # agents past ANAMNESIS_AGENT_INDEX_MIN_ROWS get their own HNSW indexes (the beat job's work)
    built = agent_indexes_ensure()["built"]
    if built:
        print(f"built the agents' own vector indexes: {', '.join(built)}", flush=True)
    questions = [q["question"] for q in json.loads(LOCOMO.read_text())[0]["qa"]]
    for size in sizes:
        agent = agent_get_or_create(slug=f"bench-latency-{size}")
        with connection.cursor() as cursor:
            cursor.execute("ANALYZE memories_fact; ANALYZE memories_event; ANALYZE memories_factentitylink")
        for q in questions[:10]:  # warm caches, model and graph
            memory_retrieve(agent=agent, query=q, record=False)
        latencies = timed(agent, questions, args.queries)
        print(f"{size} active facts (+{OTHER_AGENTS}x{args.other_rows} other agents' facts): "
              f"p50 {percentile(latencies, 50):.1f} ms, p95 {percentile(latencies, 95):.1f} ms, n={len(latencies)}")
        if args.as_of_queries:  # the time-travel path, as of now: every fact visible, none cached
            print(f"  history graph built in {warm_history(agent, questions):.0f} ms (once per graph version, "
                  "in the background)", flush=True)
            past = timed(agent, questions, args.as_of_queries, as_of=timezone.now())
            print(f"{size} active facts, as_of now (time-travel path): p50 {percentile(past, 50):.1f} ms, "
                  f"p95 {percentile(past, 95):.1f} ms, n={len(past)}")


def warm_history(agent, questions) -> float:
    """A first time-travel query starts building the agent's history graph in the background;
    the timed ones run once it is there (as they do on a server after its first such query). The
    build's own time is returned."""
    from django.utils import timezone

    from graphs.entity_graph import build_history_graph, graph_version, history_graph_cached
    from retrieval.services import memory_retrieve

    memory_retrieve(agent=agent, query=questions[0], as_of=timezone.now(), record=False)
    deadline = time.monotonic() + 120
    while history_graph_cached(agent, graph_version(agent)) is None and time.monotonic() < deadline:
        time.sleep(0.2)
    started = time.perf_counter()
    build_history_graph(agent)
    return (time.perf_counter() - started) * 1000


def timed(agent, questions, n, as_of=None):
    from retrieval.services import memory_retrieve

    latencies = []
    for i in range(n):
        q = questions[i % len(questions)] + ("" if i < len(questions) else f" ({i})")
        started = time.perf_counter()
        memory_retrieve(agent=agent, query=q, as_of=as_of, record=False)
        latencies.append((time.perf_counter() - started) * 1000)
    return latencies


if __name__ == "__main__":
    main()
