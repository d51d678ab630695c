"""The built-in tools (app/tools/builtin.py, files.py, calc.py): the chosen folder's files
(read-only, never outside it), the calculator (arithmetic only, bounded) and the clock."""

from __future__ import annotations

import logging
import os
import subprocess
import sys
import threading
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from app.i18n import Text
from app.tools import builtin, files
from app.tools.builtin import BUILTIN_TOOLS, BuiltinContext, BuiltinTool, run_builtin
from app.tools.spec import BUILTIN, RESULT_BUDGET, ToolResult, ToolSpec

ROOT = Path(__file__).resolve().parents[2]
SECRET = "top secret outside the folder"
POSIX_WALK = files.USE_DIR_FD  # this machine has openat(O_NOFOLLOW): both walks can be tested


@pytest.fixture(params=["openat", "portable"] if POSIX_WALK else ["portable"])
def walk(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Each folder test runs with the race-free walk and with the portable (Windows) one."""
    monkeypatch.setattr(files, "USE_DIR_FD", request.param == "openat")
    return str(request.param)


@pytest.fixture
def root(tmp_path: Path, walk: str) -> Path:
    """A chosen folder ``root`` beside an ``outside`` folder holding a secret."""
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text(SECRET)
    folder = tmp_path / "root"
    (folder / "sub" / "deeper").mkdir(parents=True)
    (folder / "a.txt").write_text("hello\n")
    (folder / "sub" / "b.md").write_text("# B\n")
    return folder


def symlink(link: Path, target: Path) -> None:
    try:
        link.symlink_to(target, target_is_directory=target.is_dir())
    except (OSError, NotImplementedError):
        pytest.skip("this system does not let the test make symbolic links")


def call(name: str, arguments: object, folder: Path | None = None) -> ToolResult:
    return run_builtin(name, arguments, BuiltinContext(folder))


def ok(name: str, arguments: object, folder: Path | None = None) -> str:
    result = call(name, arguments, folder)
    assert not result.is_error, result.text
    return result.text


def refused(name: str, arguments: object, folder: Path | None = None) -> str:
    result = call(name, arguments, folder)
    assert result.is_error, result.text
    assert isinstance(result.text, Text)  # a sentence the window can translate
    assert SECRET not in result.text
    return result.text


# --- listing and reading ------------------------------------------------------------------------

def test_list_files_folders_first_with_kinds_and_sizes(root: Path) -> None:
    text = ok("list_files", {}, root)
    lines = text.splitlines()
    assert "holds 2 entries" in lines[0]
    assert lines[1:] == ["folder\tsub", "file\ta.txt\t6"]
    assert ok("list_files", {"path": "sub"}, root).splitlines()[1:] == ["folder\tdeeper", "file\tb.md\t4"]
    assert ok("list_files", {"path": "./sub/../sub/"}, root) == ok("list_files", {"path": "sub"}, root)
    assert "is empty" in ok("list_files", {"path": "sub/deeper"}, root)


def test_list_files_caps_the_entries(root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(files, "MAX_ENTRIES", 3)
    for i in range(5):
        (root / f"f{i}.txt").write_text("x")
    text = ok("list_files", {"path": "."}, root)
    assert len(text.splitlines()) == 1 + 3 + 1
    assert "holds 7 entries" in text and "[4 more entries are not shown" in text


def test_a_name_with_a_newline_cannot_break_the_listing(root: Path) -> None:
    try:
        (root / "evil\nfolder\tfake").write_text("x")
    except OSError:
        pytest.skip("this file system refuses such names")
    lines = ok("list_files", {}, root).splitlines()
    assert "file\tevil\\nfolder\\tfake\t1" in lines
    assert "folder\tfake" not in lines


def test_read_file(root: Path) -> None:
    assert ok("read_file", {"path": "a.txt"}, root) == "hello\n"
    assert ok("read_file", {"path": "sub/b.md"}, root) == "# B\n"
    assert ok("read_file", {"path": "sub/../a.txt"}, root) == "hello\n"
    (root / "empty.txt").write_bytes(b"")
    assert "is empty" in ok("read_file", {"path": "empty.txt"}, root)


def test_read_file_is_cut_to_the_result_budget(root: Path) -> None:
    (root / "long.txt").write_text("x" * (RESULT_BUDGET + 500))
    result = call("read_file", {"path": "long.txt"}, root)
    assert not result.is_error and result.cut == 500
    assert "500 more characters" in result.text


def test_encodings(root: Path) -> None:
    (root / "bom.txt").write_bytes(b"\xef\xbb\xbfwith a BOM")
    assert ok("read_file", {"path": "bom.txt"}, root) == "with a BOM"
    (root / "utf16.txt").write_bytes("wide text".encode("utf-16"))
    assert ok("read_file", {"path": "utf16.txt"}, root) == "wide text"
    (root / "one_bad.txt").write_bytes(b"caf\xe9 " + b"plain text " * 20)
    text = ok("read_file", {"path": "one_bad.txt"}, root)
    assert text.startswith("caf\ufffd plain") and "replaced 1 sequence that" in text


def test_binary_files_are_refused(root: Path) -> None:
    (root / "data.bin").write_bytes(b"text then a zero \x00 byte")
    assert "binary file" in refused("read_file", {"path": "data.bin"}, root)
    (root / "latin.bin").write_bytes(bytes(range(128, 256)) * 4)
    assert "not UTF-8 text" in refused("read_file", {"path": "latin.bin"}, root)


def test_a_file_over_the_cap_is_refused_with_its_size(root: Path) -> None:
    with open(root / "big.txt", "wb") as f:
        f.truncate(files.MAX_FILE_BYTES + 1)
    text = refused("read_file", {"path": "big.txt"}, root)
    assert "1,048,577 bytes" in text and "at most 1,048,576" in text
    (root / "fits.txt").write_text("y" * files.MAX_FILE_BYTES)
    assert len(call("read_file", {"path": "fits.txt"}, root).text) > RESULT_BUDGET


def test_missing_and_wrong_kinds(root: Path) -> None:
    assert "There is no “nope.txt”" in refused("read_file", {"path": "nope.txt"}, root)
    assert "There is no “no/where.txt”" in refused("read_file", {"path": "no/where.txt"}, root)
    assert "There is no" in refused("list_files", {"path": "nowhere"}, root)
    assert "“a.txt” is not a folder" in refused("read_file", {"path": "a.txt/x"}, root)
    assert "is not a folder" in refused("list_files", {"path": "a.txt"}, root)
    assert "is a folder" in refused("read_file", {"path": "sub"}, root)
    assert "Give the path of a file" in refused("read_file", {"path": "."}, root)


# --- staying inside the folder ---------------------------------------------------------------------

@pytest.mark.parametrize("path", ["..", "../outside/secret.txt", "sub/../../outside/secret.txt",
                                  "./../root/a.txt", "sub/deeper/../../.."])
def test_dot_dot_out_is_refused(root: Path, path: str) -> None:
    assert "leads outside the chosen folder" in refused("read_file", {"path": path}, root)
    assert "leads outside" in refused("list_files", {"path": path}, root)


def test_absolute_paths_are_refused(root: Path) -> None:
    for path in (str(root.parent / "outside" / "secret.txt"), str(root / "a.txt"), "/",
                 "C:\\Windows\\win.ini", "\\\\server\\share\\x"):
        assert "is an absolute path" in refused("read_file", {"path": path}, root)
    assert "absolute path" in refused("list_files", {"path": str(root.parent / "outside")}, root)


def test_a_symlinked_file_pointing_out_is_refused(root: Path) -> None:
    symlink(root / "out.txt", root.parent / "outside" / "secret.txt")
    assert "symbolic link" in refused("read_file", {"path": "out.txt"}, root)


def test_a_symlinked_folder_pointing_out_is_refused(root: Path) -> None:
    symlink(root / "outdir", root.parent / "outside")
    assert "symbolic link" in refused("list_files", {"path": "outdir"}, root)
    assert "symbolic link" in refused("read_file", {"path": "outdir/secret.txt"}, root)
    listing = ok("list_files", {}, root)
    assert "link\toutdir" in listing.splitlines() and "secret" not in listing


def test_a_symlink_on_an_intermediate_folder_is_refused(root: Path) -> None:
    symlink(root / "sub" / "deeper" / "hop", root.parent)
    text = refused("read_file", {"path": "sub/deeper/hop/outside/secret.txt"}, root)
    assert "“sub/deeper/hop” is a symbolic link" in text
    assert "symbolic link" in refused("list_files", {"path": "sub/deeper/hop/outside"}, root)


def test_a_symlink_pointing_inside_is_refused_too(root: Path) -> None:
    """The choice (files.py explains it): every link is refused, so none can be raced."""
    symlink(root / "alias.txt", root / "a.txt")
    assert "symbolic link" in refused("read_file", {"path": "alias.txt"}, root)


def test_the_chosen_folder_may_itself_be_reached_through_a_link(root: Path) -> None:
    symlink(root.parent / "picked", root)
    assert ok("read_file", {"path": "a.txt"}, root.parent / "picked") == "hello\n"


def test_a_link_swapped_in_after_the_check_is_not_followed(root: Path,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """A race: a.txt is checked as a regular file, then replaced by a link to the secret before
    it is opened. O_NOFOLLOW (openat walk) or the real-path check (portable walk) refuses it."""
    check = files._check

    def check_then_swap(st: os.stat_result, shown: str, want: str) -> None:
        check(st, shown, want)
        if shown == "a.txt":
            (root / "a.txt").unlink()
            symlink(root / "a.txt", root.parent / "outside" / "secret.txt")

    monkeypatch.setattr(files, "_check", check_then_swap)
    text = refused("read_file", {"path": "a.txt"}, root)
    assert "symbolic link" in text or "leads outside" in text or "changed while" in text


# --- devices, pipes, no folder ------------------------------------------------------------------

def run_in_thread(name: str, arguments: dict[str, str], folder: Path) -> ToolResult | None:
    """The call's result, or None when it is still blocked after a generous wait (a FIFO open
    without O_NONBLOCK would block for ever)."""
    got: list[ToolResult] = []
    worker = threading.Thread(target=lambda: got.append(call(name, arguments, folder)), daemon=True)
    worker.start()
    worker.join(30)
    return got[0] if got else None


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="FIFOs are POSIX")
def test_a_fifo_is_refused_without_blocking(root: Path) -> None:
    os.mkfifo(root / "pipe")
    result = run_in_thread("read_file", {"path": "pipe"}, root)
    assert result is not None, "reading a FIFO blocked"
    assert result.is_error and "not a regular file" in result.text
    assert "other\tpipe" in ok("list_files", {}, root).splitlines()


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="FIFOs are POSIX")
def test_a_fifo_swapped_in_after_the_check_does_not_block(root: Path,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    check = files._check

    def check_then_swap(st: os.stat_result, shown: str, want: str) -> None:
        check(st, shown, want)
        if shown == "a.txt":
            (root / "a.txt").unlink()
            os.mkfifo(root / "a.txt")

    monkeypatch.setattr(files, "_check", check_then_swap)
    result = run_in_thread("read_file", {"path": "a.txt"}, root)
    assert result is not None, "opening a FIFO blocked"
    assert result.is_error and ("changed while" in result.text or "not a regular file" in result.text)


def test_a_link_to_a_device_is_refused(root: Path) -> None:
    if not Path("/dev/null").exists():
        pytest.skip("no /dev/null")
    symlink(root / "null", Path("/dev/null"))  # a link is refused before its target is looked at
    assert "symbolic link" in refused("read_file", {"path": "null"}, root)


def test_no_folder_chosen(tmp_path: Path) -> None:
    for name, arguments in (("read_file", {"path": "a.txt"}), ("list_files", {})):
        assert "has not chosen a folder" in refused(name, arguments, None)
    assert "missing" in refused("list_files", {}, tmp_path / "gone")
    (tmp_path / "file").write_text("x")
    assert "is not a folder" in refused("list_files", {}, tmp_path / "file")


# --- the calculator ---------------------------------------------------------------------------------

@pytest.mark.parametrize(("expression", "value"), [
    ("1 + 2", "3"), ("2 + 3 * 4", "14"), ("(2 + 3) * 4", "20"), ("-2 ** 2", "-4"), ("2 ** -1", "0.5"),
    ("2 ** 3 ** 2", "512"), ("7 // 2", "3"), ("-7 // 2", "-4"), ("7 % 3", "1"), ("10 / 4", "2.5"),
    ("0.1 + 0.2", "0.3"), ("+-+3", "-3"), ("2 ** 100", str(2 ** 100)), ("1e3 / 8", "125"),
    (" 6*7 ", "42"),
])
def test_arithmetic_and_precedence(expression: str, value: str) -> None:
    assert ok("calculate", {"expression": expression}) == value


@pytest.mark.parametrize(("expression", "value"), [
    ("sqrt(16)", "4"), ("sqrt(2)", "1.4142135623731"), ("sin(pi / 2)", "1"), ("cos(0)", "1"),
    ("tan(0)", "0"), ("log(e)", "1"), ("log(8, 2)", "3"), ("log10(1000)", "3"), ("exp(0)", "1"),
    ("abs(-3)", "3"), ("round(2.567, 2)", "2.57"), ("round(2.5)", "2"), ("floor(-2.5)", "-3"),
    ("ceil(2.1)", "3"), ("2 * pi", "6.28318530717959"), ("log(10 ** 999, 10)", "999"),
])
def test_functions_and_constants(expression: str, value: str) -> None:
    assert ok("calculate", {"expression": expression}) == value


@pytest.mark.parametrize("expression", [
    "__import__('os')", "__import__('os').system('echo hi')", "().__class__",
    "().__class__.__bases__[0].__subclasses__()", "open", "open('/etc/passwd')", "x + 1",
    "sqrt.__name__", "'a' * 10", "[1, 2]", "1 if 1 else 2", "lambda: 1", "1 < 2", "True + 1",
    "1j", "f'{1}'", "sqrt(x=4)", "pi(2)", "sqrt(4)(2)", "not 1", "1 & 3", "~1", "exec('1')",
])
def test_anything_but_arithmetic_is_refused(expression: str) -> None:
    refused("calculate", {"expression": expression})


def test_refusals_say_what_is_wrong() -> None:
    assert "“open” is not a number, constant or function" in refused("calculate", {"expression": "open"})
    assert "“__import__” is not allowed" in refused("calculate", {"expression": "__import__('os')"})
    assert "“().__class__” is not allowed" in refused("calculate", {"expression": "().__class__"})
    assert "write powers with “**”" in refused("calculate", {"expression": "2 ^ 8"})
    assert "is a function" in refused("calculate", {"expression": "sqrt + 1"})
    assert "takes 1 to 1 numbers, not 2" in refused("calculate", {"expression": "sqrt(1, 2)"})
    assert "math domain error" in refused("calculate", {"expression": "sqrt(-1)"})
    assert "not a real number" in refused("calculate", {"expression": "(-8) ** 0.5"})
    assert "not an arithmetic expression" in refused("calculate", {"expression": "2 +"})
    assert "empty" in refused("calculate", {"expression": "   "})


@pytest.mark.parametrize(("expression", "why"), [
    ("2 ** 2 ** 2 ** 2 ** 2", "exponent 65536"),
    ("10 ** 1000", "more than 1000 digits"), ("(10 ** 999) * (10 ** 999)", "more than 1000 digits"),
    ("2 ** 3000 * 2 ** 3000 * 2 ** 3000 * 2 ** 3000", "more than 1000 digits"),
    ("1.5 ** 100000", "too large"), ("1e308 * 10", "too large"), ("exp(1000)", "too large"),
    ("10 ** 999 / 3", "too large"), ("(10 ** 999) ** -2", "too large"),
    ("1e999", "too large"),
])
def test_huge_numbers_are_refused(expression: str, why: str) -> None:
    assert why in refused("calculate", {"expression": expression})


@pytest.mark.parametrize(("expression", "why"), [
    ("9 ** 9 ** 9", "exponent 387420489 is too large"),
    ("10 ** 10 ** 8", "exponent 100000000 is too large"),
    ("round(10 ** 999, -1000000000)", "round()'s second number"),
])
def test_huge_powers_are_refused_before_they_are_computed(expression: str, why: str) -> None:
    """Computed, these would hold the interpreter (and its lock) for hours, where no in-process
    timeout can fire: they run in a child that is killed if it does not answer."""
    code = ("import sys; from app.tools.builtin import BuiltinContext, run_builtin; "
            "r = run_builtin('calculate', {'expression': sys.argv[1]}, BuiltinContext()); "
            "print(r.is_error, r.text)")
    try:
        done = subprocess.run([sys.executable, "-c", code, expression], cwd=ROOT, capture_output=True,
                              text=True, timeout=120, check=False)
    except subprocess.TimeoutExpired:
        pytest.fail(f"{expression} was computed instead of refused")
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("True ") and why in done.stdout


@pytest.mark.parametrize("expression", ["1 / 0", "1 // 0", "5 % 0", "0 ** -1", "1.0 / 0.0", "2 / (1 - 1)"])
def test_division_by_zero(expression: str) -> None:
    assert "Division by zero" in refused("calculate", {"expression": expression})


def test_too_long_and_too_deep() -> None:
    text = refused("calculate", {"expression": "1+" * 300 + "1"})
    assert "601 characters long" in text and "at most 500" in text
    assert ok("calculate", {"expression": "1+" * 249 + "1"}) == "250"
    refused("calculate", {"expression": "(" * 240 + "1" + ")" * 240})  # too many parentheses
    assert ok("calculate", {"expression": "-" * 400 + "1"}) == "1"


# --- the clock -------------------------------------------------------------------------------------

def test_current_datetime_with_a_fixed_clock() -> None:
    fixed = datetime(2024, 5, 3, 14, 7, 9, 123456, tzinfo=timezone(timedelta(hours=2), "CEST"))
    text = run_builtin("current_datetime", {}, BuiltinContext(now=lambda: fixed)).text
    iso, human = text.splitlines()
    assert iso == "2024-05-03T14:07:09+02:00"
    assert human == "Friday, 3 May 2024, 14:07:09 local time (CEST, UTC+02:00)."
    west = datetime(1999, 12, 31, 23, 59, 0, tzinfo=timezone(timedelta(hours=-5, minutes=-30)))
    text = run_builtin("current_datetime", None, BuiltinContext(now=lambda: west)).text
    assert text.splitlines() == ["1999-12-31T23:59:00-05:30",
                                 "Friday, 31 December 1999, 23:59:00 local time (UTC-05:30)."]


def test_current_datetime_makes_a_naive_clock_local() -> None:
    text = run_builtin("current_datetime", "", BuiltinContext(now=lambda: datetime(2030, 1, 7, 8, 0))).text
    assert text.startswith("2030-01-07T08:00:00") and len(text.splitlines()[0]) == len(
        "2030-01-07T08:00:00+00:00")
    assert "Monday, 7 January 2030" in text
    default = BuiltinContext().now()
    assert default.tzinfo is not None


# --- the registry and argument checks ---------------------------------------------------------------

def test_the_registry() -> None:
    assert list(BUILTIN_TOOLS) == ["list_files", "read_file", "calculate", "current_datetime"]
    for name, tool in BUILTIN_TOOLS.items():
        assert tool.spec.name == name and tool.spec.source == BUILTIN and tool.spec.model_name == name
        assert tool.needs_folder == (name in ("list_files", "read_file"))
        assert tool.spec.parameters["type"] == "object"
        assert 0 < len(tool.spec.description) < 300
        assert tool.spec.to_openai()["function"]["name"] == name
    assert BUILTIN_TOOLS["read_file"].spec.parameters["required"] == ["path"]
    assert BUILTIN_TOOLS["calculate"].spec.parameters["required"] == ["expression"]


@pytest.mark.parametrize(("name", "arguments", "why"), [
    ("calculate", [1, 2], "must be a JSON object"),
    ("calculate", 42, "must be a JSON object"),
    ("calculate", "[1]", "must be a JSON object"),
    ("calculate", "{not json", "not valid JSON"),
    ("calculate", {}, "needs the argument “expression”"),
    ("calculate", {"expression": 3}, "“expression” of calculate must be a string"),
    ("calculate", {"expression": True}, "must be a string"),
    ("calculate", {"expression": "1", "mode": "x"}, "has no argument “mode”; it takes: expression"),
    ("current_datetime", {"zone": "UTC"}, "it takes: none"),
    ("read_file", {"path": None}, "must be a string"),
    ("rm_rf", {}, "no built-in tool called “rm_rf”"),
])
def test_run_builtin_checks_arguments(name: str, arguments: object, why: str, tmp_path: Path) -> None:
    assert why in refused(name, arguments, tmp_path)


def test_run_builtin_takes_json_text() -> None:
    assert ok("calculate", '{"expression": "6 * 7"}') == "42"
    assert ok("calculate", b'{"expression": "6 * 7"}') == "42"


def test_an_unexpected_failure_becomes_an_error_result(monkeypatch: pytest.MonkeyPatch,
                                                      caplog: pytest.LogCaptureFixture) -> None:
    def boom(arguments: object, context: BuiltinContext) -> str:
        raise RuntimeError("/home/someone/private path")

    spec = ToolSpec(BUILTIN, "calculate", "x", BUILTIN_TOOLS["calculate"].spec.parameters)
    monkeypatch.setitem(builtin.BUILTIN_TOOLS, "calculate", BuiltinTool(spec, False, boom))
    with caplog.at_level(logging.ERROR, logger="app.tools.builtin"):
        result = call("calculate", {"expression": "1"})
    assert result.is_error and "failed unexpectedly (RuntimeError)" in result.text
    assert "/home/someone" not in result.text  # the model is not told the person's paths
    assert "Built-in tool calculate failed" in caplog.text
