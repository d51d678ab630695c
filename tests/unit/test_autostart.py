"""Start at login (app/autostart.py): each system's entry, read back by that system's rules.

The systemd unit's ExecStart is taken apart here the way systemd does (unquoting with C escapes,
then ``%%`` specifiers, then ``$$`` at start) and, where ``systemd-analyze`` exists, verified
by systemd itself; a program path with a space, a ``%`` or a quote is run for real through the
argv read back. The plist is read back with plistlib; the ``.cmd`` line by cmd's and the C
runtime's rules.
"""

from __future__ import annotations

import configparser
import json
import os
import plistlib
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from app import autostart
from app.autostart import AutostartError

# An argument no quoting scheme gets right by accident.
HOSTILE = "it's \"quoted\" 100% $HOME ${HOME} $$ \\back\\ ; & | < > ^ ! `x` %PATH% é"


# -- systemd's rules, written out independently of the module ---------------------------------

_C_ESCAPES = {"a": "\a", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t", "v": "\v",
              "\\": "\\", '"': '"', "'": "'", "s": " "}


def systemd_words(value: str) -> list[str]:
    """systemd's extract_first_word(EXTRACT_UNQUOTE | EXTRACT_CUNESCAPE), word after word."""
    words: list[str] = []
    i, n = 0, len(value)
    while True:
        while i < n and value[i] in " \t\n":
            i += 1
        if i == n:
            return words
        # systemd looks for a separator in the raw text: a quoted ";" is an argument.
        rest = value[i:]
        assert not (rest == ";" or rest[:2] in ("; ", ";\t")), "a lone ; starts a second command"
        word: list[str] = []
        quote = ""
        while i < n:
            c = value[i]
            if not quote and c in " \t\n":
                break
            if c == "\\":
                e = value[i + 1]
                if e == "x":
                    word.append(chr(int(value[i + 2:i + 4], 16)))
                    i += 4
                    continue
                word.append(_C_ESCAPES[e])
                i += 2
                continue
            if not quote and c in "\"'":
                quote = c
            elif c == quote:
                quote = ""
            else:
                word.append(c)
            i += 1
        assert not quote, f"unbalanced quote in {value!r}"
        words.append("".join(word))


def specifiers(word: str) -> str:
    """Specifier resolution: only ``%%`` may appear (any other would be replaced)."""
    out, i = [], 0
    while i < len(word):
        if word[i] == "%":
            assert word[i + 1] == "%", f"an unescaped specifier in {word!r}"
            out.append("%")
            i += 2
        else:
            out.append(word[i])
            i += 1
    return "".join(out)


def expand_env(word: str) -> str:
    """Variable expansion at start, for a service with no variables of its own: ``$$`` is a
    ``$``; a variable reference would be replaced (the test fails instead)."""
    out, i = [], 0
    while i < len(word):
        if word[i] == "$":
            assert word[i + 1] == "$", f"a variable would be expanded in {word!r}"
            out.append("$")
            i += 2
        else:
            out.append(word[i])
            i += 1
    return "".join(out)


def systemd_argv(exec_start: str) -> tuple[str, list[str]]:
    """The program systemd runs and the argv it passes, from an ExecStart value."""
    words = systemd_words(exec_start)
    assert words and words[0] != ";"
    program = specifiers(words[0])
    assert program.startswith("/") and program[0] not in "-@:+!"
    # string_is_safe(): systemd refuses such a program path outright.
    assert not any(c in "\"'\\\x7f" or ord(c) < 0x20 for c in program), program
    argv = [expand_env(program), *(expand_env(specifiers(w)) for w in words[1:])]
    assert argv[0] == program, "argv[0] would differ from the program (variables in it)"
    return program, argv


def unit_sections(text: str) -> configparser.ConfigParser:
    parser = configparser.ConfigParser(interpolation=None, strict=True)
    parser.optionxform = str  # type: ignore[assignment,method-assign]
    parser.read_string(text)
    return parser


