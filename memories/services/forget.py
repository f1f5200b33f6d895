"""Forget a person: every trace of the entity and of its names and aliases, in every table.

- Her entities are the one chosen, those merged into it, the ones with one of her names, and the
  ones named only by a shorter form of her name that is hers ("Frau Brandt", "I. Brandt",
  "Brandt" alone, unless another known person has that family name: memories.name_forms);
  `memories.selectors.forget` finds them and everything below.
- Messages she said herself are redacted whole, and everything derived from them (facts,
  relationships, entities only they created, the job's result and trace) goes with them; their
  external id and idempotency key become keyed digests, so a retry is still a replay.
- In other people's messages only the mentions are redacted ("[redacted] moved to Lisbon"), and
  any phone number or e-mail address in the message; the rest of the message and the facts it
  gave about others are kept. Changed texts are re-indexed (BM25 postings) and re-embedded.
- Facts about or naming her (every version), relationships, aliases and links are deleted; other
  entities' profile sentences naming her are dropped; traces, job results, merge records, audit
  rows and the admin log's rows about the agent's rows keep their ids and counts with her names
  redacted and her entities' keys made opaque (`person:forgotten-12`); a string there that names
  her loses its phone numbers and e-mail addresses too ("[redacted]'s number is [redacted]").
- It leaves an erasure receipt (counts per table, no personal data) and, after the commit, the
  touched tables are vacuumed by a worker (memories.services.erasures).
- Race-free: the forget first locks the agent's unfinished write jobs (a worker busy with one
  finishes before the forget reads anything; a queued one waits for it), and leaves a tombstone of
  keyed name digests (and of the words of her names, for request keys), so a message logged
  before the forget but processed after it is redacted by `event_forget_guard` instead of
  bringing her back.
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from dataclasses import dataclass, field

from django.contrib.admin.models import LogEntry
from django.contrib.contenttypes.models import ContentType
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
    KeywordPosting,
    KeywordTerm,
    MergeSuggestion,
    PipelineRun,
    PipelineStep,
    Relationship,
    RunKind,
    RunStatus,
)
from memories.name_forms import FormDecision
from memories.providers.embeddings import EmbedderClient, get_embedder
from memories.redaction import (
    REDACTED,
    KeyRewriter,
    NameMatcher,
    redact_contacts,
    redact_contacts_json,
    request_key_digest,
)
from memories.selectors.forget import ForgetScope, forget_key, forget_scope
from memories.services.changes import audited_change
from memories.services.erasures import erasure_receipt_record
from memories.services.events import event_embedding_text
from memories.services.keyword import keyword_stats_apply

T_EVENT, T_FACT, T_ENTITY = Event._meta.db_table, Fact._meta.db_table, Entity._meta.db_table
T_ALIAS, T_LINK, T_REL = EntityAlias._meta.db_table, FactEntityLink._meta.db_table, Relationship._meta.db_table
T_RUN, T_STEP, T_AUDIT = PipelineRun._meta.db_table, PipelineStep._meta.db_table, AuditEntry._meta.db_table
T_MERGE, T_TERM, T_LOG = EntityMerge._meta.db_table, KeywordTerm._meta.db_table, LogEntry._meta.db_table
T_POSTING, T_SUGGESTION = KeywordPosting._meta.db_table, MergeSuggestion._meta.db_table
T_TOMBSTONE = ForgetTombstone._meta.db_table


@dataclass
class ForgetReport:
    facts_deleted: int = 0
    relationships_deleted: int = 0
    aliases_deleted: int = 0
    links_deleted: int = 0
    events_redacted: int = 0  # whole (her own messages) or mentions only
    profiles_scrubbed: int = 0
    entities_deleted: int = 0
    request_keys_redacted: int = 0  # external ids and idempotency keys replaced by keyed digests
    opaque_key: str = ""  # what the entity's key became wherever it was stored
    receipt_id: int | None = None
    # per table: {"memories_event": {"redacted": 2, "mentions_redacted": 3}, "memories_fact": {"deleted": 4}}
    tables: dict[str, dict[str, int]] = field(default_factory=dict)

    def count(self, table: str, what: str, n: int) -> int:
        if n:
            self.tables.setdefault(table, Counter())[what] += n
        return n

    def totals(self) -> dict[str, int]:
        return {name: getattr(self, name) for name in (
            "entities_deleted", "facts_deleted", "relationships_deleted", "aliases_deleted", "links_deleted",
            "events_redacted", "profiles_scrubbed", "request_keys_redacted")}


def _lock_unfinished_writes(agent: Agent) -> None:
    """Wait for write jobs being processed and hold queued ones until the forget commits."""
    list(PipelineRun.objects.select_for_update().filter(
        agent=agent, kind=RunKind.WRITE, status__in=[RunStatus.QUEUED, RunStatus.RUNNING],
    ).order_by("id").values_list("id", flat=True))


@transaction.atomic
def entity_forget(*, agent: Agent, entity_id: int, actor: str, reason: str = "",
                  embedder: EmbedderClient | None = None) -> ForgetReport:
    """Forget the entity (see the module's docstring); returns what changed, counted per table,
    with the id of the erasure receipt it stored."""
    _lock_unfinished_writes(agent)
    entity = Entity.objects.select_for_update().filter(agent=agent, pk=entity_id).first()
    if entity is None:
        raise NotFound(f"entity {entity_id} not found")
    scope = forget_scope(agent=agent, entity=entity)
    m, report = scope.matcher, ForgetReport(opaque_key=scope.keys.mapping.get(entity.key, entity.key))
    postings = KeywordPosting.objects.filter(agent=agent).count()
    admin_log_ids = _admin_log_ids(agent)  # before the deletes: the rows they name still say whose they are
    ForgetTombstone.objects.create(agent=agent, digests=sorted(m.digests), capitalized_digests=sorted(m.capitalized),
                                   part_digests=sorted(scope.parts.digests),
                                   max_words=max(m.max_words, scope.parts.max_words), created_at=timezone.now())
    report.count(T_TOMBSTONE, "created", 1)
    _delete_derived(scope, report)
    # events: hers whole, others' mentions only (re-indexed and re-embedded), request keys digested
    redacted = _redact_own_events(agent, sorted(scope.own_event_ids), report)
    redacted += _redact_mentions(agent, sorted(scope.mention_event_ids), m, report, embedder)
    report.events_redacted = redacted
    _redact_request_keys(agent, sorted(scope.keyed_event_ids), report)
    report.profiles_scrubbed = report.count(T_ENTITY, "profiles_scrubbed", _scrub_profiles(agent, scope))
    _delete_entities(scope, report)
    _redact_logs(agent, scope, report, admin_log_ids)
    report.count(T_POSTING, "net_deleted", postings - KeywordPosting.objects.filter(agent=agent).count())
    receipt = erasure_receipt_record(
        agent=agent, actor=actor, opaque_key=report.opaque_key, opaque_keys=list(scope.keys.mapping.values()),
        reason_given=bool(reason), totals=report.totals(), tables=report.tables, name_forms=_forms_outcome(scope.forms))
    report.receipt_id = receipt.id
    audited_change(agent=agent, actor=actor, action="entity_forget", obj=entity,
                   after={"receipt": receipt.id, "opaque_key": report.opaque_key, **report.totals()},
                   reason=REDACTED if reason else "", live=("entity", entity_id))
    return report


def _delete_derived(scope: ForgetScope, report: ForgetReport) -> None:
    """Her facts (every version), relationships, fact links and aliases; closing reasons of other
    facts that name her are redacted."""
    agent, m = scope.agent, scope.matcher
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


def _delete_entities(scope: ForgetScope, report: ForgetReport) -> None:
    """Her entities, their merge records and merge suggestions, and the entities only her own
    messages created that nothing holds any more (no fact, link or relationship left)."""
    ids = scope.entity_ids
    report.count(T_MERGE, "deleted", EntityMerge.objects.filter(
        Q(survivor_id__in=ids) | Q(merged_id__in=ids)).delete()[0])
    report.count(T_SUGGESTION, "deleted", MergeSuggestion.objects.filter(
        Q(entity_a_id__in=ids) | Q(entity_b_id__in=ids)).delete()[0])
    orphans = set(Entity.objects.filter(agent=scope.agent, id__in=scope.created_by_her).exclude(
        Q(facts__isnull=False) | Q(fact_links__isnull=False) | Q(outgoing__isnull=False)
        | Q(incoming__isnull=False) | Q(merged_entities__isnull=False)).values_list("id", flat=True))
    if orphans:
        report.count(T_ALIAS, "deleted", EntityAlias.objects.filter(entity_id__in=orphans).delete()[0])
        report.count(T_SUGGESTION, "deleted", MergeSuggestion.objects.filter(
            Q(entity_a_id__in=orphans) | Q(entity_b_id__in=orphans)).delete()[0])
        report.count(T_ENTITY, "deleted_with_her_messages", Entity.objects.filter(id__in=orphans).delete()[1].get(
            "memories.Entity", 0))
    report.entities_deleted = report.count(T_ENTITY, "deleted", Entity.objects.filter(
        id__in=ids).delete()[1].get("memories.Entity", 0))


def _redact_logs(agent: Agent, scope: ForgetScope, report: ForgetReport, admin_log_ids: list[int]) -> None:
    """Traces, job results, merge records, audit rows, the admin log's rows about the agent's rows:
    her entities' keys made opaque and her names redacted, ids and counts kept; BM25 terms no
    document holds any more."""
    for queryset, table, fields in [
        (PipelineRun.objects.filter(agent=agent), T_RUN, ("input_ref", "params", "result", "error")),
        (PipelineStep.objects.filter(run__agent=agent), T_STEP, ("data",)),
        (EntityMerge.objects.filter(agent=agent), T_MERGE, ("moved", "reason")),
        (MergeSuggestion.objects.filter(agent=agent), T_SUGGESTION, ("reasons",)),
        (AuditEntry.objects.filter(agent=agent), T_AUDIT, ("before", "after", "reason")),
        (LogEntry.objects.filter(pk__in=admin_log_ids), T_LOG, ("object_repr", "change_message")),
    ]:
        _redact_json_rows(report, scope.parts, scope.keys, queryset, table, fields)
    _drop_dead_terms(agent, report)


def _owned_by(model, agent: Agent) -> Q:
    """The rows of `model` (a memories model) that belong to `agent`."""
    if model is Agent:
        return Q(pk=agent.pk)
    if model is PipelineStep:
        return Q(run__agent=agent)
    if model is FactEntityLink:
        return Q(fact__agent=agent)
    return Q(agent=agent)


def _admin_log_ids(agent: Agent) -> list[int]:
    """The admin log's rows about this agent's rows. The admin log is shared by every agent (and
    by the other apps): another agent's "Klaus Brandt" is not hers to redact."""
    wanted: dict[int, dict[int, list[int]]] = defaultdict(lambda: defaultdict(list))  # type → object id → rows
    for pk, type_id, object_id in LogEntry.objects.filter(content_type__app_label=Agent._meta.app_label).values_list(
            "pk", "content_type_id", "object_id"):
        if object_id and object_id.isdigit():
            wanted[type_id][int(object_id)].append(pk)
    found: list[int] = []
    for type_id, rows in wanted.items():
        model = ContentType.objects.get_for_id(type_id).model_class()
        if model is None:  # a model since removed
            continue
        for object_id in model.objects.filter(_owned_by(model, agent), pk__in=list(rows)).values_list("pk", flat=True):
            found += rows[object_id]
    return sorted(found)


def _drop_dead_terms(agent: Agent, report: ForgetReport) -> None:
    """BM25 terms no document holds any more (her name's lexemes, her number)."""
    with connection.cursor() as cursor:
        cursor.execute(f"DELETE FROM {T_TERM} WHERE agent_id = %s AND df <= 0", [agent.id])
        report.count(T_TERM, "deleted", cursor.rowcount)


def _forms_outcome(forms: list[FormDecision]) -> dict[str, str]:
    """For the receipt: which kinds of name form were redacted and which kept (no names)."""
    outcome: dict[str, str] = {}
    for d in forms:
        verdict = "redacted" if d.hers else "kept"
        outcome[d.kind] = verdict if outcome.get(d.kind, verdict) == verdict else "partly"
    return outcome


def _keyed_request(params: dict) -> dict:
    """A run's parameters with the request's fingerprint keyed (it fingerprints her text)."""
    digest = (params or {}).get("request_digest")
    if not digest:
        return {}
    return {"request_digest": request_key_digest(digest, key=forget_key(), field="request")}


def _redact_own_events(agent: Agent, event_ids: list[int], report: ForgetReport) -> int:
    if not event_ids:
        return 0
    keyword_stats_apply(agent_id=agent.id, kind="event", ids=event_ids, sign=-1)
    _redact_request_keys(agent, event_ids, report, whole=True)
    count = Event.objects.filter(agent=agent, id__in=event_ids).update(
        speaker=REDACTED, text=REDACTED, embedding=None, metadata={}, redacted_at=timezone.now())
    # the message's job and trace keep no copy of it (only the keyed fingerprint of the request)
    runs = PipelineRun.objects.filter(event_id__in=event_ids).only("id", "params")
    for run in runs:
        PipelineRun.objects.filter(pk=run.pk).update(result={}, params=_keyed_request(run.params),
                                                     input_ref=REDACTED, error="")
    report.count(T_RUN, "cleared", len(runs))
    report.count(T_STEP, "cleared", PipelineStep.objects.filter(run__event_id__in=event_ids).update(data={}))
    return report.count(T_EVENT, "redacted", count)


def _redact_request_keys(agent: Agent, event_ids: list[int], report: ForgetReport, whole: bool = False) -> None:
    """The messages' external ids and idempotency keys replaced by keyed digests (a retry of the
    same request still finds its message); with `whole` the run's request fingerprint is keyed
    by the caller, else here."""
    key = forget_key()
    rows = Event.objects.filter(agent=agent, id__in=event_ids).exclude(
        external_id__isnull=True, idempotency_key__isnull=True).values_list("id", "external_id", "idempotency_key")
    for event_id, external_id, idempotency_key in rows:
        stored = {"external_id": external_id, "idempotency_key": idempotency_key}
        changes = {name: digest for name, value in stored.items()
                   if value and (digest := request_key_digest(value, key=key, field=name)) != value}
        if not changes:
            continue
        Event.objects.filter(pk=event_id).update(**changes)
        report.request_keys_redacted += report.count(T_EVENT, "request_keys_redacted", len(changes))
        if not whole:
            for run in PipelineRun.objects.filter(event_id=event_id, kind=RunKind.WRITE).only("id", "params"):
                if (run.params or {}).get("request_digest"):
                    PipelineRun.objects.filter(pk=run.pk).update(params={**run.params, **_keyed_request(run.params)})


def _redact_mentions(agent: Agent, event_ids: list[int], m: NameMatcher, report: ForgetReport,
                     embedder: EmbedderClient | None) -> int:
    if not event_ids:
        return 0
    events = list(Event.objects.filter(agent=agent, id__in=event_ids).only("id", "speaker", "text", "metadata"))
    keyword_stats_apply(agent_id=agent.id, kind="event", ids=event_ids, sign=-1)
    config = WriteConfig()
    texts = [redact_contacts(m.redact(e.text)) for e in events]
    vectors = (embedder or get_embedder()).embed([
        event_embedding_text(speaker=e.speaker, text=t, with_speaker=config.event_embedding_speaker)
        for e, t in zip(events, texts, strict=True)])
    for event, text, vector in zip(events, texts, vectors, strict=True):
        Event.objects.filter(pk=event.pk).update(text=text, embedding=vector, metadata=m.redact_json(event.metadata))
    for run in PipelineRun.objects.filter(event_id__in=event_ids, kind=RunKind.WRITE).only("id", "params"):
        if (run.params or {}).get("request_digest"):
            PipelineRun.objects.filter(pk=run.pk).update(params={**run.params, **_keyed_request(run.params)})
    keyword_stats_apply(agent_id=agent.id, kind="event", ids=event_ids)
    return report.count(T_EVENT, "mentions_redacted", len(events))


_SENTENCE = re.compile(r"(?<=[.!?])\s+")


def _scrub_profiles(agent: Agent, scope: ForgetScope) -> int:
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


def _redact_json_rows(report: ForgetReport, m: NameMatcher, keys: KeyRewriter, queryset, table: str,
                      fields: tuple[str, ...]) -> None:
    for row in queryset.values("pk", *fields).iterator():
        changes = {}
        for name in fields:
            value = row[name]
            if not value:
                continue
            changed = redact_contacts_json(m.redact_json(keys.rewrite_json(value)))
            if changed != value:
                changes[name] = changed
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
        m = NameMatcher.from_digests(tomb.digests, key=forget_key(), max_words=tomb.max_words,
                                     capitalized=tomb.capitalized_digests)
        # request keys as the forget matched them: any word of her names, in any case (a tombstone
        # older than `part_digests` has only her names)
        parts = m
        if tomb.part_digests:
            parts = NameMatcher.from_digests(tomb.part_digests, key=forget_key(), max_words=tomb.max_words)
        report = ForgetReport()
        if m.search(event.speaker):
            _redact_own_events(event.agent, [event.id], report)
            _drop_dead_terms(event.agent, report)
            return "redacted"
        if parts.search(event.external_id) or parts.search(event.idempotency_key):
            _redact_request_keys(event.agent, [event.id], report)
        if m.search(event.text) or m.json_mentions(event.metadata):
            _redact_mentions(event.agent, [event.id], m, report, embedder)
            run = PipelineRun.objects.get(event_id=event.id, kind=RunKind.WRITE)
            PipelineRun.objects.filter(pk=run.pk).update(params=m.redact_json(run.params))
            event.refresh_from_db(fields=["text", "metadata"])
            _drop_dead_terms(event.agent, report)
            outcome = "mentions"
    return outcome


# --- what a forget would do, for the confirmation pages and the API's preview ------------------

@dataclass
class ForgetPreview:
    """What `entity_forget` would remove (nothing is changed)."""

    entities: list[Entity]
    why: dict[int, str]  # entity id → why it goes with her
    names: list[str]
    forms: list[FormDecision]  # shorter forms of her names: redacted with her, or kept and why
    facts: list[Fact]
    relationships: list[Relationship]
    own_events: int
    mention_events: int
    request_keys: int  # messages whose external id or idempotency key will be digested
    profiles_scrubbed: list[Entity]
    created_by_her: int  # entities only her own messages created (removed when nothing else holds them)

    @property
    def entity_rows(self) -> list[tuple[Entity, str]]:
        return [(e, self.why.get(e.id, "")) for e in self.entities]

    @property
    def events_redacted(self) -> int:
        return self.own_events + self.mention_events

    @property
    def forms_redacted(self) -> list[FormDecision]:
        return [d for d in self.forms if d.hers]

    @property
    def forms_kept(self) -> list[FormDecision]:
        return [d for d in self.forms if not d.hers]


def entity_forget_preview(*, agent: Agent, entity_id: int) -> ForgetPreview:
    entity = Entity.objects.filter(agent=agent, pk=entity_id).first()
    if entity is None:
        raise NotFound(f"entity {entity_id} not found")
    scope = forget_scope(agent=agent, entity=entity)
    others = Entity.objects.filter(agent=agent).exclude(id__in=scope.entity_ids).only(
        "id", "display_name", "key", "profile_text", "summary_text")
    keyed = Event.objects.filter(agent=agent, id__in=scope.own_event_ids).exclude(
        external_id__isnull=True, idempotency_key__isnull=True).count() + len(scope.keyed_event_ids)
    return ForgetPreview(
        entities=scope.entities, why=scope.why, names=scope.names, forms=scope.forms,
        facts=list(Fact.objects.filter(id__in=scope.fact_ids).defer("embedding").order_by("id")),
        relationships=list(scope.relationships().select_related("source", "target").order_by("id")),
        own_events=len(scope.own_event_ids), mention_events=len(scope.mention_event_ids), request_keys=keyed,
        profiles_scrubbed=[o for o in others if any(
            v and scope.matcher.search(v) for v in (o.profile_text, o.summary_text))],
        created_by_her=len(scope.created_by_her),
    )
