"""Tools never hang detection and never see a frozen app's library paths."""

from __future__ import annotations

import os
import sys
import time
from typing import Any

import psutil
import pytest

from app.hardware import _subprocess
from app.hardware._subprocess import clean_env, run_tool
from app.i18n import Text

posix_only = pytest.mark.skipif(sys.platform == "win32", reason="uses sh and sleep")


# Tools that would hang for an hour: only run_tool's time-out can end them within a test.
HANG = "3600"
GONE_WITHIN_S = 30.0  # a hang guard for the kill to take effect, not a speed


def _group(pgid: int) -> list[int]:
    """The live processes of process group ``pgid``."""
    found = []
    for proc in psutil.process_iter():
        try:
            if os.getpgid(proc.pid) == pgid and proc.status() != psutil.STATUS_ZOMBIE:
                found.append(proc.pid)
        except (ProcessLookupError, psutil.Error):
            pass
    return found


@pytest.fixture
def killed(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The process groups run_tool's time-out killed (each its tool's pid: the tool leads it)."""
    groups: list[int] = []
    real = _subprocess._kill

    def kill(proc: Any) -> None:
        groups.append(proc.pid)  # start_new_session: the tool's pid is its group's id
        real(proc)

    monkeypatch.setattr(_subprocess, "_kill", kill)
    return groups


def _group_gone(pgid: int) -> bool:
    deadline = time.monotonic() + GONE_WITHIN_S
    while time.monotonic() < deadline and _group(pgid):
        time.sleep(0.05)
    return not _group(pgid)


@posix_only
def test_a_hanging_tool_is_killed_at_the_timeout(killed: list[int]) -> None:
    result = run_tool(["sleep", HANG], timeout=0.5)
    # The time-out path was taken, and the tool is gone (it would have slept for an hour).
    assert not result.ok and result.reason == "sleep did not answer within 0.5 s"
    assert len(killed) == 1 and _group_gone(killed[0])


@posix_only
def test_a_hanging_grandchild_holding_the_pipe_is_killed_too(killed: list[int]) -> None:
    result = run_tool(["sh", "-c", f"sleep {HANG} & sleep {HANG}"], timeout=0.5)
    assert not result.ok and result.reason == "sh did not answer within 0.5 s"
    assert len(killed) == 1 and _group_gone(killed[0])  # the whole group went, not just sh


@posix_only
def test_timeouts_are_capped_at_three_seconds(killed: list[int]) -> None:
    result = run_tool(["sleep", HANG], timeout=60)
    # The 3 s cap fired (not the 60 s asked for, nor the tool's hour): its reason says so.
    assert not result.ok and result.reason == "sleep did not answer within 3 s"
    assert len(killed) == 1 and _group_gone(killed[0])


def test_missing_tool() -> None:
    result = run_tool(["hearth-no-such-tool-xyz"])
    assert not result.ok and result.reason == "hearth-no-such-tool-xyz is not installed"
    # A sentence the Hardware page translates; the tool's name stays data.
    assert isinstance(result.reason, Text)
    assert result.reason.args == {"tool": "hearth-no-such-tool-xyz"}


@posix_only
def test_failing_tool_reports_its_first_error_line() -> None:
    result = run_tool(["sh", "-c", "echo partial; echo 'no devices' >&2; exit 3"])
    assert not result.ok and result.returncode == 3
    assert result.reason == "sh failed: no devices"
    assert result.stdout == "partial\n"


def test_clean_env_restores_pyinstallers_saved_paths() -> None:
    env = clean_env({"LD_LIBRARY_PATH": "/opt/Hearth/_internal",
                     "LD_LIBRARY_PATH_ORIG": "/usr/local/cuda/lib64",
                     "PYTHONHOME": "/opt/Hearth/_internal", "PATH": "/usr/bin"},
                    bundle="/opt/Hearth/_internal")
    assert env["LD_LIBRARY_PATH"] == "/usr/local/cuda/lib64"
    assert "LD_LIBRARY_PATH_ORIG" not in env and "PYTHONHOME" not in env
    assert env["PATH"] == "/usr/bin" and env["LC_ALL"] == "C"


def test_clean_env_drops_bundle_entries_without_a_saved_value() -> None:
    env = clean_env({"LD_LIBRARY_PATH": "/opt/Hearth/_internal:/opt/rocm/lib",
                     "DYLD_LIBRARY_PATH": "/opt/Hearth/_internal/lib"}, bundle="/opt/Hearth/_internal")
    assert env["LD_LIBRARY_PATH"] == "/opt/rocm/lib"
    assert "DYLD_LIBRARY_PATH" not in env


def test_clean_env_from_source_keeps_the_users_paths() -> None:
    env = clean_env({"LD_LIBRARY_PATH": "/opt/rocm/lib", "PYTHONPATH": "/src"}, bundle="")
    assert env["LD_LIBRARY_PATH"] == "/opt/rocm/lib" and env["PYTHONPATH"] == "/src"


@posix_only
def test_the_tool_really_runs_with_the_cleaned_environment(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(sys, "frozen", True, raising=False)
    monkeypatch.setattr(sys, "_MEIPASS", "/opt/Hearth/_internal", raising=False)
    monkeypatch.setenv("LD_LIBRARY_PATH", "/opt/Hearth/_internal")
    monkeypatch.setenv("LD_LIBRARY_PATH_ORIG", "/usr/lib/user")
    assert _subprocess.bundle_dir() == "/opt/Hearth/_internal"
    result = run_tool(["sh", "-c", 'echo "$LD_LIBRARY_PATH|$LD_LIBRARY_PATH_ORIG"'])
    assert result.ok and result.stdout.strip() == "/usr/lib/user|"


class FakeKernel32:
    """GetDllDirectoryW / SetDllDirectoryW of a frozen app whose bootloader set its bundle."""

    def __init__(self, dll_directory: str) -> None:
        self.dll_directory = dll_directory
        self.calls: list[str | None] = []

    def GetDllDirectoryW(self, size: int, buf: object) -> int:
        buf.value = self.dll_directory  # type: ignore[attr-defined]
        return len(self.dll_directory)

    def SetDllDirectoryW(self, path: str | None) -> int:
        self.calls.append(path)
        self.dll_directory = path or ""
        return 1


@posix_only
def test_a_frozen_windows_apps_dll_directory_is_cleared_while_a_tool_starts(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    kernel32 = FakeKernel32(r"C:\Program Files\Hearth\_internal")
    monkeypatch.setattr(_subprocess, "_kernel32", lambda: kernel32)
    seen: list[str] = []
    real_popen = _subprocess.subprocess.Popen

    def popen(*args: object, **kwargs: object) -> object:
        seen.append(kernel32.dll_directory)  # what the child would inherit
        return real_popen(*args, **kwargs)  # type: ignore[call-overload]

    monkeypatch.setattr(_subprocess.subprocess, "Popen", popen)
    assert run_tool(["sh", "-c", "true"]).ok
    assert seen == [""]
    assert kernel32.calls == [None, r"C:\Program Files\Hearth\_internal"]  # and put back


def test_no_dll_directory_is_left_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    kernel32 = FakeKernel32("")
    monkeypatch.setattr(_subprocess, "_kernel32", lambda: kernel32)
    with _subprocess.dll_directory_cleared():
        pass
    assert kernel32.calls == []
