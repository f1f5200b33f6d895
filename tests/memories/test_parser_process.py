"""A large import parses in a process of its own: what the extractor reads of those parses is what
it reads of parses made in the writing process, and a parser process that dies loses no parse."""

from datetime import UTC, datetime, timedelta

import pytest

from memories.extraction.offline import extract_offline
from memories.extraction.offline import parse as parsing
from memories.extraction.offline.parse import ParserProcess
from memories.extraction.offline.text import normalize_message, split_sentences

MESSAGE = ("Marta Sobczak moved from Gdańsk to Leeds in March and started at the city library as a cataloguer. "
           "Her brother Radek doesn't work at the brewery anymore. We adopted a grey cat called Kluska last spring! "
           "Dr. Anand Hartigan, my old tutor, retired from the University of York.")
SENTENCES = split_sentences(normalize_message(MESSAGE))
START = datetime(2025, 5, 2, 18, tzinfo=UTC)
LATER = ["Radek's wife Ines opened a bakery near the station.", "i'm startin at the council on monday lol"]


def annotations(doc):
    return [(t.text, t.whitespace_, t.tag_, t.pos_, t.dep_, t.head.i, t.lemma_, t.norm_, str(t.morph), t.ent_type_,
             t.ent_iob_, t.is_sent_start) for t in doc]


def _forget_parses(texts):
    with parsing._lock:
        for text in texts:
            parsing._cache.pop(text, None)


@pytest.fixture
def parser():
    parser = ParserProcess()
    parser._ready.result(timeout=300)  # the model loaded in the parser's process
    yield parser
    parser.close()


def test_the_parser_process_parses_as_this_process_does(parser, monkeypatch):
    assert len(SENTENCES) == 4
    here = {text: annotations(parsing.nlp()(text)) for text in SENTENCES}
    extracted_here = extract_offline(MESSAGE, speaker="Marta Sobczak")
    _forget_parses(SENTENCES)

    def not_here(texts, batch_size=64):
        raise AssertionError("parsed in the writing process")

    with monkeypatch.context() as patched:
        patched.setattr(parsing, "_parse_batch", not_here)
        parser.parse_many(SENTENCES)
        with parsing._lock:
            docs = {text: parsing._cache.get(text) for text in SENTENCES}
        # read back from the parser's process: a parse made here would carry its tensor
        assert all(doc is not None and doc.tensor.size == 0 for doc in docs.values())
        assert {text: annotations(parsing.parse(text)) for text in SENTENCES} == here
    assert extract_offline(MESSAGE, speaker="Marta Sobczak") == extracted_here


def test_a_parser_process_that_died_loses_no_parse(parser):
    _forget_parses(LATER)
    for process in list(parser._pool._processes.values()):
        process.kill()
        process.join(10)
    parser.parse_many(LATER)  # parsed here instead
    with parsing._lock:
        assert all(text in parsing._cache for text in LATER)
    assert annotations(parsing.parse(LATER[0])) == annotations(parsing.nlp()(LATER[0]))


@pytest.mark.django_db
def test_several_conversations_imported_in_one_process_share_one_parser_process(agent, other_agent, monkeypatch):
    from memories.importers.locomo import Turn
    from memories.services import imports

    started = []

    class Counted(ParserProcess):
        def __init__(self):
            started.append(self)
            super().__init__()

    monkeypatch.setattr(imports, "ParserProcess", Counted)
    monkeypatch.setattr(imports, "PARSE_ELSEWHERE_MIN", 4)
    lines = ["Radek Sobczak moved to Leeds.", "He works at the city library now.", "We adopted a grey cat.",
             "Ines opened a bakery near the station."]
    jobs = [imports.ConversationJob(a.slug, [Turn(dia_id=f"{a.slug}-{i}", speaker="Marta", text=line,
                                                  occurred_at=START + timedelta(minutes=i), session=1)
                                             for i, line in enumerate(lines)])
            for a in (agent, other_agent)]
    results = imports.conversations_import(jobs, workers=1)
    assert len(started) == 1
    assert [results[a.slug].imported for a in (agent, other_agent)] == [4, 4]


def test_an_import_whose_parser_process_cannot_start_parses_here(monkeypatch):
    from memories.services import imports

    def cannot(*args, **kwargs):
        raise OSError("too many open files")

    monkeypatch.setattr(imports, "ParserProcess", cannot)
    assert imports.parser_process() is None
