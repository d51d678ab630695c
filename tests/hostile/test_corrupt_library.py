"""A damaged library: set aside, the person told, a new one used (issue 24, item 10).

Before, ``set_aside_damaged()`` existed and nothing called it: a library with damaged pages
opened, the sidebar stayed empty, every save failed, and the failure to *read* the list was shown
as "Could not save the conversation". Now quick_check runs at open, the app's opener renames the
damaged file beside itself (never deletes it) and begins a new library, the window says where the
old one went, and a failure to read says "Could not read …".

Real SQLite files throughout, damaged by overwriting bytes in their pages; the real app runs with
``--check-start``, which prints what its notice says.
"""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from app.library.conversations import ConversationStore
from app.services.storage import ConversationService, StoreService
from app.storage.db import (
    SetAside,
    StorageCorruptError,
    StoreThread,
    open_database,
    open_library,
)
from app.storage.legacy import LegacySources
from app.ui.conversations_sidebar import ConversationsSidebar
from app.ui.startup_problems import box_text, library_notice

REPO = Path(__file__).resolve().parents[2]
NO_LEGACY = LegacySources()
PAGE = 4096
WAIT_MS = 10_000


def _library(path: Path, conversations: int = 5, messages: int = 40) -> None:
    """A real library, several pages long, with conversations in it."""
    db = open_database(path, legacy=NO_LEGACY)
    try:
        store = ConversationStore(db)
        for c in range(conversations):
            conv = store.create(f"conversation {c}")
            for m in range(messages):
                store.append_message(conv, "user", f"message {m} " + "x" * 2000)
    finally:
        db.close()


def _damage_pages(path: Path) -> bytes:
    """Overwrite pages after the first (the header and schema stay readable, so the file still
    opens: only some reads fail). Returns the damaged file's bytes."""
    with path.open("r+b") as f:
        f.seek(3 * PAGE)
        f.write(b"\xa5" * (4 * PAGE))
    return path.read_bytes()


def _quick_check(path: Path) -> str:
    conn = sqlite3.connect(path)
    try:
        return str(conn.execute("PRAGMA quick_check").fetchone()[0])
    finally:
        conn.close()


def _damaged_beside(path: Path) -> list[Path]:
    return sorted(path.parent.glob(f"{path.name}.damaged-*"))


@pytest.fixture
def damaged(tmp_path: Path) -> tuple[Path, bytes]:
    path = tmp_path / "hearth.sqlite3"
    _library(path)
    return path, _damage_pages(path)


# ---- opening -------------------------------------------------------------------------------

@pytest.mark.timeout(60)
def test_a_partly_readable_library_is_refused_at_open_not_at_some_later_read(
        damaged: tuple[Path, bytes]) -> None:
    path, before = damaged
    with pytest.raises(StorageCorruptError, match="malformed") as caught:
        open_database(path, legacy=NO_LEGACY).close()
    assert str(path) in str(caught.value) and caught.value.detail
    assert path.read_bytes() == before  # refused without writing to it


@pytest.mark.timeout(60)
def test_the_opener_sets_a_damaged_library_aside_and_begins_a_new_one(
        damaged: tuple[Path, bytes]) -> None:
    path, before = damaged
    db = open_library(path, legacy=NO_LEGACY)
    try:
        assert isinstance(db.set_aside, SetAside)
        moved = db.set_aside.moved
        assert _damaged_beside(path) == [moved]
        assert moved.read_bytes() == before  # every byte kept, for recovery tools
        assert str(moved) in str(db.set_aside) and "nothing in it was deleted" in str(
            db.set_aside)
        # The new library works: nothing waits for the person to move the file by hand.
        store = ConversationStore(db)
        assert store.search("") == []
        conv = store.create("after the damage")
        store.append_message(conv, "user", "saved")
    finally:
        db.close()
    assert _quick_check(path) == "ok"
    again = open_library(path, legacy=NO_LEGACY)  # and it stays: nothing set aside twice
    try:
        assert again.set_aside is None
        assert [r.title for r in ConversationStore(again).search("")] == ["after the damage"]
    finally:
        again.close()
    assert _damaged_beside(path) == [moved]


