"""The embedded server's bookkeeping: stale PID files never block the next start."""

import subprocess

from memory_project import embedded_pg


def _postmaster(pgdata, pid):
    (pgdata / "postmaster.pid").write_text(f"{pid}\n{pgdata}\n1700000000\n5432\n{pgdata}\n\n  1 2\nready\n")


def test_status_reports_a_dead_pid_as_stopped_and_start_clears_it(tmp_path):
    proc = subprocess.Popen(["true"])
    proc.wait()
    _postmaster(tmp_path, proc.pid)
    assert embedded_pg.status(tmp_path).running is False
    embedded_pg._clear_stale_pidfile(tmp_path)
    assert not (tmp_path / "postmaster.pid").exists()


def test_a_reused_pid_of_another_program_is_not_taken_for_postgres(tmp_path):
    sleeper = subprocess.Popen(["sleep", "30"])
    try:
        _postmaster(tmp_path, sleeper.pid)
        assert embedded_pg.status(tmp_path).running is False
    finally:
        sleeper.kill()


def test_the_running_test_server_is_reported_running(django_db_setup):
    from django.conf import settings

    if settings.DATABASE_URL:
        return
    state = embedded_pg.status(settings.EMBEDDED_PGDATA)
    assert state.running and state.pid
    assert "running" in state.describe()
