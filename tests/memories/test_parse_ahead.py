"""A write starts parsing its message on the parser's own thread while it embeds and logs it; the
extraction then uses that parse, waiting for it if it is still under way, and never parses a
sentence twice. A single write also computes its facts' and names' vectors on a thread of its own
meanwhile: each is computed once, and what it stores is what it stores without."""

import uuid

import pytest

from memories.extraction.offline import extract_offline, parse, parse_ahead
from memories.extraction.offline.text import normalize_message, split_sentences


class CountingParser:
    """The real pipeline, noting every sentence it is given."""

    def __init__(self, inner):
        self.inner, self.texts = inner, []

    def __call__(self, text):
        self.texts.append(text)
        return self.inner(text)

    def pipe(self, texts, **options):
        texts = list(texts)
        self.texts += texts
        return self.inner.pipe(texts, **options)

    def __getattr__(self, name):
        return getattr(self.inner, name)


def test_a_message_parsed_ahead_is_parsed_once_and_extracted_as_without(monkeypatch):
    tag = uuid.uuid4().hex[:6]  # sentences no earlier test left in the parse cache
    message = f"Priya moved to Leeds in spring {tag}. She teaches chemistry at a school there. Her brother Arun visits."
    sentences = split_sentences(normalize_message(message))
    counting = CountingParser(parse.nlp())
    monkeypatch.setattr(parse, "nlp", lambda: counting)

    parse_ahead(message)
    ahead = extract_offline(message, speaker="Nadia Rahman")
    assert sorted(counting.texts) == sorted(sentences)

    for sentence in sentences:  # the same message parsed in the extraction's own thread
        parse._cache.pop(sentence, None)
    alone = extract_offline(message, speaker="Nadia Rahman")
    assert [f.text for f in ahead.facts] == [f.text for f in alone.facts]
    assert [(r.source, r.rel_type, r.target) for r in ahead.relations] == \
        [(r.source, r.rel_type, r.target) for r in alone.relations]
    assert ahead.facts and ahead.relations


class CountingEmbedder:
    """The bundled model, noting every text it computes and on which thread; `gate` (when set)
    holds its first call until it is opened, so that a second caller comes while it is under way."""

    def __init__(self, inner, gate=None):
        self.inner, self.gate, self.texts = inner, gate, []
        self.dimensions = inner.dimensions
        self.calls, self.threads = 0, {}

    def embed(self, texts):
        import threading

        self.calls += 1
        self.texts += list(texts)
        self.threads.update(dict.fromkeys(texts, threading.current_thread().name))
        if self.gate is not None and self.calls == 1:
            assert self.gate.wait(10), "the gate was never opened"
        return self.inner.embed(texts)


def _until(condition, seconds=10.0):
    import time

    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, "waited too long"
        time.sleep(0.005)


def _asked_while_under_way(caching, texts, gate, worker) -> list:
    """What a second caller gets for `texts` while `worker` computes them behind `gate`: it is
    still waiting 0.2 s later; then the gate opens and both finish."""
    import threading

    got: list = []
    waiter = threading.Thread(target=lambda: got.extend(caching.embed(texts)))
    waiter.start()
    waiter.join(0.2)
    assert waiter.is_alive(), "the second caller did not wait for the text under way"
    gate.set()
    worker.join(10)
    waiter.join(10)
    return got


def test_a_text_under_way_in_another_thread_is_waited_for_not_computed_again(embedder):
    import threading

    from memories.providers.embeddings import CachingEmbedder

    gate = threading.Event()
    counting = CountingEmbedder(embedder.inner, gate)
    caching = CachingEmbedder(counting)
    first: list = []
    worker = threading.Thread(target=lambda: first.extend(caching.embed(["Ines moved to Sintra", "Ines"])))
    worker.start()
    _until(lambda: counting.calls == 1)  # the other thread is computing its two texts
    second = _asked_while_under_way(caching, ["Ines"], gate, worker)
    assert counting.texts == ["Ines moved to Sintra", "Ines"]  # each computed once
    assert len(first) == 2 and len(second) == 1 and (second[0] == first[1]).all()


