"""API keys (hashed, shown once, revocable, scoped), the create_api_key command, the
cross-tenant matrix over every endpoint, sessions and per-key throttling."""

from __future__ import annotations

import hashlib
import io

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.core.management import CommandError, call_command
from rest_framework.test import APIClient

from memories.models import ApiKey, AuditEntry, Entity, Event, Fact, PipelineRun, Relationship
from memories.services.api_keys import api_key_authenticate, api_key_create, api_key_revoke
from tests.api.conftest import url

pytestmark = pytest.mark.django_db


def endpoints(agent) -> list[tuple[str, str, dict | None, str, int]]:
    """Every operation under agents/{agent}/ with a valid request body, the scope it needs and the
    status it answers when allowed. Made in this order, each succeeds: reads, then writes (the
    fact corrected and the one retracted are two facts), then merge, then forget."""
    corrected, retracted = Fact.objects.filter(agent=agent).order_by("id")[:2]
    entity, other = Entity.objects.filter(agent=agent).order_by("id")[:2]
    event = Event.objects.filter(agent=agent).order_by("id").first()
    job = PipelineRun.objects.filter(agent=agent, kind="write").order_by("id").first()
    rel = Relationship.objects.filter(agent=agent).order_by("id").first()
    return [
        ("get", f"/api/v1/agents/{agent.slug}/", None, "read", 200),
        ("get", url(agent, "events"), None, "read", 200),
        ("get", url(agent, "events", event.id), None, "read", 200),
        ("get", url(agent, "jobs"), None, "read", 200),
        ("get", url(agent, "jobs", job.id), None, "read", 200),
        ("post", url(agent, "retrieve"), {"query": "where does Ricardo live?"}, "read", 200),
        ("get", url(agent, "facts"), None, "read", 200),
        ("get", url(agent, "facts", corrected.id), None, "read", 200),
        ("get", url(agent, "facts", corrected.id, "history"), None, "read", 200),
        ("get", url(agent, "entities"), None, "read", 200),
        ("get", url(agent, "entities", entity.id), None, "read", 200),
        ("get", url(agent, "relationships"), None, "read", 200),
        ("get", url(agent, "relationships", rel.id), None, "read", 200),
        ("get", url(agent, "graph") + f"?entity={entity.id}", None, "read", 200),
        ("get", url(agent, "traces"), None, "read", 200),
        ("get", url(agent, "traces", job.id), None, "read", 200),
        ("post", url(agent, "events"), {"speaker": "Rafael", "text": "Ana lives in Lisbon."}, "write", 202),
        ("post", url(agent, "facts", corrected.id, "correct"), {"text": "Ricardo lives in Austin", "reason": "moved"},
         "write", 201),
        ("post", url(agent, "facts", retracted.id, "retract"), {"reason": "wrong"}, "write", 200),
        ("post", url(agent, "entities", entity.id, "aliases"), {"alias": "Rico"}, "write", 201),
        ("post", url(agent, "entities", entity.id, "merge"), {"entity_id": other.id}, "admin", 200),
        ("post", url(agent, "entities", entity.id, "forget"), {}, "admin", 200),
    ]


def call(client: APIClient, method: str, path: str, body):
    return getattr(client, method)(path, body, format="json") if body is not None else getattr(client, method)(path)


def assert_error(response, status: int, code: str):
    assert response.status_code == status, (response.status_code, response.content[:300])
    body = response.json()
    assert set(body) == {"error"}
    assert body["error"]["code"] == code
    assert isinstance(body["error"]["message"], str) and body["error"]["message"]
    assert isinstance(body["error"]["fields"], dict)


# --- keys ----------------------------------------------------------------------------------------

def test_a_key_is_stored_only_as_its_hash_and_prefix(agent):
    key, plaintext = api_key_create(agent=agent, scope="write", name="bot")
    assert plaintext.startswith("anm_") and len(plaintext) > 40
    row = ApiKey.objects.get(pk=key.pk)
    assert row.key_hash == hashlib.sha256(plaintext.encode()).hexdigest()
    assert row.prefix == plaintext[:8]
    assert plaintext not in str([getattr(row, f.attname) for f in ApiKey._meta.fields])
    assert api_key_authenticate(plaintext=plaintext) == row
    assert api_key_authenticate(plaintext=plaintext + "x") is None
    assert AuditEntry.objects.filter(action="api_key_create", object_id=str(key.pk)).exists()


