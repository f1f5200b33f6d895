"""Prometheus instruments observed where the work happens (the write pipeline, the retrieval
pipeline); served by memory_project.metrics at /metrics. With PROMETHEUS_MULTIPROC_DIR set
(several uvicorn workers) prometheus-client aggregates the processes' files."""

from prometheus_client import Histogram

LATENCY_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0)

WRITE_SECONDS = Histogram("anamnesis_write_seconds", "Write pipeline duration per message (event processed)",
                          buckets=LATENCY_BUCKETS)
RETRIEVE_SECONDS = Histogram("anamnesis_retrieve_seconds", "memory_retrieve duration per query",
                             buckets=LATENCY_BUCKETS)
