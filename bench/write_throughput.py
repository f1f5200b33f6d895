"""Write throughput: a 2,000-message import (offline extractor + local embeddings, real
database) in messages/s, and p50/p95 latency of single writes. Prints figures; asserts nothing.

    .venv/bin/python bench/write_throughput.py [--messages 2000] [--singles 200]
"""

import argparse
import time
import uuid

from _setup import LOCOMO, django_setup, machine_speed, percentile


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--messages", type=int, default=2000)
    parser.add_argument("--singles", type=int, default=200)
    args = parser.parse_args()
    django_setup()
    from memories.importers.locomo import load_conversations
    from memories.providers.embeddings import get_embedder
    from memories.services.agents import agent_get_or_create
    from memories.services.imports import conversation_import
    from memories.services.write import memory_write

    print(machine_speed(), flush=True)
    get_embedder().embed(["warm up"])
    turns = [t for conv in load_conversations(LOCOMO) for t in conv.turns]
    run = uuid.uuid4().hex[:8]

    # bulk import: turns renamed per run so every message is new
    batch = [t.__class__(dia_id=f"{run}-{i}", speaker=t.speaker, text=t.text, occurred_at=t.occurred_at,
                         session=t.session) for i, t in enumerate(turns[: args.messages])]
    agent = agent_get_or_create(slug=f"bench-import-{run}")
    started = time.perf_counter()
    stats = conversation_import(agent=agent, turns=batch)
    elapsed = time.perf_counter() - started
    print(f"import: {stats.imported} messages in {elapsed:.1f} s = {stats.imported / elapsed:.1f} messages/s "
          f"({stats.failed} failed)")

    # single writes: one at a time, as an API client would send them (cold embedder cache for each text)
    agent = agent_get_or_create(slug=f"bench-single-{run}")
    latencies = []
    for t in turns[-args.singles:]:
        started = time.perf_counter()
        memory_write(agent=agent, message=t.text, speaker_name=t.speaker, occurred_at=t.occurred_at)
        latencies.append((time.perf_counter() - started) * 1000)
    print(f"single writes: n={len(latencies)} p50 {percentile(latencies, 50):.1f} ms, "
          f"p95 {percentile(latencies, 95):.1f} ms")


if __name__ == "__main__":
    main()
