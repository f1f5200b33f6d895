"""Export and import of one agent: the export's size and time, the import's time (new ids, every
vector computed again by the bundled model, BM25 postings built), and whether the import's own
export has the same content.

Two agents: a synthetic one with N facts (`--facts`, default 10,000), and with `--locomo` the
first LoCoMo dev conversation written through the real pipeline (read from ../shared, never
shipped). The synthetic agent is built quickly, as bench/retrieve_latency.py builds its corpus:
sentences of our own from templates, random unit vectors (the import computes real ones), rows
inserted in bulk with the shared vector indexes dropped and rebuilt once; 10 subjects, each fact
linked to its subject, one message (with its write job) per four facts, one fact in ten a later
version of an earlier one, a few hundred relationships. It is built once per size and reused.

    .venv/bin/python bench/export_import.py [--facts 100000] [--locomo] [--keep]
"""

import argparse
import gzip
import os
import random
import tempfile
import time
from pathlib import Path

import numpy as np
from _setup import LOCOMO, django_setup, machine_speed

SUBJECTS = ["Ines", "Tiago", "Odile", "Kwame", "Efua", "Rafael", "Marta", "Yusuf", "Leyla", "Bruno"]
PLACES = ["Braga", "Rennes", "Accra", "Nantes", "Porto", "Izmir", "Lyon", "Kumasi", "Faro", "Bergen"]
VERBS = ["went hiking near", "bought a bicycle in", "met an old friend in", "gave a talk in", "cooked dinner in",
         "lost an umbrella in", "painted a mural in", "ran a half marathon in", "adopted a kitten in",
         "planted tomatoes in", "fixed a leaking tap in", "took a pottery class in"]
WHEN = ["on a rainy Monday", "after work", "with her cousin", "with his neighbour", "before the holidays",
        "during the festival", "at dawn", "for the first time"]
CHUNK = 5000


def sentence(i: int, rng: random.Random) -> tuple[str, str]:
    subject = SUBJECTS[i % len(SUBJECTS)]
    text = f"{subject} {rng.choice(VERBS)} {rng.choice(PLACES)} {rng.choice(WHEN)} (note {i})"
    return subject, text


def unit_vectors(n: int, seed: int) -> np.ndarray:
    vectors = np.random.default_rng(seed).normal(size=(n, 384)).astype(np.float32)
    return vectors / np.linalg.norm(vectors, axis=1, keepdims=True)


