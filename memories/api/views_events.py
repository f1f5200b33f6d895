"""agents/{agent}/events/ (write a message, list the log) and agents/{agent}/jobs/ (write jobs)."""

from __future__ import annotations

import time

from django.conf import settings
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema, extend_schema_serializer
from rest_framework import serializers, status
from rest_framework.decorators import action
from rest_framework.response import Response
from rest_framework.reverse import reverse

from memories import selectors
from memories.api.fields import ConfigOverridesField, MomentField
from memories.api.serializers import EventSerializer, JobSerializer, WriteAcceptedSerializer, WriteResultSerializer
from memories.api.strict import StrictInputSerializer
from memories.api.views_base import AgentScopedReadViewSet, pipeline_input_errors
from memories.errors import JobFailed
from memories.filters import EventFilterSet, JobFilterSet
from memories.models import Event, PipelineRun, RunStatus
from memories.pipeline.results import WriteResult
from memories.services.write import event_submit, memory_write
from memories.services.write_jobs import job_retry
from memories.turns import turn_given_up

DEFAULT_WAIT_SECONDS = 10.0
MAX_WAIT_SECONDS = 30.0
POLL_SECONDS = 0.1
FINISHED = (RunStatus.SUCCEEDED, RunStatus.FAILED)

IDEMPOTENCY_HEADER = OpenApiParameter(
    "Idempotency-Key", str, OpenApiParameter.HEADER, required=False,
    description="Retrying with the same key returns the first request's job; no second event is stored.",
)


def _wait_cap() -> float:
    """Upper bound of `wait_timeout` (settings.ANAMNESIS_API_MAX_WAIT_SECONDS, at most 30 s)."""
    return min(MAX_WAIT_SECONDS, float(getattr(settings, "ANAMNESIS_API_MAX_WAIT_SECONDS", MAX_WAIT_SECONDS)))


@extend_schema_serializer(component_name="EventWriteInput")
class WriteInputSerializer(StrictInputSerializer):
    speaker = serializers.CharField(max_length=200, help_text="who said it")
    text = serializers.CharField(allow_blank=True, trim_whitespace=False,
                                 help_text="the message; empty means nothing to store (200, nothing added)")
    occurred_at = MomentField(required=False, allow_null=True)
    external_id = serializers.CharField(max_length=200, required=False, allow_null=True, allow_blank=True,
                                        help_text="your id for the message; the same body again returns the stored job")
    recent_messages = serializers.ListField(
        child=serializers.CharField(max_length=4000, trim_whitespace=False, allow_blank=True), max_length=20,
        required=False, default=list, help_text="the conversation just before, for context (oldest first)")
    dry_run = serializers.BooleanField(default=False, help_text="run the pipeline, store nothing, return the result")
    config_overrides = ConfigOverridesField(allow_empty=True)


@extend_schema_serializer(component_name="EventWriteQuery")
class WriteQuerySerializer(serializers.Serializer):
    wait = serializers.BooleanField(default=False, help_text="wait for the job (bounded) and return its result")
    wait_timeout = serializers.FloatField(min_value=0, max_value=MAX_WAIT_SECONDS, default=DEFAULT_WAIT_SECONDS,
                                          help_text="seconds to wait at most")


class IdempotencyKeySerializer(serializers.Serializer):
    key = serializers.CharField(max_length=200, required=False, allow_null=True)


