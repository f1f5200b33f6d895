"""LLM client tests: the real OpenAI client against a real local HTTP server (no mocks, no database)."""

from __future__ import annotations

import json
import socket
import threading
import time

import pytest

from memories.providers.llm import (
    LLMError,
    LLMInvalidReply,
    LLMTimeout,
    LLMUnavailable,
    NoLLM,
    OpenAICompatibleLLM,
    TokenUsage,
    build_llm_client,
    forget_learned_modes,
    get_llm_client,
    reset_llm_client,
)
from tests.support.fake_openai import FORMS, FakeOpenAIServer, Reply

SCHEMA = {
    "type": "object",
    "properties": {
        "facts": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {"text": {"type": "string"}, "confidence": {"type": "number"}},
                "required": ["text", "confidence"],
            },
        }
    },
    "required": ["facts"],
}
GOOD = {"facts": [{"text": "User likes tea", "confidence": 0.9}]}


def call(client, **kwargs):
    return client.complete_json(
        system="Extract facts.", user="I like tea.", schema=SCHEMA, schema_name="facts", **kwargs
    )


@pytest.fixture
def server():
    with FakeOpenAIServer() as srv:
        yield srv


@pytest.fixture
def client(server):
    return OpenAICompatibleLLM(base_url=server.base_url, model="test-model", timeout=5)


def test_token_usage_arithmetic():
    total = TokenUsage(3, 4) + TokenUsage(1, 2)
    assert total == TokenUsage(4, 6)
    assert total.as_dict() == {"input_tokens": 4, "output_tokens": 6, "total_tokens": 10}


def test_schema_valid_reply(server, client):
    server.script(Reply(content=json.dumps(GOOD), prompt_tokens=17, completion_tokens=9), json.dumps(GOOD))
    reply = call(client)
    assert reply.data == GOOD
    assert reply.mode == "json_schema"
    assert reply.usage == TokenUsage(input_tokens=17, output_tokens=9)
    assert reply.usage.total_tokens == 26
    assert json.loads(reply.raw) == GOOD
    body = server.chat_requests[0]
    assert body["model"] == "test-model"
    assert body["temperature"] == 0
    assert [m["role"] for m in body["messages"]] == ["system", "user"]
    assert body["response_format"]["json_schema"] == {"name": "facts", "schema": SCHEMA, "strict": False}
    assert "JSON schema" not in body["messages"][0]["content"]  # OpenAI's own form: no prompt hint
    call(client)
    assert server.chat_forms == ["json_schema", "json_schema"] and client.mode == "json_schema"


def test_default_token_counts_are_reported(server, client):
    server.script(json.dumps(GOOD))
    reply = call(client)
    assert reply.usage.input_tokens == 2 + 3  # words in system + user messages
    assert reply.usage.output_tokens == len(json.dumps(GOOD).split())


def test_invalid_json_reports_usage(server, client):
    server.script({"content": "this is not json at all", "prompt_tokens": 11, "completion_tokens": 5})
    with pytest.raises(LLMInvalidReply, match="not valid JSON") as info:
        call(client)
    assert info.value.usage == TokenUsage(11, 5)


def test_schema_mismatch_names_field(server, client):
    server.script(json.dumps({"facts": [{"text": "x", "confidence": "high"}]}))
    with pytest.raises(LLMInvalidReply, match="does not match schema") as info:
        call(client)
    assert "confidence" in str(info.value)
    assert info.value.usage.total_tokens > 0


def test_a_raw_newline_inside_a_string_is_read(server, client):
    # llama.cpp's grammars let a model write a control character inside a JSON string
    server.script('{"facts": [{"text": "User likes\ntea", "confidence": 0.9}]}')
    assert call(client).data == {"facts": [{"text": "User likes\ntea", "confidence": 0.9}]}


def test_missing_required_field(server, client):
    server.script(json.dumps({"items": []}))
    with pytest.raises(LLMInvalidReply, match="facts"):
        call(client)


@pytest.mark.parametrize("status", [400, 422, 500], ids=["400", "422", "500 (llama.cpp)"])
def test_json_schema_rejected_sends_the_schema_with_json_object_and_remembers(server, client, status):
    server.reject("json_schema", status=status)
    server.script(Reply(content=json.dumps(GOOD), prompt_tokens=10, completion_tokens=4), json.dumps(GOOD))
    reply = call(client)
    assert reply.mode == "json_object+schema"
    assert reply.data == GOOD
    assert reply.usage == TokenUsage(10, 4)
    assert server.chat_forms == ["json_schema", "json_object+schema"]
    body = server.chat_requests[1]
    assert body["response_format"] == {"type": "json_object", "schema": SCHEMA}
    assert "JSON schema" in body["messages"][0]["content"]  # for a server that ignores the schema

    second = call(client)
    assert second.mode == "json_object+schema"
    again = ["json_schema"] if status == 500 else []  # a 500 drops the form the second time in a row
    assert server.chat_forms == ["json_schema", "json_object+schema", *again, "json_object+schema"]
    assert server.pending == 0
    assert client.mode == "json_object+schema"


