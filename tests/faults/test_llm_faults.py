"""LLM faults: timeouts, HTTP errors, invalid JSON and a server that answers json_schema with a
500 (llama.cpp) → the write falls back (other mode, blind or offline extraction) and the event is
always kept. Against the scripted OpenAI-compatible server, through the real client."""

from __future__ import annotations

import json
import time

import pytest

from memories.models import Event, PipelineRun, RunStatus
from memories.providers.llm import OpenAICompatibleLLM
from memories.services.write import memory_write
from tests.faults.figures import record
from tests.support.fake_openai import Reply
from tests.support.scripts import extraction

pytestmark = [pytest.mark.slow, pytest.mark.django_db]
GOOD = extraction(entities=[("Marta", "person")], facts=[("Marta", "Marta prefers tea", "stable_preference")])
SCHEMA = {"type": "object", "properties": {"facts": {"type": "array"}}, "required": ["facts"]}


def test_a_500_on_json_schema_is_a_rejected_mode_not_an_outage(fake_llm):
    empty = json.dumps({"facts": []})
    fake_llm.script({"status": 500}, empty, {"status": 500}, empty, empty)
    client = OpenAICompatibleLLM(base_url=fake_llm.base_url, model="m", timeout=5)
    replies = [client.complete_json(system="s", user="u", schema=SCHEMA, schema_name="x") for _ in range(3)]
    assert [r.mode for r in replies] == ["json_object+schema"] * 3 and replies[0].data == {"facts": []}
    # a 500 on two calls in a row drops json_schema: the third call does not try it
    assert fake_llm.chat_forms == ["json_schema", "json_object+schema"] * 2 + ["json_object+schema"]


@pytest.mark.parametrize(("fault", "responder"), [
    ("timeout", lambda req: Reply(content=json.dumps(GOOD), delay=3)),
    ("http_500", lambda req: {"status": 500}),
    ("http_503", lambda req: {"status": 503}),
    ("http_429", lambda req: {"status": 429}),
    ("invalid_json", lambda req: "this is not JSON {"),
    ("wrong_shape", lambda req: json.dumps({"facts": "none"})),
])
def test_llm_faults_fall_back_and_keep_the_event(agent, fake_llm, settings, fault, responder):
    settings.ANAMNESIS_LLM_TIMEOUT = 1
    from memories.providers.llm import reset_llm_client

    reset_llm_client()
    fake_llm.responder = responder
    started = time.perf_counter()
    result = memory_write(agent=agent, message="Marta prefers tea.", speaker_name="Rafael",
                          config_overrides={"extraction_timeout_sec": 1.0})
    seconds = time.perf_counter() - started
    kept = Event.objects.filter(agent=agent, pk=result.event_id).exists()
    job = PipelineRun.objects.get(event_id=result.event_id)
    ok = result.success and kept and job.status == RunStatus.SUCCEEDED
    record(f"llm_{fault}", title=f"LLM fault: {fault.replace('_', ' ')}", passed=ok,
           figures={"path taken": result.extraction_path, "event kept": kept, "job": job.status,
                    "facts stored": len(result.facts_added), "seconds": round(seconds, 2)})
    assert ok and result.extraction_path in {"blind", "offline"}, (fault, result.extraction_path)
