"""Property tests of the version model: random sequences of writes, corrections, retractions,
reinstatements, merges and unmerges, then every (as_of, valid_at) probed. At any moment each
chain has at most one visible version, chains stay acyclic, windows stay well-formed, and the
SQL form of visibility (used by retrieval) agrees with the ORM form."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from django.db import connection
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memories.errors import DomainError
from memories.models import Entity, Fact, Relationship
from memories.models.visibility import Moment, version_visible, version_visible_sql
from memories.services import entities as entity_services
from memories.services import facts as fact_services
from memories.services.write import memory_write

START = datetime(2023, 1, 1, tzinfo=UTC)
CITIES = ["Porto", "Madrid", "Lyon", "Quito"]
PEOPLE = ["Nadia Okafor", "Tomas Berg"]

write = st.tuples(st.just("write"), st.sampled_from(PEOPLE), st.sampled_from(CITIES), st.integers(1, 40))
correct = st.tuples(st.just("correct"), st.integers(0, 50), st.sampled_from(CITIES), st.integers(-5, 60))
retract = st.tuples(st.just("retract"), st.integers(0, 50), st.booleans(), st.just(0))
reinstate = st.tuples(st.just("reinstate"), st.integers(0, 50), st.just(""), st.just(0))
merge = st.tuples(st.just("merge"), st.just(0), st.just(""), st.just(0))
unmerge = st.tuples(st.just("unmerge"), st.just(0), st.just(""), st.just(0))
operations = st.lists(st.one_of(write, write, correct, retract, reinstate, merge, unmerge), min_size=2, max_size=9)
probes = st.lists(st.tuples(st.integers(-10, 500), st.integers(-10, 500) | st.none()), min_size=6, max_size=12)


def _apply(agent, ops) -> None:
    clock = START
    for kind, a, b, c in ops:
        facts = list(Fact.objects.filter(agent=agent).order_by("id"))
        try:
            if kind == "write":
                clock += timedelta(days=c)
                memory_write(agent=agent, message=f"{a} moved to {b}.", speaker_name="Ola", occurred_at=clock)
            elif kind == "correct" and facts:
                fact = facts[a % len(facts)]
                fact_services.fact_correct(
                    agent=agent, fact_id=fact.id, text=f"{fact.entity.display_name} lives in {b}.", reason="p",
                    actor="t", valid_from=START + timedelta(days=c))
            elif kind == "retract" and facts:
                fact_services.fact_retract(agent=agent, fact_id=facts[a % len(facts)].id, reason="p", actor="t",
                                      reopen_previous=b)
            elif kind == "reinstate" and facts:
                fact_services.fact_reinstate(agent=agent, fact_id=facts[a % len(facts)].id, reason="p", actor="t")
            elif kind in {"merge", "unmerge"}:
                people = list(Entity.objects.filter(agent=agent, type="person").exclude(
                    display_name="Ola").order_by("id"))
                if kind == "merge" and len(people) >= 2:
                    entity_services.entity_merge(
                        agent=agent, survivor_id=people[0].id, merged_id=people[1].id, actor="t")
                elif kind == "unmerge":
                    for person in people:
                        if person.merged_into_id:
                            entity_services.entity_unmerge(agent=agent, entity_id=person.id, actor="t")
        except DomainError:
            pass  # refusals (a closed version, nothing to reopen, …) are part of the model


def _chains(agent) -> list[list[int]]:
    versions = {f.id: f.supersedes_id for f in Fact.objects.filter(agent=agent)}
    successors = {}
    for fid, prev in versions.items():
        if prev is not None:
            assert prev not in successors, "two versions supersede one"
            successors[prev] = fid
    chains = []
    for fid, prev in versions.items():
        if prev is None:
            chain, seen = [fid], {fid}
            while chain[-1] in successors:
                nxt = successors[chain[-1]]
                assert nxt not in seen, "a supersession cycle"
                chain.append(nxt)
                seen.add(nxt)
            chains.append(chain)
    assert sum(len(c) for c in chains) == len(versions), "a version outside every chain (a cycle)"
    return chains


def _sql_visible(model, agent, moment) -> set[int]:
    sql, params = version_visible_sql(moment, "d")
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT d.id FROM {model._meta.db_table} d WHERE d.agent_id = %s AND {sql}",
                       [agent.id, *params])
        return {row[0] for row in cursor.fetchall()}


@pytest.mark.django_db(transaction=False)
@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                   HealthCheck.too_slow])
@given(ops=operations, probe=probes)
def test_versions_stay_consistent_at_every_moment(agent, ops, probe):
    Fact.objects.filter(agent=agent).delete()
    Relationship.objects.filter(agent=agent).delete()
    Entity.objects.filter(agent=agent).delete()
    _apply(agent, ops)
    chains = _chains(agent)
    for fact in Fact.objects.filter(agent=agent):
        assert fact.valid_to is None or fact.valid_to >= fact.valid_from
        assert fact.unlearned_at is None or fact.unlearned_at >= fact.learned_at
        assert fact.invalidated_at is None or fact.invalidated_at >= fact.recorded_at
    moments = [Moment()] + [
        Moment(as_of=START + timedelta(days=t), valid_at=None if v is None else START + timedelta(days=v))
        for t, v in probe]
    moments.append(Moment(valid_at=START + timedelta(days=probe[0][0])))
    for moment in moments:
        visible = set(Fact.objects.filter(agent=agent).filter(version_visible(moment)).values_list("id", flat=True))
        for chain in chains:
            assert len(visible & set(chain)) <= 1, (moment, chain, visible)
        assert visible == _sql_visible(Fact, agent, moment)
        rels = set(Relationship.objects.filter(agent=agent).filter(version_visible(moment)).values_list(
            "id", flat=True))
        assert rels == _sql_visible(Relationship, agent, moment)