@pytest.mark.parametrize("status", [400, 422, 500], ids=["400", "422", "500"])
def test_schema_forms_rejected_fall_back_to_plain_json_object(server, client, status):
    server.reject("json_schema", "json_object+schema", status=status)
    server.script(json.dumps(GOOD), json.dumps(GOOD))
    assert call(client).mode == "json_object"
    assert server.chat_forms == ["json_schema", "json_object+schema", "json_object"]
    assert server.chat_requests[-1]["response_format"] == {"type": "json_object"}
    assert "JSON schema" in server.chat_requests[-1]["messages"][0]["content"]
    again = ["json_schema", "json_object+schema"] if status == 500 else []
    assert call(client).mode == "json_object" and server.chat_forms[3:] == [*again, "json_object"]
    assert client.mode == "json_object"


@pytest.mark.parametrize(
    "content",
    [
        "```json\n" + json.dumps(GOOD, indent=2) + "\n```",
        "Sure! Here is the result:\n" + json.dumps(GOOD) + "\nLet me know if you need more {help}.",
    ],
    ids=["fenced", "prose"],
)
def test_falls_back_to_text(server, client, content):
    server.reject("json_schema", "json_object+schema", "json_object")
    server.script(content)
    reply = call(client)
    assert reply.mode == "text"
    assert reply.data == GOOD
    assert server.chat_forms == ["json_schema", "json_object+schema", "json_object", "text"]
    assert "response_format" not in server.chat_requests[-1]
    assert "JSON" in server.chat_requests[-1]["messages"][0]["content"]
    assert client.mode == "text"


def test_every_form_rejected_is_an_error_and_nothing_is_learned(server, client):
    server.reject(*FORMS, status=422)
    with pytest.raises(LLMError, match="rejected the request") as info:
        call(client)
    assert not isinstance(info.value, (LLMTimeout, LLMUnavailable, LLMInvalidReply))
    assert server.chat_forms == list(FORMS)
    assert client.mode == "json_schema"


def test_a_mode_is_learned_per_server_and_kept_when_the_client_is_rebuilt(server, client):
    server.reject("json_schema")
    server.default_reply = json.dumps(GOOD)
    call(client)
    rebuilt = OpenAICompatibleLLM(base_url=server.base_url + "/", model="test-model", timeout=5)
    assert rebuilt.mode == "json_object+schema"
    assert call(rebuilt).mode == "json_object+schema"
    server.accept()  # learned once: the client does not probe json_schema again
    assert call(client).mode == "json_object+schema"
    assert server.chat_forms == ["json_schema"] + ["json_object+schema"] * 3
    with FakeOpenAIServer() as other:  # another server (an OpenAI-like one) still starts at json_schema
        other.default_reply = json.dumps(GOOD)
        elsewhere = OpenAICompatibleLLM(base_url=other.base_url, model="test-model", timeout=5)
        assert elsewhere.mode == "json_schema" and call(elsewhere).mode == "json_schema"
    forget_learned_modes()
    assert rebuilt.mode == "json_schema"


def test_the_settings_client_keeps_the_learned_mode_across_a_reset(fake_llm):
    fake_llm.reject("json_schema", "json_object+schema")
    fake_llm.default_reply = json.dumps(GOOD)
    assert call(get_llm_client()).mode == "json_object"
    reset_llm_client()
    assert call(get_llm_client()).mode == "json_object"
    assert fake_llm.chat_forms == ["json_schema", "json_object+schema", "json_object", "json_object"]


def test_concurrent_calls_learn_one_mode(server, client):
    server.reject("json_schema")
    server.default_reply = Reply(content=json.dumps(GOOD), delay=0.05)
    clients = [client] + [OpenAICompatibleLLM(base_url=server.base_url, model="test-model", timeout=5)
                          for _ in range(3)]
    modes, barrier = [], threading.Barrier(8)

    def worker(llm):
        barrier.wait()
        modes.append(call(llm).mode)

    threads = [threading.Thread(target=worker, args=(clients[i % 4],)) for i in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=10)
    assert modes == ["json_object+schema"] * 8
    assert all(llm.mode == "json_object+schema" for llm in clients)
    # each call tried json_schema at most once, and the server answered the schema form afterwards
    assert server.chat_forms.count("json_schema") <= 8
    assert call(client).mode == "json_object+schema" and server.chat_forms[-1] == "json_object+schema"


def test_timeout_is_quick(server, client):
    server.script(Reply(content=json.dumps(GOOD), delay=2))
    started = time.monotonic()
    with pytest.raises(LLMTimeout):
        call(client, timeout=0.5)
    assert time.monotonic() - started < 1.8


def test_server_error_is_llm_error(server, client):
    # a 500 to a schema form is taken for a rejected form (llama.cpp): the 500 to json_object is the error
    server.script({"status": 500}, {"status": 500}, {"status": 500})
    with pytest.raises(LLMError) as info:
        call(client)
    assert not isinstance(info.value, (LLMTimeout, LLMUnavailable, LLMInvalidReply))
    assert server.chat_forms == ["json_schema", "json_object+schema", "json_object"]
    assert client.mode == "json_schema"  # an outage teaches nothing


