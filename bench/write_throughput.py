"""Write throughput: a 2,000-message import (offline extractor + local embeddings, real
database) in messages/s, and p50/p95 latency of single writes. Prints figures; asserts nothing.

With `--workers N`, the import takes the same number of turns from each conversation of the
file, each conversation into an agent of its own, and imports them in N processes side by side
(`conversations_import`, as `import_conversation --workers N` does); the time includes starting
the processes.

    .venv/bin/python bench/write_throughput.py [--messages 2000] [--singles 200] [--workers N]
"""

import argparse
import time
import uuid

from _setup import LOCOMO, django_setup, machine_speed, percentile


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--messages", type=int, default=2000)
    parser.add_argument("--singles", type=int, default=200)
    parser.add_argument("--workers", type=int, default=0,
                        help="import the conversations, each into its own agent, in N processes")
    args = parser.parse_args()
    django_setup()
    from memories.importers.locomo import load_conversations
    from memories.providers.embeddings import get_embedder
    from memories.services.agents import agent_get_or_create
    from memories.services.imports import ConversationJob, conversation_import, conversations_import
    from memories.services.write import memory_write

    print(machine_speed(), flush=True)
    get_embedder().embed(["warm up"])
    conversations = load_conversations(LOCOMO)
    turns = [t for conv in conversations for t in conv.turns]
    run = uuid.uuid4().hex[:8]
    if args.workers:
        each = args.messages // len(conversations)
        jobs = []
        for number, conv in enumerate(conversations):
            slug = f"bench-import-{run}-{number}"
            agent_get_or_create(slug=slug)
            jobs.append(ConversationJob(slug, [t.__class__(dia_id=f"{run}-{number}-{i}", speaker=t.speaker, text=t.text,
                                                           occurred_at=t.occurred_at, session=t.session)
                                               for i, t in enumerate(conv.turns[:each])]))
        started = time.perf_counter()
        results = conversations_import(jobs, workers=args.workers)
        elapsed = time.perf_counter() - started
        imported = sum(r.imported for r in results.values())
        print(f"import, {len(jobs)} conversations in {args.workers} process(es): {imported} messages in "
              f"{elapsed:.1f} s = {imported / elapsed:.1f} messages/s "
              f"({sum(r.failed for r in results.values())} failed)")
        return

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
