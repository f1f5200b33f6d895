"""Password guessing at /ui/login/ (and /admin/login/) is throttled by django-axes: after
AXES_FAILURE_LIMIT failures for one user name from one address that pair is refused — the right
password included — until the cool-off has passed since the last failure; other addresses and
other user names are not held back, and a success clears the count."""

from __future__ import annotations

from datetime import timedelta

import pytest
from axes.models import AccessAttempt
from django.conf import settings
from django.contrib.auth.models import User

from tests.faults.figures import record

pytestmark = pytest.mark.django_db
LOGIN = "/ui/login/"
ATTACKER, COLLEAGUE = "203.0.113.66", "198.51.100.7"


@pytest.fixture
def admin_user(db):
    return User.objects.create_superuser("admin", "admin@example.com", "right-password")


def attempt(client, password, *, username="admin", address=ATTACKER, path=LOGIN):
    return client.post(path, {"username": username, "password": password}, REMOTE_ADDR=address)


def logged_in(response) -> bool:
    return response.status_code == 302 and response["Location"].startswith("/ui/")


def test_guessing_locks_the_user_name_out_from_that_address_even_with_the_right_password(client, admin_user):
    limit = settings.AXES_FAILURE_LIMIT
    answers = [attempt(client, f"guess-{n}").status_code for n in range(limit)]
    assert answers == [200] * (limit - 1) + [429]  # the form again ("did not match"), then the lockout
    locked = attempt(client, "right-password")
    assert locked.status_code == 429 and not logged_in(locked)
    page = locked.content.decode()
    assert "Too many failed logins" in page and "admin" in page and "15 minutes" in page
    assert "_auth_user_id" not in client.session
    record("attack_login_guessing", title="Password guessing at /ui/login/ from one address", passed=True,
           figures={"failures before the lockout": answers.index(429) + 1,
                    "right password while locked": locked.status_code,
                    "cool-off (min)": settings.AXES_COOLOFF_TIME.total_seconds() / 60})


def test_the_lockout_holds_no_one_else_back_and_ends_after_the_cool_off(client, admin_user):
    User.objects.create_user("otto", "otto@example.com", "otto-password")
    for n in range(settings.AXES_FAILURE_LIMIT):
        attempt(client, f"guess-{n}")
    assert attempt(client, "right-password").status_code == 429
    assert logged_in(attempt(client, "right-password", address=COLLEAGUE))  # another address
    client.logout()
    assert logged_in(attempt(client, "otto-password", username="otto"))  # another user, same address
    client.logout()
    AccessAttempt.objects.update(attempt_time=AccessAttempt.objects.first().attempt_time
                                 - settings.AXES_COOLOFF_TIME - timedelta(seconds=1))
    assert logged_in(attempt(client, "right-password"))


def test_a_success_clears_the_count(client, admin_user):
    for n in range(settings.AXES_FAILURE_LIMIT - 1):
        attempt(client, f"typo-{n}")
    assert logged_in(attempt(client, "right-password"))
    client.logout()
    for n in range(settings.AXES_FAILURE_LIMIT - 1):
        assert attempt(client, f"typo-again-{n}").status_code == 200
    assert logged_in(attempt(client, "right-password"))


def test_the_admin_login_is_throttled_too(client, admin_user):
    for n in range(settings.AXES_FAILURE_LIMIT):
        attempt(client, f"guess-{n}", path="/admin/login/")
    assert attempt(client, "right-password", path="/admin/login/").status_code == 429
    assert attempt(client, "right-password").status_code == 429  # one count for both forms
