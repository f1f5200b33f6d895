"""LRUCache: the bounded, thread-safe mapping behind the process-wide caches."""

from __future__ import annotations

import threading

import pytest

from memories.lru import LRUCache


def test_the_least_recently_used_entry_goes_first():
    cache = LRUCache(2)
    cache.put("a", 1)
    cache.put("b", 2)
    assert cache.get("a") == 1  # "a" is now the most recently used
    cache.put("c", 3)
    assert len(cache) == 2 and "b" not in cache
    assert cache.get("a") == 1 and cache.get("c") == 3
    cache.put("a", 10)  # replacing an entry keeps the bound and makes it the most recent
    cache.put("d", 4)
    assert cache.get("c") is None and cache.get("a") == 10 and cache.get("missing", 0) == 0


def test_the_bound_holds_under_concurrent_writers():
    cache = LRUCache(50)

    def fill(offset):
        for i in range(2000):
            cache.put((offset, i), i)
            cache.get((offset, i - 1))

    threads = [threading.Thread(target=fill, args=(n,)) for n in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(cache) == 50


def test_a_cache_holds_at_least_one_entry():
    with pytest.raises(ValueError):
        LRUCache(0)
