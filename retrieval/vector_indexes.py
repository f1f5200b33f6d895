"""Per-agent HNSW indexes: one partial index (`WHERE agent_id = N`) per kind for every agent with
at least `ANAMNESIS_AGENT_INDEX_MIN_ROWS` documents.

pgvector 0.6.2 filters the rows of an HNSW scan after the index scan, so in the shared index an
agent's query must look at about limit / (agent's share of the table) neighbours, and an agent
with a small share ends in an exact scan of all its rows. In its own index every neighbour is
the agent's: a 10k-row agent answers in about 1 ms instead of an 18 ms exact scan. The shared
index stays for agents without one (and while theirs is being built).

Built `CONCURRENTLY` (writes go on) by the `agent_indexes_ensure_task` beat job and by
`manage.py agent_indexes`; an index left invalid by an interrupted build is rebuilt, the indexes
of deleted agents are dropped, and an advisory lock keeps two runs from racing.
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass
from typing import NamedTuple

from django.conf import settings
from django.db import connection

from memories.models import DOCUMENT_TABLES, Agent, KeywordCorpus

logger = logging.getLogger(__name__)

_LOCK = 0x616E6E  # advisory lock key: one ensure run at a time


# --- the registry: which indexes exist, and what a search of an agent depends on ---

_AGENT_INDEX = re.compile(r"^(fact|event)_ann_a(\d+)$")


def agent_index_name(kind: str, agent_id: int) -> str:
    return f"{kind}_ann_a{int(agent_id)}"


@dataclass(frozen=True)
class AgentIndex:
    name: str
    kind: str
    agent_id: int
    valid: bool  # false while a concurrent build runs, or after one failed


def agent_indexes() -> list[AgentIndex]:
    """Every per-agent vector index in the database."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT c.relname, i.indisvalid FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid "
                       "WHERE c.relname ~ '^(fact|event)_ann_a[0-9]+$'")
        rows = cursor.fetchall()
    out = []
    for name, valid in rows:
        kind, agent_id = _AGENT_INDEX.match(name).groups()
        out.append(AgentIndex(name, kind, int(agent_id), bool(valid)))
    return out


class VectorScope(NamedTuple):
    rows: int  # the agent's stored documents of the kind (the BM25 corpus count)
    own_index: bool  # a valid vector index of its own
    # what the agent's vectors held in a process are checked by (retrieval.vector_cache), read in
    # the same statement: the agent's graph version and the corpus's version (-1: not read)
    graph_version: int = -1
    corpus_version: int = -1

    @property
    def vectors_key(self) -> tuple[int, int, int] | None:
        return None if self.graph_version < 0 else (self.graph_version, self.corpus_version, self.rows)


SCOPE_KINDS = ("fact", "event")
SCOPE_COLUMNS = "k.kind, coalesce(c.doc_count, 0), coalesce(i.indisvalid, false), coalesce(c.version, 0)"


def scope_joins(agent_id: int) -> tuple[str, list]:
    """Joined to a row `a` whose `id` is the agent's: a row per kind with SCOPE_COLUMNS (the
    kind, the agent's documents of it, whether its own index is valid). The SQL and its params."""
    return (f"CROSS JOIN unnest(%s::text[], %s::text[]) AS k(kind, index_name) "
            f"LEFT JOIN {KeywordCorpus._meta.db_table} c ON c.agent_id = a.id AND c.kind = k.kind "
            f"LEFT JOIN pg_class ic ON ic.relname = k.index_name "
            f"LEFT JOIN pg_index i ON i.indexrelid = ic.oid",
            [list(SCOPE_KINDS), [agent_index_name(kind, agent_id) for kind in SCOPE_KINDS]])


def vector_scopes(*, agent_id: int) -> dict[str, VectorScope]:
    """For facts and events, in one round trip: what the semantic search strategy depends on."""
    joins, params = scope_joins(agent_id)
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT {SCOPE_COLUMNS} FROM (SELECT %s::bigint AS id) a {joins}", [agent_id, *params])
        return {kind: VectorScope(int(rows), bool(valid)) for kind, rows, valid, _ in cursor.fetchall()}


def vector_scope(*, agent_id: int, kind: str) -> VectorScope:
    return vector_scopes(agent_id=agent_id)[kind]


# --- the builder ---

