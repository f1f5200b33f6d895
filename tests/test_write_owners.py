"""One owner for every versioned row: nothing outside `memories/services/` (and migrations) writes a
Fact, Relationship, Entity, EntityAlias or FactEntityLink row.

Two checks. The static one here reads every module of the product and fails on a queryset write
(`.update(`, `.create(`, `.delete(`, `bulk_create`, …) whose receiver starts at one of these models,
or on raw SQL that writes their tables. The runtime one (tests/support/write_owners.py, on for the
whole run from tests/conftest.py) watches every `save()` / `delete()` of those models — the suite
exercises every path — and fails the run when product code saved one that no service called."""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("memories", "graphs", "retrieval", "dashboard", "memory_project")
OWNED_MODELS = ("Fact", "Relationship", "Entity", "EntityAlias", "FactEntityLink")
OWNED_TABLES = ("memories_fact", "memories_relationship", "memories_entity", "memories_entityalias",
                "memories_factentitylink")
WRITES = {"update", "create", "bulk_create", "bulk_update", "delete", "get_or_create", "update_or_create",
          "save"}
SERVICES = ROOT / "memories" / "services"
_SQL_WRITE = re.compile(rf"\b(?:UPDATE|INSERT\s+INTO|DELETE\s+FROM)\s+(?:{'|'.join(OWNED_TABLES)})\b", re.I)


def _product_modules():
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            if SERVICES in path.parents or "migrations" in path.parts:
                continue
            yield path


def _receiver_root(node: ast.AST) -> str | None:
    """The name a call chain starts from: `Fact.objects.filter(...).update` → "Fact"."""
    while True:
        if isinstance(node, ast.Attribute):
            node = node.value
        elif isinstance(node, ast.Call):
            node = node.func
        elif isinstance(node, ast.Subscript):
            node = node.value
        else:
            return node.id if isinstance(node, ast.Name) else None


def owned_writes(source: str) -> list[tuple[int, str]]:
    """(line, what) for every write of an owned model's rows that `source` makes itself."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in WRITES:
            chain = node.func.value
            if _receiver_root(chain) in OWNED_MODELS and "objects" in ast.unparse(chain):
                found.append((node.lineno, ast.unparse(node.func)))
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and _SQL_WRITE.search(node.value):
            found.append((node.lineno, _SQL_WRITE.search(node.value).group(0)))
    return found


def test_the_static_check_finds_what_it_looks_for():
    sample = (
        "Fact.objects.filter(pk=1).update(text='x')\n"
        "Relationship.objects.current().filter(id__in=ids).update(valid_to=now)\n"
        "EntityAlias.objects.filter(agent=a).delete()\n"
        "cursor.execute('UPDATE memories_entity SET type = %s')\n"
        "PipelineRun.objects.filter(pk=1).update(status='x')\n"  # not a versioned row
        "Fact.objects.filter(pk=1).first()\n"
    )
    assert [line for line, _ in owned_writes(sample)] == [1, 2, 3, 4]


def test_nothing_outside_the_services_writes_a_versioned_row():
    offenders = [f"{path.relative_to(ROOT)}:{line}: {what}"
                 for path in _product_modules() for line, what in owned_writes(path.read_text())]
    assert offenders == [], "write these through a service in memories/services/:\n" + "\n".join(offenders)


def test_the_runtime_check_names_product_code_that_saves_without_a_service(agent, write_owner_watch):
    """Code whose file is the product's (compiled here under a product path) saving an entity is
    caught; the same save from a service, or from a test's own setup, is not."""
    from memories.models import Entity
    from memories.services.entities import entity_get_or_create
    from tests.support.write_owners import watch_saves

    offenders, disconnect = watch_saves()
    try:
        product_code = compile("entity.importance = 0.9\nentity.save(update_fields=['importance'])\n",
                               str(ROOT / "memories" / "somewhere.py"), "exec")
        entity = entity_get_or_create(agent=agent, name="Lena Brandt", entity_type="person")  # a service
        exec(product_code, {"entity": entity})
        Entity.objects.filter(pk=entity.pk).first().save()  # this test's own code
    finally:
        disconnect()
        write_owner_watch.remove("Entity written at memories/somewhere.py:2")  # the run-wide watch saw it too
    assert offenders == ["Entity written at memories/somewhere.py:2"]
