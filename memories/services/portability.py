"""Import of an agent export (memories.portability.format) into a new agent, and what an export
does first. The format's reading and checking are pure (memories.portability.records); this is
the write.

An import is one transaction: the new agent and every row, or nothing (a bad line is a 400 naming
it, and nothing of the file stays). Rows get new ids — reserved from each table's sequence a batch
at a time, in the file's order, so the rows keep their order — and every reference follows them,
in columns and inside stored JSON (memories.portability.remap). The clocks are kept as they were
exported (what the agent knew, and when, reads the same); `imported_at` on events, entities, fact
and relationship versions says when this database stored them. Vectors are computed again from
the texts (entity names, fact texts, events as the write embedded them), batch by batch on a
second thread while the previous batch is stored; BM25 postings are built as the write builds
them. A write job that had not finished is queued again here. The import is audited.
"""

from __future__ import annotations

import time
from collections import defaultdict
from collections.abc import Callable, Iterable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import datetime

from django.db import DataError, IntegrityError, connection, transaction
from django.db.models import Max
from django.utils import timezone
from django.utils.text import slugify

from memories.config import WriteConfig, apply_overrides
from memories.errors import ConfigError, Conflict, DomainError, InvalidExportFile
from memories.models import (
    Agent,
    AuditEntry,
    Entity,
    EntityAlias,
    EntityMerge,
    ErasureReceipt,
    Event,
    Fact,
    FactEntityLink,
    ForgetTombstone,
    JobCheckpoint,
    MergeSuggestion,
    PipelineRun,
    PipelineStep,
    Relationship,
    RunKind,
    RunStatus,
)
from memories.portability.format import EMBEDDED, IMPORT_ACTION, PARAMS, ROW_TYPES, VERSION
from memories.portability.records import ExportReader, Header, Record
from memories.portability.remap import AGENT, INPUT_REF_PREFIX, remap_stored_json
from memories.providers.embeddings import EmbedderClient, get_embedder
from memories.services.audit import audit_record
from memories.services.events import event_embedding_text
from memories.services.forget import event_forget_guard
from memories.services.keyword import keyword_stats_apply
from memories.services.write_jobs import job_enqueue_on_commit

BATCH_ROWS = 500
MODELS = {
    "entity": Entity, "alias": EntityAlias, "event": Event, "fact": Fact, "fact_link": FactEntityLink,
    "relationship": Relationship, "entity_merge": EntityMerge, "merge_suggestion": MergeSuggestion,
    "job": PipelineRun, "step": PipelineStep, "erasure_receipt": ErasureReceipt,
    "forget_tombstone": ForgetTombstone, "audit": AuditEntry, "job_checkpoint": JobCheckpoint,
}
# Columns Django fills itself on insert (auto_now / auto_now_add): set back to the file's times.
AUTO_TIMES = {"entity": ("created_at", "updated_at"), "alias": ("created_at",), "entity_merge": ("created_at",),
              "merge_suggestion": ("created_at", "updated_at"), "job": ("created_at",), "audit": ("created_at",)}
IMPORTED_AT = {"entity", "event", "fact", "relationship"}  # the rows that note when this database stored them
UNFINISHED = {RunStatus.QUEUED, RunStatus.RUNNING}


@dataclass
class ImportReport:
    agent: Agent
    rows: dict[str, int]  # per row type
    jobs_queued: int  # write jobs not finished where the file was exported, queued here
    imported_at: datetime
    source: dict  # the header's agent (id, slug, name) and exported_at
    seconds: float = 0.0
    vectors: int = 0  # vectors computed


def ids_reserve(model, n: int) -> list[int]:
    """`n` ids of the model's table drawn from its sequence now, in increasing order."""
    if n == 0:
        return []
    with connection.cursor() as cursor:
        cursor.execute("SELECT nextval(pg_get_serial_sequence(%s, 'id')) AS id FROM generate_series(1, %s) ORDER BY 1",
                       [model._meta.db_table, n])
        return [row[0] for row in cursor.fetchall()]


