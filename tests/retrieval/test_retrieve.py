"""The read pipeline on the real database, fed by the real write pipeline (offline extractor)."""

import json
from datetime import UTC, datetime, timedelta

import numpy as np
import pytest
from django.db import connection
from django.utils import timezone

from graphs.entity_graph import agent_graph
from memories.models import Entity, Fact, PipelineRun, PipelineStep
from memories.services.facts import facts_access_fold
from memories.services.keyword import keyword_stats_apply
from memories.services.write import memory_write
from retrieval import signals
from retrieval.config import retrieval_config
from retrieval.keys import CandidateKey
from retrieval.pipeline import Candidate, best_first
from retrieval.services import memory_retrieve
from tests.support.bm25 import agent_documents, facts_with_postings, reference_bm25, reference_order

BEFORE = datetime(2024, 1, 10, tzinfo=UTC)
MOVE = datetime(2024, 3, 1, tzinfo=UTC)


def say(agent, text, at, speaker="Rafael", **kw):
    return memory_write(agent=agent, message=text, speaker_name=speaker, occurred_at=at, **kw)


@pytest.fixture
def ricardo(agent):
    say(agent, "Ricardo Gomes lives in São Paulo.", BEFORE, external_id="m1")
    say(agent, "Ricardo Gomes works at Vertix as a product manager.", BEFORE + timedelta(hours=1), external_id="m2")
    say(agent, "My wife Ana loves jazz.", BEFORE + timedelta(days=2), external_id="m3")
    say(agent, "Ricardo Gomes moved to Austin, Texas.", MOVE, external_id="m4")
    return agent


def texts(result):
    return [f.text for f in result.facts]


def test_as_of_shows_the_world_as_known_then(agent):
    """Live writes (occurred_at = now): as of a moment between them the agent knew São Paulo;
    after the move, Austin — on both time axes."""
    say(agent, "Ricardo Gomes lives in São Paulo.", None)
    between = timezone.now()
    say(agent, "Ricardo Gomes moved to Austin, Texas.", None)
    query = "Where does Ricardo Gomes live?"

    past = memory_retrieve(agent=agent, query=query, as_of=between)
    assert "Ricardo Gomes lives in São Paulo" in texts(past)
    assert "Ricardo Gomes moved to Austin, Texas" not in texts(past)

    for moment in (None, timezone.now()):
        now = memory_retrieve(agent=agent, query=query, as_of=moment)
        assert "Ricardo Gomes moved to Austin, Texas" in texts(now)
        assert "Ricardo Gomes lives in São Paulo" not in texts(now)

    before_anything = memory_retrieve(agent=agent, query=query, as_of=between - timedelta(days=1))
    assert texts(before_anything) == [] and before_anything.events == []


def test_facts_carry_score_breakdown_and_resolvable_citations(ricardo):
    result = memory_retrieve(agent=ricardo, query="What does Ricardo do at Vertix?")
    top = result.facts[0]
    assert "Vertix" in top.text
    for key in ("semantic", "keyword", "recency", "importance", "confidence", "final"):
        assert key in top.scores
    assert top.citations[0].external_id == "m2"
    assert "[event" in result.context and "Known facts:" in result.context
    assert result.context_tokens <= 2000


def test_trivial_queries_are_skipped(ricardo):
    result = memory_retrieve(agent=ricardo, query="thanks!")
    assert result.strategy == "skip" and result.facts == [] and result.context == ""


def test_other_agents_memories_never_leak(ricardo, other_agent):
    say(other_agent, "Ricardo Gomes lives in Lisbon.", BEFORE, external_id="x1")
    result = memory_retrieve(agent=ricardo, query="Where does Ricardo Gomes live? Lisbon?", limit=50)
    assert all("Lisbon" not in t for t in texts(result))
    assert all("Lisbon" not in e.text for e in result.events)


def _row_versions(agent) -> dict[int, str]:
    with connection.cursor() as cursor:
        cursor.execute("SELECT id, xmin::text FROM memories_fact WHERE agent_id = %s", [agent.id])
        return dict(cursor.fetchall())


