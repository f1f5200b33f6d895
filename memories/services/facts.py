"""Fact versions. Every write of a Fact row goes through a function here:

- `fact_add` inserts a version; `fact_supersede` closes one and inserts its successor;
  `fact_restate` is the successor that says something else and carries the rest of the old
  version (confidence, importance, source, slot, links) unless told otherwise;
- `fact_close` ends a statement in world time, `fact_unlearn` stops the agent believing it at
  all; relationships the fact evidences end with it (services/relationships.py);
- the operator's actions: `fact_correct`, `fact_retract`, `fact_reinstate` (atomic, audited,
  notified: `audited_change`);
- `fact_reinforce`, `fact_links_create`, `facts_mark_accessed` / `facts_access_fold`: counters and links.

A version is never edited after the fact: its successor is a new row whose `supersedes` points
back, so every chain can be walked (`memories.selectors.facts.fact_history`)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

import numpy as np
from django.db import connection, transaction
from django.db.models import F
from django.utils import timezone

from memories.config import WriteConfig
from memories.errors import Conflict, DomainError, NotFound
from memories.extraction.offline import Statement, read_statement
from memories.inserts import insert_sql, inserted
from memories.models import Agent, Entity, Event, Fact, FactAccess, FactEntityLink, Relationship, SourceContext
from memories.naming import mentions, ngrams, normalize_alias
from memories.providers.embeddings import EmbedderClient, get_embedder
from memories.providers.llm import NoLLM
from memories.reconcile import is_closing_relation
from memories.selectors import aliases_matching
from memories.selectors.facts import fact_current_version, fact_head, fact_history
from memories.services import slots  # which imports this module too: each uses the other inside functions
from memories.services.changes import audited_change
from memories.services.keyword import keyword_stats_apply
from memories.services.relationships import relationship_upsert, relationships_close, relationships_unlearn
from memories.services.resolution import entity_resolve

# What a new version of a statement inherits from the old one unless the change says otherwise
CARRIED_FIELDS = ("entity", "confidence", "importance", "importance_category", "source_context", "speaker",
                  "source_event", "slot", "slot_value")


def fact_add(
    *, agent: Agent, entity: Entity, text: str, embedding: np.ndarray, valid_from: datetime,
    learned_at: datetime | None = None, confidence: float = 0.95, importance: float = 0.5,
    importance_category: str = "", source_context: str = "extracted", speaker: str = "",
    source_event: Event | None = None, slot: str = "", slot_value: str = "", supersedes: Fact | None = None,
    links: list[tuple[Entity, list[str]]] | None = None, min_link_length: int = 3,
) -> Fact:
    """Insert one fact version: true from `valid_from`, known to the agent from `learned_at`
    (the message's time; default now), stored now. With `links` (entities and their names), the
    version is linked to its entity and to each of them its text names (`fact_links_create`),
    in the same statement."""
    now = timezone.now()
    fact = Fact(
        agent=agent, entity=entity, text=text, embedding=embedding, valid_from=valid_from,
        learned_at=learned_at or now, recorded_at=now, confidence=confidence, importance=importance,
        importance_category=importance_category, source_context=source_context, speaker=speaker,
        source_event=source_event, slot=slot, slot_value=slot_value[:255], supersedes=supersedes,
        last_confirmed_at=now,
    )
    if links is None:
        fact.save(force_insert=True)
        return fact
    return _fact_insert_linked(fact, _link_rows(fact, links, min_link_length))


def _fact_insert_linked(fact: Fact, rows: list[tuple[int, bool]]) -> Fact:
    """INSERT the fact and its link rows in one statement: the fact's own INSERT, and the links
    inserted from the id it returns."""
    insert, params = insert_sql(fact)
    with connection.cursor() as cursor:
        cursor.execute(
            f"WITH f AS ({insert}), l AS ("
            f"INSERT INTO {FactEntityLink._meta.db_table} (fact_id, entity_id, is_primary) "
            f"SELECT f.{Fact._meta.pk.column}, x.entity_id, x.is_primary "
            "FROM f, unnest(%s::bigint[], %s::boolean[]) AS x(entity_id, is_primary) ON CONFLICT DO NOTHING) "
            "SELECT * FROM f",
            [*params, [e for e, _ in rows], [p for _, p in rows]],
        )
        return inserted(fact, cursor.fetchone())


def fact_close(*, fact: Fact, valid_to: datetime, reason: str, learned_at: datetime | None = None,
               with_relationships: bool = True) -> int:
    """The statement stopped being true at `valid_to`, as the agent learned at `learned_at`
    (default now). Relationships it evidences end with it (unless `with_relationships` is off:
    the caller ends the one it means). Returns how many relationships closed."""
    now = timezone.now()
    fields = fact.mark_closed(valid_to=valid_to, learned_at=learned_at or now, now=now)
    fact.invalidation_reason = reason[:500]
    fact.save(update_fields=[*fields, "invalidation_reason"])
    if not with_relationships:
        return 0
    return relationships_close(agent=fact.agent_id, evidence=fact, valid_to=fact.valid_to,
                               learned_at=fact.valid_to_learned_at)


def fact_unlearn(*, fact: Fact, reason: str, at: datetime | None = None) -> int:
    """The agent stops believing the statement at all from `at` (default now): a retraction,
    also of a version already closed. Relationships it evidences are unlearned with it. Returns
    how many current relationships that closed."""
    now = timezone.now()
    fields = fact.mark_unlearned(at=at or now, now=now)
    fact.invalidation_reason = reason[:500]
    fact.save(update_fields=[*fields, "invalidation_reason"])
    return relationships_unlearn(agent=fact.agent_id, evidence=fact, at=fact.unlearned_at)


def fact_supersede(*, old: Fact, new_text: str, embedding: np.ndarray, valid_from: datetime, reason: str,
                   learned_at: datetime | None = None, **fields) -> Fact:
    """Close `old` at `valid_from` and insert the new version pointing back at it, both known
    from `learned_at`. A chain only moves forward on both clocks: a new version starts no earlier
    than the old one (starting with it leaves the old a window of zero length: never true), and
    is learned no earlier than the old one (a backfilled message that supersedes a later
    correction is known from the correction on), so no two versions of a chain ever overlap."""
    valid_from = max(valid_from, old.valid_from)
    learned_at = max(learned_at or timezone.now(), old.learned_at)
    fact_close(fact=old, valid_to=valid_from, reason=reason, learned_at=learned_at)
    return fact_add(agent=old.agent, entity=fields.pop("entity", old.entity), text=new_text, embedding=embedding,
                    valid_from=valid_from, learned_at=learned_at, supersedes=old, **fields)


def fact_restate(*, old: Fact, text: str, embedding: np.ndarray, valid_from: datetime, reason: str,
                 learned_at: datetime | None = None, link_candidates: list[Entity] | None = None,
                 drop: Entity | None = None, **changes) -> Fact:
    """`old` said again in other words (`text`): its successor carries the old version's
    fields (CARRIED_FIELDS) except those in `changes`, and links to what the old one linked
    (less `drop`) plus `link_candidates`, each only where the new text still names it."""
    unknown = set(changes) - set(CARRIED_FIELDS)
    if unknown:
        raise TypeError(f"fact_restate cannot change {sorted(unknown)}")
    fields = {name: getattr(old, name) for name in CARRIED_FIELDS} | changes
    new = fact_supersede(old=old, new_text=text, embedding=embedding, valid_from=valid_from, reason=reason,
                         learned_at=learned_at, **fields)
    linked = [link.entity for link in old.entity_links.select_related("entity")
              if drop is None or link.entity_id != drop.id]
    fact_links_create(fact=new, entities=[(e, []) for e in [*linked, *(link_candidates or [])]])
    return new


def fact_reinforce(*, fact: Fact) -> None:
    """The same statement was heard again: count it and note when."""
    Fact.objects.filter(pk=fact.pk).update(
        reinforcement_count=F("reinforcement_count") + 1, last_confirmed_at=timezone.now()
    )


def fact_links_create(*, fact: Fact, entities: list[tuple[Entity, list[str]]], min_length: int = 3) -> int:
    """Link a fact to its primary entity and to every other entity whose name or alias it
    mentions (names shorter than `min_length` are skipped)."""
    rows = _link_rows(fact, entities, min_length)
    FactEntityLink.objects.bulk_create([FactEntityLink(fact=fact, entity_id=entity_id, is_primary=primary)
                                        for entity_id, primary in rows], ignore_conflicts=True)
    return len(rows)


def _link_rows(fact: Fact, entities: list[tuple[Entity, list[str]]], min_length: int) -> list[tuple[int, bool]]:
    """(entity id, is primary) of the links of `fact`: its own entity, then each other entity a
    name of which its text mentions."""
    rows, linked = [(fact.entity_id, True)], {fact.entity_id}
    for entity, names in entities:
        if entity.id not in linked and any(mentions(fact.text, n, min_length) for n in [entity.display_name, *names]):
            linked.add(entity.id)
            rows.append((entity.id, False))
    return rows


def facts_mark_accessed(*, agent: Agent, fact_ids: list[int]) -> int:
    """A retrieval returned these facts: count the access, in the narrow pending table (the
    fact rows are left as they are; `facts_access_fold` adds the counts to them)."""
    if not fact_ids:
        return 0
    table, facts = FactAccess._meta.db_table, Fact._meta.db_table
    with connection.cursor() as cursor:
        cursor.execute(
            f"INSERT INTO {table} AS a (fact_id, agent_id, count, last_accessed_at) "
            f"SELECT f.id, f.agent_id, 1, %s FROM {facts} f WHERE f.agent_id = %s AND f.id = ANY(%s) "
            f"ON CONFLICT (fact_id) DO UPDATE SET count = a.count + 1, "
            f"last_accessed_at = greatest(a.last_accessed_at, EXCLUDED.last_accessed_at)",
            [timezone.now(), agent.id, list(fact_ids)])
        return cursor.rowcount


def facts_access_fold(*, agent: Agent, fact_ids: list[int] | None = None) -> int:
    """Add the agent's pending retrieval counts (of `fact_ids` only, when given) to its facts'
    `access_count` and `last_accessed_at`, in one statement: a retrieval counted meanwhile is
    either taken now or left for the next fold, never lost. Called before anything reads the
    counters (the importance and decay jobs, deduplication, export). Returns the facts changed."""
    table, facts = FactAccess._meta.db_table, Fact._meta.db_table
    only = " AND fact_id = ANY(%s)" if fact_ids is not None else ""
    with connection.cursor() as cursor:
        cursor.execute(
            f"WITH taken AS (DELETE FROM {table} WHERE agent_id = %s{only} "
            f"RETURNING fact_id, count, last_accessed_at) "
            f"UPDATE {facts} f SET access_count = f.access_count + taken.count, "
            f"last_accessed_at = greatest(f.last_accessed_at, taken.last_accessed_at) "
            f"FROM taken WHERE f.id = taken.fact_id",
            [agent.id, *([list(fact_ids)] if fact_ids is not None else [])])
        return cursor.rowcount


# --- the operator's actions ------------------------------------------------------------------------

def _iso(moment) -> str | None:
    return moment.isoformat() if moment else None


def fact_state(fact: Fact) -> dict:
    """What the audit log keeps of a version, before and after a change."""
    return {
        "id": fact.id, "text": fact.text, "entity": fact.entity_id, "confidence": fact.confidence,
        "valid_from": _iso(fact.valid_from), "valid_to": _iso(fact.valid_to),
        "learned_at": _iso(fact.learned_at), "unlearned_at": _iso(fact.unlearned_at),
        "invalidated_at": _iso(fact.invalidated_at),
    }


def _active_fact(agent: Agent, fact_id: int) -> Fact:
    fact = Fact.objects.select_for_update().filter(agent=agent, pk=fact_id).first()
    if fact is None:
        raise NotFound(f"fact {fact_id} not found")
    if not fact.is_active:
        current = fact_current_version(fact)
        if current is None:
            raise Conflict(f"fact {fact_id} is closed and its chain has no current version; reinstate a version "
                           "instead", {"fact_id": fact_id, "current": None})
        raise Conflict(f"fact {fact_id} is a closed version; the current version is {current.id}",
                       {"fact_id": fact_id, "current": current.id})
    return fact


@transaction.atomic
def fact_correct(*, agent: Agent, fact_id: int, text: str, reason: str, actor: str,
                 valid_from: datetime | None = None, embedder: EmbedderClient | None = None) -> Fact:
    """The stored statement was wrong: a new version with the operator's text supersedes it.
    The agent knows the correction from now on; in the world it holds from `valid_from`
    (default: where the corrected version started, i.e. the old text was never true). What the
    new text says is read again: the slot it fills and its value ("works at Vertix", not the old
    "Acme"), and the entities it names (known ones, by their names and aliases)."""
    text = (text or "").strip()
    if not text:
        raise DomainError("text is required", {"text": "must be a non-empty string"})
    old = _active_fact(agent, fact_id)
    now = timezone.now()
    if valid_from is not None and valid_from > now:
        raise DomainError("valid_from must not be in the future", {"valid_from": "after now"})
    before = fact_state(old)
    embedder = embedder or get_embedder()
    statement = read_statement(text, subject=old.entity.display_name)
    others = _statement_entities(agent, old.entity, statement, text, embedder)
    named = [entity for _, entity in aliases_matching(agent=agent, names=ngrams(text))]
    new = fact_restate(
        old=old, text=text, embedding=embedder.embed([text])[0],
        valid_from=max(valid_from or old.valid_from, old.valid_from), learned_at=now,
        reason=f"corrected by {actor}: {reason}", link_candidates=[*named, *others.values()], confidence=1.0,
        source_context=SourceContext.OPERATOR, speaker=actor, source_event=None, slot=statement.slot,
        slot_value=statement.value,
    )
    edges = _relationships_rederive(agent=agent, fact=new, statement=statement, others=others, learned_at=now)
    keyword_stats_apply(agent_id=agent.id, kind="fact", ids=[new.id])
    audited_change(agent=agent, actor=actor, action="fact_correct", obj=old, before=before,
                   after={**fact_state(new), "relationships": edges}, reason=reason, live=("fact", new.id))
    return new


@dataclass
class RetractReport:
    fact: Fact
    relationships_closed: int = 0
    reinstated: Fact | None = None  # the predecessor made current again (reopen_previous)


@transaction.atomic
def fact_retract(*, agent: Agent, fact_id: int, reason: str, actor: str,
                 reopen_previous: bool = False) -> RetractReport:
    """The agent stops believing the fact from now on (its relationships go with it). With
    `reopen_previous`, the version it superseded is reinstated: a wrong update undone."""
    fact = _active_fact(agent, fact_id)
    before = fact_state(fact)
    closed = fact_unlearn(fact=fact, reason=f"retracted by {actor}: {reason}")
    audited_change(agent=agent, actor=actor, action="fact_retract", obj=fact, before=before,
                   after={**fact_state(fact), "relationships_closed": closed}, reason=reason, live=("fact", fact.id))
    report = RetractReport(fact=fact, relationships_closed=closed)
    if reopen_previous:
        if not fact.supersedes_id:
            raise DomainError(f"fact {fact_id} superseded no earlier version", {"reopen_previous": "nothing to reopen"})
        report.reinstated = fact_reinstate(agent=agent, fact_id=fact.supersedes_id, reason=reason, actor=actor)
    return report


@transaction.atomic
def fact_reinstate(*, agent: Agent, fact_id: int, reason: str, actor: str) -> Fact:
    """Make a closed version's statement current again, as a new version (known from now, true
    from where the reinstated one started) that supersedes the chain's latest version. The
    versions from the reinstated one on stop being believed (the current one was the wrong
    successor). Relationships the reinstated version evidenced come back with the new one, and
    those its text states (read as a write would) are derived again."""
    old = Fact.objects.select_for_update().filter(agent=agent, pk=fact_id).first()
    if old is None:
        raise NotFound(f"fact {fact_id} not found")
    if old.is_active:
        raise Conflict(f"fact {fact_id} is already the current version", {"fact_id": fact_id, "current": old.id})
    head = Fact.objects.select_for_update().get(pk=fact_head(old).pk)
    now = timezone.now()
    # From now on the agent believes the reinstated statement from its start: that version (with
    # the end it was given) and every later one stop being believed, so no two overlap.
    later = fact_history(agent=agent, fact_id=old.id)
    for version in later[later.index(old):]:
        if version.unlearned_at is None:
            fact_unlearn(fact=version, at=now, reason=(
                version.invalidation_reason or f"replaced by the reinstated fact {old.id} ({actor}): {reason}"))
    new = fact_add(agent=agent, text=old.text, embedding=old.embedding, valid_from=old.valid_from, learned_at=now,
                   supersedes=head, **{name: getattr(old, name) for name in CARRIED_FIELDS})
    FactEntityLink.objects.bulk_create(
        [FactEntityLink(fact=new, entity_id=link.entity_id, is_primary=link.is_primary)
         for link in old.entity_links.all()], ignore_conflicts=True)
    restored = 0
    for rel in Relationship.objects.filter(agent=agent, evidence_fact=old).select_related("source", "target"):
        edge, _ = relationship_upsert(agent=agent, source=rel.source, target=rel.target, rel_type=rel.rel_type,
                                      valid_from=rel.valid_from, evidence=new, source_event=rel.source_event,
                                      learned_at=now, initial_strength=rel.strength, reinforcement=0.0)
        restored += edge is not None
    statement = read_statement(old.text, subject=old.entity.display_name)
    others = _statement_entities(agent, old.entity, statement, old.text, get_embedder())
    restored += _relationships_rederive(agent=agent, fact=new, statement=statement, others=others, learned_at=now,
                                        only_new=True)
    keyword_stats_apply(agent_id=agent.id, kind="fact", ids=[new.id])
    audited_change(agent=agent, actor=actor, action="fact_reinstate", obj=old, before=fact_state(head),
                   after={**fact_state(new), "relationships_restored": restored}, reason=reason,
                   live=("fact", new.id))
    return new


def _statement_entities(agent: Agent, subject: Entity, statement: Statement, text: str,
                        embedder: EmbedderClient) -> dict[str, Entity]:
    """The other ends of the relations a statement states, resolved as a write resolves a name
    (found, else created) — without the LLM: an operator's action holds row locks, and waits on
    no model."""
    config, others = WriteConfig(), {}
    for source, _, target in statement.relations:
        for name in (source, target):
            if normalize_alias(name) == normalize_alias(subject.display_name) or name in others:
                continue
            others[name] = entity_resolve(
                agent=agent, name=name, entity_type=statement.types.get(name, "concept"), aliases=[],
                speaker=subject.display_name, message=text, embed=embedder.embed, llm=NoLLM(), config=config,
                usage_sink=lambda usage: None).entity
    return others


def _relationships_rederive(*, agent: Agent, fact: Fact, statement: Statement, others: dict[str, Entity],
                            learned_at: datetime, only_new: bool = False) -> int:
    """The relationships a version's text states, stored as a write stores them: each relation
    between its subject and another entity is an edge evidenced by the version, true from where
    the version starts; a single-valued slot's other value ends there (its edge, the fact behind
    that edge, the subject's facts that state it: services.slots), and a cessation ("left Acme")
    ends the value it names. Returns how many edges it made current (`only_new`: not counting
    edges that were current already)."""
    subject, made = fact.entity, 0
    for source_name, rel_type, target_name in statement.relations:
        source, target = (others.get(source_name, subject), others.get(target_name, subject))
        if source.id == target.id:
            continue
        slots.slot_value_replace(agent=agent, source=source, rel_type=rel_type, target=target,
                                 ended_at=fact.valid_from, facts_valid_to=fact.valid_from, learned_at=learned_at,
                                 keep_event=fact.source_event)
        if is_closing_relation(rel_type):
            continue
        edge, outcome = relationship_upsert(
            agent=agent, source=source, target=target, rel_type=rel_type, valid_from=fact.valid_from, evidence=fact,
            source_event=fact.source_event, learned_at=learned_at,
            initial_strength=WriteConfig().relationship_initial_strength, reinforcement=0.0)
        made += edge is not None and (outcome == "created" or not only_new)
    return made
