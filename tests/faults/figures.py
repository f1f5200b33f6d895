"""Fault tests record what they measured (var/reliability/<name>.json); bench/reliability.py
turns the records into docs/RELIABILITY.md."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

from django.conf import settings

N_WRITES = int(os.environ.get("RELIABILITY_N", "200"))  # `make reliability` runs 500


def figures_dir() -> Path:
    path = Path(settings.VAR_DIR) / "reliability"
    path.mkdir(parents=True, exist_ok=True)
    return path


def record(name: str, *, title: str, passed: bool, **figures) -> None:
    (figures_dir() / f"{name}.json").write_text(json.dumps(
        {"name": name, "title": title, "passed": passed, "at": time.strftime("%Y-%m-%d %H:%M:%S"), **figures},
        indent=2, default=str))


def wait_for(predicate, timeout: float, what: str, interval: float = 0.25):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(interval)
    raise AssertionError(f"timed out after {timeout:.0f} s waiting for {what}")
