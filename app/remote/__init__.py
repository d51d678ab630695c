"""OpenAI-compatible servers the user added, and sharing this computer's model (no Qt).

``servers.py`` the server records and their file, ``keys.py`` their API keys (kept as every secret
is, app/storage/secrets.py), ``client.py`` the HTTP client whose failures are typed sentences,
``share.py`` the addresses the runner can listen on, the URL other devices use, its fixed port
and its kept key.
"""
