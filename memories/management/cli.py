"""What every command-line entry point shares: errors as one clear line and a non-zero exit,
never a traceback."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from django.core.management.base import CommandError
from django.db import DatabaseError, OperationalError, ProgrammingError

from memories.errors import DomainError


def _first_line(exc: BaseException) -> str:
    return (str(exc).strip().splitlines() or [type(exc).__name__])[0][:300]


@contextmanager
def cli_errors() -> Iterator[None]:
    try:
        yield
    except CommandError:
        raise
    except DomainError as exc:
        raise CommandError(exc.message) from exc
    except ProgrammingError as exc:
        if "does not exist" in str(exc):
            raise CommandError("the database is not migrated: run `python manage.py migrate`") from exc
        raise CommandError(f"database error: {_first_line(exc)}") from exc
    except OperationalError as exc:
        raise CommandError(f"the database is unavailable: {_first_line(exc)}") from exc
    except DatabaseError as exc:
        raise CommandError(f"database error: {_first_line(exc)}") from exc
    except Exception as exc:
        raise CommandError(f"{type(exc).__name__}: {_first_line(exc)}") from exc
