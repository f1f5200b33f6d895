"""`manage.py mcp`: the MCP server on stdio, for desktop clients that start it as a subprocess."""

import os

from django.core.management.base import BaseCommand, CommandError

from memories.services.api_keys import api_key_authenticate


class Command(BaseCommand):
    help = ("Serve the MCP tools (remember, recall, fact_history, search_entities, correct_fact, forget_entity) "
            "and entity-profile resources on stdio. The API key comes from --key or ANAMNESIS_MCP_KEY.")

    def add_arguments(self, parser):
        parser.add_argument("--key", help="API key (default: the ANAMNESIS_MCP_KEY environment variable)")

    def handle(self, *args, **opts):
        from memory_project import mcp as mcp_server  # the SDK and the tools load only for this command

        key = opts.get("key") or os.environ.get("ANAMNESIS_MCP_KEY", "")
        if api_key_authenticate(plaintext=key) is None:
            raise CommandError("a valid API key is required: --key or ANAMNESIS_MCP_KEY "
                               "(create one with `manage.py create_api_key`)")
        mcp_server.stdio_key_set(key)
        mcp_server.server.run("stdio")