def _columns_set(model, ids: list[int], columns: dict[str, list], cast: str) -> None:
    """One statement: each row `ids[i]` gets `columns[name][i]` for every column named."""
    if not ids:
        return
    names = list(columns)
    table = model._meta.db_table
    unnest = ", ".join(["%s::bigint[]", *[f"%s::{cast}[]" for _ in names]])
    with connection.cursor() as cursor:
        cursor.execute(
            f"UPDATE {table} AS t SET {', '.join(f'{n} = v.{n}' for n in names)} "
            f"FROM unnest({unnest}) AS v(id, {', '.join(names)}) WHERE t.id = v.id",
            [ids, *[columns[n] for n in names]])


def _write_config(params: dict) -> WriteConfig:
    try:
        return apply_overrides(WriteConfig(), params.get("config_overrides") or None)
    except ConfigError:  # a setting this version does not know: the defaults
        return WriteConfig()


def vector_text(record: Record) -> str | None:
    """What the row's vector embeds — as the write path embedded it — or None (it had none)."""
    values = record.values
    if not values.get(EMBEDDED):
        return None
    if record.type == "entity":
        return values["display_name"]
    if record.type == "fact":
        return values["text"]
    params = values[PARAMS]
    config = _write_config(params)
    recent = params.get("recent_messages")
    return event_embedding_text(speaker=values["speaker"], text=values["text"],
                                recent_messages=recent if isinstance(recent, list) else (),
                                with_speaker=config.event_embedding_speaker, context=config.event_embedding_context)


@dataclass
class _Pending:
    """A reference to a row of the same type further on in the file, set once that row is stored."""

    row_id: int
    target: int
    line: int


