"""Story benchmark: migrate, serve the API on 127.0.0.1 with one worker, create an admin key, run
the shared scorer (`../shared/bench/stories_eval.py`) on the dev stories and print its figures.

    .venv/bin/python bench/stories.py [--port 8051] [--stories FILE] [--failures] [--keep]

The server and worker are this script's children and stop with it (unless --keep, which leaves
them running and prints their process group ids).
"""

import argparse
import json
import os
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared"
SCORER = SHARED / "bench" / "stories_eval.py"
STORIES = SHARED / "benchdata" / "stories-dev.json"


def _env() -> dict:
    env = dict(os.environ)
    env.setdefault("DJANGO_SETTINGS_MODULE", "memory_project.settings.base")
    env.setdefault("ANAMNESIS_LLM", "none")
    env.setdefault("DJANGO_DEBUG", "false")
    env.setdefault("HF_HUB_OFFLINE", "1")
    env.setdefault("ANAMNESIS_API_RATE", "100000/min")
    env["PYTHONPATH"] = f"{ROOT}{os.pathsep}{env.get('PYTHONPATH', '')}"
    return env


def _manage(*args: str, env: dict) -> str:
    out = subprocess.run([sys.executable, "manage.py", *args], cwd=ROOT, env=env, check=True,
                         capture_output=True, text=True)
    return out.stdout.strip()


def _start(cmd: list[str], env: dict, log: Path) -> subprocess.Popen:
    """A child in its own session (process group), so stopping it stops everything it started."""
    return subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=log.open("w"), stderr=subprocess.STDOUT,
                            start_new_session=True)


def _wait_http(url: str, seconds: float = 120) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            urllib.request.urlopen(url, timeout=5)
            return
        except urllib.error.HTTPError:
            return  # the server answers (401/404 are fine)
        except OSError:
            time.sleep(1)
    raise SystemExit(f"server did not answer at {url}")


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, default=int(os.environ.get("STORIES_PORT", 8051)))
    parser.add_argument("--stories", default=str(STORIES))
    parser.add_argument("--failures", action="store_true", help="list every failed check")
    parser.add_argument("--keep", action="store_true", help="leave the server and worker running")
    args = parser.parse_args()
    env = _env()
    bindir = Path(sys.executable).parent
    logs = ROOT / "var" / "log"
    logs.mkdir(parents=True, exist_ok=True)
    _manage("migrate", "--noinput", env=env)
    key = _manage("create_api_key", "--all", "--scope", "admin", "--name", "stories-bench", "--quiet", env=env)
    children = [
        _start([str(bindir / "celery"), "-A", "memory_project", "worker", "--concurrency=1", "--loglevel=WARNING",
                "--pool=solo"], env, logs / "stories-worker.log"),
        _start([str(bindir / "uvicorn"), "memory_project.asgi:application", "--host", "127.0.0.1",
                "--port", str(args.port)], env, logs / "stories-web.log"),
    ]
    try:
        _wait_http(f"http://127.0.0.1:{args.port}/api/v1/")
        cmd = [sys.executable, str(SCORER), f"http://127.0.0.1:{args.port}/api/v1", key, args.stories]
        if args.failures:
            cmd.append("--failures")
        started = time.perf_counter()
        out = subprocess.run(cmd, capture_output=True, text=True, env=env)
        sys.stdout.write(out.stdout)
        sys.stderr.write(out.stderr)
        if out.returncode == 0 and not args.failures:
            figures = json.loads(out.stdout)
            print(f"stories: accuracy {figures['accuracy']} ({figures['passed']}/{figures['checks']}) "
                  f"by kind {figures['by_kind']} in {time.perf_counter() - started:.0f} s")
        return out.returncode
    finally:
        if args.keep:
            print(f"left running: process groups {[c.pid for c in children]}", file=sys.stderr)
        else:
            for child in children:
                os.killpg(child.pid, signal.SIGTERM)
            for child in children:
                child.wait(timeout=30)


if __name__ == "__main__":
    sys.exit(main())
