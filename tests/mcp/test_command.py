"""`manage.py mcp` (the stdio transport) checks its key before it serves anything."""

from __future__ import annotations

import pytest
from django.core.management import CommandError, call_command

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize("key", ["", "anm_not-a-key"])
def test_the_stdio_command_refuses_to_start_without_a_valid_key(monkeypatch, key):
    monkeypatch.delenv("ANAMNESIS_MCP_KEY", raising=False)
    with pytest.raises(CommandError, match="a valid API key is required"):
        call_command("mcp", key=key)