def test_a_revoked_key_is_refused_with_401(agent, client_for):
    key, plaintext = api_key_create(agent=agent, scope="read")
    client = client_for(plaintext)
    assert client.get(url(agent, "facts")).status_code == 200
    assert ApiKey.objects.get(pk=key.pk).last_used_at is not None
    api_key_revoke(key_id=key.pk, actor="test")
    assert_error(client.get(url(agent, "facts")), 401, "authentication_failed")
    assert AuditEntry.objects.filter(action="api_key_revoke").count() == 1


@pytest.mark.parametrize("header", ["Bearer anm_not-a-key", "Bearer", "Bearer a b", "Bearer \u00e9t\u00e9"])
def test_bad_credentials_are_401(agent, header):
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=header.encode("utf-8").decode("latin-1"))
    response = client.get(url(agent, "facts"))
    assert_error(response, 401, "authentication_failed")
    assert response["WWW-Authenticate"].startswith("Bearer")


def test_create_api_key_command_prints_a_working_key_once(agent, client_for):
    out = io.StringIO()
    call_command("create_api_key", "--agent", agent.slug, "--scope", "write", "--name", "script", stdout=out)
    lines = out.getvalue().strip().splitlines()
    plaintext = lines[-1]
    assert plaintext.startswith("anm_") and "shown only once" in lines[0]
    key = ApiKey.objects.get(prefix=plaintext[:8])
    assert (key.agent, key.scope, key.name) == (agent, "write", "script")
    assert client_for(plaintext).get(url(agent, "facts")).status_code == 200

    out = io.StringIO()
    call_command("create_api_key", "--all", "--scope", "admin", "--quiet", stdout=out)
    assert ApiKey.objects.get(prefix=out.getvalue().strip()[:8]).agent is None


@pytest.mark.parametrize("args", [["--agent", "nobody", "--scope", "read"], ["--all", "--scope", "root"],
                                  ["--scope", "read"], ["--all", "--agent", "x", "--scope", "read"]])
def test_create_api_key_command_rejects_bad_arguments(db, args):
    with pytest.raises(CommandError):
        call_command("create_api_key", *args, stdout=io.StringIO(), stderr=io.StringIO())


# --- the cross-tenant matrix ---------------------------------------------------------------------

def test_every_endpoint_hides_another_agents_data(seeded, other_agent, make_key, client_for):
    foreign = client_for(make_key(other_agent, "admin"))
    anonymous = client_for(None)
    reader = client_for(make_key(seeded, "read"))
    for method, path, body, scope, allowed_status in endpoints(seeded):
        # a key of another agent: the agent and everything under it do not exist
        response = call(foreign, method, path, body)
        assert_error(response, 404, "not_found")
        assert "test-agent" in response.json()["error"]["message"]
        # no key at all
        assert_error(call(anonymous, method, path, body), 401, "not_authenticated")
        # a read key of the right agent may only read
        if scope != "read":
            assert_error(call(reader, method, path, body), 403, "permission_denied")
        else:
            assert call(reader, method, path, body).status_code == allowed_status, path
    # nothing was changed by any of those requests
    assert not AuditEntry.objects.filter(agent=seeded).exclude(action="api_key_create").exists()
    assert Event.objects.filter(agent=seeded).count() == 3


def test_a_foreign_agent_looks_exactly_like_a_missing_one(seeded, other_agent, make_key, client_for):
    foreign = client_for(make_key(other_agent, "admin"))
    real = foreign.get(url(seeded, "facts")).json()["error"]
    missing = foreign.get(url("no-such-agent", "facts")).json()["error"]
    assert real["message"].replace("test-agent", "X") == missing["message"].replace("no-such-agent", "X")
    assert real["code"] == missing["code"] == "not_found"