def test_retrieval_records_access_and_a_trace(ricardo):
    """The access is counted without rewriting the fact rows (a new version of a fact row goes
    into every vector and text index); the counts reach the facts when they are folded in."""
    before = _row_versions(ricardo)
    result = memory_retrieve(agent=ricardo, query="Who is Ana?")
    assert result.trace_id is not None
    run = PipelineRun.objects.get(pk=result.trace_id)
    assert run.kind == "retrieve"
    names = list(PipelineStep.objects.filter(run=run).values_list("name", flat=True))
    assert names == ["plan", "embed_query", "signals", "fusion", "enhancement", "rerank", "select", "format"]
    assert _row_versions(ricardo) == before
    memory_retrieve(agent=ricardo, query="Who is Ana?")
    assert facts_access_fold(agent=ricardo) == len(result.facts)
    returned = Fact.objects.get(pk=result.facts[0].id)
    assert returned.access_count == 2 and returned.last_accessed_at is not None
    assert facts_access_fold(agent=ricardo) == 0  # counted once
    assert Fact.objects.get(pk=returned.pk).access_count == 2


def test_a_stored_trace_holds_every_step_as_the_pipeline_recorded_it(ricardo):
    result = memory_retrieve(agent=ricardo, query="Où habite Ricardo Gomes — São Paulo?")
    write = say(ricardo, "Ricardo Gomes likes açaí.", MOVE + timedelta(days=1))
    for run_id, trace in ((result.trace_id, result.trace), (write.run_id, write.trace)):
        stored = [{"name": s.name, "order": s.order, "status": s.status, "duration_ms": s.duration_ms,
                   "candidates_in": s.candidates_in, "candidates_out": s.candidates_out, "tokens_in": s.tokens_in,
                   "tokens_out": s.tokens_out, "data": s.data}
                  for s in PipelineStep.objects.filter(run_id=run_id).order_by("id")]
        assert stored == json.loads(json.dumps(trace))  # as JSON holds it: keys are strings
        assert any(step["data"] for step in trace)


def test_ranking_keys_round_trip_to_the_returned_items(ricardo):
    """Inside the pipeline a candidate's key is a CandidateKey; it leaves as "f:<id>" / "e:<id>" in
    the ranking and the stored trace, and parses back to the item it names."""
    result = memory_retrieve(agent=ricardo, query="Where does Ricardo Gomes live?", limit=10)
    keys = [CandidateKey.parse(key) for key in result.ranking]
    assert keys and [str(key) for key in keys] == result.ranking
    assert all(isinstance(key, str) and key[:2] in ("f:", "e:") for key in result.ranking)
    assert {k.id for k in keys if k.is_fact} == {f.id for f in result.facts}
    assert {k.id for k in keys if not k.is_fact} == {e.id for e in result.events}
    ranked = result.ranked_items()
    assert [key for key, _ in ranked] == keys
    assert [item.rank for _, item in ranked] == list(range(1, len(keys) + 1))
    assert all(item.id == key.id for key, item in ranked)
    stored = PipelineRun.objects.get(pk=result.trace_id).result
    assert stored["ranking"] == result.ranking and set(stored["scores"]) == set(result.ranking)


def test_equal_scores_keep_the_order_of_the_written_keys():
    """Ties break as they always did, by the key as written: "e:10" before "e:9" before "f:1"."""
    tied = [Candidate(key, final=0.5) for key in (CandidateKey.fact(1), CandidateKey.event(9), CandidateKey.event(10))]
    ordered = best_first([*tied, Candidate(CandidateKey.fact(2), final=0.7)])
    assert [str(c.key) for c in ordered] == ["f:2", "e:10", "e:9", "f:1"]


def test_context_respects_a_small_token_budget(ricardo):
    # room for a line or two (citations grow with the ids a long test run has used), never more
    result = memory_retrieve(agent=ricardo, query="Ricardo", config_overrides={"context_max_tokens": 45})
    assert 0 < result.context_tokens <= 45
    assert result.context.count("\n- ") < 4


def test_unknown_override_is_a_clear_error(ricardo):
    from memories.errors import ConfigError

    with pytest.raises(ConfigError, match="unknown setting"):
        memory_retrieve(agent=ricardo, query="x y z", config_overrides={"topk": 3})
    with pytest.raises(ConfigError, match="must be of type float"):
        memory_retrieve(agent=ricardo, query="x y z", config_overrides={"min_score": "high"})


