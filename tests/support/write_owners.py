"""The runtime half of the write-owner check (tests/test_write_owners.py): every `save()` or
`delete()` of a versioned model during the test run must come from a service."""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SERVICES = ROOT / "memories" / "services"
OWNED_MODELS = ("Fact", "Relationship", "Entity", "EntityAlias", "FactEntityLink")


def caller_outside_services() -> str | None:
    """Where product code saved a row with no service on the stack. None when a service (or a
    migration) is on it, or when the innermost code of the project that saved is a test's own."""
    frame, innermost = sys._getframe(2), None
    while frame is not None:
        path = Path(frame.f_code.co_filename)
        if SERVICES in path.parents or "migrations" in path.parts:
            return None
        if innermost is None and ROOT in path.parents and ".venv" not in path.parts:
            if path.parts[len(ROOT.parts)] == "tests":
                return None  # a test setting up its own rows
            innermost = f"{path.relative_to(ROOT)}:{frame.f_lineno}"
        frame = frame.f_back
    return innermost


def watch_saves() -> tuple[list[str], callable]:
    """Connect the watch; returns (offenders, disconnect)."""
    from django.apps import apps
    from django.db.models.signals import pre_delete, pre_save

    offenders: list[str] = []

    def watch(sender, **kwargs):
        where = caller_outside_services()
        if where is not None:
            offenders.append(f"{sender.__name__} written at {where}")

    models = [apps.get_model("memories", name) for name in OWNED_MODELS]
    uid = f"write-owner-{id(offenders)}"
    for model in models:
        pre_save.connect(watch, sender=model, weak=False, dispatch_uid=f"{uid}-save-{model.__name__}")
        pre_delete.connect(watch, sender=model, weak=False, dispatch_uid=f"{uid}-delete-{model.__name__}")

    def disconnect() -> None:
        for model in models:
            pre_save.disconnect(sender=model, dispatch_uid=f"{uid}-save-{model.__name__}")
            pre_delete.disconnect(sender=model, dispatch_uid=f"{uid}-delete-{model.__name__}")

    return offenders, disconnect
