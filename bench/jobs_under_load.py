"""Writes and retrievals while the background jobs run: on one agent with `--facts` facts (the
synthetic corpus of bench/retrieve_latency.py, built once for an agent of its own), the import
throughput (messages/s), single-write p50/p95 and `memory_retrieve` p50/p95 — first with no job
running, then while another process runs the jobs in a loop (consolidate_profiles, importance,
decay, dedupe_facts, merge_suggestions, graph_warmup, each a full pass: its checkpoint cleared
before every run, the heaviest the jobs get). Prints both side by side; asserts nothing.

The phases write different but alike messages (interleaved slices of the LoCoMo turns) and ask
the same questions; they alternate (`--rounds`), so a shared machine's drift touches both, and
each phase prints the machine reference measured right after it. The first loaded pass of
dedupe_facts closes the corpus's repeated facts (the synthetic texts repeat), so a second run of
the bench starts from a slightly smaller corpus.

    .venv/bin/python bench/jobs_under_load.py [--facts 20000] [--import 300] [--singles 100] [--queries 100]
        [--rounds 2] [--jobs consolidate_profiles,importance,...]
"""

import argparse
import json
import os
import random
import signal
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

import numpy as np
from _setup import LOCOMO, django_setup, machine_speed, percentile
from retrieve_latency import build, link_subjects, missing, sentences, vector_indexes_dropped

JOBS = ["consolidate_profiles", "importance", "decay", "dedupe_facts", "merge_suggestions", "graph_warmup"]


def jobs_loop(slug: str, stop: Path, names: list[str]) -> None:
    """The other process: the jobs one after the other, each a full pass, until `stop` exists;
    one JSON line per run on stdout."""
    django_setup()
    from memories.jobs.runner import job_run
    from memories.models import Agent, JobCheckpoint

    agent = Agent.objects.get(slug=slug)
    print(json.dumps({"started": True}), flush=True)
    while not stop.exists():
        for name in names:
            if stop.exists():
                break
            JobCheckpoint.objects.filter(job=name, agent=agent).delete()
            started = time.perf_counter()
            run = job_run(name=name, agent=agent, max_seconds=600, raise_errors=False)
            print(json.dumps({"job": name, "seconds": round(time.perf_counter() - started, 3),
                              "status": run.status}), flush=True)


def measure(agent, turns, questions, args, label: str) -> dict:
    """One phase: an import, single writes, retrievals; the raw figures."""
    from memories.services.imports import conversation_import
    from memories.services.write import memory_write
    from retrieval.services import memory_retrieve

    run = uuid.uuid4().hex[:8]
    batch = [t.__class__(dia_id=f"load-{run}-{i}", speaker=t.speaker, text=t.text, occurred_at=t.occurred_at,
                         session=t.session) for i, t in enumerate(turns[:args.imports])]
    started = time.perf_counter()
    stats = conversation_import(agent=agent, turns=batch)
    seconds = time.perf_counter() - started
    writes = []
    for t in turns[args.imports:args.imports + args.singles]:
        started = time.perf_counter()
        memory_write(agent=agent, message=t.text, speaker_name=t.speaker, occurred_at=t.occurred_at)
        writes.append((time.perf_counter() - started) * 1000)
    reads = []
    for i in range(args.queries):
        q = questions[i % len(questions)] + ("" if i < len(questions) else f" ({i})")
        started = time.perf_counter()
        memory_retrieve(agent=agent, query=q, record=False)
        reads.append((time.perf_counter() - started) * 1000)
    print(f"  {label}: import {stats.imported / seconds:.1f} messages/s ({stats.failed} failed), single write "
          f"p50 {percentile(writes, 50):.1f} ms, retrieve p50 {percentile(reads, 50):.1f} ms; {machine_speed()}",
          flush=True)
    return {"imported": stats.imported, "seconds": seconds, "writes": writes, "reads": reads}


def summary(phases: list[dict]) -> dict:
    writes = [w for p in phases for w in p["writes"]]
    reads = [r for p in phases for r in p["reads"]]
    return {"import": sum(p["imported"] for p in phases) / sum(p["seconds"] for p in phases),
            "write_p50": percentile(writes, 50), "write_p95": percentile(writes, 95),
            "read_p50": percentile(reads, 50), "read_p95": percentile(reads, 95)}