def test_overriding_one_signal_weight_keeps_the_others(ricardo):
    """`{"signal_weights": {"keyword": 0}}` turns BM25 off and nothing else: the other signals
    still run and still find the fact."""
    result = memory_retrieve(agent=ricardo, query="Where does Ricardo Gomes live?",
                             config_overrides={"signal_weights": {"keyword": 0.0, "event_keyword": 0.0}})
    signals_step = next(s for s in result.trace if s["name"] == "signals")
    assert "keyword" not in signals_step["data"] and "semantic" in signals_step["data"]
    assert any("Austin" in text for text in texts(result))


def test_temporal_expression_finds_what_happened_then(agent):
    day = datetime(2024, 6, 12, 10, tzinfo=UTC)
    say(agent, "I went hiking in the mountains.", day - timedelta(days=20))
    say(agent, "I went to a pottery class.", day - timedelta(days=1))
    result = memory_retrieve(agent=agent, query="What did Rafael do yesterday?", now=day)
    assert result.facts[0].text.startswith("Rafael went to a pottery class")
    plan = result.trace[0]["data"]
    assert plan["window"]["expression"] == "yesterday"


def test_graph_is_cached_and_rebuilt_after_a_write(ricardo, django_capture_on_commit_callbacks):
    first = agent_graph(ricardo)
    assert agent_graph(ricardo) is first
    with django_capture_on_commit_callbacks(execute=True):
        say(ricardo, "Ricardo Gomes is friends with Thiago Nogueira.", MOVE + timedelta(days=1))
    second = agent_graph(ricardo)
    assert second is not first
    thiago = Entity.objects.get(agent=ricardo, key="person:thiago_nogueira")
    assert thiago.id in second


def _bulk_facts(agent, entity, n, rng, prefix):
    now = timezone.now()
    rows = [Fact(agent=agent, entity=entity, text=f"{prefix} note number {i}", valid_from=now, recorded_at=now,
                 learned_at=now, embedding=(v := rng.normal(size=384)) / np.linalg.norm(v)) for i in range(n)]
    return Fact.objects.bulk_create(rows)


def test_semantic_search_never_returns_fewer_rows_than_exist(agent, other_agent):
    """pgvector 0.6.2 filters HNSW hits after the index scan: an agent owning 1% of the table
    would get almost nothing back. The exact re-scan keeps the answer complete."""
    rng = np.random.default_rng(7)
    mine = Entity.objects.create(agent=agent, key="concept:mine", type="concept", display_name="Mine")
    theirs = Entity.objects.create(agent=other_agent, key="concept:theirs", type="concept", display_name="Theirs")
    _bulk_facts(other_agent, theirs, 3000, rng, "other")
    own = _bulk_facts(agent, mine, 30, rng, "mine")
    keyword_stats_apply(agent_id=agent.id, kind="fact", ids=[f.id for f in own])
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE memories_fact")
    query = rng.normal(size=384)
    query /= np.linalg.norm(query)
    for max_rows in (0, 100000):  # force the HNSW path, then the exact path
        config = retrieval_config({"exact_scan_max_rows": max_rows, "min_similarity": -1.0})
        hits, info = signals.semantic(agent_id=agent.id, kind="fact", vector=query, limit=60, config=config)
        assert len(hits) == 30, info
        assert {h.id for h in hits} == {f.id for f in own}
    assert info["strategy"] == "exact"


def test_date_window_search_returns_only_documents_in_the_window(agent):
    """A date window the index cannot see: scanned exactly when small, searched through HNSW
    with the window's share when large — either way nothing outside the window comes back, and
    the exact scan finds every document inside it."""
    from memories.temporal import TimeWindow

    rng = np.random.default_rng(11)
    entity = Entity.objects.create(agent=agent, key="concept:notes", type="concept", display_name="Notes")
    inside, outside = _bulk_facts(agent, entity, 40, rng, "inside"), _bulk_facts(agent, entity, 40, rng, "outside")
    Fact.objects.filter(id__in=[f.id for f in inside]).update(valid_from=BEFORE)
    Fact.objects.filter(id__in=[f.id for f in outside]).update(valid_from=MOVE)
    keyword_stats_apply(agent_id=agent.id, kind="fact", ids=[f.id for f in inside + outside])
    window = TimeWindow(BEFORE - timedelta(days=1), BEFORE + timedelta(days=1), "test")
    query = rng.normal(size=384)
    query /= np.linalg.norm(query)
    found = {}
    for max_rows in (0, 100000):  # force the HNSW path, then the exact path
        config = retrieval_config({"exact_scan_max_rows": max_rows, "min_similarity": -1.0})
        hits, info = signals.semantic(agent_id=agent.id, kind="fact", vector=query, limit=60, config=config,
                                      window=window)
        found[info["strategy"]] = {h.id for h in hits}
    assert set(found) == {"hnsw", "exact"} or set(found) == {"hnsw_widened", "exact"}
    assert found["exact"] == {f.id for f in inside}
    for ids in found.values():
        assert ids and ids <= {f.id for f in inside}


