"""The API's result serializers and the pipelines' result dataclasses describe one shape: a field
added to a dataclass and forgotten in its serializer (or the reverse) fails here, not in a client."""

import dataclasses

import pytest

from memories.api.serializers import FactChangeSerializer, TokenUsageSerializer, WriteResultSerializer
from memories.pipeline.results import FactChange, WriteResult
from memories.providers.llm import TokenUsage
from retrieval.api.serializers import (
    CitationSerializer,
    RetrievedEventSerializer,
    RetrievedFactSerializer,
    RetrieveResultSerializer,
)
from retrieval.results import Citation, RetrievedEvent, RetrievedFact, RetrieveResult

PAIRS = [
    (WriteResultSerializer, WriteResult),
    (FactChangeSerializer, FactChange),
    (RetrieveResultSerializer, RetrieveResult),
    (RetrievedFactSerializer, RetrievedFact),
    (RetrievedEventSerializer, RetrievedEvent),
    (CitationSerializer, Citation),
]


@pytest.mark.parametrize(("serializer", "shape"), PAIRS, ids=[s.__name__ for s, _ in PAIRS])
def test_a_result_serializer_has_exactly_its_dataclass_fields(serializer, shape):
    assert set(serializer().fields) == {f.name for f in dataclasses.fields(shape)}


def test_token_usage_serializer_matches_what_results_carry():
    assert set(TokenUsageSerializer().fields) == set(TokenUsage().as_dict())
    assert set(TokenUsageSerializer().fields) == set(WriteResult().tokens_used)


def test_a_write_result_round_trips_through_its_serializer():
    result = WriteResult(event_id=3, run_id=4, extraction_path="offline",
                         facts_added=[FactChange(fact_id=1, text="Ana lives in Porto.", entity="person:ana")])
    data = WriteResultSerializer(result.as_dict()).data
    assert WriteResult.from_dict(dict(data)).as_dict() == result.as_dict()
