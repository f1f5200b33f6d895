"""The retrieval signals: semantic (pgvector), keyword (Okapi BM25) and graph (PPR + hops).

Each returns a ranked list of `Hit`s for one kind of document (`fact` or `event`), scoped by
agent and by bi-temporal visibility. Ids and scores are selected in SQL, except where an agent
is small enough to be measured exactly: then its vectors are held in the process
(`retrieval.vector_cache`) and PostgreSQL checks only which of the nearest are visible.
"""

from __future__ import annotations

import math
import weakref
from dataclasses import dataclass, field
from datetime import datetime

import numpy as np
from django.conf import settings
from django.db import connection

from memories.fast_rows import id_array
from memories.lru import LRUCache
from memories.models import DOCUMENT_TABLES, FactEntityLink, KeywordCorpus, KeywordTerm
from memories.models.visibility import Moment, event_visible_sql, version_visible_sql
from memories.providers.embeddings import vector_literal
from retrieval import postings, vector_cache
from retrieval.config import RetrievalConfig
from retrieval.keys import CandidateKey, CandidateKind
from retrieval.vector_indexes import VectorScope, vector_scope


@dataclass
class Hit:
    kind: str  # fact | event
    id: int
    score: float
    key: CandidateKey = field(init=False, repr=False, compare=False)

    def __post_init__(self):
        # read many times by fusion: built once
        self.key = CandidateKey(_KINDS[self.kind], self.id)


_KINDS = {kind.value: kind for kind in CandidateKind}


def _visibility(kind: str, as_of: Moment | datetime | None, min_confidence: float) -> tuple[str, list]:
    if kind == "event":
        return event_visible_sql(as_of)
    sql, params = version_visible_sql(as_of)
    return f"{sql} AND d.confidence >= %s", [*params, min_confidence]


def _window_sql(kind: str, window) -> tuple[str, list]:
    if window is None:
        return "", []
    column = "d.occurred_at" if kind == "event" else "d.valid_from"
    return f" AND {column} >= %s AND {column} < %s", [window.start, window.end]


