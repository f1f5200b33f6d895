"""Retrieval latency: p50/p95 of `memory_retrieve` (no LLM, query embedding included) for one
agent with 10k and 100k active facts (or any sizes: `--sizes 1000000`), with 9 other agents'
rows in the same tables.

Facts are synthetic but realistic: texts combine real conversational sentences (LoCoMo turns,
read from ../shared, never shipped) with named subjects, and each embedding is the bundled
model's embedding of its sentence plus small noise (embedding a million distinct texts would
take the bench a day on 2 cores). As the write pipeline would, each fact is linked to its
subject and each subject's name is an alias, so questions naming a subject seed the graph
signal with an entity that holds a tenth of the agent's facts; every fourth fact is also a
message, and both have their BM25 postings. The corpus is built once per size and reused:
rows by binary COPY, 50k at a time, then the vector indexes once (a million facts: about
15 minutes on 2 cores, with ANAMNESIS_INDEX_BUILD_MEMORY=4GB so each HNSW graph is built in
memory). The build time, the database's size on disk and the memory of this process and of
PostgreSQL are printed.

    .venv/bin/python bench/retrieve_latency.py [--sizes 10000,100000] [--queries 200] [--as-of-queries 50]
"""

import argparse
import json
import random
import time
from contextlib import nullcontext

import numpy as np
from _setup import LOCOMO, django_setup, machine_speed, percentile

OTHER_AGENTS = 9
SUBJECTS = ["Caroline", "Melanie", "Jon", "Gina", "John", "Maria", "Ana", "Rafael", "Clara", "Thiago"]


def sentences():
    from memories.importers.locomo import load_conversations

    return [t.text for c in load_conversations(LOCOMO) for t in c.turns if len(t.text) > 20]


CHUNK = 50_000


def copy_cursor():
    """A cursor on Django's own connection (so the rows it copies commit with what the ORM
    writes in the same transaction) that sends pgvector's vectors in binary: rows go in by
    binary COPY, about two orders of magnitude faster than the ORM's INSERTs."""
    from django.db import connection
    from pgvector.psycopg.vector import register_vector_info
    from psycopg.types import TypeInfo

    connection.ensure_connection()
    cursor = connection.connection.cursor()
    # on this cursor only: the ORM's own cursors keep reading vectors as they do
    register_vector_info(cursor, TypeInfo.fetch(connection.connection, "vector"))
    return cursor


