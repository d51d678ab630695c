"""Entry point of the frozen MCP host (the app starts it on first use of an MCP server;
PyInstaller runs this file as ``__main__``)."""

from mcphost.__main__ import main

raise SystemExit(main())
