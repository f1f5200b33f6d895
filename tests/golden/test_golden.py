"""Golden sentences: every case of every frame file in tests/golden/, written through the real
write service (offline, no LLM) on a fresh agent, then read back through the selectors and
compared with what the case expects. A case marked `known_gap` is what the offline extractor
gets wrong today: it runs as a strict xfail, so the fix that makes it pass must also remove the
mark (tests/golden/README.md)."""

import pytest

from memories.models import Fact, Relationship
from memories.selectors import entities_list, facts_list, relationships_list
from memories.selectors.entities import resolve_exact
from memories.services.agents import agent_get_or_create
from memories.services.write import memory_write
from tests.golden.golden import Stored, compare, load_cases, norm

CASES = load_cases()


def _param(case):
    marks = [pytest.mark.xfail(reason=case.known_gap, strict=True)] if case.known_gap else []
    return pytest.param(case, id=case.test_id, marks=marks)


def _stored(agent) -> Stored:
    stored = Stored()
    for entity in entities_list(agent=agent).filter(merged_into__isnull=True).prefetch_related("aliases"):
        names = frozenset({norm(entity.display_name), *(norm(a.alias) for a in entity.aliases.all())})
        stored.entities[entity.id] = (entity.display_name, entity.type, names)
    current = set(Relationship.objects.filter(agent=agent).current().values_list("id", flat=True))
    for rel in relationships_list(agent=agent):
        stored.relationships.append((rel.source_id, rel.rel_type, rel.target_id, rel.id in current))
    current = set(Fact.objects.filter(agent=agent).current().values_list("id", flat=True))
    for fact in facts_list(agent=agent).prefetch_related("entity_links"):
        named = frozenset({fact.entity_id, *(link.entity_id for link in fact.entity_links.all())})
        stored.facts.append((fact.entity_id, named, fact.text, fact.slot, fact.slot_value, fact.id in current))
    return stored


def _resolver(agent):
    def resolve(name: str, entity_type: str) -> int | None:
        entity, _ = resolve_exact(agent=agent, name=name, entity_type=entity_type)
        return entity.id if entity is not None else None

    return resolve


@pytest.mark.parametrize("case", [_param(c) for c in CASES])
def test_golden(db, case):
    agent = agent_get_or_create(slug="golden", name="Golden sentences")
    for speaker, text, at in case.messages:
        result = memory_write(agent=agent, message=text, speaker_name=speaker, occurred_at=at)
        assert result.success and result.extraction_path == "offline", f"write of {text!r} failed"
    stored = _stored(agent)
    misses = compare(stored, case.expect, _resolver(agent))
    said = "\n".join(f"  {speaker}: {text}" for speaker, text, _ in case.messages)
    assert not misses, f"\n{said}\nmissed:\n" + "\n".join(f"  - {m}" for m in misses) + \
        f"\nstored:\n{stored.describe()}"
