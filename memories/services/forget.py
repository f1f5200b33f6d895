"""Forget a person: every trace of the entity and of its names and aliases, in every table.

- Messages the person said herself are redacted whole, and everything derived from them (facts,
  relationships, the job's result and trace) goes with them.
- In other people's messages only the mentions are redacted ("[redacted] moved to Lisbon"); the
  rest of the message and the facts it gave about others are kept. Changed texts are re-indexed
  (BM25 postings) and re-embedded.
- Facts about or naming the person (every version), relationships, aliases and links are deleted;
  other entities' profile sentences naming her are dropped; traces, job results, merge records,
  audit rows and the admin log keep their ids and counts with the names redacted.
- Race-free: the forget first locks the agent's unfinished write jobs (a worker busy with one
  finishes before the forget reads anything; a queued one waits for it), and leaves a tombstone of
  keyed name digests, so a message logged before the forget but processed after it is redacted by
  `event_forget_guard` instead of bringing her back.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field

from django.conf import settings
from django.contrib.admin.models import LogEntry
from django.db import connection, transaction
from django.db.models import Q
from django.utils import timezone

from memories.config import WriteConfig
from memories.errors import NotFound
from memories.models import (
    Agent,
    AuditEntry,
    Entity,
    EntityAlias,
    EntityMerge,
    Event,
    Fact,
    FactEntityLink,
    ForgetTombstone,
    KeywordTerm,
    PipelineRun,
    PipelineStep,
    Relationship,
    RunKind,
    RunStatus,
)
from memories.naming import normalize_alias
from memories.providers.embeddings import EmbedderClient, get_embedder
from memories.redaction import REDACTED, NameMatcher
from memories.services.changes import audited_change
from memories.services.events import event_embedding_text
from memories.services.keyword import keyword_stats_apply

T_EVENT, T_FACT, T_ENTITY = Event._meta.db_table, Fact._meta.db_table, Entity._meta.db_table
T_ALIAS, T_LINK, T_REL = EntityAlias._meta.db_table, FactEntityLink._meta.db_table, Relationship._meta.db_table
T_RUN, T_STEP, T_AUDIT = PipelineRun._meta.db_table, PipelineStep._meta.db_table, AuditEntry._meta.db_table
T_MERGE, T_TERM, T_LOG = EntityMerge._meta.db_table, KeywordTerm._meta.db_table, LogEntry._meta.db_table


def _key() -> bytes:
    return settings.SECRET_KEY.encode("utf-8")


@dataclass
class ForgetReport:
    facts_deleted: int = 0
    relationships_deleted: int = 0
    aliases_deleted: int = 0
    links_deleted: int = 0
    events_redacted: int = 0  # whole (her own messages) or mentions only
    profiles_scrubbed: int = 0
    entities_deleted: int = 0
    # per table: {"memories_event": {"redacted": 2, "mentions_redacted": 3}, "memories_fact": {"deleted": 4}}
    tables: dict[str, dict[str, int]] = field(default_factory=dict)

    def count(self, table: str, what: str, n: int) -> int:
        if n:
            self.tables.setdefault(table, Counter())[what] += n
        return n


@dataclass
class _Scope:
    agent: Agent
    entity_ids: list[int]
    names: list[str]
    matcher: NameMatcher
    parts: NameMatcher  # also each word of her names and its stem: for traces, results, audit
    own_event_ids: set[int]  # messages she said herself: redacted whole
    mention_event_ids: set[int]  # other people's messages naming her: mentions redacted
    fact_ids: set[int]

    def relationships(self):
        return Relationship.objects.filter(agent=self.agent).filter(
            Q(source_id__in=self.entity_ids) | Q(target_id__in=self.entity_ids)
            | Q(evidence_fact_id__in=self.fact_ids) | Q(source_event_id__in=self.own_event_ids))


def _chain_ids(fact_ids: set[int]) -> set[int]:
    """All versions before and after the given facts."""
    found, frontier = set(fact_ids), set(fact_ids)
    while frontier:
        rows = Fact.objects.filter(Q(id__in=frontier) | Q(supersedes_id__in=frontier)).values_list(
            "id", "supersedes_id")
        nxt = {i for pair in rows for i in pair if i is not None} - found
        found |= nxt
        frontier = nxt
    return found


def _scope(agent: Agent, entity: Entity) -> _Scope:
    """The entity and those merged into it, all their names and aliases (any length), the
    events she said or that name her, and every fact about, naming or derived from her."""
    group = [entity, *Entity.objects.filter(agent=agent, merged_into=entity)]
    ids = [e.id for e in group]
    names = sorted({e.display_name for e in group} | set(
        EntityAlias.objects.filter(entity_id__in=ids).values_list("alias", flat=True)))
    matcher = NameMatcher.from_names(names, key=_key())
    own, mentioned = set(), set()
    for event_id, speaker, text in Event.objects.filter(agent=agent).values_list("id", "speaker", "text").iterator():
        if matcher.search(speaker):
            own.add(event_id)
        elif matcher.search(text):
            mentioned.add(event_id)
    about = set(Fact.objects.filter(agent=agent).filter(
        Q(entity_id__in=ids) | Q(entity_links__entity_id__in=ids)).values_list("id", flat=True))
    about |= {fid for fid, text in Fact.objects.filter(agent=agent).values_list("id", "text").iterator()
              if matcher.search(text)}
    about = _chain_ids(about)
    derived = set(Fact.objects.filter(agent=agent, source_event_id__in=own).values_list("id", flat=True))
    derived |= {fid for fid, speaker in Fact.objects.filter(agent=agent).values_list("id", "speaker").iterator()
                if matcher.search(speaker)}
    return _Scope(agent, ids, names, matcher, _parts_matcher(names), own, mentioned, about | derived)


def _parts_matcher(names: list[str]) -> NameMatcher:
    """Names, their words and the words' stems: traces hold a query's keyword terms one by one
    ("zoe", "kim") and stemmed."""
    words = {w for n in names for w in normalize_alias(n).split()}
    stems: set[str] = set()
    if words:
        with connection.cursor() as cursor:
            cursor.execute("SELECT DISTINCT lexeme FROM unnest(to_tsvector('english', %s))", [" ".join(words)])
            stems = {row[0] for row in cursor.fetchall()}
    return NameMatcher.from_names([*names, *words, *stems], key=_key())


def _lock_unfinished_writes(agent: Agent) -> None:
    """Wait for write jobs being processed and hold queued ones until the forget commits."""
    list(PipelineRun.objects.select_for_update().filter(
        agent=agent, kind=RunKind.WRITE, status__in=[RunStatus.QUEUED, RunStatus.RUNNING],
    ).order_by("id").values_list("id", flat=True))


@transaction.atomic
def entity_forget(*, agent: Agent, entity_id: int, actor: str, reason: str = "",
                  embedder: EmbedderClient | None = None) -> ForgetReport:
    _lock_unfinished_writes(agent)
    entity = Entity.objects.select_for_update().filter(agent=agent, pk=entity_id).first()
    if entity is None:
        raise NotFound(f"entity {entity_id} not found")
    now = timezone.now()
    scope = _scope(agent, entity)
    m, report = scope.matcher, ForgetReport()
    ForgetTombstone.objects.create(agent=agent, digests=sorted(m.digests), max_words=m.max_words, created_at=now)

    # facts, relationships, links, aliases, the entities
    keyword_stats_apply(agent_id=agent.id, kind="fact", ids=sorted(scope.fact_ids), sign=-1)
    report.relationships_deleted = report.count(
        T_REL, "deleted", scope.relationships().delete()[1].get("memories.Relationship", 0))
    links = FactEntityLink.objects.filter(Q(entity_id__in=scope.entity_ids) | Q(fact_id__in=scope.fact_ids))
    report.links_deleted = report.count(T_LINK, "deleted", links.delete()[1].get("memories.FactEntityLink", 0))
    Fact.objects.filter(supersedes_id__in=scope.fact_ids).update(supersedes=None)
    report.facts_deleted = report.count(
        T_FACT, "deleted", Fact.objects.filter(id__in=scope.fact_ids).delete()[1].get("memories.Fact", 0))
    report.aliases_deleted = report.count(
        T_ALIAS, "deleted", EntityAlias.objects.filter(entity_id__in=scope.entity_ids).delete()[0])
    for fact in Fact.objects.filter(agent=agent).exclude(invalidation_reason="").only("id", "invalidation_reason"):
        if m.search(fact.invalidation_reason):
            Fact.objects.filter(pk=fact.pk).update(invalidation_reason=m.redact(fact.invalidation_reason))
            report.count(T_FACT, "reasons_redacted", 1)

    # events: hers whole, others' mentions only (re-indexed and re-embedded)
    redacted = _redact_own_events(agent, sorted(scope.own_event_ids), report)
    redacted += _redact_mentions(agent, sorted(scope.mention_event_ids), m, report, embedder)
    report.events_redacted = redacted
    report.profiles_scrubbed = report.count(T_ENTITY, "profiles_scrubbed", _scrub_profiles(agent, scope))
    EntityMerge.objects.filter(Q(survivor_id__in=scope.entity_ids) | Q(merged_id__in=scope.entity_ids)).delete()
    report.entities_deleted = report.count(T_ENTITY, "deleted", Entity.objects.filter(
        id__in=scope.entity_ids).delete()[1].get("memories.Entity", 0))

    # traces, job results, merge records, audit rows, the admin log: names out, ids and counts kept
    for queryset, table, fields in [
        (PipelineRun.objects.filter(agent=agent), T_RUN, ("input_ref", "params", "result", "error")),
        (PipelineStep.objects.filter(run__agent=agent), T_STEP, ("data",)),
        (EntityMerge.objects.filter(agent=agent), T_MERGE, ("moved", "reason")),
        (AuditEntry.objects.filter(agent=agent), T_AUDIT, ("before", "after", "reason")),
        (LogEntry.objects.all(), T_LOG, ("object_repr", "change_message")),
    ]:
        _redact_json_rows(report, scope.parts, queryset, table, fields)
    with connection.cursor() as cursor:  # terms no document holds any more (her name's lexemes)
        cursor.execute(f"DELETE FROM {T_TERM} WHERE agent_id = %s AND df <= 0", [agent.id])
        report.count(T_TERM, "deleted", cursor.rowcount)

    audited_change(agent=agent, actor=actor, action="entity_forget", obj=entity, after=_report_dict(report),
                   reason=REDACTED if reason else "", live=("entity", entity_id))
    return report


def _report_dict(report: ForgetReport) -> dict:
    data = dict(report.__dict__)
    data["tables"] = {t: dict(c) for t, c in report.tables.items()}
    return data


def _redact_own_events(agent: Agent, event_ids: list[int], report: ForgetReport) -> int:
    if not event_ids:
        return 0
    keyword_stats_apply(agent_id=agent.id, kind="event", ids=event_ids, sign=-1)
    count = Event.objects.filter(agent=agent, id__in=event_ids).update(
        speaker=REDACTED, text=REDACTED, embedding=None, metadata={}, redacted_at=timezone.now())
    # the message's job and trace keep no copy of it
    report.count(T_RUN, "cleared", PipelineRun.objects.filter(event_id__in=event_ids).update(
        result={}, params={}, input_ref=REDACTED, error=""))
    report.count(T_STEP, "cleared", PipelineStep.objects.filter(run__event_id__in=event_ids).update(data={}))
    return report.count(T_EVENT, "redacted", count)


def _redact_mentions(agent: Agent, event_ids: list[int], m: NameMatcher, report: ForgetReport,
                     embedder: EmbedderClient | None) -> int:
    if not event_ids:
        return 0
    events = list(Event.objects.filter(agent=agent, id__in=event_ids).only("id", "speaker", "text", "metadata"))
    keyword_stats_apply(agent_id=agent.id, kind="event", ids=event_ids, sign=-1)
    config = WriteConfig()
    texts = [m.redact(e.text) for e in events]
    vectors = (embedder or get_embedder()).embed([
        event_embedding_text(speaker=e.speaker, text=t, with_speaker=config.event_embedding_speaker)
        for e, t in zip(events, texts, strict=True)])
    for event, text, vector in zip(events, texts, vectors, strict=True):
        Event.objects.filter(pk=event.pk).update(text=text, embedding=vector, metadata=m.redact_json(event.metadata))
    keyword_stats_apply(agent_id=agent.id, kind="event", ids=event_ids)
    return report.count(T_EVENT, "mentions_redacted", len(events))


_SENTENCE = re.compile(r"(?<=[.!?])\s+")


def _scrub_profiles(agent: Agent, scope: _Scope) -> int:
    """Other entities' profile and summary sentences that name her are dropped."""
    scrubbed = 0
    for other in Entity.objects.filter(agent=agent).exclude(id__in=scope.entity_ids).only(
            "id", "profile_text", "summary_text"):
        changes = {}
        for attr in ("profile_text", "summary_text"):
            value = getattr(other, attr)
            if value and scope.matcher.search(value):
                changes[attr] = " ".join(s for s in _SENTENCE.split(value) if not scope.matcher.search(s))
        if changes:
            Entity.objects.filter(pk=other.pk).update(**changes, updated_at=timezone.now())
            scrubbed += 1
    return scrubbed


