"""The vectors of small agents held in the process, for the exact measures a retrieval makes.

An agent's documents of a kind are measured exactly (every vector against the query's) while
they number at most `exact_scan_max_rows`: the messages and facts of an agent without a vector
index of its own, and the facts linked to the entities the graph signal reaches. In PostgreSQL
each such measure reads every row it measures — about 2 µs a row: 5 ms for 2,500 messages, 8 ms
for a person's 1,000 facts, on each retrieval. Here the agent's vectors are kept as one matrix
per (agent, kind), the measure is a matrix product, and PostgreSQL is asked only which of the
nearest are visible (as of the moment asked, with the confidence floor), best first, as BM25
does (`retrieval.signals`).

The copy is checked against the agent's graph version and the version of its BM25 corpus of the
kind, read with the agent's state at the start of each retrieval (`VectorScope.vectors_key`).
Every statement that adds, removes or re-reads documents stamps the corpus in its own
transaction — a forget that redacts a name in a message re-embeds it and re-reads it — so no
rewritten vector is ranked from an older copy. When the key has moved, the agent's rows are
listed with their row versions (the transaction and place of each row's current version: an
update gives the row a new one, even in the transaction that stored it), and only the vectors
of rows that are new or were rewritten since are read; rows gone are dropped. What a forget
deleted or redacted is never returned (only visible rows are, and a copy of the state before is
not used); its vectors leave a process's copy when that process next retrieves for the agent,
or when the copy is pushed out.
Bounded by ANAMNESIS_VECTOR_CACHE_MB per process (0: off, every exact measure in PostgreSQL as
before), least recently used first out.
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from dataclasses import dataclass

import numpy as np
from django.conf import settings
from django.db import connection

from memories.fast_rows import id_array
from memories.models import DOCUMENT_TABLES, Agent, KeywordCorpus
from memories.models.base import EMBEDDING_DIMENSIONS
from memories.selectors import read_snapshot
from retrieval.concurrency import fire_and_forget

ROW_BYTES = EMBEDDING_DIMENSIONS * 4 + 16  # a held row: its float32 vector, id and row version


@dataclass(frozen=True, slots=True)
class AgentVectors:
    """One agent's vectors of one kind, as of `key` (graph version, corpus version, documents)."""

    key: tuple[int, int, int]
    removed: int  # the corpus's removed_version at `key`: unchanged, new rows alone bring it up to date
    ids: np.ndarray  # int64, ascending
    versions: np.ndarray  # int64: each row's version (xmin and ctid, hashed) when its vector was read
    matrix: np.ndarray  # float32, one unit-length row per id

    @property
    def nbytes(self) -> int:
        return self.ids.nbytes + self.versions.nbytes + self.matrix.nbytes

    def positions(self, doc_ids: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Where each of `doc_ids` is held, and which of them are (a mask over doc_ids)."""
        at = np.searchsorted(self.ids, doc_ids)
        found = at < len(self.ids)
        found[found] = self.ids[at[found]] == doc_ids[found]
        return at[found], found

    def similarities(self, vector: np.ndarray, rows: np.ndarray | None = None) -> np.ndarray:
        """Cosine of the query with every held vector (or those at `rows`)."""
        query = np.asarray(vector, dtype=np.float32)
        norm = float(np.linalg.norm(query))
        if norm == 0.0 or not len(self.ids) or query.shape[0] != self.matrix.shape[1]:
            return np.zeros(len(self.ids) if rows is None else len(rows))
        matrix = self.matrix if rows is None else self.matrix[rows]
        # einsum's own loop, on this thread: a BLAS product would wake BLAS's threads, whose
        # spinning cost several times the product itself on a busy two-core machine
        return np.einsum("ij,j->i", matrix, query / norm)


class VectorCache:
    """AgentVectors by (agent, kind), least recently used first out, bounded in bytes. A copy
    is used only at the exact key the retrieval read; a stale or missing one is brought up to
    date in the background (`refresh_soon`) when a second retrieval finds it missing at the same
    key (`missed`), at most once a second per agent and kind, and the retrieval measures in
    PostgreSQL meanwhile. A new copy is not read when it would push out one used (or read) in
    the last KEEP_USED seconds: with more agents in use than the bound holds, the others are
    measured in PostgreSQL rather than read again and again."""

    REFRESH_INTERVAL = 1.0  # seconds between two refreshes of one agent's vectors of a kind
    KEEP_USED = 60.0  # seconds a used copy is safe from being pushed out by a new one
    MISSES_KEPT = 4096  # (agent, kind) pairs whose last missed key is remembered

    def __init__(self, max_bytes: int):
        self.max_bytes = max_bytes
        self._held: OrderedDict[tuple[int, str], AgentVectors] = OrderedDict()
        self._bytes = 0
        self._lock = threading.Lock()
        self._refreshing: set[tuple[int, str]] = set()
        self._refreshed_at: dict[tuple[int, str], float] = {}
        self._used_at: dict[tuple[int, str], float] = {}
        self._missed: dict[tuple[int, str], tuple[int, int, int]] = {}  # oldest first

    @property
    def enabled(self) -> bool:
        return self.max_bytes > 0

    def fits(self, rows: int) -> bool:
        """Whether `rows` vectors of the bundled model's size fit at all (a copy too large is
        never read, rather than read and dropped again on every retrieval)."""
        return 0 < rows * ROW_BYTES <= self.max_bytes

    def current(self, agent_id: int, kind: str, key: tuple[int, int, int]) -> AgentVectors | None:
        """The held copy if it is at `key`, else None."""
        slot = (agent_id, kind)
        with self._lock:
            held = self._held.get(slot)
            if held is None or held.key != key:
                return None
            self._held.move_to_end(slot)
            self._used_at[slot] = time.monotonic()
            return held

    def missed(self, agent_id: int, kind: str, key: tuple[int, int, int]) -> bool:
        """Note that a retrieval found no copy at `key`; True when the last one to find none
        read the same key — the agent is being read without writes in between, so a copy would
        be used. An agent written to between every two retrievals (a chat's turns) gets none:
        it would be stale before its first use."""
        slot = (agent_id, kind)
        with self._lock:
            again = self._missed.pop(slot, None) == key
            self._missed[slot] = key
            while len(self._missed) > self.MISSES_KEPT:
                self._missed.pop(next(iter(self._missed)))
        return again

    def refresh_soon(self, agent_id: int, kind: str, rows: int) -> None:
        """Bring the agent's copy (of about `rows` rows) up to date off the caller's path, unless
        a refresh of it runs or ran less than REFRESH_INTERVAL ago, or a new copy would push out
        one in use."""
        slot, now = (agent_id, kind), time.monotonic()
        with self._lock:
            if slot in self._refreshing or now - self._refreshed_at.get(slot, -1e9) < self.REFRESH_INTERVAL:
                return
            if slot not in self._held and not self._room_for(rows * ROW_BYTES, now):
                return
            self._refreshing.add(slot)
            self._refreshed_at[slot] = now
            if len(self._refreshed_at) > 4 * len(self._held) + 1024:
                self._refreshed_at = {s: t for s, t in self._refreshed_at.items() if now - t < self.REFRESH_INTERVAL}
        fire_and_forget(lambda: self._refresh(slot))

    def _room_for(self, size: int, now: float) -> bool:
        """Whether `size` more bytes fit once the copies not used for KEEP_USED seconds are out
        (called with the lock held)."""
        free = self.max_bytes - self._bytes
        free += sum(v.nbytes for s, v in self._held.items() if now - self._used_at.get(s, -1e9) >= self.KEEP_USED)
        return free >= size

    def refresh(self, agent_id: int, kind: str) -> AgentVectors:
        """Bring the agent's copy up to date now (and return it)."""
        slot = (agent_id, kind)
        with self._lock:
            self._refreshing.add(slot)
        return self._refresh(slot)

    def _refresh(self, slot: tuple[int, str]) -> AgentVectors:
        try:
            with self._lock:
                held = self._held.get(slot)
            with read_snapshot():  # the key and the rows it labels, read as of one moment
                key, removed = _key_now(*slot)
                fresh = _added(*slot, held, key, removed) if held is not None and held.removed == removed else None
                if fresh is None:
                    fresh = _refreshed(*slot, held, key, removed)
            self._put(slot, fresh)
            return fresh
        finally:
            with self._lock:
                self._refreshing.discard(slot)

    def _put(self, slot: tuple[int, str], vectors: AgentVectors) -> None:
        with self._lock:
            old = self._held.pop(slot, None)
            if old is not None:
                self._bytes -= old.nbytes
            if vectors.nbytes > self.max_bytes:
                return
            now = time.monotonic()
            # out first: the copies least recently used, unless used in the last KEEP_USED seconds
            # (then the new copy is dropped instead)
            victims = sorted((s for s in self._held if now - self._used_at.get(s, -1e9) >= self.KEEP_USED),
                             key=lambda s: self._used_at.get(s, -1e9))
            while self._bytes + vectors.nbytes > self.max_bytes and victims:
                evicted_slot = victims.pop(0)
                self._bytes -= self._held.pop(evicted_slot).nbytes
                self._used_at.pop(evicted_slot, None)
            if self._bytes + vectors.nbytes > self.max_bytes:
                self._used_at.pop(slot, None)
                return
            self._held[slot] = vectors
            self._bytes += vectors.nbytes
            self._used_at.setdefault(slot, now)  # read because it is wanted: not pushed out before its first use

    def clear(self) -> None:
        with self._lock:
            self._held.clear()
            self._bytes = 0
            self._refreshed_at.clear()
            self._used_at.clear()

    @property
    def held_bytes(self) -> int:
        return self._bytes


cache = VectorCache(int(settings.ANAMNESIS_VECTOR_CACHE_MB * 1024 * 1024))


def _key_now(agent_id: int, kind: str) -> tuple[tuple[int, int, int], int]:
    """What `agent_state` reads as the key of the agent's vectors of `kind`, and the corpus's
    removed_version."""
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT a.graph_version, coalesce(c.version, 0), coalesce(c.doc_count, 0), "
                       f"coalesce(c.removed_version, 0) FROM {Agent._meta.db_table} a "
                       f"LEFT JOIN {KeywordCorpus._meta.db_table} c ON c.agent_id = a.id AND c.kind = %s "
                       f"WHERE a.id = %s", [kind, agent_id])
        row = cursor.fetchone()
    return ((int(row[0]), int(row[1]), int(row[2])), int(row[3])) if row else ((-1, -1, -1), -1)