def build(agent, n: int) -> None:
    """The synthetic agent (see the module); resumes nothing: a partial one is built again."""
    from django.db import connection, transaction
    from django.utils import timezone

    from memories.models import Entity, Event, Fact, FactEntityLink, PipelineRun, Relationship, RunKind, RunStatus
    from memories.services.entities import alias_register
    from memories.services.keyword import keyword_stats_apply

    rng = random.Random(7)
    now = timezone.now()
    base = now - timezone.timedelta(minutes=n + 10)
    with transaction.atomic():
        Fact.objects.filter(agent=agent).delete()
        Event.objects.filter(agent=agent).delete()
        Entity.objects.filter(agent=agent).delete()
        people = Entity.objects.bulk_create(
            [Entity(agent=agent, key=f"person:{s.lower()}", type="person", display_name=s,
                    name_embedding=v) for s, v in zip(SUBJECTS, unit_vectors(len(SUBJECTS), 1), strict=True)])
        places = Entity.objects.bulk_create(
            [Entity(agent=agent, key=f"place:{p.lower()}", type="place", display_name=p,
                    name_embedding=v) for p, v in zip(PLACES, unit_vectors(len(PLACES), 2), strict=True)])
        by_name = {e.display_name: e for e in people}
        for entity in [*people, *places]:
            alias_register(agent=agent, entity=entity, names=[entity.display_name])
    for start in range(0, n, CHUNK):
        stop = min(n, start + CHUNK)
        with transaction.atomic():
            said = [sentence(i, rng) for i in range(start, stop)]
            events = Event.objects.bulk_create([
                Event(agent=agent, speaker=subject, text=f"Guess what: {text}.", embedding=v,
                      occurred_at=base + timezone.timedelta(minutes=start + k), recorded_at=now,
                      external_id=f"synthetic-{start + k}")
                for k, ((subject, text), v) in enumerate(zip(said[::4], unit_vectors(len(said[::4]), start),
                                                            strict=True))])
            PipelineRun.objects.bulk_create([
                PipelineRun(agent=agent, kind=RunKind.WRITE, name="write", event=e, input_ref=f"event:{e.id}",
                            status=RunStatus.SUCCEEDED, attempts=1, params={"recent_messages": []},
                            result={"event_id": e.id, "success": True}) for e in events])
            facts = Fact.objects.bulk_create([
                Fact(agent=agent, entity=by_name[subject], text=text, embedding=v,
                     valid_from=base + timezone.timedelta(minutes=start + k),
                     learned_at=base + timezone.timedelta(minutes=start + k), recorded_at=now,
                     source_event=events[k // 4], speaker=subject)
                for k, ((subject, text), v) in enumerate(zip(said, unit_vectors(len(said), start + 1), strict=True))])
            FactEntityLink.objects.bulk_create([FactEntityLink(fact=f, entity_id=f.entity_id, is_primary=True)
                                                for f in facts])
            # one fact in ten is a later version of the fact ten before it (same subject)
            pairs = [(facts[k - 10].id, facts[k].id) for k in range(10, len(facts), 10)]
            with connection.cursor() as cursor:
                cursor.execute(
                    "UPDATE memories_fact AS old SET valid_to = new.valid_from, valid_to_learned_at = new.learned_at, "
                    "invalidated_at = new.recorded_at, invalidation_reason = 'a later note replaced it' "
                    "FROM unnest(%s::bigint[], %s::bigint[]) AS p(old_id, new_id) JOIN memories_fact AS new "
                    "ON new.id = p.new_id WHERE old.id = p.old_id", [[a for a, _ in pairs], [b for _, b in pairs]])
                cursor.execute("UPDATE memories_fact AS f SET supersedes_id = p.old_id FROM unnest(%s::bigint[], "
                               "%s::bigint[]) AS p(old_id, new_id) WHERE f.id = p.new_id",
                               [[a for a, _ in pairs], [b for _, b in pairs]])
            Relationship.objects.bulk_create([
                Relationship(agent=agent, source=people[k % len(people)], target=places[(start // CHUNK + k) % 10],
                             rel_type="visited", evidence_fact=facts[k * 97], source_event=facts[k * 97].source_event,
                             valid_from=facts[k * 97].valid_from, learned_at=facts[k * 97].learned_at, recorded_at=now,
                             **({"valid_to": now, "valid_to_learned_at": now, "invalidated_at": now}
                                if k or start else {}))
                for k in range(min(len(people), len(facts) // 97))])
            keyword_stats_apply(agent_id=agent.id, kind="fact", ids=[f.id for f in facts])
            keyword_stats_apply(agent_id=agent.id, kind="event", ids=[e.id for e in events])
        print(f"  {agent.slug}: {stop:,}/{n:,} facts", flush=True)


def locomo_agent():
    """The first LoCoMo dev conversation, written through the pipeline (once)."""
    from memories.importers.locomo import load_conversations
    from memories.models import Event
    from memories.services.agents import agent_get_or_create
    from memories.services.imports import conversation_import

    conversation = load_conversations(LOCOMO)[0]
    agent = agent_get_or_create(slug=f"bench-locomo-{conversation.sample_id}".lower().replace("_", "-"))
    if Event.objects.filter(agent=agent).count() < len(conversation.turns):
        print(f"writing {len(conversation.turns)} LoCoMo turns through the pipeline…", flush=True)
        stats = conversation_import(agent=agent, turns=conversation.turns)
        print(f"  {stats.imported} written in {stats.seconds:.0f} s", flush=True)
    return agent


def measure(agent, keep: bool, verify: bool) -> None:
    from memories.models import Agent, Fact
    from memories.portability.compare import export_content
    from memories.selectors.export import agent_export
    from memories.services.portability import agent_import, import_rows_summary

    facts = Fact.objects.filter(agent=agent).count()
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / f"{agent.slug}.jsonl"
        started = time.perf_counter()
        with open(path, "w", encoding="utf-8") as out:
            for line in agent_export(agent=agent):
                out.write(line)
        export_seconds = time.perf_counter() - started
        size = path.stat().st_size
        zipped = len(gzip.compress(path.read_bytes(), compresslevel=6))
        print(f"{agent.slug} ({facts:,} facts): export {size:,} bytes ({zipped:,} gzipped) in {export_seconds:.1f} s",
              flush=True)
        slug = f"{agent.slug}-imported-{os.getpid()}"
        started = time.perf_counter()
        with open(path, "rb") as lines:
            report = agent_import(slug=slug, lines=lines, actor="bench")
        import_seconds = time.perf_counter() - started
        print(f"  import {import_seconds:.1f} s: {import_rows_summary(report)}; {report.vectors:,} vectors "
              f"({report.vectors / import_seconds:.0f} vectors/s, {facts / import_seconds:.0f} facts/s)", flush=True)
        if verify:
            with open(path, encoding="utf-8") as lines:
                before = export_content(lines)
            after = export_content(agent_export(agent=report.agent))
            print(f"  export of the import has the same content: {before == after}", flush=True)
        if not keep:
            Agent.objects.filter(slug=slug).delete()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--facts", type=int, default=10000, help="facts of the synthetic agent (0: none)")
    parser.add_argument("--locomo", action="store_true", help="also the first LoCoMo dev conversation")
    parser.add_argument("--keep", action="store_true", help="keep the imported agents")
    parser.add_argument("--no-verify", action="store_true", help="skip comparing the two exports")
    args = parser.parse_args()
    django_setup()
    from memories.models import Fact
    from memories.services.agents import agent_get_or_create

    print(machine_speed(), flush=True)
    if args.locomo:
        measure(locomo_agent(), args.keep, not args.no_verify)
    if args.facts:
        agent = agent_get_or_create(slug=f"bench-export-{args.facts}")
        if Fact.objects.filter(agent=agent).count() != args.facts:
            from retrieve_latency import vector_indexes_dropped

            print(f"building a synthetic agent with {args.facts:,} facts…", flush=True)
            with vector_indexes_dropped():
                build(agent, args.facts)
        measure(agent, args.keep, not args.no_verify)


if __name__ == "__main__":
    main()
