"""A fresh database per test, opened on the test's own thread, and a clock that always moves."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from app.storage.db import Database, open_database
from app.storage.legacy import LegacySources


class Clock:
    """One second later at every call, so orderings by time never tie."""

    def __init__(self, start: float = 1_700_000_000.0) -> None:
        self.now = start

    def __call__(self) -> float:
        self.now += 1.0
        return self.now


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    return tmp_path / "hearth.sqlite3"


@pytest.fixture
def db(db_path: Path) -> Iterator[Database]:
    database = open_database(db_path, legacy=LegacySources())
    yield database
    database.close()
