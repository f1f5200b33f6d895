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