def test_a_key_bound_to_its_agent_is_read_with_it_in_one_statement(seeded, make_key, client_for):
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    bound = client_for(make_key(seeded, "read"))
    with CaptureQueriesContext(connection) as queries:
        assert bound.get(url(seeded, "facts")).status_code == 200
    agent_reads = [q["sql"] for q in queries.captured_queries if '"memories_agent"' in q["sql"]]
    assert agent_reads and all('"memories_apikey"' in sql for sql in agent_reads)
    everyone = client_for(make_key(None, "read"))  # a key of every agent: the agent looked up by its name
    with CaptureQueriesContext(connection) as queries:
        assert everyone.get(url(seeded, "facts")).status_code == 200
    assert any('"memories_agent"."slug" =' in q["sql"] for q in queries.captured_queries)


def test_agent_list_shows_only_the_keys_agent(seeded, other_agent, make_key, client_for):
    bound = client_for(make_key(seeded, "read")).get("/api/v1/agents/").json()
    assert [a["slug"] for a in bound["results"]] == ["test-agent"]
    everyone = client_for(make_key(None, "read")).get("/api/v1/agents/").json()
    assert {a["slug"] for a in everyone["results"]} == {"test-agent", "other-agent"}


@pytest.mark.parametrize("scope,agent_bound,status", [("admin", False, 201), ("admin", True, 403),
                                                      ("write", False, 403), ("read", False, 403)])
def test_only_admin_keys_for_all_agents_create_agents(agent, make_key, client_for, scope, agent_bound, status):
    client = client_for(make_key(agent if agent_bound else None, scope))
    response = client.post("/api/v1/agents/", {"slug": "new-agent", "name": "New"}, format="json")
    assert response.status_code == status
    if status == 201:
        assert response.json()["slug"] == "new-agent"
        assert client.get("/api/v1/agents/new-agent/").status_code == 200
        assert AuditEntry.objects.get(action="agent_create").actor.startswith("key:anm_")
        again = client.post("/api/v1/agents/", {"slug": "new-agent"}, format="json")
        assert_error(again, 400, "invalid")
        assert "slug" in again.json()["error"]["fields"]


@pytest.mark.parametrize("slug", ["Upper", "-dash", "with space", ""])
def test_agent_slugs_are_validated(db, make_key, client_for, slug):
    response = client_for(make_key(None, "admin")).post("/api/v1/agents/", {"slug": slug}, format="json")
    assert response.status_code == 400
    assert "slug" in response.json()["error"]["fields"] or "slug" in response.json()["error"]["message"]


# --- sessions and throttling ---------------------------------------------------------------------

def test_an_operators_session_acts_on_every_agent_and_is_audited(seeded, other_agent):
    operator = get_user_model().objects.create_user("olga", password="x")
    operator.groups.add(Group.objects.get(name="operators"))
    client = APIClient()
    client.force_login(operator)
    assert client.get(url(other_agent, "facts")).status_code == 200
    fact = Fact.objects.filter(agent=seeded).first()
    response = client.post(url(seeded, "facts", fact.id, "retract"), {"reason": "checked"}, format="json")
    assert response.status_code == 200
    assert AuditEntry.objects.get(action="fact_retract").actor == "user:olga"


def test_a_session_without_a_role_is_refused(seeded):  # tests/api/test_roles.py: every role
    user = get_user_model().objects.create_user("pat", password="x")
    client = APIClient()
    client.force_login(user)
    assert_error(client.get(url(seeded, "facts")), 403, "permission_denied")


def test_requests_are_throttled_per_key(agent, make_key, client_for, settings):
    settings.REST_FRAMEWORK = {**settings.REST_FRAMEWORK, "DEFAULT_THROTTLE_RATES": {"api": "3/min"}}
    busy, calm = client_for(make_key(agent, "read")), client_for(make_key(agent, "read"))
    assert [busy.get(url(agent, "facts")).status_code for _ in range(3)] == [200, 200, 200]
    response = busy.get(url(agent, "facts"))
    assert_error(response, 429, "throttled")
    assert int(response["Retry-After"]) > 0
    assert calm.get(url(agent, "facts")).status_code == 200