@pytest.mark.parametrize("status", [500, 503])
def test_an_error_after_a_mode_was_learned_does_not_unlearn_it(server, client, status):
    server.reject("json_schema")
    server.script(json.dumps(GOOD), {"status": status}, json.dumps(GOOD), json.dumps(GOOD))
    assert call(client).mode == "json_object+schema"
    if status == 500:  # may be a rejection of the schema form (llama.cpp): json_object answers this call
        assert call(client).mode == "json_object"
    else:  # a 503 is an outage
        with pytest.raises(LLMError, match="request failed"):
            call(client)
    assert client.mode == "json_object+schema"
    assert call(client).mode == "json_object+schema"
    expected = ["json_object+schema", "json_object"] if status == 500 else ["json_object+schema"]
    assert server.chat_forms[1:] == ["json_object+schema", *expected, "json_object+schema"]


def test_responder_computes_reply(server, client):
    server.responder = lambda body: json.dumps(
        {"facts": [{"text": body["messages"][1]["content"], "confidence": 1}]}
    )
    assert call(client).data == {"facts": [{"text": "I like tea.", "confidence": 1}]}


def test_no_llm():
    client = NoLLM()
    assert client.enabled is False
    with pytest.raises(LLMUnavailable, match="no LLM configured"):
        call(client)


def test_connection_refused():
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    sock.close()
    client = OpenAICompatibleLLM(base_url=f"http://127.0.0.1:{port}/v1", model="m", timeout=2)
    with pytest.raises(LLMUnavailable):
        call(client)


def test_embeddings_are_deterministic(server):
    import openai

    api = openai.OpenAI(base_url=server.base_url, api_key="x", max_retries=0)
    first = api.embeddings.create(model="e", input=["hello", "world"])
    again = api.embeddings.create(model="e", input="hello")
    assert len(first.data) == 2 and len(first.data[0].embedding) == 384
    assert first.data[0].embedding == again.data[0].embedding
    assert first.data[0].embedding != first.data[1].embedding
    assert abs(sum(v * v for v in first.data[0].embedding) - 1.0) < 1e-6
    assert first.usage.prompt_tokens == 2
    packed = api.embeddings.create(model="e", input="hello", encoding_format="base64")
    assert packed.data[0].embedding is not None
    assert len(server.embedding_requests) == 3


def test_build_llm_client():
    assert isinstance(build_llm_client(provider="none", base_url="", model="", api_key="", timeout=1), NoLLM)
    built = build_llm_client(
        provider="openai", base_url="http://127.0.0.1:1/v1", model="m", api_key="", timeout=3
    )
    assert isinstance(built, OpenAICompatibleLLM) and built.enabled
    with pytest.raises(ValueError, match="unknown LLM provider"):
        build_llm_client(provider="anthropic", base_url="", model="", api_key="", timeout=1)


def test_get_llm_client_uses_settings(fake_llm):
    fake_llm.script(json.dumps(GOOD))
    client = get_llm_client()
    assert client is get_llm_client()
    assert isinstance(client, OpenAICompatibleLLM)
    assert client.base_url == fake_llm.base_url
    assert call(client).data == GOOD


def test_get_llm_client_none(settings):
    settings.ANAMNESIS_LLM = "none"
    reset_llm_client()
    try:
        assert isinstance(get_llm_client(), NoLLM)
    finally:
        reset_llm_client()


def test_one_500_to_json_schema_does_not_move_the_server_to_a_weaker_form(server, client):
    # a passing fault of an OpenAI-like server on the first call: that call is answered in the
    # next form, and the calls after it are back on json_schema
    server.script({"status": 500}, json.dumps(GOOD), json.dumps(GOOD), json.dumps(GOOD))
    assert call(client).mode == "json_object+schema"
    assert client.mode == "json_schema"
    assert call(client).mode == "json_schema" and call(client).mode == "json_schema"
    assert server.chat_forms == ["json_schema", "json_object+schema", "json_schema", "json_schema"]


def test_a_500_to_a_form_on_two_calls_in_a_row_drops_it(server, client):
    server.reject("json_schema", status=500)  # as llama.cpp answers it, every time
    server.default_reply = json.dumps(GOOD)
    assert [call(client).mode for _ in range(4)] == ["json_object+schema"] * 4
    assert server.chat_forms == ["json_schema", "json_object+schema"] * 2 + ["json_object+schema"] * 2
    assert OpenAICompatibleLLM(base_url=server.base_url, model="test-model", timeout=5).mode == "json_object+schema"
    server.accept()  # settled: json_schema is not probed again
    assert call(client).mode == "json_object+schema"


def test_the_500s_of_an_outage_count_against_no_form(server, client):
    server.script(*[{"status": 500}] * 6, json.dumps(GOOD))
    for _ in range(2):
        with pytest.raises(LLMError, match="request failed"):
            call(client)
    assert call(client).mode == "json_schema"
    assert server.chat_forms == ["json_schema", "json_object+schema", "json_object"] * 2 + ["json_schema"]
