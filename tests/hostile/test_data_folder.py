"""A data folder Hearth cannot write to: the app starts and says what to do (issue 24, item 6).

Before, a read-only data folder ended the start in a traceback from app/paths.py and an abort
(exit 134), with no dialog. Now the start-up check writes a small file into the folder for real;
when that fails the person is asked (Quit, the default, or Continue with a temporary folder) and
the window comes up.

Real folders throughout: a read-only file system (a tmpfs mounted read-only in a mount namespace
of the app's own, so nothing outside it is touched and it vanishes with the process), a full
one, a folder that cannot exist because a regular file stands in its path (works for root too),
and permissions (skipped as root, who writes anywhere). The real app runs with ``--check-start``,
which prints what the dialog says, answers Continue, shows the window and exits.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtWidgets import QMessageBox

from app import paths
from app.storage.db import open_library
from app.storage.folder import FolderFault, check_writable
from app.storage.legacy import LegacySources
from app.ui import startup_problems as problems

REPO = Path(__file__).resolve().parents[2]
SHOWN = "hearth: window shown"
PROBLEM = "hearth: start-up problem: "

pytestmark = pytest.mark.skipif(os.name != "posix", reason="POSIX folders and mounts")


def _env(home: Path) -> dict[str, str]:
    # The temporary data folder lands in the case's own folder, the nearest real one above home.
    beside = next(p for p in home.parents if p.is_dir())
    env = dict(os.environ, HEARTH_HOME=str(home), QT_QPA_PLATFORM="offscreen",
               TMPDIR=str(beside))
    env.pop("HEARTH_DATA_DIR", None)
    env.pop("HEARTH_MODELS_DIR", None)  # the models folder inside the data folder, as installed
    return env


def _run(argv: list[str], home: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(argv, cwd=REPO, env=_env(home), capture_output=True, text=True,
                          timeout=240, check=False)


def _check_start(home: Path) -> subprocess.CompletedProcess[str]:
    return _run([sys.executable, "-m", "app", "--check-start"], home)


def _namespaces(folder: Path) -> bool:
    """Whether this machine lets a process mount a tmpfs on ``folder`` in a mount namespace of
    its own (root, or a user allowed unprivileged user namespaces)."""
    if shutil.which("unshare") is None:
        return False
    probe = subprocess.run(["unshare", "--user", "--map-root-user", "--mount", "sh", "-c",
                            'mount -t tmpfs -o ro none "$1"', "sh", str(folder)],
                           capture_output=True, timeout=30, check=False)
    return probe.returncode == 0


def _check_start_on_tmpfs(home: Path, options: str, prepare: str = "") -> \
        subprocess.CompletedProcess[str]:
    """``--check-start`` with ``home/data`` a tmpfs mounted with ``options``, in a mount
    namespace of its own; ``prepare`` runs first (in the shell, "$1" is the folder)."""
    data = home / "data"
    data.mkdir(parents=True)
    if not _namespaces(data):
        pytest.skip("no mount namespaces here (unshare, or an unprivileged user namespace)")
    script = f'mount -t tmpfs -o {options} none "$1" && {prepare or ":"} && exec "$2" -m app ' \
             f'--check-start'
    return _run(["unshare", "--user", "--map-root-user", "--mount", "sh", "-c", script, "sh",
                 str(data), sys.executable], home)


def _started_and_said(result: subprocess.CompletedProcess[str], *phrases: str) -> str:
    """The app started (exit 0, window shown) and showed one problem saying ``phrases``."""
    said = [line for line in result.stdout.splitlines() if line.startswith(PROBLEM)]
    assert result.returncode == 0, (result.returncode, result.stdout, result.stderr[-3000:])
    assert SHOWN in result.stdout, result.stdout
    assert "Traceback" not in result.stderr, result.stderr[-3000:]
    assert len(said) == 1, result.stdout
    for phrase in phrases:
        assert phrase in said[0], (phrase, said[0])
    return said[0]


# ---- the real app --------------------------------------------------------------------------

@pytest.mark.timeout(300)
def test_the_app_starts_with_a_read_only_data_folder_and_says_what_to_do(tmp_path: Path) -> None:
    home = tmp_path / "home"
    result = _check_start_on_tmpfs(home, "ro")
    said = _started_and_said(result, f"its data folder, {home / 'data'}",
                             "read-only file system", "HEARTH_DATA_DIR", "[Quit]",
                             f"[{problems.CONTINUE}]", "temporary folder")
    # The temporary folder the dialog named took this session's library.
    temporary = next(tmp_path.glob("hearth-data-*"))
    assert str(temporary) in said
    assert (temporary / "hearth.sqlite3").is_file()


@pytest.mark.timeout(300)
def test_the_app_starts_with_a_full_data_folder_and_says_so(tmp_path: Path) -> None:
    home = tmp_path / "home"
    fill = 'head -c 4194304 /dev/zero > "$1/fill" 2>/dev/null; true'
    result = _check_start_on_tmpfs(home, "size=1m", fill)
    _started_and_said(result, f"its data folder, {home / 'data'}", "the disk is full",
                      "Free some space", "HEARTH_DATA_DIR")


@pytest.mark.timeout(300)
def test_the_app_starts_when_a_file_stands_where_the_data_folder_should_be(
        tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    (home / "data").write_text("not a folder")  # works as root too: nobody mkdirs over a file
    result = _check_start(home)
    _started_and_said(result, f"a file, {home / 'data'}, stands where a folder should be",
                      "Move that file out of the way", "HEARTH_DATA_DIR")
    assert (home / "data").read_text() == "not a folder"


@pytest.mark.timeout(300)
def test_the_app_starts_when_the_whole_hearth_folder_lies_under_a_file(tmp_path: Path) -> None:
    """Not even the log or the settings folder can exist: still a window and the question."""
    blocker = tmp_path / "a-file"
    blocker.write_text("x")
    result = _check_start(blocker / "home")
    _started_and_said(result, f"a file, {blocker}, stands where a folder should be")


@pytest.mark.skipif(os.name != "posix" or os.geteuid() == 0, reason="root writes any folder")
@pytest.mark.timeout(300)
def test_the_app_starts_with_a_data_folder_it_may_not_write(tmp_path: Path) -> None:
    home = tmp_path / "home"
    (home / "data").mkdir(parents=True)
    (home / "data").chmod(0o500)
    try:
        result = _check_start(home)
    finally:
        (home / "data").chmod(0o700)
    _started_and_said(result, "you do not have permission to write there",
                      "Give your user account permission")


# ---- the check and the question, in process ------------------------------------------------

@pytest.mark.timeout(60)
def test_paths_never_raise_for_a_folder_that_cannot_be_created(tmp_path: Path,
                                                              monkeypatch: pytest.MonkeyPatch
                                                              ) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("x")
    monkeypatch.setenv("HEARTH_HOME", str(blocker / "home"))
    monkeypatch.delenv("HEARTH_DATA_DIR", raising=False)
    assert paths.data_dir() == blocker / "home" / "data"  # named, not created, no traceback
    assert paths.log_dir() == blocker / "home" / "log"
    assert paths.config_dir() == blocker / "home" / "config"


@pytest.mark.timeout(60)
def test_the_check_names_the_file_in_the_way(tmp_path: Path) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("x")
    problem = check_writable(blocker / "deeper" / "data")
    assert problem is not None
    assert (problem.fault, problem.blocker) == (FolderFault.NOT_A_FOLDER, blocker)
    assert str(blocker / "deeper" / "data") in str(problem)
    assert check_writable(tmp_path / "fine") is None
    assert list((tmp_path / "fine").iterdir()) == []  # the probe file is gone again


@pytest.mark.skipif(os.name != "posix" or os.geteuid() == 0, reason="root writes any folder")
@pytest.mark.timeout(60)
def test_the_check_finds_a_folder_without_write_permission(tmp_path: Path) -> None:
    folder = tmp_path / "data"
    folder.mkdir()
    folder.chmod(0o500)
    try:
        problem = check_writable(folder)
    finally:
        folder.chmod(0o700)
    assert problem is not None and problem.fault is FolderFault.PERMISSION


@pytest.fixture
def blocked_data(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A data folder that cannot be created; the environment comes back after the test."""
    blocker = tmp_path / "a-file"
    blocker.write_text("x")
    monkeypatch.setenv("HEARTH_DATA_DIR", str(blocker / "data"))
    monkeypatch.setenv("HEARTH_MODELS_DIR", "")  # restored afterwards; empty reads as unset
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    monkeypatch.setattr("tempfile.tempdir", None)  # so mkdtemp reads TMPDIR again
    return blocker / "data"


