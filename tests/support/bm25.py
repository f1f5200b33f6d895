"""A reference Okapi BM25, scored from the documents' own tsvectors, for comparing with search."""

import math
from collections import Counter

import numpy as np
from django.db import connection
from django.utils import timezone


def reference_bm25(docs: dict[int, Counter], query_terms: list[str], k1=1.2, b=0.75) -> dict[int, float]:
    n = len(docs)
    avgdl = sum(sum(c.values()) for c in docs.values()) / n
    df = Counter(t for c in docs.values() for t in c)
    out = {}
    for doc_id, tf in docs.items():
        dl = sum(tf.values())
        score = 0.0
        for term in set(query_terms):
            if tf[term]:
                idf = math.log(1 + (n - df[term] + 0.5) / (df[term] + 0.5))
                score += idf * tf[term] * (k1 + 1) / (tf[term] + k1 * (1 - b + b * dl / avgdl))
        if score > 0:
            out[doc_id] = score
    return out


def agent_documents(agent_id) -> dict[int, Counter]:
    """Every fact of the agent as lexeme → term frequency."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT id, lexeme, coalesce(array_length(positions, 1), 1) FROM memories_fact, "
                       "unnest(search_vector) WHERE agent_id = %s", [agent_id])
        docs: dict[int, Counter] = {}
        for doc_id, lexeme, tf in cursor.fetchall():
            docs.setdefault(doc_id, Counter())[lexeme] = tf
    return docs


def reference_order(scores: dict[int, float]) -> list[tuple[int, float]]:
    """Best first; equal scores (to 1e-9: float sums differ in the last bits) by id."""
    return sorted(scores.items(), key=lambda kv: (-round(kv[1] * 1e9), kv[0]))


def facts_with_postings(agent, entity, texts, *, closed=frozenset()):
    """Facts with the given texts (random unit vectors) in the agent's BM25 statistics; the
    positions in `closed` are stored as closed versions."""
    from memories.models import Fact
    from memories.services.keyword import keyword_stats_apply

    now = timezone.now()
    vectors = np.random.default_rng(len(texts)).normal(size=(len(texts), 384))
    facts = Fact.objects.bulk_create([
        Fact(agent=agent, entity=entity, text=t, embedding=v / np.linalg.norm(v), valid_from=now, recorded_at=now,
             learned_at=now, valid_to=now if i in closed else None, invalidated_at=now if i in closed else None)
        for i, (t, v) in enumerate(zip(texts, vectors, strict=True))])
    keyword_stats_apply(agent_id=agent.id, kind="fact", ids=[f.id for f in facts])
    return facts
