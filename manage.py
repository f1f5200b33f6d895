#!/usr/bin/env python
"""Django's command-line utility for administrative tasks."""
import os
import sys


def main():
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "memory_project.settings.base")
    if sys.argv[1:2] == ["embedded_db"]:
        # `embedded_db status|start|stop` manages the server itself: don't autostart it on import.
        os.environ.setdefault("ANAMNESIS_DB_AUTOSTART", "0")
    from django.core.management import execute_from_command_line

    execute_from_command_line(sys.argv)


if __name__ == "__main__":
    main()
