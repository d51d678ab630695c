"""Hearth's storage (no Qt): one SQLite database with migrations, and atomic JSON files.

``db`` opens the database and owns its one connection on one thread; ``errors`` turns SQLite's
environmental failures (disk full, busy, damaged file) into typed errors a user can act on;
``schema`` lists the migrations; ``legacy`` imports the JSON files of earlier versions;
``atomic`` writes whole files or nothing, for the JSON caches.
"""
