"""Hearth's MCP host: a child process of the app that holds its MCP client sessions.

The GUI process never imports the MCP SDK (nor pydantic, starlette, httpx2's server friends):
it starts ``python -m mcphost`` (``hearth-mcphost``) and speaks the JSON-lines protocol of
:mod:`mcphost.wire`, the one module of this package it may import.
"""