def test_keyword_top_k_with_common_terms_equals_scoring_every_document(agent):
    """With common terms ("market", a name in every message) the top k read from the postings
    is exactly the top k of scoring every document with a reference BM25, in order."""
    entity = Entity.objects.create(agent=agent, key="person:rafael", type="person", display_name="Rafael")
    texts_ = [f"Rafael went to the market on day {i}" + (" and the market was busy" if i % 3 == 0 else "")
              for i in range(400)]
    texts_ += [f"Rafael played jazz {'jazz ' * (i % 4)}at the market with band {i}" for i in range(12)]
    texts_ += [f"Rafael heard jazz on the radio, episode {i}" for i in range(6)]
    facts_with_postings(agent, entity, texts_)
    query = "Rafael jazz market"
    expected = reference_bm25(agent_documents(agent.id), signals.query_terms(query))
    best = reference_order(expected)
    for limit in (3, 10, 25):
        hits, info = signals.keyword(agent_id=agent.id, kind="fact", query=query, limit=limit,
                                     config=retrieval_config({"min_confidence": 0.0}))
        assert [h.id for h in hits] == [doc_id for doc_id, _ in best[:limit]], info
        assert [h.score for h in hits] == pytest.approx([score for _, score in best[:limit]], rel=1e-9)


def test_keyword_top_k_skips_superseded_best_matches(agent):
    """When the best-scoring documents are all closed versions, the search still returns `limit`
    visible ones — the next best, in reference order — not a short list."""
    entity = Entity.objects.create(agent=agent, key="person:rafael", type="person", display_name="Rafael")
    texts_ = [f"Rafael plays the oboe {'oboe ' * 3} in hall {i}" for i in range(40)]  # best, then closed
    texts_ += [f"Rafael plays the oboe at home, evening {i}" for i in range(20)]
    facts = facts_with_postings(agent, entity, texts_, closed=set(range(40)))
    open_ids = {f.id for f in facts[40:]}
    expected = reference_bm25(agent_documents(agent.id), signals.query_terms("oboe"))
    best = [d for d, _ in reference_order(expected) if d in open_ids]
    hits, _ = signals.keyword(agent_id=agent.id, kind="fact", query="oboe", limit=10,
                              config=retrieval_config({"min_confidence": 0.0}))
    assert [h.id for h in hits] == best[:10]


def test_keyword_scores_equal_a_reference_okapi_bm25(ricardo):
    say(ricardo, "Ricardo Gomes loves jazz and plays jazz guitar on weekends.", MOVE)
    docs = agent_documents(ricardo.id)
    query = "Ricardo jazz guitar"
    config = retrieval_config({"min_confidence": 0.0})
    hits, _ = signals.keyword(agent_id=ricardo.id, kind="fact", query=query, limit=100, config=config)
    terms = signals.query_terms(query)
    expected = reference_bm25(docs, terms)
    active = set(Fact.objects.filter(agent=ricardo, valid_to__isnull=True).values_list("id", flat=True))
    assert {h.id for h in hits} == {i for i in expected if i in active}
    for hit in hits:
        assert hit.score == pytest.approx(expected[hit.id], rel=1e-9)
    assert hits[0].score >= hits[-1].score


