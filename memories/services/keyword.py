"""BM25 statistics upkeep: document counts, lengths, per-term document frequencies and the
postings (term, document, tf, length) per agent, changed in the same transaction as the rows
they describe. Terms are upserted in sorted order so concurrent writers never deadlock on them,
and stamped with a new version so cached posting lists of them are known to be stale."""

from __future__ import annotations

from collections.abc import Sequence

from django.db import connection

from memories.models import DOCUMENT_TABLES, KeywordCorpus, KeywordPosting, KeywordTerm

# Every change of a term's postings stamps the term row with a new value of this sequence
# (see KeywordTerm.version and retrieval.postings).
VERSION_SEQUENCE = "memories_keyword_version"


def keyword_stats_apply(*, agent_id: int, kind: str, ids: Sequence[int], sign: int = 1) -> None:
    """Add (sign=1) or remove (sign=-1) documents `ids` of `kind` to the agent's BM25 statistics
    and postings. Removal reads the documents' lexemes: call it before their rows change or go."""
    if not ids:
        return
    table = DOCUMENT_TABLES[kind]
    term_table, corpus_table = KeywordTerm._meta.db_table, KeywordCorpus._meta.db_table
    posting_table = KeywordPosting._meta.db_table
    if sign > 0:
        postings = f"""
            INSERT INTO {posting_table} (agent_id, kind, term, doc_id, tf, doc_length)
            SELECT %(agent)s, %(kind)s, u.lexeme, d.id, coalesce(array_length(u.positions, 1), 1), l.n
            FROM {table} d
            CROSS JOIN LATERAL (SELECT sum(coalesce(array_length(positions, 1), 1))::int AS n
                                FROM unnest(d.search_vector)) l
            CROSS JOIN LATERAL unnest(d.search_vector) u
            WHERE d.id = ANY(%(ids)s)
        """
    else:  # found through the documents' own lexemes: the (agent, kind, term) index serves it
        postings = f"""
            DELETE FROM {posting_table} p
            USING (SELECT DISTINCT d.id, u.lexeme FROM {table} d, unnest(d.search_vector) u
                   WHERE d.id = ANY(%(ids)s)) gone
            WHERE p.agent_id = %(agent)s AND p.kind = %(kind)s AND p.term = gone.lexeme AND p.doc_id = gone.id
        """
    # one statement, one round trip: the three parts read the documents, not each other
    sql = f"""
        WITH postings AS ({postings}),
        stamp AS (SELECT nextval('{VERSION_SEQUENCE}') AS version),
        terms AS (
            INSERT INTO {term_table} (agent_id, kind, term, df, version)
            SELECT %(agent)s, %(kind)s, u.lexeme, %(sign)s * count(DISTINCT d.id), (SELECT version FROM stamp)
            FROM {table} d, unnest(d.search_vector) u
            WHERE d.id = ANY(%(ids)s)
            GROUP BY u.lexeme ORDER BY u.lexeme
            ON CONFLICT (agent_id, kind, term) DO UPDATE SET df = {term_table}.df + EXCLUDED.df,
                                                             version = EXCLUDED.version
        )
        INSERT INTO {corpus_table} (agent_id, kind, doc_count, total_length, version, removed_version)
        SELECT %(agent)s, %(kind)s, %(sign)s * count(DISTINCT d.id),
               %(sign)s * coalesce(sum(coalesce(array_length(u.positions, 1), 1)), 0), (SELECT version FROM stamp),
               CASE WHEN %(sign)s < 0 THEN (SELECT version FROM stamp) ELSE 0 END
        FROM {table} d LEFT JOIN LATERAL unnest(d.search_vector) u ON true
        WHERE d.id = ANY(%(ids)s)
        ON CONFLICT (agent_id, kind) DO UPDATE SET
            doc_count = {corpus_table}.doc_count + EXCLUDED.doc_count,
            total_length = {corpus_table}.total_length + EXCLUDED.total_length,
            version = EXCLUDED.version,
            removed_version = CASE WHEN %(sign)s < 0 THEN EXCLUDED.version ELSE {corpus_table}.removed_version END
    """
    with connection.cursor() as cursor:
        cursor.execute(sql, {"agent": agent_id, "kind": kind, "sign": sign, "ids": list(ids)})