def exec_start_of(text: str) -> str:
    return unit_sections(text)["Service"]["ExecStart"]


# -- the command -------------------------------------------------------------------------------


def test_serve_command_runs_this_python_or_the_frozen_app(monkeypatch: pytest.MonkeyPatch) -> None:
    assert autostart.serve_command() == [os.path.abspath(sys.executable), "-m", "app", "serve"]
    monkeypatch.setattr(sys, "frozen", True, raising=False)
    monkeypatch.setattr(sys, "executable", "/opt/Hearth/hearth")
    assert autostart.serve_command() == ["/opt/Hearth/hearth", "serve"]
    monkeypatch.setattr(sys, "executable", "")
    with pytest.raises(AutostartError, match="which program"):
        autostart.serve_command()


@pytest.mark.parametrize("command", [[], [""], ["/bin/x", "a\nb"], ["/bin/x", "\x00"]])
def test_a_command_no_entry_can_hold_is_refused_with_a_sentence(command: list[str]) -> None:
    for build in (autostart.systemd_unit, autostart.launch_agent, autostart.windows_startup):
        with pytest.raises(AutostartError) as caught:
            build(command)
        assert str(caught.value).endswith(".")


# -- systemd -----------------------------------------------------------------------------------


def test_the_unit_starts_hearth_serve_at_login_and_restarts_it_on_failure() -> None:
    command = ["/usr/lib/hearth/python", "-m", "app", "serve"]
    unit = unit_sections(autostart.systemd_unit(command))
    assert unit["Unit"]["Description"] == "Hearth model server"
    assert "After" not in unit["Unit"]  # a user manager has no network.target
    service = unit["Service"]
    assert service["Type"] == "simple"
    assert service["Restart"] == "on-failure"
    assert service["KillSignal"] == "SIGTERM"
    assert service["KillMode"] == "mixed"
    assert unit["Install"]["WantedBy"] == "default.target"
    assert systemd_argv(service["ExecStart"]) == (command[0], command)


def test_exec_start_keeps_a_space_a_quote_a_percent_and_a_dollar_in_a_path() -> None:
    command = ["/opt/My Apps 100%/hearth", "serve", "--config",
               "/home/o'brien/my \"big\" folder/$HOME/x.json", HOSTILE, "", ";"]
    program, argv = systemd_argv(exec_start_of(autostart.systemd_unit(command)))
    assert program == command[0]
    assert argv == command


def test_a_program_path_systemd_refuses_goes_through_sh_and_still_arrives_whole() -> None:
    command = ["/home/o'brien/.venv/bin/python", "-m", "app", "serve", HOSTILE]
    program, argv = systemd_argv(exec_start_of(autostart.systemd_unit(command)))
    assert program == "/bin/sh"
    assert argv[:3] == ["/bin/sh", "-c", 'exec "$0" "$@"']
    assert argv[3:] == command
    # A $ in the program path would be expanded in argv[0], which Python reads its venv from.
    program, argv = systemd_argv(autostart.exec_start(["/opt/a$HOME/python", "serve"]))
    assert program == "/bin/sh" and argv[3:] == ["/opt/a$HOME/python", "serve"]


def test_the_sh_trampoline_runs_the_program_with_exactly_its_arguments(tmp_path: Path) -> None:
    if not Path("/bin/sh").exists():
        pytest.skip("no /bin/sh here")
    folder = tmp_path / "o'brien \"x\" 50% $HOME"
    folder.mkdir()
    python = folder / "python"
    python.symlink_to(sys.executable)
    code = "import json, sys; print(json.dumps(sys.argv[1:]))"
    command = [str(python), "-c", code, HOSTILE, "", "$HOME"]
    _, argv = systemd_argv(autostart.exec_start(command))
    done = subprocess.run(argv, capture_output=True, text=True, timeout=60, env={},
                          check=False)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == [HOSTILE, "", "$HOME"]


