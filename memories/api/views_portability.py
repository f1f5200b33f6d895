"""agents/{agent}/export/ and agents/{agent}/import/: one agent's memory as a JSON Lines file
(memories.portability.format), streamed out, and read back into a new agent (admin scope)."""

from __future__ import annotations

from collections.abc import Iterator

from asgiref.sync import sync_to_async
from django.conf import settings
from django.core.handlers.asgi import ASGIRequest
from django.http import StreamingHttpResponse
from django.utils import timezone
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiResponse, extend_schema, extend_schema_serializer
from rest_framework import exceptions, serializers, status
from rest_framework.parsers import BaseParser
from rest_framework.response import Response
from rest_framework.reverse import reverse
from rest_framework.views import APIView

from memories import selectors
from memories.api.auth import principal_of
from memories.api.serializers import AgentSerializer
from memories.api.views_base import AgentScopedMixin
from memories.errors import Conflict, PayloadTooLarge
from memories.models import ApiKeyScope
from memories.portability.format import MEDIA_TYPE
from memories.selectors.export import agent_export
from memories.services.facts import facts_access_fold
from memories.services.portability import agent_import, export_forgets_apply
from memories.turns import turn_given_up

CHUNK_BYTES = 64 * 1024


def _chunks(lines: Iterator[str]) -> Iterator[bytes]:
    """The lines as UTF-8, gathered into chunks of about CHUNK_BYTES."""
    buffer, size = [], 0
    for line in lines:
        data = line.encode("utf-8")
        buffer.append(data)
        size += len(data)
        if size >= CHUNK_BYTES:
            yield b"".join(buffer)
            buffer, size = [], 0
    if buffer:
        yield b"".join(buffer)


def _next_chunk(chunks: Iterator[bytes]) -> bytes | None:
    return next(chunks, None)


class _AsyncChunks:
    """A synchronous export served by the ASGI server as it is read: each chunk is made in the
    request's own thread (its database connection holds the export's snapshot), so the response
    streams instead of being gathered first. Closing the response closes the export."""

    def __init__(self, chunks: Iterator[bytes]):
        self.chunks = chunks

    async def __aiter__(self):
        take = sync_to_async(_next_chunk, thread_sensitive=True)
        while (chunk := await take(self.chunks)) is not None:
            yield chunk

    def close(self) -> None:
        self.chunks.close()


class AgentExportApi(AgentScopedMixin, APIView):
    """The agent's whole memory as JSON Lines: a header (format, version, agent, counts), then
    its entities, aliases, messages with their write jobs and traces, every fact and relationship
    version on its three clocks, merges, merge suggestions, erasure receipts, tombstones, audit
    entries and job checkpoints. Streamed; read in one snapshot."""

    scopes = {"GET": ApiKeyScope.ADMIN}

    def perform_content_negotiation(self, request, force=False):
        return super().perform_content_negotiation(request, force=True)  # errors are JSON, whatever Accept says

    @extend_schema(responses={(200, MEDIA_TYPE): OpenApiResponse(OpenApiTypes.STR, description=(
        "JSON Lines: the header, then one row per line (see README, Export and import)"))})
    def get(self, request, agent):
        agent = self.agent
        export_forgets_apply(agent=agent)  # a message a forget has not reached yet is redacted first
        facts_access_fold(agent=agent)  # the facts' retrieval counts as of now
        chunks = _chunks(agent_export(agent=agent))
        stream = _AsyncChunks(chunks) if isinstance(request._request, ASGIRequest) else chunks
        name = f"{agent.slug}-{timezone.now():%Y%m%dT%H%M%SZ}.jsonl"
        return StreamingHttpResponse(stream, content_type=MEDIA_TYPE,
                                     headers={"Content-Disposition": f'attachment; filename="{name}"'})


class JsonLinesParser(BaseParser):
    """Declares the import's body; the view reads the body line by line itself."""

    media_type = MEDIA_TYPE

    def parse(self, stream, media_type=None, parser_context=None):  # pragma: no cover - never called
        raise exceptions.ParseError("the import reads its body line by line")


class AgentImportApi(APIView):
    """A new agent `{agent}` from an export file (the body, JSON Lines): every row with new ids,
    the clocks as exported, vectors and keyword postings built here; one transaction, audited.
    Needs the right to create agents (an admin key for all agents, or a superuser's session)."""

    scopes = {"POST": ApiKeyScope.ADMIN}
    parser_classes = [JsonLinesParser]

    @extend_schema_serializer(component_name="AgentImportReport")
    class OutputSerializer(serializers.Serializer):
        agent = AgentSerializer()
        agent_url = serializers.URLField()
        rows = serializers.DictField(child=serializers.IntegerField(), help_text="rows stored, per row type")
        vectors = serializers.IntegerField(help_text="vectors computed (entity names, facts, messages)")
        jobs_queued = serializers.IntegerField(help_text="write jobs unfinished where the file was made, queued here")
        imported_at = serializers.DateTimeField()
        seconds = serializers.FloatField()
        source = serializers.DictField(help_text="the exported agent (id, slug, name), exported_at, format_version")

    @extend_schema(
        request={MEDIA_TYPE: OpenApiTypes.BINARY},
        responses={201: OutputSerializer, 409: OpenApiResponse(description="an agent with this slug exists")},
        description=(
            "The body is an export (`GET agents/{agent}/export/`). **201** with what was stored. A file that "
            "cannot be imported is a **400** naming the line and what is wrong with it (`error.fields.line`), "
            "and nothing is stored; an unknown format version is a 400 `unsupported_export_version`. **409** "
            "when the slug is taken."),
    )
    def post(self, request, agent):
        principal = principal_of(request)
        if not principal.creates_agents:
            raise exceptions.PermissionDenied("importing creates an agent: only an admin key for all agents or a "
                                              "superuser can")
        if selectors.agent_by_slug(slug=agent) is not None:
            raise Conflict(f"an agent {agent!r} exists already: import into a new slug", {"slug": "taken"})
        declared = str(request.META.get("CONTENT_LENGTH") or "0")
        length = int(declared) if declared.isdigit() else 0
        if length > settings.ANAMNESIS_IMPORT_MAX_BYTES:
            raise PayloadTooLarge(f"the file is {length} bytes; the limit is {settings.ANAMNESIS_IMPORT_MAX_BYTES}",
                                  {"body": f"at most {settings.ANAMNESIS_IMPORT_MAX_BYTES} bytes"})
        with turn_given_up():  # a long job: the process's other requests do not wait behind it
            report = agent_import(slug=agent, lines=request.stream or [], actor=principal.actor)
        url = reverse("api:agent-detail", kwargs={"agent": report.agent.slug}, request=request)
        body = {"agent": AgentSerializer(report.agent).data, "agent_url": url, "rows": report.rows,
                "vectors": report.vectors, "jobs_queued": report.jobs_queued, "imported_at": report.imported_at,
                "seconds": round(report.seconds, 3), "source": report.source}
        return Response(self.OutputSerializer(body).data, status=status.HTTP_201_CREATED, headers={"Location": url})