def agent_indexes_ensure(*, agent: Agent | None = None) -> dict[str, list[str]]:
    """Build the missing indexes of agents (or of `agent`) with at least
    ANAMNESIS_AGENT_INDEX_MIN_ROWS documents of a kind; rebuild invalid ones; drop those of
    deleted agents. CONCURRENTLY unless called inside a transaction (where Postgres forbids it).
    Returns the names built and dropped."""
    concurrently = not connection.in_atomic_block
    with connection.cursor() as cursor:
        # in a transaction the lock is released with it, else when this run ends
        cursor.execute("SELECT pg_try_advisory_xact_lock(%s)" if not concurrently
                       else "SELECT pg_try_advisory_lock(%s)", [_LOCK])
        if not cursor.fetchone()[0]:
            logger.info("another process is building vector indexes; skipped")
            return {"built": [], "dropped": []}
        if not concurrently:  # rows written earlier in the transaction: check their constraints now
            cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")
    try:
        return _ensure(agent, settings.ANAMNESIS_AGENT_INDEX_MIN_ROWS, concurrently)
    finally:
        with connection.cursor() as cursor:
            if concurrently:
                cursor.execute("SELECT pg_advisory_unlock(%s)", [_LOCK])
            else:
                cursor.execute("SET CONSTRAINTS ALL DEFERRED")


def _ensure(agent: Agent | None, min_rows: int, concurrently: bool) -> dict[str, list[str]]:
    existing = {s.name: s for s in agent_indexes()}
    sizes = KeywordCorpus.objects.filter(doc_count__gte=min_rows)
    if agent is not None:
        sizes = sizes.filter(agent=agent)
    live_agents = set(Agent.objects.values_list("id", flat=True))
    dropped = []
    for state in existing.values():
        if state.agent_id not in live_agents or not state.valid:
            _drop(state.name, concurrently)
            dropped.append(state.name)
    built, kinds = [], set()
    try:
        for agent_id, kind in sizes.values_list("agent_id", "kind"):
            name = agent_index_name(kind, agent_id)
            if name in existing and existing[name].valid:
                continue
            _build(name, kind, agent_id, concurrently)
            built.append(name)
            kinds.add(kind)
    except Exception:
        if concurrently:  # the indexes built before the failure stay: their agents are analyzed
            _analyze_agents(kinds)
        raise
    _analyze_agents(kinds)
    return {"built": built, "dropped": [n for n in dropped if n not in built]}


def _analyze_agents(kinds) -> None:
    """Refresh the row count and the agent column's statistics of each table that got an index.
    An agent grows into its own index long before autovacuum re-reads a large table (a tenth of it
    must change): until then the planner takes the agent for the few rows it had, and measures each
    of its thousands of rows instead of searching the new index. The planner knows an agent's size
    while it is among the table's most common agent ids (`default_statistics_target`, 100)."""
    for kind in sorted(kinds):
        with connection.cursor() as cursor:
            cursor.execute(f"ANALYZE {DOCUMENT_TABLES[kind]} (agent_id)")


def _build(name: str, kind: str, agent_id: int, concurrently: bool) -> None:
    how = "CONCURRENTLY " if concurrently else ""
    with connection.cursor() as cursor:
        cursor.execute("SELECT set_config('maintenance_work_mem', %s, false)", [settings.ANAMNESIS_INDEX_BUILD_MEMORY])
        # inner product: on unit vectors the same order as cosine, and an operator the shared
        # (cosine) index cannot serve, so an agent's search always uses its own index. Same
        # parameters as the shared index (m 16, ef_construction 64); agent_id is an int.
        cursor.execute(f'CREATE INDEX {how}IF NOT EXISTS "{name}" ON {DOCUMENT_TABLES[kind]} USING hnsw '
                       f"(embedding vector_ip_ops) WITH (m = 16, ef_construction = 64) "
                       f"WHERE agent_id = {int(agent_id)}")
        cursor.execute("RESET maintenance_work_mem")
    logger.info("built vector index %s", name)


def _drop(name: str, concurrently: bool) -> None:
    how = "CONCURRENTLY " if concurrently else ""
    with connection.cursor() as cursor:
        cursor.execute(f'DROP INDEX {how}IF EXISTS "{name}"')
    logger.info("dropped vector index %s", name)