class EventViewSet(AgentScopedReadViewSet):
    """The message log. POST writes a message: it is stored at once and processed by a job."""

    queryset = Event.objects.none()
    serializer_class = EventSerializer
    filterset_class = EventFilterSet

    def scoped_queryset(self, agent):
        return selectors.events_list(agent=agent)

    @extend_schema(
        request=WriteInputSerializer, parameters=[WriteQuerySerializer, IDEMPOTENCY_HEADER],
        responses={
            202: WriteAcceptedSerializer,
            200: WriteResultSerializer,
            422: OpenApiResponse(description="`idempotency_conflict` or `external_id_conflict` (a reused key or "
                                             "external_id with another body; `error.fields` names it), or "
                                             "`job_failed` (waited for a job that failed)"),
        },
        description=(
            "Stores the message and queues its write job: **202** with the job. A repeated `Idempotency-Key` "
            "(or `external_id`) returns the first request's job, also with 202, and stores nothing new. "
            "**200** with the WriteResult for `dry_run` (nothing stored), an empty `text` (nothing to store), "
            "or `?wait=true` when the job finished within `wait_timeout` seconds; **422** `job_failed` when it "
            "failed (retry it with `POST jobs/{id}/retry/`). A reused `Idempotency-Key` with a different body is "
            "a **422** `idempotency_conflict`, a reused `external_id` with a different body a **422** "
            "`external_id_conflict` (the stored message stays as it was); every replay carries "
            "`Idempotent-Replayed: true`. A message over the size limit is a 413."
        ),
    )
    def create(self, request, *args, **kwargs):
        data, query, idempotency_key = self._read_write_request(request)
        common = {"agent": self.agent, "message": data["text"], "speaker_name": data["speaker"],
                  "occurred_at": data.get("occurred_at"), "recent_messages": data["recent_messages"],
                  "config_overrides": data.get("config_overrides")}
        if data["dry_run"]:
            with pipeline_input_errors(overrides=common["config_overrides"]):
                result = memory_write(dry_run=True, **common)
            return Response(WriteResultSerializer(result.as_dict()).data)
        event, job, created = event_submit(idempotency_key=idempotency_key, actor=self.actor,
                                           external_id=data.get("external_id") or None, enqueue=True, **common)
        if event is None:
            return Response(WriteResultSerializer(WriteResult(success=True).as_dict()).data)
        replayed = {} if created else {"Idempotent-Replayed": "true"}
        job_url = reverse("api:job-detail", kwargs={"agent": self.agent.slug, "pk": job.pk}, request=request)
        if query["wait"]:
            done = self._wait(job, min(query["wait_timeout"], _wait_cap()))
            if done is not None and not done.success:
                failed = JobFailed(f"job {job.pk} failed: {done.error}; retry it with POST {job_url}retry/",
                                   {"job": job.pk, "job_url": job_url, "error": done.error})
                body = {"error": {"code": failed.code, "message": failed.message, "fields": failed.extra}}
                return Response(body, status=failed.http_status,
                                headers={"Location": job_url, **replayed})
            if done is not None:
                return Response(WriteResultSerializer(done.as_dict()).data, headers=replayed)
        return Response({"job": JobSerializer(job, context=self.get_serializer_context()).data, "job_url": job_url},
                        status=status.HTTP_202_ACCEPTED, headers={"Location": job_url, **replayed})

    @staticmethod
    def _read_write_request(request) -> tuple[dict, dict, str | None]:
        """The validated body, query parameters and Idempotency-Key header."""
        body = WriteInputSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        query = WriteQuerySerializer(data=request.query_params)
        query.is_valid(raise_exception=True)
        header = IdempotencyKeySerializer(data={"key": request.headers.get("Idempotency-Key") or None})
        if not header.is_valid():
            raise serializers.ValidationError({"Idempotency-Key": header.errors["key"]})
        return body.validated_data, query.validated_data, header.validated_data["key"]

    @staticmethod
    def _wait(job: PipelineRun, timeout: float) -> WriteResult | None:
        """The job's WriteResult once it finished, or None if it did not within `timeout`."""
        deadline = time.monotonic() + timeout
        with turn_given_up():  # the worker does the work: this request's turn goes to the next one meanwhile
            while job.status not in FINISHED:
                if time.monotonic() >= deadline:
                    return None
                time.sleep(POLL_SECONDS)
                job.refresh_from_db(fields=["status", "result", "error"])
        if job.status == RunStatus.FAILED:
            return WriteResult(success=False, error=job.error, event_id=job.event_id, run_id=job.id)
        return WriteResult.from_dict(job.result)


class JobViewSet(AgentScopedReadViewSet):
    """Write jobs (one per event): status, attempts, timings, tokens, WriteResult or error."""

    queryset = PipelineRun.objects.none()
    serializer_class = JobSerializer
    filterset_class = JobFilterSet

    def scoped_queryset(self, agent):
        return selectors.write_jobs(agent=agent)

    @extend_schema(request=None, responses={202: WriteAcceptedSerializer},
                   description="Queue a failed job again, or a running one whose worker stopped (its `held_until` "
                               "passed); 409 for a job that succeeded, is queued, or is held by a live worker.")
    @action(detail=True, methods=["post"], url_path="retry")
    def retry(self, request, agent=None, pk=None):
        job = job_retry(agent=self.agent, job_id=int(pk))
        job_url = reverse("api:job-detail", kwargs={"agent": self.agent.slug, "pk": job.pk}, request=request)
        return Response({"job": JobSerializer(job, context=self.get_serializer_context()).data, "job_url": job_url},
                        status=status.HTTP_202_ACCEPTED, headers={"Location": job_url})