def _redact_json_rows(report: ForgetReport, m: NameMatcher, queryset, table: str, fields: tuple[str, ...]) -> None:
    for row in queryset.values("pk", *fields).iterator():
        changes = {}
        for name in fields:
            value = row[name]
            if value and m.json_mentions(value):
                changes[name] = m.redact_json(value)
        if changes:
            queryset.model.objects.filter(pk=row["pk"]).update(**changes)
            report.count(table, "redacted", 1)


# --- the write pipeline's guard ---------------------------------------------------------------

def event_forget_guard(*, event: Event, embedder: EmbedderClient | None = None) -> str:
    """Before a logged message is processed: if a forget happened after it was logged and it
    names a forgotten person, redact it now as the forget would have. Returns "" (nothing to
    do), "redacted" (her own message: nothing to process) or "mentions" (process the rest)."""
    if event.redacted_at is not None:
        return "redacted"
    tombstones = ForgetTombstone.objects.filter(agent_id=event.agent_id, created_at__gte=event.recorded_at)
    outcome = ""
    for tomb in tombstones:
        m = NameMatcher.from_digests(tomb.digests, key=_key(), max_words=tomb.max_words)
        report = ForgetReport()
        if m.search(event.speaker):
            _redact_own_events(event.agent, [event.id], report)
            return "redacted"
        if m.search(event.text) or m.json_mentions(event.metadata):
            _redact_mentions(event.agent, [event.id], m, report, embedder)
            PipelineRun.objects.filter(event_id=event.id).update(
                params=m.redact_json(PipelineRun.objects.get(event_id=event.id, kind=RunKind.WRITE).params))
            event.refresh_from_db(fields=["text", "metadata"])
            outcome = "mentions"
    return outcome


