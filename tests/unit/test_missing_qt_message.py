"""Issue 25, defect 14: the missing-Qt-library message reached only the terminal.

A person who starts Hearth from the menu has no terminal: the message must also reach the
desktop (a notification, else a dialog) and the log file, and the terminal line must stay.

The first tests are real starts in subprocesses: fake ``notify-send``, ``zenity`` and ``kdialog``
(shell scripts that record their arguments) come first on PATH, a fake ``tkinter`` package
records being imported, and the missing library is simulated at the same boundary as
tests/unit/test_qtdeps.py (``app.qtdeps.library_loads``). Then the pure parts, with fakes.
"""

from __future__ import annotations

import importlib
import os
import stat
import subprocess
import sys
import textwrap
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[2]
LAUNCHER = ROOT / "installers" / "pyinstaller" / "hearth_gui.py"
ABSENT = ("libxcb-cursor.so.0", "libxcb-icccm.so.4")
TITLE = "Hearth cannot open its window"
APT = "sudo apt install libxcb-cursor0 libxcb-icccm4"
DNF = "sudo dnf install xcb-util-cursor xcb-util-wm"
TOOLS = ("notify-send", "zenity", "kdialog")

# The start, with the libraries in ABSENT missing and Qt unimportable (should the check let it
# through, Qt's own abort must not be what the test sees).
START = textwrap.dedent("""
    import runpy, sys
    from app import qtdeps
    absent = set(sys.argv[2:])
    qtdeps.library_loads = lambda soname: soname not in absent
    for name in ("PySide6", "PySide6.QtCore", "PySide6.QtGui", "PySide6.QtWidgets"):
        sys.modules[name] = None
    entry, sys.argv[1:] = sys.argv[1], []
    if entry == "module":
        runpy.run_module("app", run_name="__main__", alter_sys=True)  # python -m app
    else:
        runpy.run_path(entry, run_name="__main__")  # the frozen app's launcher
""")


@dataclass
class Desktop:
    """A fake desktop: tools on PATH that record their arguments, an isolated Hearth home."""

    tmp: Path
    status: dict[str, int] = field(default_factory=dict)  # a tool's exit status (default 0)
    display: dict[str, str] = field(default_factory=lambda: {"DISPLAY": ":93"})

    @property
    def records(self) -> Path:
        return self.tmp / "records"

    @property
    def log_file(self) -> Path:
        return self.tmp / "home" / "log" / "hearth.log"

    def install(self) -> dict[str, str]:
        bin_dir = self.tmp / "bin"
        for folder in (bin_dir, self.records, self.tmp / "py" / "tkinter"):
            folder.mkdir(parents=True, exist_ok=True)
        for tool in TOOLS:
            script = bin_dir / tool
            # NUL-separated: the message's lines stay in one argument.
            script.write_text(f"#!/bin/sh\nprintf '%s\\0' \"$@\" > \"$HEARTH_TEST_RECORDS/{tool}\"\n"
                              f"exit {self.status.get(tool, 0)}\n")
            script.chmod(script.stat().st_mode | stat.S_IXUSR)
        (self.tmp / "py" / "tkinter" / "__init__.py").write_text(
            "import os, pathlib\n"
            "pathlib.Path(os.environ['HEARTH_TEST_RECORDS'], 'tkinter').write_text('imported')\n"
            "raise ImportError('a test stand-in for tkinter')\n")
        env = {k: v for k, v in os.environ.items()
               if k not in ("DISPLAY", "WAYLAND_DISPLAY", "XDG_SESSION_TYPE", "QT_QPA_PLATFORM",
                            "PYTHONPATH")}
        env.update(self.display)
        env["PATH"] = f"{bin_dir}{os.pathsep}{env.get('PATH', os.defpath)}"
        env["PYTHONPATH"] = str(self.tmp / "py")
        env["HEARTH_HOME"] = str(self.tmp / "home")
        env["HEARTH_TEST_RECORDS"] = str(self.records)
        return env

    def start(self, entry: str = "module") -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-c", START, entry, *ABSENT], cwd=ROOT,
                              env=self.install(), capture_output=True, text=True, timeout=120)

    def called(self) -> dict[str, list[str]]:
        """What each tool was called with; ``tkinter`` when Tk was tried."""
        return {p.name: p.read_text().split("\0")[:-1] if p.name in TOOLS else []
                for p in sorted(self.records.iterdir())}