@dataclass
class _Importer:
    agent: Agent
    header: Header
    now: datetime
    ids: dict[str, dict[int, int]] = field(default_factory=lambda: defaultdict(dict))
    pending: dict[tuple[str, str], list[_Pending]] = field(default_factory=lambda: defaultdict(list))
    event_params: dict[int, dict] = field(default_factory=dict)  # new event id → its write request
    queued: list[int] = field(default_factory=list)
    vectors: int = 0

    def __post_init__(self):
        self.ids[AGENT][self.header.agent["id"]] = self.agent.id

    def lookup(self, kind: str, value: int) -> int | None:
        return self.ids[kind].get(value)

    def store(self, records: list[Record], vectors: list) -> None:
        """One batch of rows of one type, with the vectors computed for them (None: no vector)."""
        row_type = records[0].type
        model = MODELS[row_type]
        new_ids = ids_reserve(model, len(records))
        if ROW_TYPES[row_type].has_id:
            self.ids[row_type].update((r.values["id"], new) for r, new in zip(records, new_ids, strict=True))
        objects = [self._build(r, new, v) for r, new, v in zip(records, new_ids, vectors, strict=True)]
        try:
            model.objects.bulk_create(objects)
        except (IntegrityError, DataError) as exc:  # what the line checks did not foresee: still the file's
            problem = (str(exc).strip().splitlines() or [type(exc).__name__])[0][:300]
            raise InvalidExportFile(f"the database refused a {row_type} row of lines {records[0].line}–"
                                    f"{records[-1].line}: {problem}", line=records[0].line) from exc
        self.vectors += sum(v is not None for v in vectors)
        if row_type in AUTO_TIMES:
            _columns_set(model, new_ids, {c: [r.values[c] for r in records] for c in AUTO_TIMES[row_type]},
                         "timestamptz")
        if row_type == "fact":
            keyword_stats_apply(agent_id=self.agent.id, kind="fact", ids=new_ids)
        elif row_type == "event":
            kept = [new for r, new in zip(records, new_ids, strict=True) if r.values["redacted_at"] is None]
            keyword_stats_apply(agent_id=self.agent.id, kind="event", ids=kept)

    def _build(self, record: Record, new_id: int, vector):
        row_type = record.type
        spec = ROW_TYPES[row_type]
        values = remap_stored_json(row_type, record.values, self.lookup)
        kwargs: dict = {"id": new_id}
        for f in spec.fields:
            if f.kind == "id" or f.name in (EMBEDDED, PARAMS):
                continue
            value = values[f.name]
            if f.kind == "ref" and value is not None:
                value = self._ref(record, f.name, f.ref, f.attname, value, new_id)
            kwargs[f.attname] = value
        if row_type not in ("fact_link", "step"):
            kwargs["agent"] = self.agent
        if row_type in IMPORTED_AT:
            kwargs["imported_at"] = self.now
        self._complete(record, values, kwargs, vector)
        return MODELS[row_type](**kwargs)

    def _ref(self, record: Record, name: str, ref: str, attname: str, value: int, new_id: int) -> int | None:
        target = self.ids[ref].get(value)
        if target is not None:
            return target
        if ref == record.type:  # a row of this type further on: set when it is stored
            self.pending[(ref, attname)].append(_Pending(new_id, value, record.line))
            return None
        raise InvalidExportFile(f"{record.type} '{name}' names {ref} {value}, which is not in the file before this "
                                "line", line=record.line, field=name)

    def _complete(self, record: Record, values: dict, kwargs: dict, vector) -> None:
        """What a row of this type needs besides its fields."""
        row_type = record.type
        if row_type == "entity":
            kwargs["name_embedding"] = vector
        elif row_type in ("event", "fact"):
            kwargs["embedding"] = vector
            if row_type == "event":
                self.event_params[kwargs["id"]] = values[PARAMS]
        elif row_type == "merge_suggestion" and kwargs["entity_a_id"] > kwargs["entity_b_id"]:
            kwargs["entity_a_id"], kwargs["entity_b_id"] = kwargs["entity_b_id"], kwargs["entity_a_id"]
        elif row_type == "job":
            # its request is the event's row; one not finished is queued again (its lease was
            # another database's)
            kwargs["kind"], kwargs["params"] = RunKind.WRITE, self.event_params.pop(kwargs["event_id"], {})
            if kwargs["status"] in UNFINISHED:
                kwargs["status"], kwargs["started_at"] = RunStatus.QUEUED, None
                self.queued.append(kwargs["id"])
        elif row_type == "audit":
            kwargs["object_id"] = "" if values["object_id"] is None else str(values["object_id"])

    def finish(self) -> None:
        """References to rows further on, and a write job for every event that came without one."""
        for (row_type, attname), pending in self.pending.items():
            targets = []
            for p in pending:
                target = self.ids[row_type].get(p.target)
                if target is None:
                    raise InvalidExportFile(f"{row_type} '{attname.removesuffix('_id')}' names {row_type} {p.target}, "
                                            "which is not in the file", line=p.line, field=attname.removesuffix("_id"))
                targets.append(target)
            _columns_set(MODELS[row_type], [p.row_id for p in pending], {attname: targets}, "bigint")
        jobs = [(event_id, params) for event_id, params in self.event_params.items()]
        new_ids = ids_reserve(PipelineRun, len(jobs))
        PipelineRun.objects.bulk_create([
            PipelineRun(id=run_id, agent=self.agent, kind=RunKind.WRITE, name="write", event_id=event_id,
                        input_ref=f"{INPUT_REF_PREFIX}{event_id}", params=params, status=RunStatus.SUCCEEDED,
                        finished_at=self.now)
            for run_id, (event_id, params) in zip(new_ids, jobs, strict=True)])


def _embed_later(pool: ThreadPoolExecutor, embedder: EmbedderClient, records: list[Record]) -> Future:
    """The batch's vectors, computed on the pool's thread: a list aligned with the records."""
    texts = [vector_text(r) if ROW_TYPES[r.type].has_vector else None for r in records]
    wanted = [t for t in texts if t is not None]

    def run() -> list:
        vectors = iter(embedder.embed(wanted) if wanted else [])
        return [next(vectors) if t is not None else None for t in texts]

    return pool.submit(run)