# --- what a forget would do, for the admin's confirmation page --------------------------------

@dataclass
class ForgetPreview:
    """What `entity_forget` would remove (nothing is changed)."""

    entities: list[Entity]
    names: list[str]
    facts: list[Fact]
    relationships: list[Relationship]
    events_redacted: int
    profiles_scrubbed: list[Entity]


def entity_forget_preview(*, agent: Agent, entity_id: int) -> ForgetPreview:
    entity = Entity.objects.filter(agent=agent, pk=entity_id).first()
    if entity is None:
        raise NotFound(f"entity {entity_id} not found")
    scope = _scope(agent, entity)
    others = Entity.objects.filter(agent=agent).exclude(id__in=scope.entity_ids).only(
        "id", "display_name", "key", "profile_text", "summary_text")
    return ForgetPreview(
        entities=list(Entity.objects.filter(id__in=scope.entity_ids).order_by("id")),
        names=scope.names,
        facts=list(Fact.objects.filter(id__in=scope.fact_ids).defer("embedding").order_by("id")),
        relationships=list(scope.relationships().select_related("source", "target").order_by("id")),
        events_redacted=len(scope.own_event_ids) + len(scope.mention_event_ids),
        profiles_scrubbed=[o for o in others if any(
            v and scope.matcher.search(v) for v in (o.profile_text, o.summary_text))],
    )
