"""Property-based run of schemathesis against the live OpenAPI schema, served in-process by the
real WSGI application: every operation, positive and negative examples (derandomized), a valid
admin key, half the examples aimed at a seeded agent's real objects. No 5xx, and every response
conforms to the schema (status code, content type, body)."""

from __future__ import annotations

import itertools
import logging
import re
from collections import Counter

import pytest
import schemathesis
from django.core.signals import request_finished, request_started
from django.core.wsgi import get_wsgi_application
from django.db import close_old_connections
from hypothesis import HealthCheck, Phase, given
from hypothesis import settings as hypothesis_settings
from hypothesis.errors import Unsatisfiable
from schemathesis import GenerationMode
from schemathesis.checks import (
    content_type_conformance,
    not_a_server_error,
    response_schema_conformance,
    status_code_conformance,
)

from memories.models import Entity, ErasureReceipt, Event, Fact, PipelineRun, Relationship

pytestmark = pytest.mark.django_db
# an agent import's body is an export file (JSON Lines): sent as the bytes generated for it
schemathesis.serializer.alias("application/x-ndjson", "application/octet-stream")

EXAMPLES = {GenerationMode.POSITIVE: 10, GenerationMode.NEGATIVE: 5}
CHECKS = [not_a_server_error, status_code_conformance, content_type_conformance, response_schema_conformance]
RESOURCE_IDS = {  # path segment before {id} → the model whose real ids the run should hit
    "events": Event, "jobs": PipelineRun, "facts": Fact, "entities": Entity, "relationships": Relationship,
    "traces": PipelineRun, "erasures": ErasureReceipt,
}


@pytest.fixture
def in_process_wsgi():
    """The WSGI app called in this thread, on the test's transaction (as Django's test client
    does: no connection closing between requests)."""
    request_started.disconnect(close_old_connections)
    request_finished.disconnect(close_old_connections)
    try:
        yield get_wsgi_application()
    finally:
        request_started.connect(close_old_connections)
        request_finished.connect(close_old_connections)


def _pin_to_seed(case, agent, ids: dict[str, list[int]], turn: int) -> None:
    """Every other example addresses the seeded agent and its real objects, so the run
    exercises stored data and not only 404s."""
    if turn % 2:
        return
    if case.path_parameters and "agent" in case.path_parameters:
        case.path_parameters["agent"] = agent.slug
    match = re.search(r"/(\w+)/\{id\}/", case.operation.path)
    if match and case.path_parameters and "id" in case.path_parameters and ids.get(match.group(1)):
        pool = ids[match.group(1)]
        case.path_parameters["id"] = pool[(turn // 2) % len(pool)]
    if isinstance(case.body, dict) and "entity_id" in case.body and len(ids["entities"]) > 1:
        others = [i for i in ids["entities"] if i != (case.path_parameters or {}).get("id")]
        case.body["entity_id"] = others[(turn // 2) % len(others)]


def _fuzz(operation, mode, examples: int, *, key: str, agent, ids, statuses: Counter) -> str | None:
    """Run one operation in one generation mode; the failure report, or None."""
    turns = itertools.count()

    @given(case=operation.as_strategy(generation_mode=mode))
    @hypothesis_settings(max_examples=examples, derandomize=True, database=None, deadline=None,
                         phases=[Phase.explicit, Phase.generate], suppress_health_check=list(HealthCheck))
    def exercise(case):
        _pin_to_seed(case, agent, ids, next(turns))
        case.headers = {**(case.headers or {}), "Authorization": f"Bearer {key}"}
        response = case.call()
        statuses[response.status_code] += 1
        case.validate_response(response, checks=CHECKS)

    try:
        exercise()
    except Unsatisfiable:  # nothing to make invalid (health has no parameters)
        return None
    except (Exception, BaseExceptionGroup) as exc:
        return f"{operation.label} [{mode.value}]: {str(exc)[:1500]}"
    return None


def test_every_operation_survives_generated_requests(seeded, make_key, in_process_wsgi, settings, caplog):
    caplog.set_level(logging.CRITICAL, logger="django.request")  # 4xx are the expected outcome here
    settings.ANAMNESIS_API_MAX_WAIT_SECONDS = 0.2  # `?wait=true` must not stall the run
    key = make_key(None, "admin")
    schema = schemathesis.openapi.from_wsgi("/api/v1/schema/", in_process_wsgi)
    schema.validate()
    # destructive operations last, so the others still find the seeded objects
    operations = sorted((result.ok() for result in schema.get_all_operations()),
                        key=lambda op: (op.path.endswith("/merge/"), op.path.endswith("/forget/"), op.label))
    assert len(operations) == 40  # + merge suggestions (4), jobs/{id}/retry/, erasures (2), GET forget/, budget (2),
    # export, import
    statuses: Counter = Counter()
    failures = []
    for operation in operations:
        ids = {name: list(model.objects.filter(agent=seeded).order_by("id").values_list("id", flat=True))
               for name, model in RESOURCE_IDS.items()}
        for mode, examples in EXAMPLES.items():
            failure = _fuzz(operation, mode, examples, key=key, agent=seeded, ids=ids, statuses=statuses)
            if failure:
                failures.append(failure)

    total = sum(statuses.values())
    print(f"\nschemathesis: {len(operations)} operations, {total} requests, "
          f"statuses {dict(sorted(statuses.items()))}, {len(failures)} failing")
    assert not failures, "\n\n".join(failures)
    assert total >= 300
    assert statuses[200] + statuses[201] + statuses[202] >= 100  # real work, not only rejections
