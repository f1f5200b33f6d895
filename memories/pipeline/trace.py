"""Per-step tracing for pipelines: each named step is timed and recorded with its candidate
counts, token usage and decisions, then persisted as PipelineStep rows."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass, field
from typing import Any

from memories.providers.llm import TokenUsage


@dataclass
class StepRecord:
    name: str
    order: int
    duration_ms: float = 0.0
    status: str = "ok"
    candidates_in: int | None = None
    candidates_out: int | None = None
    tokens_in: int = 0
    tokens_out: int = 0
    data: dict[str, Any] = field(default_factory=dict)

    def as_dict(self) -> dict:
        return asdict(self)


@dataclass
class Tracer:
    steps: list[StepRecord] = field(default_factory=list)
    usage: TokenUsage = field(default_factory=TokenUsage)

    def add_usage(self, step: StepRecord, usage: TokenUsage | None) -> None:
        if usage is None:
            return
        step.tokens_in += usage.input_tokens
        step.tokens_out += usage.output_tokens
        self.usage = self.usage + usage

    def run(self, name: str, fn: Callable, ctx):
        """Run one step function `fn(ctx, step)`, timing it into a StepRecord."""
        step = StepRecord(name=name, order=len(self.steps) + 1)
        self.steps.append(step)
        started = time.perf_counter()
        try:
            return fn(ctx, step)
        except Exception as exc:
            step.status = "error"
            step.data["error"] = f"{type(exc).__name__}: {exc}"
            raise
        finally:
            step.duration_ms = round((time.perf_counter() - started) * 1000, 3)


def run_steps(ctx, tracer: Tracer, steps: Iterable[tuple[str, Callable]]):
    for name, fn in steps:
        tracer.run(name, fn, ctx)
    return ctx
