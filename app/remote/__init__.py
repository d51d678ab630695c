"""OpenAI-compatible servers the user added, and sharing this computer's model (no Qt).

``servers.py`` the server records and their file, ``keys.py`` their API keys in the OS keyring,
``client.py`` the HTTP client whose failures are typed sentences, ``share.py`` the addresses the
runner can listen on and the URL other devices use.
"""