def build(agent, n, pool, vectors, rng):
    """Rows as the write pipeline stores them: each fact with its subject, every fourth also an
    event; the BM25 postings and statistics of both. Loaded by COPY in chunks of 50k, each
    chunk in one transaction with its links and postings (an interrupted build resumes at the
    count stored)."""
    from django.db import transaction
    from django.utils import timezone
    from psycopg.types.json import Jsonb

    from memories.models import Entity, Event, Fact
    from memories.services.keyword import keyword_stats_apply

    if not missing(agent, n):
        return
    entities = [Entity.objects.get_or_create(agent=agent, key=f"person:{s.lower()}",
                                             defaults={"type": "person", "display_name": s})[0] for s in SUBJECTS]
    now = timezone.now()
    source_context = str(Fact._meta.get_field("source_context").default)
    existing = Fact.objects.filter(agent=agent).count()  # resume an interrupted build
    for start in range(existing, n, CHUNK):
        stop = min(n, start + CHUNK)
        picks = [rng.randrange(len(pool)) for _ in range(start, stop)]
        noisy = vectors[picks] + np.random.default_rng(start).normal(scale=0.02, size=(len(picks), 384))
        noisy = (noisy / np.linalg.norm(noisy, axis=1, keepdims=True)).astype(np.float32)
        with transaction.atomic():
            fact_floor = Fact.objects.order_by("-id").values_list("id", flat=True).first() or 0
            event_floor = Event.objects.order_by("-id").values_list("id", flat=True).first() or 0
            with copy_cursor() as cursor:
                with cursor.copy("COPY memories_fact (agent_id, entity_id, text, embedding, valid_from, learned_at, "
                                 "recorded_at, confidence, importance, importance_category, source_context, speaker, "
                                 "reinforcement_count, access_count, invalidation_reason, slot, slot_value) "
                                 "FROM STDIN (FORMAT BINARY)") as copy:
                    copy.set_types(["int8", "int8", "text", "vector", "timestamptz", "timestamptz", "timestamptz",
                                    "float8", "float8", "varchar", "varchar", "varchar", "int4", "int4", "varchar",
                                    "varchar", "varchar"])
                    for offset, k in enumerate(picks):
                        i = start + offset
                        subject = entities[i % len(entities)]
                        when = now - timezone.timedelta(minutes=i)
                        copy.write_row((agent.id, subject.id, f"{subject.display_name}: {pool[k]}", noisy[offset],
                                        when, when, now, 0.95, 0.5, "", source_context, "", 0, 0, "", "", ""))
                with cursor.copy("COPY memories_event (agent_id, speaker, text, occurred_at, recorded_at, embedding, "
                                 "external_id, metadata) FROM STDIN (FORMAT BINARY)") as copy:
                    copy.set_types(["int8", "varchar", "text", "timestamptz", "timestamptz", "vector", "varchar",
                                    "jsonb"])
                    for offset, k in enumerate(picks):
                        i = start + offset
                        if i % 4 == 0:
                            when = now - timezone.timedelta(minutes=i)
                            copy.write_row((agent.id, entities[i % len(entities)].display_name, pool[k], when, now,
                                            noisy[offset], f"b{i}", Jsonb({})))
                cursor.execute("INSERT INTO memories_factentitylink (fact_id, entity_id, is_primary) "
                               "SELECT id, entity_id, true FROM memories_fact WHERE agent_id = %s AND id > %s",
                               [agent.id, fact_floor])
            facts = list(Fact.objects.filter(agent=agent, id__gt=fact_floor).values_list("id", flat=True))
            events = list(Event.objects.filter(agent=agent, id__gt=event_floor).values_list("id", flat=True))
            keyword_stats_apply(agent_id=agent.id, kind="fact", ids=facts)
            keyword_stats_apply(agent_id=agent.id, kind="event", ids=events)
        print(f"  {agent.slug}: {stop}/{n} facts", flush=True)


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
        from django.conf import settings
        from django.db import connection

        with connection.cursor() as cursor:
            cursor.execute("SELECT set_config('maintenance_work_mem', %s, false)",
                           [settings.ANAMNESIS_INDEX_BUILD_MEMORY])
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

    from memories.models import Fact
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
    started = time.perf_counter()
    if todo:
        # a large load goes faster into tables without their vector indexes, built once after
        large = sum(n - Fact.objects.filter(agent=agent).count() for agent, n in todo) >= 100_000
        with vector_indexes_dropped() if large else nullcontext():
            for agent, n in todo:
                build(agent, n, pool, vectors, rng)
            loaded = time.perf_counter()
        print(f"rows loaded in {loaded - started:.0f} s" + (f", shared vector indexes rebuilt in "
              f"{time.perf_counter() - loaded:.0f} s" if large else ""), flush=True)
    for agent, _ in corpora:
        link_subjects(agent)
    # agents past ANAMNESIS_AGENT_INDEX_MIN_ROWS get their own HNSW indexes (the beat job's work)
    own = time.perf_counter()
    built = agent_indexes_ensure()["built"]
    if built:
        print(f"built the agents' own vector indexes in {time.perf_counter() - own:.0f} s: {', '.join(built)}",
              flush=True)
    if todo or built:
        print(f"corpus built in {time.perf_counter() - started:.0f} s", flush=True)
    print(footprint(), flush=True)
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


def footprint() -> str:
    """Disk: the database and its three largest tables with their indexes. Memory: this process's
    peak, and PostgreSQL's processes' proportional share (their shared buffers counted once),
    when the server runs on this machine."""
    import resource
    from pathlib import Path

    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_database_size(current_database()), current_setting('shared_buffers')")
        database, shared_buffers = cursor.fetchone()
        cursor.execute("SELECT relname, pg_total_relation_size(oid) FROM pg_class WHERE relkind = 'r' "
                       "ORDER BY 2 DESC LIMIT 3")
        tables = ", ".join(f"{name} {size / 2**30:.2f}" for name, size in cursor.fetchall())
    pss = 0
    for status in Path("/proc").glob("[0-9]*/comm"):
        try:
            if status.read_text().strip().startswith("postgres"):
                rollup = (status.parent / "smaps_rollup").read_text()
                pss += int(next(line.split()[1] for line in rollup.splitlines() if line.startswith("Pss:")))
        except (OSError, StopIteration):
            continue
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20
    server = f"PostgreSQL's processes {pss / 2**20:.2f} GiB (shared_buffers {shared_buffers})" if pss else \
        "PostgreSQL not on this machine"
    return (f"disk: database {database / 2**30:.2f} GiB ({tables} GiB with indexes); memory: this process's peak "
            f"{peak:.2f} GiB, {server}")


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
