"""Shared bench setup: Django on the configured database (embedded by default)."""

import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "memory_project.settings.base")
os.environ.setdefault("ANAMNESIS_LLM", "none")
os.environ.setdefault("DJANGO_DEBUG", "false")  # no per-query SQL log while measuring
LOCOMO = ROOT.parent / "shared" / "benchdata" / "locomo-dev.json"


def django_setup():
    import django

    django.setup()


def percentile(values, pct):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(pct / 100 * (len(ordered) - 1))))]


def machine_speed() -> str:
    """A fixed pure-Python workload, timed: shared machines run at different speeds from one
    hour to the next, and a figure means little without the speed it was measured at."""
    import time

    started = time.perf_counter()
    total = 0
    for i in range(5_000_000):
        total += i
    return f"machine reference: 5M-step Python loop in {(time.perf_counter() - started) * 1000:.0f} ms"
