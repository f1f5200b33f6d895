"""The write pipeline: one message in, versioned entities, facts and relationships out.

`prepare` runs the steps that only read (and may call the LLM), before any transaction or lock:

    alias_lookup → pre_retrieval → extraction → normalize_dedup

`store` runs the rest inside the caller's transaction, with the write's job row locked:

    resolve_entities → reconcile → upsert

Each step is a function of the values earlier steps returned (values.py), timed into the trace
under its name with its candidates in / out and tokens. Every row is written through
memories.services; the English the steps need is memories.extraction's."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from memories.pipeline.results import WriteResult
from memories.pipeline.trace import Tracer
from memories.pipeline.write.extract import extract, normalize, pre_retrieval
from memories.pipeline.write.lookup import alias_lookup
from memories.pipeline.write.resolve import reconcile, resolve_entities
from memories.pipeline.write.upsert import upsert
from memories.pipeline.write.values import Extracted, Known, Message, Storage
from memories.providers.embeddings import EmbedderClient
from memories.providers.llm import LLMClient

__all__ = ["Message", "Prepared", "prepare", "store"]


@dataclass(frozen=True)
class Prepared:
    """What the read steps found: the message (its writer settled), the known entities it names
    and what it says."""

    message: Message
    known: Known
    extracted: Extracted


def _stepper(tracer: Tracer) -> Callable:
    def step(name: str, fn: Callable, *args, **kwargs):
        return tracer.run(name, lambda _, record: fn(*args, **kwargs, step=record), None)
    return step


def prepare(message: Message, *, llm: LLMClient, embedder: EmbedderClient, tracer: Tracer) -> Prepared:
    """The read steps. They write nothing, so they can run before the write's transaction."""
    step = _stepper(tracer)
    message, known = step("alias_lookup", alias_lookup, message)
    knowledge = step("pre_retrieval", pre_retrieval, message, known, llm)
    extracted = step("extraction", extract, message, known, knowledge, llm, tracer, embedder)
    extracted = step("normalize_dedup", normalize, message, extracted, embedder)
    return Prepared(message, known, extracted)


def store(prepared: Prepared, *, llm: LLMClient, embedder: EmbedderClient, tracer: Tracer) -> WriteResult:
    """The storing steps, in the caller's transaction. Returns what changed."""
    step = _stepper(tracer)
    message, known, extracted = prepared.message, prepared.known, prepared.extracted
    result = WriteResult(facts_skipped=list(extracted.skipped), extraction_path=extracted.path)
    resolved = step("resolve_entities", resolve_entities, message, known, extracted, llm=llm, embedder=embedder,
                    tracer=tracer, result=result)
    decided = step("reconcile", reconcile, message, extracted, resolved, llm=llm, tracer=tracer)
    step("upsert", upsert, Storage(message, resolved, embedder, result), extracted.extraction, known, decided)
    return result