def test_forgetting_an_entity_leaves_nothing_for_keyword_search(agent):
    """The postings go with the facts and the redacted names: no stale index row can bring a
    forgotten name back, and the statistics still add up for what remains."""
    from memories.models import Event, KeywordCorpus, KeywordPosting
    from memories.services.forget import entity_forget

    say(agent, "Zebulon Quartermaine plays the theremin every Sunday.", BEFORE, speaker="Rafael")
    say(agent, "Rafael bakes sourdough bread on Saturdays.", BEFORE + timedelta(hours=1), speaker="Rafael")
    zebulon = Entity.objects.get(agent=agent, display_name="Zebulon Quartermaine")
    for kind in ("fact", "event"):
        hits, _ = signals.keyword(agent_id=agent.id, kind=kind, query="theremin", limit=10,
                                  config=retrieval_config({"min_confidence": 0.0}))
        assert hits, kind
    entity_forget(agent=agent, entity_id=zebulon.id, actor="test")
    config = retrieval_config({"min_confidence": 0.0})
    assert signals.keyword(agent_id=agent.id, kind="fact", query="theremin Zebulon", limit=10, config=config)[0] == []
    assert not KeywordPosting.objects.filter(agent=agent, kind="fact", term__in=["theremin", "zebulon"]).exists()
    # Rafael's message keeps all but the name ("[redacted] plays the theremin"), re-indexed
    assert signals.keyword(agent_id=agent.id, kind="event", query="Zebulon Quartermaine", limit=10,
                           config=config)[0] == []
    assert not KeywordPosting.objects.filter(agent=agent, term__in=["zebulon", "quartermain"]).exists()
    assert signals.keyword(agent_id=agent.id, kind="event", query="theremin", limit=10, config=config)[0]
    # the remaining documents' postings are exactly the corpus the statistics describe
    remaining = Fact.objects.filter(agent=agent).count()
    assert KeywordCorpus.objects.get(agent=agent, kind="fact").doc_count == remaining
    assert KeywordPosting.objects.filter(agent=agent, kind="fact").values("doc_id").distinct().count() == remaining
    live_events = Event.objects.filter(agent=agent, redacted_at__isnull=True).count()
    assert KeywordPosting.objects.filter(agent=agent, kind="event").values("doc_id").distinct().count() == live_events
    bread, _ = signals.keyword(agent_id=agent.id, kind="fact", query="sourdough", limit=10, config=config)
    assert bread


@pytest.fixture
def ana_and_bruno(agent):
    """Two friends chatting: Ana tells of her pastimes, Bruno answers — often calling her by name."""
    lines = [("Ana", "I just got back from a long hike in the mountains, it was amazing."),
             ("Bruno", "Ana, that sounds great! Ana, you always find the best trails."),
             ("Ana", "Thanks! Hiking keeps me sane. I also started pottery classes."),
             ("Bruno", "I mostly play chess these days. Ana, have you tried chess?"),
             ("Ana", "I think my sister told me I should rest, but I love being outdoors."),
             ("Bruno", "Ana, you should rest! Ana needs a break, Ana works too hard.")]
    for i, (speaker, text) in enumerate(lines):
        say(agent, text, MOVE + timedelta(minutes=i), speaker=speaker, external_id=f"m{i}")
    return agent


def cited(result):
    facts, events = {f"f:{f.id}": f for f in result.facts}, {f"e:{e.id}": e for e in result.events}
    return [facts[k].citations[0].external_id if k in facts else events[k].external_id for k in result.ranking]


def test_a_question_about_one_speaker_finds_what_that_speaker_said_first(ana_and_bruno):
    """Bruno's message says "Ana" three times, but what Ana does for fun is what Ana said."""
    query = "What are Ana's hobbies?"
    result = memory_retrieve(agent=ana_and_bruno, query=query, limit=6)
    assert cited(result)[0] == "m2" and result.events[0].speaker == "Ana"
    assert result.events[0].scores.get("speaker") is None
    assert [e.scores.get("speaker") for e in result.events if e.speaker == "Bruno"] == [0.8] * 3
    # without the focus on the named speaker, Bruno's "Ana, you should rest! Ana needs …" came first
    unfocused = memory_retrieve(agent=ana_and_bruno, query=query, limit=6,
                                config_overrides={"other_speaker_factor": 1.0})
    assert cited(unfocused)[0] == "m5"