def _assert_terminal(done: subprocess.CompletedProcess[str]) -> None:
    assert done.returncode == 1, done.stderr
    # The terminal line stays as it was: the libraries, then the commands.
    for text in (*ABSENT, APT, DNF, TITLE):
        assert text in done.stderr, done.stderr


def _assert_log(desktop: Desktop) -> None:
    assert desktop.log_file.exists(), "nothing was written to the log file"
    log = desktop.log_file.read_text(encoding="utf-8")
    for text in (*ABSENT, APT, DNF):
        assert text in log, log


@pytest.mark.parametrize("entry", ["module", str(LAUNCHER)], ids=["python -m app", "launcher"])
def test_a_desktop_notification_names_the_libraries_and_the_packages(
        tmp_path: Path, entry: str) -> None:
    desktop = Desktop(tmp_path)
    done = desktop.start(entry)
    _assert_terminal(done)
    called = desktop.called()
    assert set(called) == {"notify-send"}, called  # the first way that worked, and no other
    args = called["notify-send"]
    assert TITLE in args
    body = args[-1]
    for text in (*ABSENT, APT, DNF):
        assert text in body, body
    assert "--urgency=critical" in args  # stays on screen until the person dismisses it
    assert str(desktop.log_file) in body  # where to copy the command from
    _assert_log(desktop)


def test_without_a_notification_service_a_dialog_says_it(tmp_path: Path) -> None:
    desktop = Desktop(tmp_path, status={"notify-send": 1})  # no notification daemon
    done = desktop.start()
    _assert_terminal(done)
    called = desktop.called()
    assert set(called) == {"notify-send", "zenity"}, called
    args = called["zenity"]
    assert "--error" in args
    text = next(a for a in args if a.startswith("--text="))
    for part in (TITLE, *ABSENT, APT, DNF):
        assert part in text, text
    _assert_log(desktop)


@pytest.mark.parametrize("display", [{}, {"DISPLAY": ""}], ids=["unset", "empty"])
def test_without_a_display_nothing_is_attempted(tmp_path: Path,
                                               display: dict[str, str]) -> None:
    desktop = Desktop(tmp_path, display=display)
    done = desktop.start()
    _assert_terminal(done)
    assert desktop.called() == {}  # no tool ran, and tkinter was not even imported
    _assert_log(desktop)


# ---- the pure parts -------------------------------------------------------------------------------


@pytest.fixture
def notify() -> ModuleType:
    return importlib.import_module("app.notify_failure")


@dataclass
class Tools:
    """Stand-ins for the programs on PATH and Tk; records what was tried, in order."""

    present: set[str] = field(default_factory=lambda: set(TOOLS))
    status: dict[str, int | None] = field(default_factory=dict)  # None: could not run
    tk_works: bool = True
    tried: list[str] = field(default_factory=list)
    envs: list[dict[str, str]] = field(default_factory=list)

    def find(self, name: str) -> str | None:
        return f"/usr/bin/{name}" if name in self.present else None

    def run(self, argv: list[str], env: dict[str, str], timeout: float | None) -> int | None:
        name = os.path.basename(argv[0])
        self.tried.append(name)
        self.envs.append(env)
        return self.status.get(name, 0)

    def tk(self, title: str, text: str) -> bool:
        self.tried.append("tk")
        return self.tk_works


def _notice(notify: ModuleType) -> object:
    return notify.Notice(title=TITLE, body="Install libxcb-cursor0 <now> & go.",
                         text="the terminal text\n")


def _tell(notify: ModuleType, tools: Tools, environ: dict[str, str], log: Path,
          frozen: bool = False) -> str | None:
    way: str | None = notify.tell(_notice(notify), environ=environ, log_file=log,
                                  find=tools.find, run=tools.run, show_tk=tools.tk,
                                  frozen=frozen)
    return way


@pytest.mark.parametrize(("tools", "way", "tried"), [
    (Tools(), "notify-send", ["notify-send"]),
    (Tools(status={"notify-send": 1}), "zenity", ["notify-send", "zenity"]),
    (Tools(status={"notify-send": None, "zenity": None}), "kdialog",
     ["notify-send", "zenity", "kdialog"]),
    (Tools(present={"kdialog"}), "kdialog", ["kdialog"]),
    (Tools(present=set()), "tk", ["tk"]),
    (Tools(present=set(), tk_works=False), None, ["tk"]),
    # A dialog the person closed with Esc or the window's button was seen: no second one.
    (Tools(status={"notify-send": 1, "zenity": 1}), "zenity", ["notify-send", "zenity"]),
])
def test_ways_are_tried_in_order_until_one_works(notify: ModuleType, tmp_path: Path, tools: Tools,
                                                 way: str | None, tried: list[str]) -> None:
    log = tmp_path / "hearth.log"
    assert _tell(notify, tools, {"DISPLAY": ":0", "PATH": "/usr/bin"}, log) == way
    assert tools.tried == tried
    text = log.read_text(encoding="utf-8")
    assert "the terminal text" in text
    assert (f"through {way}" in text) if way else "could not be shown" in text


