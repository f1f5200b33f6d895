"""BM25 over posting lists held in memory: each query term's list (document ids, term
frequencies, document lengths) is read from the postings table once, kept in a per-process
LRU cache, and reused for as long as the term's `version` in `KeywordTerm` is unchanged.

Every statement that changes a term's postings stamps the term with a new value of a sequence
(`memories.services.keyword`), so a write invalidates exactly the terms it touched, in every
process, with no message between them: a reader compares the version it reads with the query's
statistics to the one it cached. Scoring a few tens of thousands of postings with numpy takes
about a millisecond, where the same sum and group-by in SQL took 15–35 ms.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np
from django.conf import settings
from django.db import connection

from memories.models import KeywordPosting, KeywordTerm


@dataclass(frozen=True, slots=True)
class PostingList:
    version: int
    doc_ids: np.ndarray  # int64
    tf: np.ndarray  # int32
    doc_length: np.ndarray  # int32

    @property
    def size(self) -> int:
        return len(self.doc_ids)


class PostingsCache:
    """Posting lists by (agent, kind, term), least recently used first out, bounded by the
    total number of postings held (16 bytes each)."""

    def __init__(self, max_postings: int):
        self.max_postings = max_postings
        self._lists: OrderedDict[tuple[int, str, str], PostingList] = OrderedDict()
        self._held = 0
        self._lock = threading.Lock()

    def get(self, key: tuple[int, str, str], version: int) -> PostingList | None:
        with self._lock:
            found = self._lists.get(key)
            if found is None or found.version != version:
                return None
            self._lists.move_to_end(key)
            return found

    def put(self, key: tuple[int, str, str], plist: PostingList) -> None:
        if plist.size > self.max_postings:
            return
        with self._lock:
            old = self._lists.pop(key, None)
            if old is not None:
                self._held -= old.size
            self._lists[key] = plist
            self._held += plist.size
            while self._held > self.max_postings:
                _, evicted = self._lists.popitem(last=False)
                self._held -= evicted.size

    def clear(self) -> None:
        with self._lock:
            self._lists.clear()
            self._held = 0

    @property
    def held(self) -> int:
        return self._held


cache = PostingsCache(settings.ANAMNESIS_KEYWORD_CACHE_POSTINGS)


def posting_lists(*, agent_id: int, kind: str, versions: dict[str, int]) -> dict[str, PostingList]:
    """The posting lists of `versions`' terms (term → the version the caller read): cached
    lists at that version, the others read in one statement (and cached)."""
    out: dict[str, PostingList] = {}
    missing = []
    for term, version in versions.items():
        found = cache.get((agent_id, kind, term), version)
        if found is None:
            missing.append(term)
        else:
            out[term] = found
    for term, plist in _read(agent_id, kind, missing):
        out[term] = plist
        cache.put((agent_id, kind, term), plist)
    return out


def _read(agent_id: int, kind: str, terms: list[str]) -> Iterable[tuple[str, PostingList]]:
    """Each term's postings as packed binary arrays, with its version read in the same snapshot
    (a list is never labelled with a version older than its contents)."""
    if not terms:
        return []
    sql = f"""
        SELECT t.term, t.version, p.ids, p.tfs, p.lengths
        FROM {KeywordTerm._meta.db_table} t
        CROSS JOIN LATERAL (
            SELECT string_agg(int8send(doc_id), ''::bytea) AS ids, string_agg(int4send(tf), ''::bytea) AS tfs,
                   string_agg(int4send(doc_length), ''::bytea) AS lengths
            FROM {KeywordPosting._meta.db_table} p
            WHERE p.agent_id = t.agent_id AND p.kind = t.kind AND p.term = t.term
        ) p
        WHERE t.agent_id = %s AND t.kind = %s AND t.term = ANY(%s)
    """
    with connection.cursor() as cursor:
        cursor.execute(sql, [agent_id, kind, terms])
        rows = cursor.fetchall()
    return [(term, _by_id(int(version), packed_array(ids, ">i8", np.int64), packed_array(tfs, ">i4", np.int32),
                          packed_array(lengths, ">i4", np.int32)))
            for term, version, ids, tfs, lengths in rows]


def packed_array(packed: bytes | None, wire: str, dtype) -> np.ndarray:
    """An array sent packed by PostgreSQL (`string_agg(int8send(x), ''::bytea)`)."""
    return np.frombuffer(bytes(packed or b""), dtype=wire).astype(dtype)


def _by_id(version: int, doc_ids: np.ndarray, tf: np.ndarray, doc_length: np.ndarray) -> PostingList:
    """A list ordered by document id (sorted once, when read), so lists merge as sorted runs."""
    if len(doc_ids) > 1 and not (doc_ids[1:] > doc_ids[:-1]).all():
        order = np.argsort(doc_ids, kind="stable")
        doc_ids, tf, doc_length = doc_ids[order], tf[order], doc_length[order]
    for array in (doc_ids, tf, doc_length):
        array.flags.writeable = False
    return PostingList(version, doc_ids, tf, doc_length)


def tf_capped(plist: PostingList, cap: int) -> PostingList:
    """The list with each term frequency at most `cap` (0: unchanged)."""
    if cap <= 0:
        return plist
    return PostingList(plist.version, plist.doc_ids, np.minimum(plist.tf, cap), plist.doc_length)


def _term_scores(idf: float, plist: PostingList, *, avgdl: float, k1: float, b: float) -> np.ndarray:
    """Each posting's share of its document's score:
    idf · tf · (k1 + 1) / (tf + k1 · (1 − b + b · dl / avgdl))."""
    tf = plist.tf.astype(np.float64)
    return idf * tf * (k1 + 1) / (tf + k1 * (1 - b + b * plist.doc_length / avgdl))


def _merged(ids: np.ndarray, shares: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Concatenated sorted runs of ids with their shares → the distinct ids, ascending, and the
    sum of each one's shares in the runs' order (a stable sort merges runs cheaply)."""
    if not len(ids):
        return ids, np.empty(0, np.float64)
    order = np.argsort(ids, kind="stable")
    ids = ids[order]
    first = np.empty(len(ids), dtype=bool)
    first[0] = True
    np.not_equal(ids[1:], ids[:-1], out=first[1:])
    docs = ids[first]
    return docs, np.bincount(np.cumsum(first) - 1, weights=shares[order], minlength=len(docs))


def bm25_scores(lists: list[tuple[float, PostingList]], *, avgdl: float, k1: float, b: float
                ) -> tuple[np.ndarray, np.ndarray]:
    """Okapi BM25 of every document in the lists ((idf, list) per query term): the document
    ids, ascending, and their scores, each the sum of its terms' shares in the lists' order."""
    if not lists:
        return np.empty(0, np.int64), np.empty(0, np.float64)
    return _merged(np.concatenate([plist.doc_ids for _, plist in lists]),
                   np.concatenate([_term_scores(idf, plist, avgdl=avgdl, k1=k1, b=b) for idf, plist in lists]))


def best_first(doc_ids: np.ndarray, keys: np.ndarray, n: int) -> np.ndarray:
    """Positions of the `n` best documents by key, descending, equal keys by id: a partial
    sort when `n` is a small share of the matches."""
    if n >= len(keys):
        return np.lexsort((doc_ids, -keys))
    cut = np.partition(keys, len(keys) - n)[len(keys) - n]  # the n-th largest key
    chosen = np.flatnonzero(keys >= cut)
    return chosen[np.lexsort((doc_ids[chosen], -keys[chosen]))][:n]