def test_a_relative_program_is_refused() -> None:
    with pytest.raises(AutostartError, match="full path"):
        autostart.systemd_unit(["python", "-m", "app", "serve"])


def _verify(unit: Path) -> None:
    """``systemd-analyze verify`` on ``unit``: its complaints about the unit fail the test; a
    system where it cannot run at all (no manager to emulate, a container) skips it."""
    tool = shutil.which("systemd-analyze")
    if tool is None:
        pytest.skip("systemd-analyze is not installed")
    said = ""
    for mode in ([], ["--user"]):
        done = subprocess.run([tool, "verify", *mode, str(unit)], capture_output=True,
                              text=True, timeout=120, check=False)
        said = (done.stdout + done.stderr).strip()
        if done.returncode == 0 and unit.name not in said:
            return
        if unit.name in said:  # it read the unit and has something to say about it
            pytest.fail(f"systemd-analyze verify {' '.join(mode)}: {said}")
    pytest.skip(f"systemd-analyze verify cannot run here: {said}")


def test_systemd_analyze_verifies_the_written_unit(tmp_path: Path) -> None:
    path = autostart.enable("linux", tmp_path, {}, command=autostart.serve_command(),
                            run=FakeRun())
    _verify(path)


def test_systemd_finds_a_program_whose_path_has_a_space_and_a_percent(tmp_path: Path) -> None:
    """systemd checks that the program it read exists: a path taken apart wrongly fails."""
    folder = tmp_path / "my apps 100%"
    folder.mkdir()
    python = folder / "python"
    python.symlink_to(sys.executable)
    path = autostart.enable("linux", tmp_path, {}, command=[str(python), "-m", "app", "serve"],
                            run=FakeRun())
    _verify(path)
    broken = path.with_name("broken.service")
    broken.write_text(path.read_text().replace("100%%", "100"))
    with pytest.raises(pytest.fail.Exception, match=r"not executable|No such file"):
        _verify(broken)


# -- launchd -----------------------------------------------------------------------------------


def test_the_launch_agent_reads_back_with_plistlib(tmp_path: Path) -> None:
    command = ["/Applications/Hearth.app/Contents/MacOS/Hearth", "serve", HOSTILE]
    log_file = tmp_path / "logs" / "server.log"
    plist = plistlib.loads(autostart.launch_agent(command, log_file=log_file))
    assert plist == {
        "Label": "org.hearth.server",
        "ProgramArguments": command,
        "RunAtLoad": True,
        "KeepAlive": {"SuccessfulExit": False},
        "StandardOutPath": str(log_file),
        "StandardErrorPath": str(log_file),
    }
    assert plistlib.loads(autostart.launch_agent(command, label="x.y"))["Label"] == "x.y"


def test_the_launch_agent_logs_into_hearths_log_folder() -> None:
    from app import paths

    plist = plistlib.loads(autostart.launch_agent(["/x/Hearth", "serve"]))
    assert Path(plist["StandardOutPath"]).parent == paths.log_dir()


# -- Windows -----------------------------------------------------------------------------------


