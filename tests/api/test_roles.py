"""A session's rights in the API are the UI's roles (memories.services.roles): viewers read,
operators also write and do the operator actions the UI allows them, superusers everything
(creating agents included). `is_staff` alone grants nothing, over the API as in the UI."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import Group, User
from rest_framework.test import APIClient

from memories.models import Agent, AuditEntry, Entity, Event
from tests.api.conftest import url
from tests.api.test_auth import assert_error, call, endpoints

pytestmark = pytest.mark.django_db

# what the UI lets each role do; the API must answer the same
READS, WRITES, ADMIN = "read", "write", "admin"
ALLOWED = {"viewer": {READS}, "operator": {READS, WRITES, ADMIN}, "superuser": {READS, WRITES, ADMIN}}


def session(name: str, *, group: str | None = None, **extra) -> APIClient:
    user = User.objects.create_user(name, f"{name}@example.com", "pw-" + name, **extra)
    if group:
        user.groups.add(Group.objects.get(name=group))
    client = APIClient()
    client.force_login(user)
    return client


@pytest.fixture
def sessions(db):
    return {
        "viewer": session("vera", group="viewers", is_staff=True),  # staff, as in the report: still a viewer
        "operator": session("otto", group="operators"),
        "superuser": session("root", is_superuser=True, is_staff=True),
    }


@pytest.mark.parametrize("role", ["viewer", "operator", "superuser"])
def test_each_role_may_do_over_the_api_what_the_ui_lets_it_do(seeded, sessions, role):
    client = sessions[role]
    for method, path, body, needs, allowed_status in endpoints(seeded):
        response = call(client, method, path, body)
        if needs in ALLOWED[role]:
            assert response.status_code == allowed_status, (role, method, path, response.content[:300])
        else:
            assert_error(response, 403, "permission_denied")
            assert f"'{needs}' scope" in response.json()["error"]["message"]
    if role == "viewer":  # nothing a viewer sent changed anything
        assert not AuditEntry.objects.filter(agent=seeded).exists()
        assert Event.objects.filter(agent=seeded).count() == 3


def test_a_staff_viewer_cannot_forget_or_create_agents_through_the_api(seeded, sessions, client):
    """The report: a staff user in `viewers` got 200 on forget and 201 on agent creation."""
    entity = Entity.objects.filter(agent=seeded).order_by("id").first()
    viewer = sessions["viewer"]
    assert_error(viewer.post(url(seeded, "entities", entity.id, "forget"), {}, format="json"), 403,
                 "permission_denied")
    assert_error(viewer.post("/api/v1/agents/", {"slug": "sneaky"}, format="json"), 403, "permission_denied")
    assert Entity.objects.filter(pk=entity.pk).exists() and not Agent.objects.filter(slug="sneaky").exists()
    # the UI answers the same to the same user
    client.force_login(User.objects.get(username="vera"))
    assert client.post(f"/ui/agents/{seeded.slug}/entities/{entity.id}/forget/").status_code == 403


def test_an_operator_forgets_and_merges_audited_as_itself_but_creates_no_agent(seeded, sessions):
    operator = sessions["operator"]
    first, second, third = Entity.objects.filter(agent=seeded).order_by("id")[:3]
    merged = operator.post(url(seeded, "entities", first.id, "merge"), {"entity_id": second.id}, format="json")
    assert merged.status_code == 200
    assert operator.post(url(seeded, "entities", third.id, "forget"), {}, format="json").status_code == 200
    assert set(AuditEntry.objects.filter(action__in=["entity_merge", "entity_forget"])
               .values_list("actor", flat=True)) == {"user:otto"}
    response = operator.post("/api/v1/agents/", {"slug": "new-agent"}, format="json")
    assert_error(response, 403, "permission_denied")
    assert "superuser" in response.json()["error"]["message"]
    assert not Agent.objects.filter(slug="new-agent").exists()


def test_a_superuser_creates_agents_and_sees_every_one(seeded, other_agent, sessions):
    root = sessions["superuser"]
    assert root.post("/api/v1/agents/", {"slug": "new-agent"}, format="json").status_code == 201
    assert AuditEntry.objects.get(action="agent_create").actor == "user:root"
    listed = {a["slug"] for a in root.get("/api/v1/agents/").json()["results"]}
    assert listed == {"test-agent", "other-agent", "new-agent"}


@pytest.mark.parametrize("extra", [{"is_staff": True}, {}])
def test_a_user_without_a_role_gets_nothing_staff_or_not(seeded, extra):
    client = session("nobody", **extra)
    response = client.get(url(seeded, "facts"))
    assert_error(response, 403, "permission_denied")
    assert "viewers or operators" in response.json()["error"]["message"]
    assert_error(client.get("/api/v1/agents/"), 403, "permission_denied")


def test_a_viewer_without_staff_reads_every_agent(seeded, other_agent):
    viewer = session("val", group="viewers")
    assert viewer.get(url(other_agent, "facts")).status_code == 200
    assert viewer.post(url(seeded, "retrieve"), {"query": "Where does Ricardo live?"}, format="json").status_code == 200


def test_metrics_follow_the_roles_not_is_staff(db, client):
    client.force_login(User.objects.create_user("staffonly", is_staff=True))
    assert client.get("/metrics").status_code == 403
    watcher = User.objects.create_user("watcher")
    watcher.groups.add(Group.objects.get(name="viewers"))
    client.force_login(watcher)
    assert client.get("/metrics").status_code == 200