class jobs_running:
    """The jobs loop in another process for the duration of the block; `.runs` afterwards."""

    def __init__(self, agent, names: str):
        self.agent, self.names, self.runs = agent, names, []

    def __enter__(self):
        self.stop = Path(tempfile.mkdtemp(prefix="bench-jobs-")) / "stop"
        self.process = subprocess.Popen(
            [sys.executable, __file__, "--jobs-loop", self.agent.slug, "--stop-file", str(self.stop),
             "--jobs", self.names], stdout=subprocess.PIPE, text=True, env={**os.environ, "PYTHONUNBUFFERED": "1"})
        first = json.loads(self.process.stdout.readline() or "{}")
        if not first.get("started"):
            self.process.kill()
            raise SystemExit("the jobs process did not start")
        time.sleep(2)  # into its first job
        return self

    def __exit__(self, *exc):
        self.stop.touch()
        try:
            out, _ = self.process.communicate(timeout=900)  # the job in progress finishes
        except subprocess.TimeoutExpired:
            self.process.send_signal(signal.SIGTERM)
            out, _ = self.process.communicate()
        self.runs = [json.loads(line) for line in out.splitlines() if line.startswith("{")]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--facts", type=int, default=20000, help="facts of the one agent")
    parser.add_argument("--import", dest="imports", type=int, default=300, help="messages imported per phase")
    parser.add_argument("--singles", type=int, default=100, help="single writes per phase")
    parser.add_argument("--queries", type=int, default=100, help="retrievals per phase")
    parser.add_argument("--rounds", type=int, default=2, help="alternations of (no jobs, jobs running)")
    parser.add_argument("--jobs", default=",".join(JOBS))
    parser.add_argument("--jobs-loop", help=argparse.SUPPRESS)  # internal: the jobs process (agent slug)
    parser.add_argument("--stop-file", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.jobs_loop:
        return jobs_loop(args.jobs_loop, Path(args.stop_file), args.jobs.split(","))

    django_setup()
    from django.db import connection

    from memories.importers.locomo import load_conversations
    from memories.providers.embeddings import get_embedder
    from memories.services.agents import agent_get_or_create
    from memories.services.imports import conversation_import
    from memories.services.write import memory_write
    from retrieval.services import memory_retrieve
    from retrieval.vector_indexes import agent_indexes_ensure

    print(machine_speed(), "(before)", flush=True)
    agent = agent_get_or_create(slug=f"bench-load-{args.facts}")
    if missing(agent, args.facts):
        pool = sentences()
        print(f"building {args.facts} facts from {len(pool)} embedded sentences…", flush=True)
        vectors = np.stack(get_embedder().embed(pool))
        with vector_indexes_dropped():
            build(agent, args.facts, pool, vectors, random.Random(42))
    link_subjects(agent)
    built = agent_indexes_ensure()["built"]
    if built:
        print(f"built the agents' own vector indexes: {', '.join(built)}", flush=True)
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE memories_fact; ANALYZE memories_event; ANALYZE memories_factentitylink")
    turns = [t for conv in load_conversations(LOCOMO) for t in conv.turns]
    if 2 * args.rounds * (args.imports + args.singles) > len(turns) - 30:
        raise SystemExit(f"--import + --singles must be at most {(len(turns) - 30) // (2 * args.rounds)}")
    questions = [q["question"] for q in json.loads(LOCOMO.read_text())[0]["qa"]]
    for q in questions[:10]:  # warm the model, caches and the entity graph
        memory_retrieve(agent=agent, query=q, record=False)

    warm = turns[-30:]  # not in any phase: the first writes load the parser and fill caches
    conversation_import(agent=agent, turns=[t.__class__(dia_id=f"warm-{uuid.uuid4().hex[:8]}-{i}", speaker=t.speaker,
                                                        text=t.text, occurred_at=t.occurred_at, session=t.session)
                                            for i, t in enumerate(warm[:20])])
    for t in warm[20:]:
        memory_write(agent=agent, message=t.text, speaker_name=t.speaker, occurred_at=t.occurred_at)

    quiet, loaded, runs = [], [], []
    for r in range(args.rounds):  # alternated, so a machine that speeds up or slows down touches both
        quiet.append(measure(agent, turns[2 * r::2 * args.rounds], questions, args, f"round {r + 1}, no jobs"))
        with jobs_running(agent, args.jobs) as jobs:
            loaded.append(measure(agent, turns[2 * r + 1::2 * args.rounds], questions, args,
                                  f"round {r + 1}, jobs running"))
        runs += jobs.runs
    quiet, loaded = summary(quiet), summary(loaded)

    print()
    print(f"one agent, {args.facts} facts (+ {args.imports + args.singles} messages per phase), {args.rounds} rounds "
          f"of (no jobs, jobs running), figures over all rounds; no LLM, bundled embeddings")
    print(f"{'':28}{'no jobs':>12}{'jobs running':>15}{'change':>9}")
    rows = [("import, messages/s", "import"), ("single write p50, ms", "write_p50"),
            ("single write p95, ms", "write_p95"), ("retrieve p50, ms", "read_p50"), ("retrieve p95, ms", "read_p95")]
    for title, key in rows:
        change = (loaded[key] / quiet[key] - 1) * 100 if quiet[key] else 0.0
        print(f"{title:28}{quiet[key]:>12.1f}{loaded[key]:>15.1f}{change:>+8.0f}%")
    done = {}
    for run in runs:
        done.setdefault(run["job"], []).append(run)
    print("job runs during the loaded phases (full passes), count × mean: " + ", ".join(
        f"{name} {len(rs)}× {sum(r['seconds'] for r in rs) / len(rs):.2f} s"
        + ("" if all(r["status"] == "succeeded" for r in rs) else " (some failed)") for name, rs in done.items()))
    print(machine_speed(), "(after)")


if __name__ == "__main__":
    main()