def cmd_line_args(line: str) -> list[str]:
    """The arguments a program gets from a .cmd line of double-quoted words: cmd turns ``%%``
    into ``%``; the C runtime reads 2n backslashes before a quote as n."""
    args, i = [], 0
    while i < len(line):
        if line[i] == " ":
            i += 1
            continue
        assert line[i] == '"', f"an unquoted word in {line!r}"
        end = line.index('"', i + 1)
        quoted = line[i + 1:end]
        assert "%" not in quoted.replace("%%", ""), f"cmd would expand a % in {quoted!r}"
        raw = quoted.replace("%%", "%")
        stripped = raw.rstrip("\\")
        trailing = len(raw) - len(stripped)
        assert trailing % 2 == 0, "an odd run of backslashes would escape the closing quote"
        args.append(stripped + "\\" * (trailing // 2))
        i = end + 1
    return args


def test_the_startup_file_starts_the_server_minimised_and_quotes_every_argument() -> None:
    command = [r"C:\Users\José O'Brien\AppData\Local\Hearth\hearth.exe", "serve",
               "100% & | < > ^ ! (x)", "C:\\trailing\\"]
    text = autostart.windows_startup(command)
    lines = text.split("\r\n")
    assert lines[0] == "@echo off"
    assert "chcp 65001 >nul" in lines
    assert "setlocal DisableDelayedExpansion" in lines
    assert lines[-1] == ""
    start = next(line for line in lines if line.startswith("start "))
    prefix = 'start "Hearth server" /min '
    assert start.startswith(prefix)
    assert cmd_line_args(start[len(prefix):]) == command
    # Outside the quoted words, no % is left for cmd to expand.
    assert "%" not in start.replace("%%", "")
    text.encode("utf-8")  # written as UTF-8, read as such after chcp 65001
    assert not text.startswith("\ufeff")


def test_a_double_quote_cannot_go_into_the_startup_file() -> None:
    with pytest.raises(AutostartError, match="double quote"):
        autostart.windows_startup(["C:\\Hearth\\hearth.exe", 'say "hi"'])


# -- where, and the round trip -----------------------------------------------------------------


def test_entry_paths(tmp_path: Path) -> None:
    home = tmp_path
    assert autostart.entry_path("linux", home, {}) == \
        home / ".config" / "systemd" / "user" / "hearth-server.service"
    assert autostart.entry_path("linux", home, {"XDG_CONFIG_HOME": "/etc/xdg-me"}) == \
        Path("/etc/xdg-me/systemd/user/hearth-server.service")
    # A relative XDG_CONFIG_HOME is invalid by the XDG rules: ignored.
    assert autostart.entry_path("linux", home, {"XDG_CONFIG_HOME": "conf"}).parent == \
        home / ".config" / "systemd" / "user"
    assert autostart.entry_path("darwin", home, {}) == \
        home / "Library" / "LaunchAgents" / "org.hearth.server.plist"
    startup = ("Microsoft", "Windows", "Start Menu", "Programs", "Startup", "Hearth server.cmd")
    assert autostart.entry_path("win32", home, {"APPDATA": str(tmp_path / "Roaming")}) == \
        Path(tmp_path / "Roaming", *startup)
    assert autostart.entry_path("win32", home, {}) == Path(home, "AppData", "Roaming", *startup)
    with pytest.raises(AutostartError, match="not supported on sunos5"):
        autostart.entry_path("sunos5", home, {})


class FakeRun:
    """subprocess.run as systemctl would answer: records the commands."""

    def __init__(self, returncode: int = 0, stderr: str = "",
                 raises: BaseException | None = None) -> None:
        self.calls: list[list[str]] = []
        self.returncode, self.stderr, self.raises = returncode, stderr, raises

    def __call__(self, argv: list[str], **kwargs: Any) -> subprocess.CompletedProcess[str]:
        assert kwargs.get("timeout"), "systemctl must not be able to hang the caller"
        self.calls.append(list(argv))
        if self.raises is not None:
            raise self.raises
        return subprocess.CompletedProcess(argv, self.returncode, "", self.stderr)


def test_enable_and_disable_a_systemd_unit(tmp_path: Path) -> None:
    env = {"XDG_CONFIG_HOME": str(tmp_path / "config")}
    command = ["/usr/bin/hearth", "serve"]
    run = FakeRun()
    assert not autostart.is_enabled("linux", tmp_path, env)

    path = autostart.enable("linux", tmp_path, env, command=command, run=run)
    assert path == tmp_path / "config" / "systemd" / "user" / "hearth-server.service"
    assert path.read_text(encoding="utf-8") == autostart.systemd_unit(command)
    assert path.stat().st_mode & 0o077 == 0  # owner-only
    link = path.parent / "default.target.wants" / "hearth-server.service"
    assert link.is_symlink() and link.resolve() == path.resolve()
    assert run.calls == [["systemctl", "--user", "daemon-reload"],
                         ["systemctl", "--user", "enable", "hearth-server.service"]]
    assert autostart.is_enabled("linux", tmp_path, env)
    assert [p.name for p in path.parent.iterdir() if p.name.endswith(".tmp")] == []

    # Again (Hearth moved): rewritten in place, still enabled.
    autostart.enable("linux", tmp_path, env, command=["/opt/new/hearth", "serve"], run=run)
    assert "/opt/new/hearth" in path.read_text(encoding="utf-8")

    # Disabled by hand with systemctl: it reads as off.
    link.unlink()
    assert not autostart.is_enabled("linux", tmp_path, env)
    autostart.enable("linux", tmp_path, env, command=command, run=run)

    run.calls.clear()
    assert autostart.disable("linux", tmp_path, env, run=run) == path
    assert not path.exists() and not os.path.lexists(link)
    assert run.calls == [["systemctl", "--user", "disable", "hearth-server.service"],
                         ["systemctl", "--user", "daemon-reload"]]
    assert not autostart.is_enabled("linux", tmp_path, env)
    autostart.disable("linux", tmp_path, env, run=run)  # nothing left to remove: fine


@pytest.mark.parametrize("run", [
    FakeRun(raises=FileNotFoundError(2, "No such file or directory", "systemctl")),
    FakeRun(returncode=1, stderr="Failed to connect to bus: No medium found"),
    FakeRun(raises=subprocess.TimeoutExpired(["systemctl"], 30)),
])
def test_systemctl_failing_or_missing_does_not_stop_enable(
        tmp_path: Path, run: FakeRun, caplog: pytest.LogCaptureFixture) -> None:
    path = autostart.enable("linux", tmp_path, {}, command=["/usr/bin/hearth", "serve"], run=run)
    assert path.is_file()
    assert autostart.is_enabled("linux", tmp_path, {})  # linked without systemctl
    assert "systemctl --user daemon-reload" in caplog.text
    autostart.disable("linux", tmp_path, {}, run=run)
    assert not path.exists()


@pytest.mark.parametrize("platform", ["darwin", "win32"])
def test_enable_and_disable_elsewhere(tmp_path: Path, platform: str) -> None:
    env = {"APPDATA": str(tmp_path / "Roaming")}
    run = FakeRun()
    command = ["/x/hearth", "serve"]
    path = autostart.enable(platform, tmp_path, env, command=command, run=run)
    assert autostart.is_enabled(platform, tmp_path, env)
    if platform == "darwin":
        assert plistlib.loads(path.read_bytes())["ProgramArguments"] == command
    else:
        assert path.read_bytes().decode("utf-8") == autostart.windows_startup(command)
    autostart.disable(platform, tmp_path, env, run=run)
    assert not path.exists() and not autostart.is_enabled(platform, tmp_path, env)
    assert run.calls == []


@pytest.mark.skipif(os.name != "posix" or os.geteuid() == 0,
                    reason="needs file permissions that bind (not root)")
def test_a_folder_that_cannot_be_written_is_a_sentence(tmp_path: Path) -> None:
    folder = tmp_path / ".config" / "systemd" / "user"
    folder.mkdir(parents=True)
    folder.chmod(0o500)
    try:
        with pytest.raises(AutostartError, match=r"cannot write .*start at login"):
            autostart.enable("linux", tmp_path, {}, command=["/x/hearth"], run=FakeRun())
    finally:
        folder.chmod(0o700)


def test_a_file_in_the_folders_place_is_a_sentence(tmp_path: Path) -> None:
    """Works as root too: a file where a folder must be cannot be written through."""
    (tmp_path / ".config").write_text("not a folder")
    with pytest.raises(AutostartError) as caught:
        autostart.enable("linux", tmp_path, {}, command=["/x/hearth"], run=FakeRun())
    message = str(caught.value)
    assert message.startswith("Hearth cannot write ") and message.endswith(".")
    assert "start at login" in message
