"""A write starts parsing its message on the parser's own thread while it embeds and logs it; the
extraction then uses that parse, waiting for it if it is still under way, and never parses a
sentence twice."""

import uuid

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