_ROW_VERSION = "hashtextextended(xmin::text || ctid::text, 0)"


def _added(agent_id: int, kind: str, held: AgentVectors, key: tuple[int, int, int], removed: int
           ) -> AgentVectors | None:
    """`held` with the rows stored since, when nothing was removed since (the corpus's
    removed_version unchanged) and the rows after the last one held are exactly as many as the
    corpus gained: the usual case of messages and facts added. Else None (a row of a lower id
    committed late, a row stored without a vector, another write meanwhile): list every row."""
    gained = key[2] - held.key[2]
    if gained < 0 or not len(held.ids) or held.matrix.shape[1] == 0:
        return None
    with connection.cursor() as cursor:  # the primary key's range: only rows stored since, of any agent
        cursor.execute(f"SELECT id, {_ROW_VERSION}, vector_send(embedding) FROM {DOCUMENT_TABLES[kind]} "
                       f"WHERE id > %s AND agent_id = %s AND embedding IS NOT NULL ORDER BY id",
                       [int(held.ids[-1]), agent_id])
        rows = cursor.fetchall()
    if len(rows) != gained:
        return None
    if not rows:
        return AgentVectors(key=key, removed=removed, ids=held.ids, versions=held.versions, matrix=held.matrix)
    vectors = _vectors([row[2] for row in rows])
    if vectors.shape[1] != held.matrix.shape[1]:
        return None
    return AgentVectors(key=key, removed=removed,
                        ids=np.concatenate([held.ids, np.array([row[0] for row in rows], dtype=np.int64)]),
                        versions=np.concatenate([held.versions, np.array([row[1] for row in rows], dtype=np.int64)]),
                        matrix=np.concatenate([held.matrix, vectors]))