def _agent_new(*, slug: str, header: Header) -> Agent:
    if slugify(slug) != slug or not slug:
        raise DomainError(f"agent slug {slug!r} must be lower-case letters, digits, '-' or '_'", {"slug": slug})
    if Agent.objects.filter(slug=slug).exists():
        raise Conflict(f"an agent {slug!r} exists already: import into a new slug", {"slug": "taken"})
    try:
        with transaction.atomic():
            agent = Agent.objects.create(  # with the LLM budgets of its own it had
                slug=slug, name=header.agent["name"] or slug,
                llm_budget_day_tokens=header.agent["llm_budget_day_tokens"],
                llm_budget_month_tokens=header.agent["llm_budget_month_tokens"])
    except IntegrityError as exc:  # created meanwhile
        raise Conflict(f"an agent {slug!r} exists already: import into a new slug", {"slug": "taken"}) from exc
    agent.created_at = header.agent["created_at"]  # the agent's own, not this import's
    Agent.objects.filter(pk=agent.pk).update(created_at=agent.created_at)
    return agent


@transaction.atomic
def agent_import(*, slug: str, lines: Iterable[bytes | str], actor: str, embedder: EmbedderClient | None = None,
                 batch_rows: int = BATCH_ROWS, progress: Callable[[str, int], object] = lambda t, n: None,
                 ) -> ImportReport:
    """Create the agent `slug` from an export (its lines, as bytes or text): every row, with new
    ids and the exported clocks, vectors and BM25 postings built here, audited as `actor`'s
    import (see the module). A bad file raises InvalidExportFile naming the line, an agent that
    exists Conflict; either way nothing is stored."""
    started = time.perf_counter()
    reader = ExportReader(lines)
    agent = _agent_new(slug=slug, header=reader.header)
    importer = _Importer(agent=agent, header=reader.header, now=timezone.now())
    embedder = embedder or get_embedder()
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="import-embed") as pool:
        previous: tuple[list[Record], Future] | None = None
        for batch in reader.batches(batch_rows):
            current = (batch, _embed_later(pool, embedder, batch))  # while the previous batch is stored
            if previous is not None:
                importer.store(previous[0], previous[1].result())
                progress(previous[0][0].type, len(previous[0]))
            previous = current
        if previous is not None:
            importer.store(previous[0], previous[1].result())
            progress(previous[0][0].type, len(previous[0]))
    reader.finish()
    importer.finish()
    report = ImportReport(
        agent=agent, rows={t: reader.counts[t] for t in ROW_TYPES}, jobs_queued=len(importer.queued),
        imported_at=importer.now, vectors=importer.vectors,
        source={"agent": {k: reader.header.agent[k] for k in ("id", "slug", "name")},
                "exported_at": reader.header.exported_at.isoformat(), "format_version": VERSION})
    audit_record(agent=agent, actor=actor, action=IMPORT_ACTION, obj=agent,
                 after={"source": report.source, "rows": report.rows, "jobs_queued": report.jobs_queued,
                        "imported_at": report.imported_at.isoformat()})
    for run_id in importer.queued:
        job_enqueue_on_commit(run_id)
    report.seconds = time.perf_counter() - started
    return report


def export_forgets_apply(*, agent: Agent, embedder: EmbedderClient | None = None) -> int:
    """Before an export: a message logged before a forget and not processed since (its job queued,
    running or failed) still holds what the forget removes once it is processed
    (memories.services.forget.event_forget_guard). Apply that now, with the job locked, so the
    export holds nothing a forget removed. Returns how many messages it redacted."""
    latest = ForgetTombstone.objects.filter(agent=agent).aggregate(at=Max("created_at"))["at"]
    if latest is None:
        return 0
    run_ids = list(PipelineRun.objects.filter(
        agent=agent, kind=RunKind.WRITE, event__redacted_at__isnull=True, event__recorded_at__lte=latest,
    ).exclude(status=RunStatus.SUCCEEDED).order_by("id").values_list("id", flat=True))
    redacted = 0
    for run_id in run_ids:
        with transaction.atomic():
            run = (PipelineRun.objects.select_for_update(of=("self",)).select_related("event")
                   .defer("event__embedding", "event__search_vector")
                   .filter(pk=run_id).exclude(status=RunStatus.SUCCEEDED).first())
            if run is not None:
                redacted += event_forget_guard(event=run.event, embedder=embedder) != ""
    return redacted


def import_rows_summary(report: ImportReport) -> str:
    """One line for the command line: what came in."""
    return ", ".join(f"{n} {t}" for t, n in report.rows.items() if n)