@pytest.mark.timeout(60)
def test_a_file_that_is_not_a_database_is_set_aside(tmp_path: Path) -> None:
    path = tmp_path / "hearth.sqlite3"
    garbage = os.urandom(3 * PAGE)
    path.write_bytes(garbage)
    db = open_library(path, legacy=NO_LEGACY)
    try:
        assert db.set_aside is not None
        moved = db.set_aside.moved
        assert "not a database" in db.set_aside.detail
    finally:
        db.close()
    assert moved.read_bytes() == garbage


@pytest.mark.timeout(60)
def test_a_healthy_library_is_left_where_it_is(tmp_path: Path) -> None:
    path = tmp_path / "hearth.sqlite3"
    _library(path, conversations=2, messages=3)
    db = open_library(path, legacy=NO_LEGACY)
    try:
        assert db.set_aside is None
        assert len(ConversationStore(db).search("")) == 2
    finally:
        db.close()
    assert _damaged_beside(path) == []


# ---- what the person sees ------------------------------------------------------------------

@pytest.mark.timeout(60)
def test_the_store_service_reports_the_set_aside_on_the_gui_thread(
        qtbot: Any, damaged: tuple[Path, bytes]) -> None:
    path, _before = damaged
    store = StoreService(StoreThread(lambda: open_library(path, legacy=NO_LEGACY)))
    try:
        with qtbot.waitSignal(store.opened, timeout=WAIT_MS) as opened:
            pass
        outcome = opened.args[0]
        assert isinstance(outcome, SetAside)
        late: list[object] = []
        store.when_opened(late.append)  # asked after the fact: answered at once
        assert late == [outcome]
        box = library_notice(outcome)
        assert box is not None
        text = box_text(box)
        assert str(outcome.moved) in text and "new, empty one" in text
    finally:
        store.close()


@pytest.mark.timeout(60)
def test_a_library_that_cannot_be_read_says_could_not_read_not_could_not_save(
        qtbot: Any, damaged: tuple[Path, bytes]) -> None:
    """The plain opener (no setting aside) keeps the library closed: every read fails."""
    path, _before = damaged
    store = StoreService(StoreThread(lambda: open_database(path, legacy=NO_LEGACY)))
    service = ConversationService(store)
    saves: list[str] = []
    service.failed.connect(saves.append)
    sidebar = ConversationsSidebar(service)  # asks for the list at once
    qtbot.addWidget(sidebar)
    try:
        qtbot.waitUntil(lambda: sidebar.problem.isVisibleTo(sidebar), timeout=WAIT_MS)
        shown = sidebar.problem.text.text()  # a Banner: its sentence
        assert shown.startswith("Could not read the conversations.")
        assert str(path) in shown and "damaged" in shown
        assert saves == []  # the window shows these as "Could not save the conversation"
        # And at start the person hears why the library stayed closed.
        outcomes: list[object] = []
        store.when_opened(outcomes.append)
        qtbot.waitUntil(lambda: bool(outcomes), timeout=WAIT_MS)
        assert isinstance(outcomes[0], StorageCorruptError)
        box = library_notice(outcomes[0])
        assert box is not None and box_text(box).startswith("Hearth cannot open its library")
    finally:
        store.close()


# ---- the real app --------------------------------------------------------------------------

@pytest.fixture
def home(tmp_path: Path) -> Iterator[Path]:
    folder = tmp_path / "home"
    (folder / "data").mkdir(parents=True)
    yield folder


@pytest.mark.timeout(300)
def test_the_app_starts_with_a_damaged_library_sets_it_aside_and_says_where(home: Path) -> None:
    library = home / "data" / "hearth.sqlite3"
    _library(library)
    before = _damage_pages(library)
    env = dict(os.environ, HEARTH_HOME=str(home), QT_QPA_PLATFORM="offscreen")
    env.pop("HEARTH_DATA_DIR", None)
    result = subprocess.run([sys.executable, "-m", "app", "--check-start"], cwd=REPO, env=env,
                            capture_output=True, text=True, timeout=240, check=False)
    assert result.returncode == 0, (result.stdout, result.stderr[-3000:])
    assert "hearth: window shown" in result.stdout
    moved = _damaged_beside(library)
    assert len(moved) == 1, list(library.parent.iterdir())
    assert moved[0].read_bytes() == before
    said = [line for line in result.stdout.splitlines()
            if line.startswith("hearth: start-up problem: ")]
    assert len(said) == 1, result.stdout
    assert str(moved[0]) in said[0] and "set it aside" in said[0]
    assert _quick_check(library) == "ok"  # the new library the app used
