"""Safe defaults: no 5xx for any URL or method, no debug pages or URL lists, production refuses
to start unconfigured, health answers from a cache and is throttled like invalid keys, and a
read-scoped key may retrieve."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from django.core.cache import cache
from django.test import Client

from memory_project import health
from tests.api.conftest import url

pytestmark = pytest.mark.django_db
METHODS = ("get", "post", "put", "patch", "delete", "options", "head")


@pytest.mark.parametrize("path", ["/api/v1", "/api/v1/", "/api", "/api/v2/x", "/api/v1/agents",
                                  "/api/v1/agents/test-agent/events", "/api/v1/agents/test-agent/events/",
                                  "/api/v1/nowhere/", "/nowhere", "/admin", "/"])
def test_no_url_and_method_answers_5xx_or_lists_patterns(agent, path):
    client = Client(enforce_csrf_checks=True)
    for method in METHODS:
        response = getattr(client, method)(path, data="{}", content_type="application/json") if method in (
            "post", "put", "patch") else getattr(client, method)(path)
        assert response.status_code < 500, (method, path, response.status_code)
        body = response.content.decode(errors="replace")
        assert "URLconf" not in body and "Traceback" not in body and "DATABASES" not in body, (method, path)


def test_anonymous_post_to_the_api_root_without_slash_is_a_json_404(db):
    response = Client().post("/api/v1", data="{}", content_type="application/json")
    assert response.status_code == 404 and response.json()["error"]["code"] == "not_found"


def test_debug_is_off_unless_asked_for():
    env = {k: v for k, v in os.environ.items() if k != "DJANGO_DEBUG"}
    code = "import django, os; os.environ['DJANGO_SETTINGS_MODULE']='memory_project.settings.base'; " \
           "from django.conf import settings; print(settings.DEBUG)"
    env["ANAMNESIS_DB_AUTOSTART"] = "0"
    assert subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                          check=True).stdout.strip() == "False"
    env["DJANGO_DEBUG"] = "1"
    assert subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                          check=True).stdout.strip() == "True"


@pytest.mark.parametrize(("missing", "message"), [("DJANGO_SECRET_KEY", "DJANGO_SECRET_KEY"),
                                                  ("DJANGO_ALLOWED_HOSTS", "DJANGO_ALLOWED_HOSTS")])
def test_production_settings_refuse_to_start_unconfigured(missing, message):
    env = {**os.environ, "DJANGO_SECRET_KEY": "x" * 50, "DJANGO_ALLOWED_HOSTS": "memory.example.com",
           "ANAMNESIS_DB_AUTOSTART": "0"}
    env.pop(missing)
    code = "import os; os.environ['DJANGO_SETTINGS_MODULE']='memory_project.settings.production'; " \
           "from django.conf import settings; settings.DEBUG"
    run = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    assert run.returncode != 0 and "ImproperlyConfigured" in run.stderr and message in run.stderr


def test_health_is_cached_and_throttled(db, settings, monkeypatch):
    settings.REST_FRAMEWORK = {**settings.REST_FRAMEWORK,
                               "DEFAULT_THROTTLE_RATES": {"api": "1200/min", "anon": "5/min"}}
    from rest_framework.settings import api_settings

    api_settings.reload()
    calls = []
    monkeypatch.setattr(health, "check_database", lambda: calls.append("db"))
    monkeypatch.setattr(health, "check_broker", lambda: None)
    monkeypatch.setattr(health, "check_embedding", lambda: None)
    cache.clear()
    try:
        client = Client()
        statuses = [client.get("/api/v1/health/").status_code for _ in range(7)]
        assert statuses[:5] == [200] * 5 and statuses[5:] == [429, 429]
        assert calls == ["db"]  # one real check for five answers
    finally:
        cache.clear()
        settings.REST_FRAMEWORK = {**settings.REST_FRAMEWORK}
        api_settings.reload()


def test_invalid_keys_are_throttled(agent, settings, client_for):
    settings.REST_FRAMEWORK = {**settings.REST_FRAMEWORK,
                               "DEFAULT_THROTTLE_RATES": {"api": "1200/min", "anon": "3/min"}}
    from rest_framework.settings import api_settings

    api_settings.reload()
    try:
        bad = client_for("anm_not_a_real_key")
        statuses = [bad.get(url(agent, "events")).status_code for _ in range(5)]
        assert statuses == [401, 401, 401, 429, 429]
    finally:
        api_settings.reload()


def test_a_read_scoped_key_may_retrieve(seeded, make_key, client_for):
    reader = client_for(make_key(seeded, "read"))
    assert reader.post(url(seeded, "retrieve"), {"query": "Where does Ricardo live?"}, format="json").status_code == 200
    assert reader.post(url(seeded, "events"), {"speaker": "R", "text": "x"}, format="json").status_code == 403