def table_size(kind: str) -> int:
    """Planner estimate of the table's rows (cheap; no count(*))."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT greatest(reltuples, 0)::bigint FROM pg_class WHERE relname = %s",
                       [DOCUMENT_TABLES[kind]])
        row = cursor.fetchone()
    return int(row[0]) if row else 0


# --- semantic ----------------------------------------------------------------------------------

# The agent's share of the HNSW neighbourhood last observed per (agent, kind): a first pass
# that came back short tells what share of the index's candidates were the agent's rows, and
# the next query starts from it instead of paying for a second pass again. Per process, for the
# ANAMNESIS_OBSERVED_SHARE_CACHE_SIZE most recently searched (agent, kind) pairs.
_observed_share: LRUCache[tuple[int, str], float] = LRUCache(settings.ANAMNESIS_OBSERVED_SHARE_CACHE_SIZE)


def semantic(*, agent_id: int, kind: str, vector: np.ndarray, limit: int, config: RetrievalConfig,
             as_of: Moment | datetime | None = None, window=None,
             scope: VectorScope | None = None) -> tuple[list[Hit], dict]:
    """Nearest documents by cosine. pgvector 0.6.2 filters HNSW results *after* the index scan,
    so `WHERE agent = X` on the shared index can return fewer rows than exist. Strategy:
    - an agent with an HNSW index of its own (`retrieval.vector_indexes`, agents with at
      least ANAMNESIS_AGENT_INDEX_MIN_ROWS documents) searches it: every neighbour is its own;
    - else an agent (or date window) with at most `exact_scan_max_rows` documents is measured
      exactly (ordered by an expression no vector index can serve);
    - else the shared index, with ef_search scaled by 1 / (the agent's share of the table, or the
      lower share observed near recent queries).
    On an index, a short answer is retried once with ef_search scaled by the share this pass
    actually found, and redone exactly if still short: the result is never short.

    A date window is a further filter the index cannot see: a window with at most
    `exact_scan_max_rows` documents is measured exactly; a larger one takes the index path with
    the window's share and keeps what it finds (the in-window documents among the nearest
    `hnsw_ef_search_max`) rather than measuring the distance to every one of them: the window
    list is a boost next to the unfiltered semantic list, never the only source.

    `scope` (the agent's document count and own-index state) is read once per retrieval by the
    pipeline; without it, it is read here."""
    visible, params = _visibility(kind, as_of, config.candidates.min_confidence)
    extra, extra_params = _window_sql(kind, window)
    agent_rows, own = (scope or vector_scope(agent_id=agent_id, kind=kind))[:2]
    limits = config.semantic

    def nearest(order: str, ef_search: int | None = None) -> list[tuple]:
        sql = (f"SELECT d.id, d.embedding <=> %s::vector AS distance FROM {DOCUMENT_TABLES[kind]} d "
               f"WHERE d.agent_id = %s AND d.embedding IS NOT NULL AND {visible}{extra} ORDER BY {order} LIMIT %s")
        literal = vector_literal(vector)
        return _run(sql, [literal, agent_id, *params, *extra_params, literal, limit], ef_search=ef_search)

    rows_in_scope = agent_rows
    if window is not None and (own or agent_rows > limits.exact_scan_max_rows):
        rows_in_scope = window_size(agent_id, kind, window, cap=limits.exact_scan_max_rows)
    info = {"agent_rows": rows_in_scope, "strategy": "exact"}
    held = _held_vectors(agent_id, kind, scope, config) if window is None and not own else None
    if held is not None:
        info["strategy"] = "exact_in_process"
        hits = _nearest_held(held, vector, limit=limit, visible=lambda ids: _visible_ids(
            kind, agent_id, ids, as_of, config, None), kind=kind)
        return [h for h in hits if h.score >= config.candidates.min_similarity], info
    if rows_in_scope <= limits.exact_scan_max_rows and not (own and window is None):
        rows = nearest(EXACT_ORDER)
    else:
        # learned from plain searches of the shared index only: an as_of or window filter hides
        # rows on purpose, and in the agent's own index the share is its visible rows
        memo = (agent_id, kind) if window is None and as_of is None and not own else None
        share = max(rows_in_scope / max(agent_rows if own else table_size(kind), rows_in_scope), 1e-6)
        observed = _observed_share.get(memo) if memo else None
        if observed is not None:
            share = min(share, observed)
        ef = int(min(limits.hnsw_ef_search_max, max(limits.hnsw_ef_search_min, limit * 2 / share)))
        # Stored vectors are unit length, so ordering by inner product (<#>) is ordering by
        # cosine; of the vector indexes only the agent's own (vector_ip_ops) can serve it. The
        # planner may still sort the agent's rows instead when its statistics undercount them
        # (`vector_indexes` analyzes the table after building an agent's index).
        order, label = (OWN_INDEX_ORDER, "agent_hnsw") if own else (SHARED_INDEX_ORDER, "hnsw")
        info.update(strategy=label, ef_search=ef)
        rows = nearest(order, ef)
        if len(rows) < limit and ef < limits.hnsw_ef_search_max:
            # The agent's share near this query is lower than expected: widen the search by what
            # the first pass actually saw before paying for an exact scan.
            local_share = max(len(rows), 1) / ef
            if memo:
                _observed_share.put(memo, local_share)
            ef = int(min(limits.hnsw_ef_search_max, limit * 1.5 / local_share))
            info.update(strategy=f"{label}_widened", ef_search=ef)
            rows = nearest(order, ef)
        elif observed is not None:  # drift back toward the table-wide share
            _observed_share.put(memo, min(1.0, observed * 1.05))
        if len(rows) < limit and window is None:
            info["strategy"] += "+exact_rescan"
            rows = nearest(EXACT_ORDER)
    hits = [Hit(kind, row_id, 1.0 - float(distance)) for row_id, distance in rows]
    return [h for h in hits if h.score >= config.candidates.min_similarity], info


def _held_vectors(agent_id: int, kind: str, scope: VectorScope | None, config: RetrievalConfig
                  ) -> vector_cache.AgentVectors | None:
    """The agent's vectors of `kind` held in the process at the state this retrieval read, when
    they are measured exactly (at most `exact_scan_max_rows` of them); else None. Inside a
    transaction no copy is made: the state it would be labelled with may yet be rolled back."""
    key = scope.vectors_key if scope is not None else None
    if key is None or not vector_cache.cache.fits(scope.rows) or scope.rows > config.semantic.exact_scan_max_rows:
        return None
    held = vector_cache.cache.current(agent_id, kind, key)
    if held is None and not connection.in_atomic_block and vector_cache.cache.missed(agent_id, kind, key):
        vector_cache.cache.refresh_soon(agent_id, kind, scope.rows)  # measured in PostgreSQL this time
    return held


def _nearest_held(held: vector_cache.AgentVectors, vector: np.ndarray, *, limit: int, visible, kind: str
                  ) -> list[Hit]:
    """The `limit` visible documents nearest the query, equal similarities by id."""
    similarity = held.similarities(vector)
    return _best_visible(kind, held.ids, similarity, similarity, limit=limit, visible=visible)


# The three ways to order by nearness to the query vector (one %s: the vector): "+ 0" makes an
# expression no vector index can serve, so the planner filters by agent and sorts (exact);
# cosine (<=>) is what the shared index serves; inner product (<#>) only an agent's own index.
EXACT_ORDER = "(d.embedding <=> %s::vector) + 0"
SHARED_INDEX_ORDER = "d.embedding <=> %s::vector"
OWN_INDEX_ORDER = "d.embedding <#> %s::vector"


def window_size(agent_id: int, kind: str, window, *, cap: int) -> int:
    """The agent's documents in the date window, counted up to `cap` + 1 (an index-only scan)."""
    extra, params = _window_sql(kind, window)
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT count(*) FROM (SELECT 1 FROM {DOCUMENT_TABLES[kind]} d WHERE d.agent_id = %s{extra} "
                       f"LIMIT %s) w", [agent_id, *params, cap + 1])
        return int(cursor.fetchone()[0])


# The hnsw.ef_search each autocommit connection was last given (by its psycopg connection, so
# a reconnect starts over): set once per connection and value, not around every search.
_ef_search_set: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _run(sql: str, args: list, *, ef_search: int | None = None) -> list[tuple]:
    with connection.cursor() as cursor:
        if ef_search:
            ef_search = int(ef_search)
            if connection.in_atomic_block:  # reverts with the transaction
                cursor.execute(f"SET LOCAL hnsw.ef_search = {ef_search}")
            elif _ef_search_set.get(connection.connection) != ef_search:
                cursor.execute(f"SET hnsw.ef_search = {ef_search}")
                _ef_search_set[connection.connection] = ef_search
        cursor.execute(sql, args)
        return cursor.fetchall()


# --- keyword (Okapi BM25) ----------------------------------------------------------------------

def query_terms(query: str) -> list[str]:
    """The query's lexemes under the same `english` configuration as the documents."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT lexeme FROM unnest(to_tsvector('english', %s)) ORDER BY lexeme", [query])
        return [row[0] for row in cursor.fetchall()]


def _term_stats(agent_id: int, kind: str, query: str, names: str = ""
                ) -> tuple[dict[str, tuple[int, int, bool]], int, int]:
    """The query's lexemes with their document frequency, version and whether they are among
    the lexemes of `names` (those the agent's documents contain), and the corpus size and
    total length, in one round trip."""
    with connection.cursor() as cursor:
        cursor.execute(
            f"""
            WITH q AS (SELECT lexeme FROM unnest(to_tsvector('english', %s)))
            SELECT q.lexeme, coalesce(t.df, 0), coalesce(t.version, 0), c.doc_count, c.total_length,
                   q.lexeme IN (SELECT lexeme FROM unnest(to_tsvector('english', %s)))
            FROM q
            LEFT JOIN {KeywordTerm._meta.db_table} t ON t.agent_id = %s AND t.kind = %s AND t.term = q.lexeme
            LEFT JOIN {KeywordCorpus._meta.db_table} c ON c.agent_id = %s AND c.kind = %s
            ORDER BY q.lexeme
            """,
            [query, names, agent_id, kind, agent_id, kind],
        )
        rows = cursor.fetchall()
    terms = {r[0]: (int(r[1]), int(r[2]), bool(r[5])) for r in rows if r[1] > 0}
    doc_count = int(rows[0][3] or 0) if rows else 0
    total_length = int(rows[0][4] or 0) if rows else 0
    return terms, doc_count, total_length


def bm25_idf(doc_count: int, df: int) -> float:
    """ln(1 + (N − df + 0.5) / (df + 0.5)): always positive (Lucene's variant of Okapi IDF)."""
    return math.log(1 + (doc_count - df + 0.5) / (df + 0.5))


def keyword(*, agent_id: int, kind: str, query: str, limit: int, config: RetrievalConfig,
            as_of: Moment | datetime | None = None, window=None, names: str = "", name_tf_cap: int = 0
            ) -> tuple[list[Hit], dict]:
    """Okapi BM25 over the agent's documents, from per-agent statistics (N, average length, df)
    and the postings kept by the write path: the query's terms' posting lists (cached in
    memory while their terms are unchanged, see `retrieval.postings`) are scored with numpy,
    then the documents are walked best first (equal scores to 1e-9 by id) and the first
    `limit` visible ones kept.

    With `name_tf_cap`, the query's words that are also words of `names` (the entities it
    names) count at most that many times per document: a fact repeats its subject's name
    wherever the message said "I", "my" or "she", so how often it does says nothing about
    its relevance."""
    stats, n, total_length = _term_stats(agent_id, kind, query, names)
    terms = sorted(stats)
    if not terms or n == 0:
        return [], {"terms": terms}
    lists = postings.posting_lists(agent_id=agent_id, kind=kind, versions={t: stats[t][1] for t in terms})
    doc_ids, scores = postings.bm25_scores(
        [(bm25_idf(n, stats[t][0]), postings.tf_capped(lists[t], name_tf_cap) if stats[t][2] else lists[t])
         for t in terms if t in lists],
        avgdl=total_length / n, k1=config.keyword.bm25_k1, b=config.keyword.bm25_b)
    keys = np.round(scores * 1e9)
    hits = _best_visible(kind, doc_ids, keys, scores, limit=limit,
                         visible=lambda ids: _visible_ids(kind, agent_id, ids, as_of, config, window))
    return hits, {"terms": terms, "matched": len(doc_ids)}


def _best_visible(kind: str, doc_ids: np.ndarray, keys: np.ndarray, scores: np.ndarray, *, limit: int,
                  visible) -> list[Hit]:
    """The first `limit` documents by key (descending, equal keys by id) that `visible` keeps.
    The best 3 × limit are checked for visibility first; only when too few of them are visible is
    every match ordered and checked, a batch at a time."""
    if limit <= 0:
        return []
    hits: list[Hit] = []
    order = postings.best_first(doc_ids, keys, limit * 3)
    done = 0
    while len(order) > done:
        batch = order[done:]
        ids = doc_ids[batch].tolist()
        shown = visible(ids)
        hits += [Hit(kind, doc, score) for doc, score in zip(ids, scores[batch].tolist(), strict=True)
                 if doc in shown]
        done = len(order)
        if len(hits) >= limit or done >= len(doc_ids):
            break
        order = postings.best_first(doc_ids, keys, min(len(doc_ids), done * 4))
    return hits[:limit]


def _visible_ids(kind: str, agent_id: int, ids: list[int], as_of, config: RetrievalConfig, window) -> set[int]:
    visible, params = _visibility(kind, as_of, config.candidates.min_confidence)
    extra, extra_params = _window_sql(kind, window)
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT d.id FROM {DOCUMENT_TABLES[kind]} d WHERE d.id = ANY(%s::bigint[]) AND d.agent_id = %s "
                       f"AND {visible}{extra}", [id_array(ids), agent_id, *params, *extra_params])
        return {row[0] for row in cursor.fetchall()}


# --- graph -------------------------------------------------------------------------------------

def graph_facts(*, agent_id: int, entity_scores: dict[int, float], vector: np.ndarray, limit: int,
                config: RetrievalConfig, as_of: Moment | datetime | None = None, graph=None,
                scope: VectorScope | None = None) -> tuple[list[Hit], dict]:
    """Facts linked to the graph's top entities, scored by entity score × (0.5 + 0.5 cosine),
    so a seed entity's many facts are ordered by relevance to the query.

    An entity with at most `graph_exact_max_facts` linked facts has them all measured; a larger
    one (the agent's own person links to most of its facts) is searched through the agent's
    own vector index: its facts among the query's nearest, with ef_search scaled by the share of
    the agent's facts it holds — the list is a boost next to the semantic one, so it keeps what
    that pass finds instead of measuring tens of thousands of facts."""
    if not entity_scores:
        return [], {}
    related = config.enhancement.spreading_related_entities
    top = sorted(entity_scores, key=entity_scores.get, reverse=True)[: max(10, related)]
    cap, min_confidence, limits = config.graph.graph_exact_max_facts, config.candidates.min_confidence, config.semantic
    # the entity graph knows its entities' facts; the others are counted, up to the cap
    known = {e: graph.nodes[e].get("facts", 0) for e in top if e in graph} if graph is not None else {}
    counts = {**_linked_counts([e for e in top if e not in known], cap=cap), **known}
    small = [e for e in top if counts.get(e, 0) <= cap]
    large = [e for e in top if counts.get(e, 0) > cap]
    agent_rows, own = (scope or vector_scope(agent_id=agent_id, kind="fact"))[:2] if large else (0, False)
    if large and not own:
        small, large = top, []  # no index of its own yet: measure every linked fact
    visible, params = version_visible_sql(as_of)
    vec = vector_literal(vector)
    rows, info = [], {"entities_measured": len(small), "entities_searched": len(large)}
    held = _held_vectors(agent_id, "fact", scope, config) if small else None
    if held is not None:
        info["measured_in_process"] = True
        rows += _linked_nearest_held(held, small, vector, limit=limit * 3, visible=lambda ids: _visible_ids(
            "fact", agent_id, ids, as_of, config, None))
    elif small:
        # ordered by "distance + 0", which no vector index can serve: the planner reads the
        # links by entity and the facts by id, then sorts (disabling index scans instead made
        # it scan every agent's links). The linked ids as an array make it fetch those facts by
        # id: joined to the links alone, an entity with a tenth of the agent's facts had it read
        # all of them. Equal distances go by id, whatever the plan.
        links = FactEntityLink._meta.db_table
        sql = (f"SELECT l.entity_id, d.id, 1 - (d.embedding <=> %s::vector) FROM {links} l "
               f"JOIN {DOCUMENT_TABLES['fact']} d ON d.id = l.fact_id WHERE l.entity_id = ANY(%s::bigint[]) "
               f"AND d.id = ANY(ARRAY(SELECT fact_id FROM {links} WHERE entity_id = ANY(%s::bigint[]))) AND {visible} "
               f"AND d.confidence >= %s ORDER BY {EXACT_ORDER}, d.id LIMIT %s")
        rows += _run(sql, [vec, id_array(small), id_array(small), *params, min_confidence, vec, limit * 3])
    if large:
        share = min(1.0, sum(counts[e] for e in large) / max(agent_rows, 1))
        ef = int(min(limits.hnsw_ef_search_max, max(limits.hnsw_ef_search_min, limit / share)))
        sql = (f"WITH near AS MATERIALIZED (SELECT d.id, d.embedding <=> %s::vector AS distance "
               f"FROM {DOCUMENT_TABLES['fact']} d WHERE d.agent_id = %s AND d.embedding IS NOT NULL AND {visible} "
               f"AND d.confidence >= %s ORDER BY {OWN_INDEX_ORDER} LIMIT %s) "
               f"SELECT l.entity_id, near.id, 1 - near.distance FROM near "
               f"JOIN {FactEntityLink._meta.db_table} l ON l.fact_id = near.id AND l.entity_id = ANY(%s::bigint[]) "
               f"ORDER BY near.distance LIMIT %s")
        rows += _run(sql, [vec, agent_id, *params, min_confidence, vec, ef, id_array(large), limit * 3], ef_search=ef)
        info["ef_search"] = ef
    best: dict[int, float] = {}
    for entity_id, fact_id, cosine in rows:
        score = entity_scores[entity_id] * (0.5 + 0.5 * max(0.0, float(cosine)))
        best[fact_id] = max(best.get(fact_id, 0.0), score)
    ranked = sorted(best.items(), key=lambda kv: (-kv[1], kv[0]))[:limit]
    return [Hit("fact", fact_id, score) for fact_id, score in ranked], info


def _linked_nearest_held(held: vector_cache.AgentVectors, entity_ids: list[int], vector: np.ndarray, *,
                         limit: int, visible) -> list[tuple[int, int, float]]:
    """The `limit` (entity, fact, cosine) links of `entity_ids` whose facts are visible and
    nearest the query, equal similarities by fact id — what the exact statement in
    `graph_facts` selects, measured on the held vectors."""
    if limit <= 0:
        return []
    with connection.cursor() as cursor:  # one row of packed arrays, not a tuple per link
        cursor.execute(f"SELECT string_agg(int8send(entity_id), ''::bytea), string_agg(int8send(fact_id), ''::bytea) "
                       f"FROM {FactEntityLink._meta.db_table} WHERE entity_id = ANY(%s::bigint[])",
                       [id_array(entity_ids)])
        entities, facts = cursor.fetchone()
    links = np.stack([postings.packed_array(entities, ">i8", np.int64),
                      postings.packed_array(facts, ">i8", np.int64)], axis=1)
    at, found = held.positions(links[:, 1])
    links = links[found]
    if not len(links):
        return []
    similarity = held.similarities(vector, at)
    order = postings.best_first(links[:, 1], similarity, limit)
    rows: list[tuple[int, int, float]] = []
    done, checked = 0, {}
    while len(order) > done:
        batch = order[done:]
        unknown = [int(f) for f in set(links[batch, 1].tolist()) if f not in checked]
        shown = visible(unknown) if unknown else set()
        checked.update((f, f in shown) for f in unknown)
        rows += [(int(links[i, 0]), int(links[i, 1]), float(similarity[i])) for i in batch.tolist()
                 if checked[int(links[i, 1])]]
        done = len(order)
        if len(rows) >= limit or done >= len(links):
            break
        order = postings.best_first(links[:, 1], similarity, min(len(links), done * 4))
    return rows[:limit]


def _linked_counts(entity_ids: list[int], *, cap: int) -> dict[int, int]:
    """Each entity's linked facts, counted up to cap + 1 (index-only scans)."""
    if not entity_ids:
        return {}
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT e, (SELECT count(*) FROM (SELECT 1 FROM {FactEntityLink._meta.db_table} l "
                       f"WHERE l.entity_id = e LIMIT %s) c) FROM unnest(%s::bigint[]) AS e", [cap + 1, entity_ids])
        return dict(cursor.fetchall())