@pytest.mark.parametrize("environ", [{}, {"DISPLAY": ""}, {"WAYLAND_DISPLAY": ""}])
def test_no_display_no_attempt(notify: ModuleType, tmp_path: Path,
                               environ: dict[str, str]) -> None:
    tools = Tools()
    log = tmp_path / "hearth.log"
    assert _tell(notify, tools, environ, log) is None
    assert tools.tried == []
    assert "the terminal text" in log.read_text(encoding="utf-8")


def test_wayland_without_x11_has_no_tk(notify: ModuleType, tmp_path: Path) -> None:
    tools = Tools(present=set())
    assert _tell(notify, tools, {"WAYLAND_DISPLAY": "wayland-0"}, tmp_path / "l") is None
    assert tools.tried == []  # Tk speaks X11 only


def test_markup_is_escaped_for_the_tools_that_read_it(notify: ModuleType, tmp_path: Path) -> None:
    seen: list[list[str]] = []

    def run(argv: list[str], env: dict[str, str], timeout: float | None) -> int | None:
        seen.append(argv)
        return None  # none could run: every tool's arguments are seen

    notify.tell(_notice(notify), environ={"DISPLAY": ":0"}, log_file=tmp_path / "l",
                find=lambda name: f"/bin/{name}", run=run, show_tk=lambda t, b: False)
    joined = ["\n".join(argv) for argv in seen]
    assert len(joined) == 3
    for argv in joined[:2]:  # notify-send and zenity read Pango markup
        assert "&lt;now&gt; &amp; go." in argv
    assert "<now> & go." in joined[2]  # kdialog shows plain text


def test_a_frozen_app_gives_the_tools_the_systems_library_path(notify: ModuleType,
                                                                tmp_path: Path) -> None:
    tools = Tools()
    env = {"DISPLAY": ":0", "LD_LIBRARY_PATH": "/opt/hearth/_internal:/mine",
           "LD_LIBRARY_PATH_ORIG": "/mine"}
    _tell(notify, tools, env, tmp_path / "l", frozen=True)
    assert tools.envs[0]["LD_LIBRARY_PATH"] == "/mine"
    tools = Tools()
    _tell(notify, tools, {"DISPLAY": ":0", "LD_LIBRARY_PATH": "/opt/hearth/_internal"},
          tmp_path / "l", frozen=True)
    assert "LD_LIBRARY_PATH" not in tools.envs[0]
    tools = Tools()
    _tell(notify, tools, {"DISPLAY": ":0", "LD_LIBRARY_PATH": "/mine"}, tmp_path / "l")
    assert tools.envs[0]["LD_LIBRARY_PATH"] == "/mine"  # not frozen: left alone


def test_a_log_that_cannot_be_written_does_not_stop_the_notice(notify: ModuleType,
                                                               tmp_path: Path) -> None:
    blocked = tmp_path / "file"
    blocked.write_text("")
    tools = Tools()
    assert _tell(notify, tools, {"DISPLAY": ":0"}, blocked / "hearth.log") == "notify-send"


def test_check_tells_only_when_qt_cannot_start(notify: ModuleType) -> None:
    import io

    from app import qtdeps

    told: list[object] = []

    def lookup(soname: str) -> bool:
        return soname not in ABSENT

    out = io.StringIO()
    assert not qtdeps.check_qt_libraries(out, lookup, platform="linux",
                                         environ={"DISPLAY": ":0"}, tell=told.append)
    assert len(told) == 1
    notice = told[0]
    assert isinstance(notice, notify.Notice)
    assert notice.title == TITLE and notice.text == out.getvalue()
    for text in (*ABSENT, APT, DNF):
        assert text in notice.body
    # Wayland may carry the window: a note in the terminal, no notice.
    assert qtdeps.check_qt_libraries(io.StringIO(), lookup, platform="linux",
                                     environ={"WAYLAND_DISPLAY": "wayland-0"}, tell=told.append)
    assert qtdeps.check_qt_libraries(io.StringIO(), lambda soname: True, platform="linux",
                                     environ={"DISPLAY": ":0"}, tell=told.append)
    assert len(told) == 1
