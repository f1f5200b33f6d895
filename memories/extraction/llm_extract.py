"""LLM extraction: informed (one call with existing knowledge), blind fallback (entity scan,
then facts and relations concurrently), and batched reconciliation of ambiguous facts."""

from __future__ import annotations

import json
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import datetime

from memories import prompts
from memories.errors import DomainError
from memories.extraction.schema import (
    Extraction,
    extraction_from_json,
    extraction_json_schema,
)
from memories.providers.llm import LLMClient, LLMError
from memories.reconcile import Decision, decision_from_llm


class ExtractionFailed(Exception):
    pass


@dataclass(frozen=True)
class MessageInput:
    """What an extraction prompt tells the model: the message, who wrote it and when, the
    messages just before it, and (informed extraction) what the agent already knows."""

    text: str
    speaker: str
    occurred_at: datetime
    recent_messages: tuple[str, ...] = ()
    knowledge: str = ""


def _message_block(message: MessageInput) -> str:
    recent = "\n".join(prompts.RECENT_MESSAGE.format(message=m) for m in message.recent_messages[-5:])
    return prompts.MESSAGE_BLOCK.format(
        speaker=message.speaker, occurred_at=message.occurred_at.isoformat(),
        recent=recent or prompts.NO_RECENT_MESSAGES, message=message.text,
    )


def _call(llm: LLMClient, *, system: str, user: str, schema: dict, name: str, timeout: float, usage_sink):
    try:
        reply = llm.complete_json(system=system, user=user, schema=schema, schema_name=name, timeout=timeout)
    except LLMError as exc:
        usage_sink(exc.usage)
        raise ExtractionFailed(f"{type(exc).__name__}: {exc}") from exc
    usage_sink(reply.usage)
    return reply.data


def informed(llm: LLMClient, message: MessageInput, *, timeout: float, usage_sink) -> Extraction:
    """One call: message + speaker + time + what we already know → entities, facts, relations,
    profiles."""
    knowledge = message.knowledge or prompts.NO_KNOWLEDGE
    data = _call(
        llm,
        system=prompts.EXTRACTION_SYSTEM,
        user=prompts.INFORMED_USER.format(message_block=_message_block(message), knowledge=knowledge),
        schema=extraction_json_schema(message.text), name="informed_extraction", timeout=timeout,
        usage_sink=usage_sink,
    )
    try:
        return extraction_from_json(data)
    except DomainError as exc:
        raise ExtractionFailed(exc.message) from exc


def _sub_schema(schema: dict, *keys: str) -> dict:
    return {
        "type": "object",
        "required": list(keys),
        "properties": {k: schema["properties"][k] for k in keys},
    }


def blind(llm: LLMClient, message: MessageInput, *, timeout: float, usage_sink) -> tuple[Extraction, bool]:
    """Legacy flow: entity scan, then facts and relations in two concurrent calls; relations are
    asked again once when ≥ 2 entities came back with 0 relations."""
    system = prompts.EXTRACTION_SYSTEM
    base = _message_block(message)
    schema = extraction_json_schema(message.text)
    scan = _call(llm, system=system, user=prompts.ENTITY_SCAN_USER.format(message_block=base),
                 schema=_sub_schema(schema, "entities"), name="entity_scan", timeout=timeout,
                 usage_sink=usage_sink)
    entities_json = json.dumps(scan.get("entities", []), ensure_ascii=False)

    def facts():
        user = prompts.FACTS_USER.format(message_block=base, entities=entities_json)
        return _call(llm, system=system, user=user,
                     schema=_sub_schema(schema, "facts"), name="fact_extraction", timeout=timeout,
                     usage_sink=usage_sink)

    def relations():
        user = prompts.RELATIONS_USER.format(message_block=base, entities=entities_json)
        return _call(llm, system=system, user=user,
                     schema=_sub_schema(schema, "relations"), name="relation_extraction", timeout=timeout,
                     usage_sink=usage_sink)

    with ThreadPoolExecutor(max_workers=2) as pool:
        facts_future, relations_future = pool.submit(facts), pool.submit(relations)
        fact_data, relation_data = facts_future.result(), relations_future.result()
    retried = False
    if len(scan.get("entities", [])) >= 2 and not relation_data.get("relations"):
        retried = True
        relation_data = relations()
    try:
        merged = extraction_from_json({**scan, **fact_data, **relation_data})
    except DomainError as exc:
        raise ExtractionFailed(exc.message) from exc
    return merged, retried


RECONCILE_SCHEMA = {
    "type": "object",
    "required": ["decisions"],
    "properties": {
        "decisions": {
            "type": "array",
            "items": {
                "type": "object",
                "required": ["index", "action"],
                "properties": {
                    "index": {"type": "integer"},
                    "action": {"type": "string", "enum": ["ADD", "UPDATE", "NOOP", "DELETE"]},
                    "target_id": {"type": ["integer", "null"]},
                    "reason": {"type": "string"},
                },
            },
        }
    },
}


def reconcile_with_llm(llm: LLMClient, pending, *, occurred_at: datetime, timeout: float,
                       usage_sink) -> dict[int, Decision]:
    """One call for all ambiguous facts of a write. A failure keeps every fact (ADD)."""
    blocks = []
    for index, fact, existing in pending:
        known = "\n".join(prompts.RECONCILE_EXISTING_FACT.format(id=e.id, text=e.text) for e in existing[:10])
        blocks.append(prompts.RECONCILE_FACT.format(index=index, text=fact.text, existing=known))
    try:
        data = _call(
            llm,
            system=prompts.RECONCILE_SYSTEM,
            user=prompts.RECONCILE_USER.format(occurred_at=occurred_at.isoformat(), facts="\n\n".join(blocks)),
            schema=RECONCILE_SCHEMA, name="reconciliation", timeout=timeout, usage_sink=usage_sink,
        )
    except ExtractionFailed as exc:
        return {i: Decision("ADD", None, f"reconciliation failed ({exc}): keep the fact", "fallback")
                for i, _, _ in pending}
    verdicts = {item.get("index"): item for item in data.get("decisions", []) if isinstance(item, dict)}
    out = {}
    for index, _fact, existing in pending:
        ids = {e.id for e in existing}
        item = verdicts.get(index, {})
        decision = decision_from_llm(item, None, 0.0)
        if decision.target_id is not None and decision.target_id not in ids:
            decision = Decision("ADD", None, "LLM named a fact of another entity: keep the fact", "fallback")
        out[index] = decision
    return out