@pytest.mark.timeout(60)
def test_the_question_defaults_to_quit_and_quitting_changes_nothing(qtbot: Any,
                                                                   blocked_data: Path,
                                                                   tmp_path: Path) -> None:
    asked: list[QMessageBox] = []

    def ask(box: QMessageBox) -> bool:
        asked.append(box)
        assert box.defaultButton() is box.escapeButton()
        assert box.defaultButton().text() == problems.QUIT  # Enter or Escape: nothing hidden
        box.defaultButton().click()
        return problems.continue_button_clicked(box)

    assert problems.prepare_data_folder(ask) is False
    assert len(asked) == 1
    assert sorted(b.text() for b in asked[0].buttons()) == [problems.CONTINUE, problems.QUIT]
    assert os.environ["HEARTH_DATA_DIR"] == str(blocked_data)
    assert not list(tmp_path.glob("hearth-data-*"))  # the unused temporary folder is removed


@pytest.mark.timeout(60)
def test_continue_moves_the_data_to_the_temporary_folder_it_names(qtbot: Any,
                                                                   blocked_data: Path,
                                                                   tmp_path: Path) -> None:
    texts: list[str] = []

    def ask(box: QMessageBox) -> bool:
        texts.append(problems.box_text(box))
        go_on = next(b for b in box.buttons() if b.text() == problems.CONTINUE)
        go_on.click()
        return problems.continue_button_clicked(box)

    assert problems.prepare_data_folder(ask) is True
    temporary = next(tmp_path.glob("hearth-data-*"))
    assert str(temporary) in texts[0] and str(blocked_data) in texts[0]
    assert paths.data_dir() == temporary
    # The models already downloaded stay where they were; only the data moved.
    assert paths.models_dir() == blocked_data / "models"
    db = open_library(legacy=LegacySources())  # the default library, now in the temporary folder
    try:
        assert db.path == temporary / "hearth.sqlite3"
    finally:
        db.close()
