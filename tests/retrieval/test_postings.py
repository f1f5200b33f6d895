"""BM25 posting lists cached in memory: a write is seen by the next search, only the terms a
write changed are read again, and the cache stays within its bound."""

import numpy as np
import pytest

from memories.models import Entity, Fact, KeywordTerm
from memories.services.keyword import keyword_stats_apply
from retrieval import postings, signals
from retrieval.config import retrieval_config
from tests.support.bm25 import agent_documents, facts_with_postings, reference_bm25, reference_order

CONFIG = retrieval_config({"min_confidence": 0.0})


def search(agent, query, limit=50):
    hits, _ = signals.keyword(agent_id=agent.id, kind="fact", query=query, limit=limit, config=CONFIG)
    return hits


def expected(agent, query):
    return reference_order(reference_bm25(agent_documents(agent.id), signals.query_terms(query)))


@pytest.fixture
def rafael(agent):
    return Entity.objects.create(agent=agent, key="person:rafael", type="person", display_name="Rafael")


def test_a_write_after_a_cached_search_is_found_by_the_next_one(agent, rafael):
    """The second search runs after new documents (in the same transaction, as a write pipeline
    step would): it returns them, with every score recomputed for the grown corpus."""
    postings.cache.clear()
    facts_with_postings(agent, rafael, [f"Rafael plays the oboe in the evening, rehearsal {i}" for i in range(5)])
    first = search(agent, "oboe evening")
    assert len(first) == 5
    assert postings.cache.held > 0

    added = facts_with_postings(agent, rafael, ["Rafael sold his old oboe", "Rafael bought oboe reeds"])
    second = search(agent, "oboe evening")
    assert {f.id for f in added} <= {h.id for h in second}
    best = expected(agent, "oboe evening")
    assert [h.id for h in second] == [doc for doc, _ in best]
    assert [h.score for h in second] == pytest.approx([score for _, score in best], rel=1e-9)


def test_a_removed_document_is_not_served_from_the_cache(agent, rafael):
    postings.cache.clear()
    facts = facts_with_postings(agent, rafael, ["Rafael keeps a parrot named Kiwi", "Rafael feeds the parrot at dawn"])
    assert len(search(agent, "parrot")) == 2
    keyword_stats_apply(agent_id=agent.id, kind="fact", ids=[facts[0].id], sign=-1)
    Fact.objects.filter(id=facts[0].id).delete()
    assert [h.id for h in search(agent, "parrot")] == [facts[1].id]


def test_a_write_invalidates_only_the_terms_it_changed(agent, rafael):
    """A term the write didn't touch keeps its version, so its cached list is reused; the
    touched term gets a new version and is read again."""
    postings.cache.clear()
    facts_with_postings(agent, rafael, [f"Rafael plays the oboe in the evening, rehearsal {i}" for i in range(5)])
    search(agent, "oboe evening")
    versions = dict(KeywordTerm.objects.filter(agent=agent, kind="fact", term__in=["obo", "even"])
                    .values_list("term", "version"))
    cached_evening = postings.cache.get((agent.id, "fact", "even"), versions["even"])
    assert cached_evening is not None

    facts_with_postings(agent, rafael, ["Rafael bought oboe reeds"])
    now = dict(KeywordTerm.objects.filter(agent=agent, kind="fact", term__in=["obo", "even"])
               .values_list("term", "version"))
    assert now["even"] == versions["even"] and now["obo"] != versions["obo"]
    assert postings.cache.get((agent.id, "fact", "obo"), now["obo"]) is None  # stale: read again
    search(agent, "oboe evening")
    assert postings.cache.get((agent.id, "fact", "even"), now["even"]) is cached_evening
    assert postings.cache.get((agent.id, "fact", "obo"), now["obo"]).size == 6


def _plist(version, size):
    ids = np.arange(size, dtype=np.int64)
    return postings.PostingList(version, ids, np.ones(size, np.int32), np.full(size, 5, np.int32))


def test_the_cache_stays_within_its_bound_least_recently_used_out():
    cache = postings.PostingsCache(max_postings=10)
    cache.put((1, "fact", "a"), _plist(1, 4))
    cache.put((1, "fact", "b"), _plist(1, 4))
    assert cache.get((1, "fact", "a"), 1) is not None  # "a" is now the most recently used
    cache.put((1, "fact", "c"), _plist(1, 4))
    assert cache.held <= 10
    assert cache.get((1, "fact", "b"), 1) is None
    assert cache.get((1, "fact", "a"), 1) is not None and cache.get((1, "fact", "c"), 1) is not None
    cache.put((1, "fact", "huge"), _plist(1, 11))  # larger than the whole cache: not kept
    assert cache.get((1, "fact", "huge"), 1) is None and cache.held == 8
    assert cache.get((1, "fact", "a"), 2) is None  # another version is a miss


def test_best_first_orders_equal_scores_by_id_across_the_cut():
    ids = np.array([9, 5, 3, 7, 1])
    keys = np.array([2.0, 3.0, 2.0, 2.0, 1.0])
    order = postings.best_first(ids, keys, 3)
    assert ids[order].tolist() == [5, 3, 7]
    assert ids[postings.best_first(ids, keys, 10)].tolist() == [5, 3, 7, 9, 1]


def test_scores_add_up_each_documents_shares_over_lists_read_out_of_order():
    """Lists arrive in any order from the database and are kept sorted by document id; merged,
    every document of any list is scored once, with its shares added in the lists' order."""
    rng = np.random.default_rng(7)
    weighted = []
    for size in (50, 400, 3):
        ids = rng.choice(1000, size, replace=False).astype(np.int64)
        plist = postings._by_id(1, ids, rng.integers(1, 4, size).astype(np.int32),
                                rng.integers(3, 30, size).astype(np.int32))
        assert plist.doc_ids.tolist() == sorted(ids.tolist())
        weighted.append((float(rng.uniform(0.5, 5)), plist))
    docs, scores = postings.bm25_scores(weighted, avgdl=12.0, k1=1.2, b=0.75)
    expected: dict[int, float] = {}
    for idf, plist in weighted:
        for doc, tf, dl in zip(plist.doc_ids.tolist(), plist.tf.tolist(), plist.doc_length.tolist(), strict=True):
            share = idf * tf * (1.2 + 1) / (tf + 1.2 * (1 - 0.75 + 0.75 * dl / 12.0))
            expected[doc] = expected.get(doc, 0.0) + share
    assert docs.tolist() == sorted(expected)
    assert scores.tolist() == [expected[doc] for doc in docs.tolist()]
