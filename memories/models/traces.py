from django.db import models


class RunKind(models.TextChoices):
    WRITE = "write"
    RETRIEVE = "retrieve"
    JOB = "job"


# Tokens were spent: the runs and steps the LLM budgets sum (memories/selectors/budgets.py).
SPENT_TOKENS = models.Q(tokens_in__gt=0) | models.Q(tokens_out__gt=0)
# A background job's pass over one agent is the run's step of this name (the run itself covers
# every agent when it was not started for one): the agent's token use in that run.
JOB_PASS_STEP_PREFIX = "agent:"


def job_pass_step_name(slug: str) -> str:
    return f"{JOB_PASS_STEP_PREFIX}{slug}"


class RunStatus(models.TextChoices):
    QUEUED = "queued"
    RUNNING = "running"
    SUCCEEDED = "succeeded"
    FAILED = "failed"


class PipelineRun(models.Model):
    """One execution of a pipeline — a write, a retrieval or a background job — with its
    status, timings, token usage, result or error. A write's run doubles as its job record:
    there is one per event, and a retried job updates the same row (`attempts`). A running job
    (a write or a background job) is leased: `lease_owner` names the process running it and
    `lease_expires_at` says until when it holds the job unless it renews the lease
    (memories/services/leases.py); a lease that expired means that process stopped. A queued
    write job the sweeper sent is leased to the broker: it is not sent again before then."""

    agent = models.ForeignKey("memories.Agent", null=True, blank=True, on_delete=models.CASCADE, related_name="+")
    kind = models.CharField(max_length=16, choices=RunKind.choices)
    name = models.CharField(max_length=100, blank=True, default="")
    status = models.CharField(max_length=16, choices=RunStatus.choices, default=RunStatus.QUEUED)
    event = models.ForeignKey(
        "memories.Event", null=True, blank=True, on_delete=models.CASCADE, related_name="runs"
    )
    input_ref = models.CharField(max_length=500, blank=True, default="")
    params = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    duration_ms = models.FloatField(null=True, blank=True)
    tokens_in = models.PositiveIntegerField(default=0)
    tokens_out = models.PositiveIntegerField(default=0)
    attempts = models.PositiveIntegerField(default=0)
    error = models.TextField(blank=True, default="")
    result = models.JSONField(default=dict, blank=True)
    lease_owner = models.CharField(max_length=255, blank=True, default="")
    lease_expires_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        constraints = [
            models.UniqueConstraint(
                fields=["event"], condition=models.Q(kind="write"), name="one_write_run_per_event"
            )
        ]
        indexes = [
            models.Index(fields=["agent", "kind", "-created_at"], name="run_agent_kind_time"),
            # the sweeper's and the metrics' reads: the few runs not finished, by lease
            models.Index(fields=["status", "lease_expires_at"], name="run_unfinished",
                         condition=models.Q(status__in=["queued", "running"])),
            # an agent's LLM budgets: its runs that spent tokens, by when they finished
            models.Index(fields=["agent", "finished_at"], include=["tokens_in", "tokens_out"], name="run_llm_tokens",
                         condition=SPENT_TOKENS),
        ]

    def __str__(self) -> str:
        return f"{self.kind} run {self.pk} ({self.status})"


class PipelineStep(models.Model):
    """One named, timed stage of a pipeline run: how many candidates went in and came out,
    tokens it spent, and whatever it decided (`data`, e.g. reconciliation decisions and reasons)."""

    run = models.ForeignKey(PipelineRun, on_delete=models.CASCADE, related_name="steps")
    attempt = models.PositiveIntegerField(default=1)
    order = models.PositiveIntegerField()
    name = models.CharField(max_length=64)
    status = models.CharField(max_length=16, default="ok")
    duration_ms = models.FloatField(default=0)
    candidates_in = models.IntegerField(null=True, blank=True)
    candidates_out = models.IntegerField(null=True, blank=True)
    tokens_in = models.PositiveIntegerField(default=0)
    tokens_out = models.PositiveIntegerField(default=0)
    data = models.JSONField(default=dict, blank=True)

    class Meta:
        ordering = ["run", "attempt", "order"]
        indexes = [
            # the LLM budgets: a job run's pass over one agent (by step name) that spent tokens
            models.Index(fields=["run", "name"], include=["tokens_in", "tokens_out"], name="step_llm_tokens",
                         condition=SPENT_TOKENS),
        ]

    def __str__(self) -> str:
        return f"{self.run_id}.{self.order} {self.name}"
