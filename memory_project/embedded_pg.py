"""Embedded PostgreSQL 16 + pgvector (from the `pgserver` package), managed explicitly.

pgserver's own lifecycle stops the server when the last Python handle exits, tracked in a PID
list that keeps dead PIDs. We never use that: the server is started on demand by whichever
process needs it first (under an inter-process lock) and stopped only by
`manage.py embedded_db stop`. Stale `postmaster.pid` files left by a crashed server are
detected and cleared before a start.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

EXTRA_CONF = """
# --- added by Anamnesis (memory_project/embedded_pg.py) ---
max_connections = 200
shared_buffers = 512MB
work_mem = 16MB
maintenance_work_mem = 256MB
effective_cache_size = 4GB
# A crash of the machine (not of Postgres) can lose the last few hundred milliseconds of
# commits, never consistency; it halves the cost of each small write transaction. A real
# server configured through DATABASE_URL keeps its own setting.
synchronous_commit = off
"""


def prepare_runtime_dir(base_dir: Path) -> Path:
    """Point XDG_RUNTIME_DIR at ./var/run (pgserver keeps its lock file there)."""
    runtime = base_dir / "var" / "run"
    runtime.mkdir(parents=True, exist_ok=True)
    runtime.chmod(0o700)
    os.environ.setdefault("XDG_RUNTIME_DIR", str(runtime))
    return runtime


@dataclass(frozen=True)
class ServerStatus:
    running: bool
    pid: int | None
    socket_dir: str | None
    port: int | None
    pgdata: Path

    def describe(self) -> str:
        if not self.running:
            return f"embedded PostgreSQL is stopped (data: {self.pgdata})"
        return (
            f"embedded PostgreSQL is running (pid {self.pid}, socket {self.socket_dir}, "
            f"port {self.port}, data: {self.pgdata})"
        )


def _read_postmaster(pgdata: Path) -> list[str] | None:
    pid_file = pgdata / "postmaster.pid"
    try:
        return pid_file.read_text().splitlines()
    except FileNotFoundError:
        return None


def _pid_is_postgres(pid: int) -> bool:
    import psutil

    try:
        proc = psutil.Process(pid)
        return proc.is_running() and proc.status() != psutil.STATUS_ZOMBIE and "postgres" in proc.name()
    except (psutil.NoSuchProcess, psutil.AccessDenied):
        return False


def status(pgdata: Path) -> ServerStatus:
    lines = _read_postmaster(pgdata)
    if not lines or len(lines) < 5:
        return ServerStatus(False, None, None, None, pgdata)
    pid = int(lines[0].strip())
    running = _pid_is_postgres(pid)
    port = int(lines[3]) if lines[3].strip() else None
    return ServerStatus(running, pid if running else None, lines[4].strip() or None, port, pgdata)


def _clear_stale_pidfile(pgdata: Path) -> None:
    """A postmaster.pid whose PID is dead (or reused by another program) blocks pgserver."""
    lines = _read_postmaster(pgdata)
    if lines and not _pid_is_postgres(int(lines[0].strip())):
        with contextlib.suppress(FileNotFoundError):
            (pgdata / "postmaster.pid").unlink()


def _append_conf(pgdata: Path) -> None:
    """Our settings live in anamnesis.conf, rewritten at every start and included last, so a
    data directory made by an older version picks up new settings too."""
    conf = pgdata / "postgresql.conf"
    if not conf.exists():
        return
    (pgdata / "anamnesis.conf").write_text(EXTRA_CONF)
    if "include_if_exists = 'anamnesis.conf'" not in conf.read_text():
        with conf.open("a") as fh:
            fh.write("\ninclude_if_exists = 'anamnesis.conf'\n")


def start(pgdata: Path) -> ServerStatus:
    """Start the server if needed (idempotent, safe across processes)."""
    current = status(pgdata)
    if current.running:
        return current
    import fasteners

    pgdata.parent.mkdir(parents=True, exist_ok=True)
    lock = fasteners.InterProcessLock(str(pgdata.parent / ".pgdata.lock"))
    with lock:
        current = status(pgdata)
        if current.running:
            return current
        _clear_stale_pidfile(pgdata)
        from pgserver.postgres_server import PostgresServer

        if (pgdata / "PG_VERSION").exists():
            _append_conf(pgdata)
        pgdata.mkdir(exist_ok=True)
        server = PostgresServer(pgdata.resolve(), cleanup_mode=None)
        # We manage the lifecycle ourselves: forget pgserver's PID bookkeeping and atexit hook.
        server.global_process_id_list.get_and_remove(os.getpid())
        import atexit

        atexit.unregister(server._cleanup)
        conf_was_new = "include_if_exists = 'anamnesis.conf'" not in (pgdata / "postgresql.conf").read_text()
        if conf_was_new:
            _append_conf(pgdata)
            _pg_ctl(pgdata, ["-w", "restart", "-l", str(pgdata / "log")])
    return _wait_running(pgdata)


def _wait_running(pgdata: Path, timeout: float = 30.0) -> ServerStatus:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        current = status(pgdata)
        lines = _read_postmaster(pgdata) or []
        if current.running and len(lines) >= 8 and lines[7].strip() == "ready":
            return current
        time.sleep(0.2)
    raise RuntimeError(f"embedded PostgreSQL did not become ready; see {pgdata / 'log'}")


def _pg_ctl(pgdata: Path, args: list[str]) -> None:
    from pgserver._commands import pg_ctl

    user = "pgserver" if os.geteuid() == 0 else None
    # pg_ctl restart re-uses the options the server was started with (socket dir, no TCP).
    pg_ctl(args, pgdata=pgdata, user=user, timeout=60)


def stop(pgdata: Path) -> ServerStatus:
    current = status(pgdata)
    if current.running:
        try:
            _pg_ctl(pgdata, ["-w", "-m", "fast", "stop"])
        except subprocess.CalledProcessError:
            import psutil

            with contextlib.suppress(psutil.NoSuchProcess):
                psutil.Process(current.pid).terminate()
    _clear_stale_pidfile(pgdata)
    return status(pgdata)


def django_database(pgdata: Path, *, autostart: bool, name: str = "anamnesis") -> dict:
    """The DATABASES['default'] entry for the embedded server (starting it when asked)."""
    current = start(pgdata) if autostart else status(pgdata)
    socket_dir = current.socket_dir or str(pgdata)
    if autostart:
        _ensure_database(socket_dir, current.port or 5432, name)
    return {
        "ENGINE": "django.db.backends.postgresql",
        "NAME": name,
        "USER": "postgres",
        "PASSWORD": "",
        "HOST": socket_dir,
        "PORT": str(current.port or 5432),
        "CONN_MAX_AGE": 60,
        "CONN_HEALTH_CHECKS": True,
    }


def _ensure_database(socket_dir: str, port: int, name: str) -> None:
    import psycopg

    with psycopg.connect(
        host=socket_dir, port=port, user="postgres", dbname="postgres", autocommit=True
    ) as conn:
        exists = conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", (name,)).fetchone()
        if not exists:
            with contextlib.suppress(psycopg.errors.DuplicateDatabase):
                conn.execute(f'CREATE DATABASE "{name}"')