def _vectors(packed: list) -> np.ndarray:
    """Unit-length float32 rows from pgvector's binary form (`vector_send`)."""
    vectors = np.stack([np.frombuffer(bytes(b), dtype=">f4", offset=4) for b in packed]).astype(np.float32)
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    return vectors / np.where(norms == 0, 1.0, norms)


def _refreshed(agent_id: int, kind: str, held: AgentVectors | None, key: tuple[int, int, int], removed: int
               ) -> AgentVectors:
    """`held` brought up to the rows stored now: the vectors of new or rewritten rows read, those
    of rows gone dropped. Labelled with `key`, read before this listing: a row stored after the
    key was read is held early rather than missed, since the key a retrieval reads after it
    differs, and the copy is not used until it has been listed again."""
    table = DOCUMENT_TABLES[kind]
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT id, {_ROW_VERSION} FROM {table} "
                       f"WHERE agent_id = %s AND embedding IS NOT NULL ORDER BY id", [agent_id])
        listed = np.array(cursor.fetchall(), dtype=np.int64).reshape(-1, 2)
        ids, versions = listed[:, 0].copy(), listed[:, 1].copy()
        matrix = np.zeros((len(ids), held.matrix.shape[1] if held is not None else 0), dtype=np.float32)
        unchanged = np.zeros(len(ids), dtype=bool)
        if held is not None and len(ids):
            at, found = held.positions(ids)
            same = held.versions[at] == versions[found]
            kept = np.flatnonzero(found)[same]
            unchanged[kept] = True
            matrix[kept] = held.matrix[at[same]]
        wanted = ids[~unchanged]
        read = []
        if len(wanted) > len(ids) // 4:  # most of them: one pass over the agent's rows
            cursor.execute(f"SELECT id, vector_send(embedding) FROM {table} WHERE agent_id = %s "
                           f"AND embedding IS NOT NULL", [agent_id])
            read = cursor.fetchall()
        elif len(wanted):
            cursor.execute(f"SELECT id, vector_send(embedding) FROM {table} WHERE id = ANY(%s::bigint[]) "
                           f"AND agent_id = %s AND embedding IS NOT NULL", [id_array(wanted.tolist()), agent_id])
            read = cursor.fetchall()
    if read:
        read_ids = np.array([row[0] for row in read], dtype=np.int64)
        vectors = _vectors([row[1] for row in read])
        if matrix.shape[1] != vectors.shape[1]:
            if unchanged.any():  # the model's dimension changed: read every vector again
                return _refreshed(agent_id, kind, None, key, removed)
            matrix = np.zeros((len(ids), vectors.shape[1]), dtype=np.float32)
        at = np.searchsorted(ids, read_ids)
        listed_too = at < len(ids)  # a row stored after the listing is left for the next one
        listed_too[listed_too] = ids[at[listed_too]] == read_ids[listed_too]
        matrix[at[listed_too]] = vectors[listed_too]
        unchanged[at[listed_too]] = True
    # a row rewritten without a vector between the two statements: not held
    keep = unchanged
    return AgentVectors(key=key, removed=removed, ids=ids[keep], versions=versions[keep],
                        matrix=np.ascontiguousarray(matrix[keep]))
