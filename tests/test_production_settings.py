"""settings.production refuses to start without its secrets and turns the protections on."""

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CHECK = ("import django, json, logging; django.setup(); from django.conf import settings as s; "
         "print(json.dumps([s.DEBUG, s.SESSION_COOKIE_SECURE, s.SECURE_HSTS_SECONDS, s.ALLOWED_HOSTS])); "
         "logging.getLogger('x').warning('hello')")


def run(env_extra):
    env = {k: v for k, v in os.environ.items() if not k.startswith("DJANGO_")}
    env.update(DJANGO_SETTINGS_MODULE="memory_project.settings.production", ANAMNESIS_DB_AUTOSTART="0", **env_extra)
    return subprocess.run([sys.executable, "-c", CHECK], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=120)


def test_production_needs_a_secret_key_and_hosts():
    missing = run({"DJANGO_ALLOWED_HOSTS": "memory.example.org"})
    assert missing.returncode != 0 and "DJANGO_SECRET_KEY must be set" in missing.stderr
    missing = run({"DJANGO_SECRET_KEY": "x" * 50})
    assert missing.returncode != 0 and "DJANGO_ALLOWED_HOSTS must be set" in missing.stderr


def test_production_is_locked_down_and_logs_json():
    ok = run({"DJANGO_SECRET_KEY": "k" * 50, "DJANGO_ALLOWED_HOSTS": "memory.example.org"})
    assert ok.returncode == 0, ok.stderr
    assert ok.stdout.strip() == '[false, true, 31536000, ["memory.example.org"]]'
    assert '"message": "hello"' in ok.stderr and '"level": "WARNING"' in ok.stderr