def test_a_fact_repeating_its_subjects_name_gains_nothing_from_it(ana_and_bruno):
    """The fact drawn from "I think my sister told me I should rest" names Ana four times; the
    question names her once: in BM25 over facts her name counts once per fact."""
    query = "What are Ana's hobbies?"
    config = retrieval_config({"min_confidence": 0.0})
    wordy = Fact.objects.get(agent=ana_and_bruno, text__startswith="Ana thinks Ana's sister")
    capped, _ = signals.keyword(agent_id=ana_and_bruno.id, kind="fact", query=query, limit=10, config=config,
                                names="ana", name_tf_cap=1)
    raw, _ = signals.keyword(agent_id=ana_and_bruno.id, kind="fact", query=query, limit=10, config=config)
    assert raw[0].id == wordy.id and capped[-1].id == wordy.id  # now the longest of equal matches
    assert f"f:{wordy.id}" not in memory_retrieve(agent=ana_and_bruno, query=query, limit=6).ranking[:3]


@pytest.mark.django_db(transaction=True)
def test_signals_run_inline_while_another_retrieval_is_under_way_and_answer_the_same(agent, monkeypatch):
    """Alone, a retrieval spreads its signals over the pool's threads; while another one is under
    way in the process (a loaded web process) it runs them itself, with the same answer."""
    from retrieval import concurrency

    say(agent, "Ricardo Gomes lives in São Paulo.", BEFORE)
    say(agent, "Ricardo Gomes works at Vertix as a product manager.", BEFORE + timedelta(hours=1))
    submitted = []
    real = concurrency._executor

    class Spy:
        def submit(self, fn, *args):
            submitted.append(getattr(fn, "__qualname__", ""))
            return real().submit(fn, *args)

    monkeypatch.setattr(concurrency, "_executor", Spy)
    query = "Where does Ricardo Gomes work?"
    try:
        alone = memory_retrieve(agent=agent, query=query)
        on_pool = [name for name in submitted if name.startswith("_timed")]
        submitted.clear()
        with concurrency.retrieval_running():  # another retrieval under way
            busy = memory_retrieve(agent=agent, query=query)
    finally:
        concurrency.shutdown()  # the pool threads' connections, before the tables are flushed
    assert on_pool and not [name for name in submitted if name.startswith("_timed")]
    assert busy.facts and busy.ranking == alone.ranking and busy.context == alone.context


def test_a_result_as_the_api_returns_it_is_every_field_of_the_result(ricardo):
    import dataclasses

    result = memory_retrieve(agent=ricardo, query="Where does Ricardo Gomes live and work?", limit=10)
    assert result.facts and result.events and result.trace and result.facts[0].citations
    returned = result.as_dict()
    assert returned == dataclasses.asdict(result)
    json.dumps(returned)  # JSON all the way down
    returned["facts"][0]["scores"]["semantic"] = -1.0  # the caller's copy: the result keeps its own
    returned["facts"][0]["citations"].clear()
    assert result.facts[0].scores.get("semantic") != -1.0 and result.facts[0].citations


def test_every_field_of_a_result_reaches_the_response_as_asdict_gives_it():
    import dataclasses

    from retrieval.results import Citation, RetrievedEvent, RetrievedFact, RetrieveResult

    values = {"str": "x", "int": 3, "float": 0.5, "dict": {"semantic": 0.25}, "list": ["f:1"]}
    filled = {}
    for f in dataclasses.fields(RetrieveResult):  # a field added later is filled too
        kind = str(f.type)
        filled[f.name] = values["list"] if kind.startswith("list[str]") else values["dict"] if kind.startswith(
            "dict") else values["int"] if kind.startswith("int") else values["float"] if kind.startswith(
            "float") else values["str"]
    fact = RetrievedFact(id=1, text="Mirela lives in Sintra", entity="mirela", entity_name="Mirela", score=0.9, rank=1,
                         scores={"semantic": 0.9}, citations=[Citation(7, "m7", "2024-01-01T00:00:00+00:00", "Mirela")],
                         valid_from="2024-01-01T00:00:00+00:00", valid_to=None,
                         recorded_at="2024-01-01T00:00:00+00:00", invalidated_at=None, source_context="")
    event = RetrievedEvent(id=7, text="I live in Sintra", speaker="Mirela", occurred_at="2024-01-01T00:00:00+00:00",
                           external_id="m7", score=0.5, rank=2, scores={"keyword": 0.5})
    filled.update(facts=[fact], events=[event], trace=[{"name": "plan", "data": {"intent": "fact"}}])
    result = RetrieveResult(**filled)
    assert result.as_dict() == dataclasses.asdict(result)
