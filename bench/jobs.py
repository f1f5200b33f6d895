"""Background jobs at scale: each job's runtime for one agent with 100k facts (the corpus of
bench/retrieve_latency.py, built the same way for an agent of its own, once), each job run twice — the first
pass over everything, then the incremental pass with nothing changed.

    .venv/bin/python bench/jobs.py [--size 100000] [--jobs consolidate_profiles,importance,...]
"""

import argparse
import random
import time

import numpy as np
from _setup import django_setup, machine_speed
from retrieve_latency import build, link_subjects, missing, sentences, vector_indexes_dropped

JOBS = ["consolidate_profiles", "importance", "decay", "dedupe_facts", "merge_suggestions", "graph_warmup"]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--size", type=int, default=100000)
    parser.add_argument("--jobs", default=",".join(JOBS))
    args = parser.parse_args()
    django_setup()
    from memories.jobs.runner import job_run
    from memories.models import JobCheckpoint
    from memories.providers.embeddings import get_embedder
    from memories.services.agents import agent_get_or_create

    print(machine_speed(), flush=True)
    # its own agent: decay and dedupe_facts change the rows, the latency bench must not see that
    agent = agent_get_or_create(slug=f"bench-jobs-{args.size}")
    if missing(agent, args.size):
        pool = sentences()
        vectors = np.stack(get_embedder().embed(pool))
        with vector_indexes_dropped():
            build(agent, args.size, pool, vectors, random.Random(42))
    link_subjects(agent)
    for name in args.jobs.split(","):
        JobCheckpoint.objects.filter(job=name, agent=agent).delete()  # a first pass over everything
        for label in ("first pass", "incremental"):
            started = time.perf_counter()
            run = job_run(name=name, agent=agent, max_seconds=3600)
            seconds = time.perf_counter() - started
            print(f"{name:22} {label:12} {seconds:8.2f} s  {run.status}  {run.result['counts']}", flush=True)


if __name__ == "__main__":
    main()