def test_a_single_write_computes_each_vector_once_and_stores_what_it_would_without(agent, other_agent, embedder,
                                                                                    monkeypatch):
    from memories.models import Fact
    from memories.pipeline.write import ahead
    from memories.providers.embeddings import CachingEmbedder
    from memories.services import write

    def ahead_then_wait(*args, **kwargs):  # the ahead work done before the write goes on, so that
        _until(lambda: ahead._busy.acquire(blocking=False))  # no earlier write's is under way
        ahead._busy.release()
        future = ahead.embed_ahead(*args, **kwargs)
        assert future is not None
        future.result(10)

    monkeypatch.setattr(write, "embed_ahead", ahead_then_wait)
    tag = uuid.uuid4().hex[:6]  # texts no earlier test left in a cache
    message = f"Marta Silva started at Quarry Labs as a chemist ({tag}). Her sister Odile lives in Sintra."
    counting = CountingEmbedder(embedder.inner)
    ahead_result = write.memory_write(agent=agent, message=message, speaker_name="Halvard",
                                      embedder=CachingEmbedder(counting))
    without = write.memory_write(agent=other_agent, message=message, speaker_name="Halvard", embedder=embedder.inner)
    assert ahead_result.success and without.success
    assert len(counting.texts) == len(set(counting.texts)), "a text was computed twice"
    # the facts' vectors were computed on the write-ahead thread, not in the write's own steps
    assert {counting.threads[f.text] for f in Fact.objects.filter(agent=agent)} == {"write-ahead_0"}

    def stored(of):
        return {f.text: f.embedding for f in Fact.objects.filter(agent=of)}

    facts, expected = stored(agent), stored(other_agent)
    assert facts.keys() == expected.keys() and len(facts) >= 2
    for text, vector in facts.items():
        assert max(abs(a - b) for a, b in zip(vector, expected[text], strict=True)) < 1e-6


def test_a_write_whose_writer_is_missing_is_refused_with_nothing_computed_ahead(agent, embedder):
    from memories.errors import DomainError
    from memories.models import Event
    from memories.providers.embeddings import CachingEmbedder
    from memories.services.write import memory_write

    counting = CountingEmbedder(embedder.inner)
    for speaker in ("", None, 7):
        with pytest.raises(DomainError, match="speaker"):
            memory_write(agent=agent, message="Mirela moved to Sintra.", speaker_name=speaker,
                         embedder=CachingEmbedder(counting))
    assert counting.texts == [] and not Event.objects.filter(agent=agent).exists()


def test_a_text_whose_computation_failed_is_computed_by_the_one_waiting_for_it(embedder):
    import threading

    from memories.providers.embeddings import CachingEmbedder

    gate = threading.Event()

    class FailsFirst(CountingEmbedder):
        def embed(self, texts):
            first = self.calls == 0
            vectors = super().embed(texts)
            if first:
                raise RuntimeError("the endpoint went away")
            return vectors

    failing = FailsFirst(embedder.inner, gate)
    caching = CachingEmbedder(failing)
    errors: list = []

    def first_caller():
        with pytest.raises(RuntimeError):
            caching.embed(["Vesna teaches in Gdansk"])
        errors.append("raised")

    worker = threading.Thread(target=first_caller)
    worker.start()
    _until(lambda: failing.calls == 1)
    result = _asked_while_under_way(caching, ["Vesna teaches in Gdansk"], gate, worker)
    assert errors == ["raised"] and len(result) == 1
    assert failing.texts == ["Vesna teaches in Gdansk"] * 2  # computed again by the one that waited
    assert caching.embed(["Vesna teaches in Gdansk"])[0] is result[0]  # and kept


def test_a_text_stuck_in_another_thread_is_computed_by_the_one_waiting_once_it_stops_waiting(embedder, monkeypatch):
    import threading

    from memories.providers import embeddings
    from memories.providers.embeddings import CachingEmbedder

    monkeypatch.setattr(embeddings, "PENDING_WAIT_SECONDS", 0.3)
    gate = threading.Event()
    counting = CountingEmbedder(embedder.inner, gate)
    caching = CachingEmbedder(counting)
    worker = threading.Thread(target=lambda: caching.embed(["Halvard restores boats in Sintra"]))
    worker.start()
    _until(lambda: counting.calls == 1)
    try:
        vector = caching.embed(["Halvard restores boats in Sintra"])[0]  # waits 0.3 s, then computes it
        assert counting.texts == ["Halvard restores boats in Sintra"] * 2 and vector.shape == (384,)
    finally:
        gate.set()
        worker.join(10)
