"""Test settings: the same embedded PostgreSQL (pytest-django creates test_anamnesis on it)."""

import os

from .base import *  # noqa: F403

DEBUG = False
PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
LOGGING["root"]["level"] = "WARNING"  # noqa: F405

# Real worker processes in tests use Redis (started by .ci/run when missing), on a queue of this
# test run's own; unacknowledged jobs of a killed worker come back after 5 s.
CELERY_BROKER_URL = os.environ.get("TEST_CELERY_BROKER_URL", "redis://127.0.0.1:6379/15")
# a killed worker's job is redelivered within seconds: unacked messages older than 5 s (unless the
# test's worker is given another ANAMNESIS_BROKER_VISIBILITY_TIMEOUT) are swept back every second
# (kombu's defaults sweep every ~100 s)
CELERY_BROKER_TRANSPORT_OPTIONS = {
    "visibility_timeout": float(os.environ.get("ANAMNESIS_BROKER_VISIBILITY_TIMEOUT", "5")),
    "unacked_restore_interval": 1, "unacked_restore_throttle": 1,
}
CELERY_TASK_DEFAULT_QUEUE = os.environ.get("CELERY_QUEUE") or f"anamnesis-test-{os.getpid()}"
# A forget's vacuum runs right after the commit, in the test's process (tests of the worker's path
# turn this off)
ANAMNESIS_ERASURE_VACUUM_INLINE = True
