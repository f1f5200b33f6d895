"""The read side's background job: per-agent vector indexes, run through the jobs framework
(`memories.jobs`), so it is listed by `manage.py jobs list` and leaves a traced run."""

from __future__ import annotations

from memories.jobs import Job, job_register
from memories.jobs.runner import JobContext
from memories.pipeline.trace import StepRecord
from retrieval.vector_indexes import agent_indexes_ensure


def vector_indexes(ctx: JobContext, step: StepRecord) -> dict:
    """Build the per-agent HNSW indexes of agents past ANAMNESIS_AGENT_INDEX_MIN_ROWS; drop stale ones."""
    done = agent_indexes_ensure()
    step.candidates_out = len(done["built"])
    return {"built": len(done["built"]), "dropped": len(done["dropped"]), "names": done["built"] + done["dropped"]}


def register() -> None:
    job_register(Job("vector_indexes", "Per-agent HNSW indexes for agents past ANAMNESIS_AGENT_INDEX_MIN_ROWS",
                     run_global=vector_indexes, every_seconds=600))
