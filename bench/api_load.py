"""API load: 20 concurrent clients (one API key each) for 60 s against `POST retrieve/` of an
agent with 10k facts, over loopback to a real uvicorn server. Prints requests/s, p50/p95/p99
and the error count.

    .venv/bin/python bench/api_load.py [--clients 20] [--seconds 60] [--workers 2]
"""

import argparse
import json
import os
import random
import socket
import subprocess
import sys
import threading
import time

from _setup import LOCOMO, ROOT, django_setup, machine_speed, percentile


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--clients", type=int, default=20)
    parser.add_argument("--seconds", type=float, default=60)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--facts", type=int, default=10000)
    args = parser.parse_args()
    django_setup()
    import httpx
    import numpy as np
    from retrieve_latency import build, sentences

    from memories.providers.embeddings import get_embedder
    from memories.services.agents import agent_get_or_create
    from memories.services.api_keys import api_key_create
    from retrieval.vector_indexes import agent_indexes_ensure

    agent = agent_get_or_create(slug=f"bench-latency-{args.facts}")
    pool = sentences()
    build(agent, args.facts, pool, np.stack(get_embedder().embed(pool)), random.Random(42))
    agent_indexes_ensure(agent=agent)  # the beat job's work, done now
    keys = [api_key_create(agent=agent, scope="write", name=f"bench-{i}", actor="bench")[1]
            for i in range(args.clients)]
    questions = [q["question"] for q in json.loads(LOCOMO.read_text())[0]["qa"]]

    print(machine_speed(), flush=True)
    port = free_port()
    server = subprocess.Popen(
        [str(ROOT / ".venv/bin/uvicorn"), "memory_project.asgi:application", "--host", "127.0.0.1", "--port",
         str(port), "--workers", str(args.workers), "--log-level", "warning"],
        cwd=ROOT, env={**os.environ, "DJANGO_SETTINGS_MODULE": "memory_project.settings.base"},
    )
    base = f"http://127.0.0.1:{port}/api/v1/agents/{agent.slug}/retrieve/"
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            try:
                warm = httpx.post(base, json={"query": "warm up"}, headers={"Authorization": f"Bearer {keys[0]}"},
                                  timeout=60)
                if warm.status_code == 200:
                    break
            except httpx.TransportError:
                time.sleep(0.5)
        for _ in range(args.workers * 3):  # every worker process loads its model and graph
            httpx.post(base, json={"query": random.choice(questions)},
                       headers={"Authorization": f"Bearer {keys[0]}"}, timeout=60)
        latencies, errors, lock = [], [], threading.Lock()
        stop_at = time.monotonic() + args.seconds

        def client(key: str, seed: int):
            rng = random.Random(seed)
            with httpx.Client(headers={"Authorization": f"Bearer {key}"}, timeout=30) as http:
                while time.monotonic() < stop_at:
                    started = time.perf_counter()
                    try:
                        response = http.post(base, json={"query": rng.choice(questions), "limit": 10})
                        ok = response.status_code == 200
                    except httpx.HTTPError as exc:
                        ok, response = False, exc
                    elapsed = (time.perf_counter() - started) * 1000
                    with lock:
                        latencies.append(elapsed)
                        if not ok:
                            errors.append(getattr(response, "status_code", str(response)))

        threads = [threading.Thread(target=client, args=(k, i)) for i, k in enumerate(keys)]
        before = cpu_by_role(server.pid)
        started = time.monotonic()
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        wall = time.monotonic() - started
        used = {role: seconds - before.get(role, 0.0) for role, seconds in cpu_by_role(server.pid).items()}
    finally:
        server.terminate()
        server.wait(timeout=30)
    print(f"{args.clients} clients, {wall:.0f} s, {args.facts} facts: {len(latencies) / wall:.1f} requests/s, "
          f"p50 {percentile(latencies, 50):.0f} ms, p95 {percentile(latencies, 95):.0f} ms, "
          f"p99 {percentile(latencies, 99):.0f} ms, errors {len(errors)} {sorted(set(map(str, errors)))[:5]}")
    # where two cores' time went: CPU per request of the web processes, the database and this
    # process (the load generator)
    per_request = {role: seconds * 1000 / max(len(latencies), 1) for role, seconds in used.items()}
    print("CPU per request: " + ", ".join(f"{role} {ms:.1f} ms" for role, ms in per_request.items())
          + f", all {sum(per_request.values()):.1f} ms")


def cpu_by_role(server_pid: int) -> dict[str, float]:
    """CPU seconds used so far by the web server's processes, PostgreSQL's and this one."""
    import psutil

    def seconds(process) -> float:
        try:
            times = process.cpu_times()
        except psutil.Error:
            return 0.0
        return times.user + times.system

    web = psutil.Process(server_pid)
    roles = {"web": seconds(web) + sum(seconds(child) for child in web.children(recursive=True)),
             "database": 0.0, "load generator": seconds(psutil.Process())}
    for process in psutil.process_iter(["name"]):
        if (process.info["name"] or "").startswith("postgres"):
            roles["database"] += seconds(process)
    return roles


if __name__ == "__main__":
    sys.exit(main())
