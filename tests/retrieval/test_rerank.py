"""The reranker's model call, with a stand-in client (no database)."""

from memories.providers.llm import LLMReply, LLMTimeout, TokenUsage
from retrieval.rerank import RERANK_PROMPT, RERANK_SCHEMA, relevance


class Client:
    enabled = True

    def __init__(self, data=None, error=None):
        self.data, self.error, self.calls = data, error, []

    def complete_json(self, *, system, user, schema, schema_name, timeout=None):
        self.calls.append({"system": system, "user": user, "schema": schema, "name": schema_name,
                           "timeout": timeout})
        if self.error:
            raise self.error
        return LLMReply(self.data, TokenUsage(120, 30), "json_schema", "")


def test_scores_by_position_clamped_and_in_range_only():
    client = Client({"scores": [{"index": 0, "score": 0.9}, {"index": 1, "score": 1.7}, {"index": 2, "score": -1},
                                {"index": 7, "score": 0.5}, {"index": "1", "score": 0.1}]})
    out = relevance(client, "Where does Ana live?", ["Ana lives in Lisbon.", "Rafael: hi", "Ana likes jazz."],
                    timeout=5.0)
    assert out.scores == {0: 0.9, 1: 1.0, 2: 0.0} and out.error is None
    assert out.usage == TokenUsage(120, 30)
    call = client.calls[0]
    assert call["system"] == RERANK_PROMPT and call["schema"] is RERANK_SCHEMA and call["timeout"] == 5.0
    assert call["name"] == "rerank"
    assert call["user"] == ("Query: Where does Ana live?\n\nMemories:\n[0] Ana lives in Lisbon.\n[1] Rafael: hi\n"
                            "[2] Ana likes jazz.")


def test_a_failed_call_gives_no_scores_and_keeps_the_usage():
    out = relevance(Client(error=LLMTimeout("slow", usage=TokenUsage(50, 0))), "q", ["a"], timeout=1.0)
    assert out.scores == {} and out.error == "slow" and out.usage == TokenUsage(50, 0)
