"""Issue 27: the Qt-free packages' sentences are translatable through ``T_`` (app/i18n.py).

Each sentence a person reads is an :class:`app.i18n.Text`: its value is the English sentence
(every ``str`` use and the tests that compare English keep working) and the window translates it.
These tests take real output of the GGUF reader, the Hub client, downloads and storage, translate
it with a fake language, and check that every sentence (and every nested piece) changed while the
English value did not. The last test reads the source: lupdate can only extract a ``T_`` whose
first argument is a string literal.
"""

from __future__ import annotations

import ast
import sqlite3
import struct
from pathlib import Path

import httpx2
import pytest

from app.gguf import GGUFError, parse_header
from app.hub.client import HubClient
from app.hub.download import DownloadSource, _changed, _why, sources_for
from app.hub.names import safe_relative_path
from app.hub.types import DownloadError, FileGroup, FileKind, HubError, HubFile, UnsafeNameError
from app.i18n import T_, Text, placeholders
from app.storage.errors import SQLITE_FULL, StorageError, damaged, translate
from app.storage.secrets import SecretStoreError, _keyring_trouble

ROOT = Path(__file__).resolve().parents[2]
MARK = "[xx] "


def fake(template: str, n: int) -> str:
    """A language that keeps every placeholder and marks every sentence it translates."""
    return MARK + template


def check_translatable(value: object) -> str:
    """``value`` is a Text whose English is unchanged by translating it, and whose translation
    differs, is marked, and has every placeholder filled."""
    assert isinstance(value, Text), f"not translatable: {value!r}"
    english = str.__str__(value)
    translated = value.translated(fake)
    assert str.__str__(value) == english  # translating leaves the English value alone
    assert translated != english and translated.startswith(MARK), translated
    if "{" not in english:
        assert "{" not in translated, translated
    return translated


def test_the_mechanism_itself() -> None:
    inner = T_("%n layer(s) on the GPU", None, 3)
    outer = T_("Offloading {layers} because {why}", layers=inner, why="data stays")
    assert outer == "Offloading 3 layers on the GPU because data stays"
    assert outer.translated(fake) == f"{MARK}Offloading {MARK}3 layers on the GPU because data stays"
    assert T_("%n file(s)", None, 1) == "1 file"


def test_every_gguf_error_a_person_reads_is_translatable(tmp_path: Path) -> None:
    errors: list[GGUFError] = []
    for buf in (b"NOPE" + bytes(20),                              # not GGUF
                b"GGUF" + struct.pack("<I", 1) + bytes(16),       # version 1
                b"GGUF" + struct.pack("<I", 3),                   # truncated header
                b"GGUF" + struct.pack("<IQQ", 3, 0, 1) + struct.pack("<Q", 0)):  # empty key name
        with pytest.raises(GGUFError) as info:
            parse_header(buf, "m.gguf")
        errors.append(info.value)
    for exc in errors:
        check_translatable(str(exc))  # str() keeps the Text (Exception.__str__ would not)
    # A refusal nests what is wrong (itself a Text): both parts are translated.
    assert check_translatable(str(errors[-1])).count(MARK) == 2


def test_hub_errors_are_translatable() -> None:
    with pytest.raises(HubError) as info:
        HubClient._check_repo_id("not a repo")
    check_translatable(str(info.value))
    with pytest.raises(UnsafeNameError) as unsafe:
        safe_relative_path("../escape.gguf")
    assert check_translatable(str(unsafe.value)).count(MARK) == 2  # the sentence and its why


def test_download_errors_are_translatable() -> None:
    src = DownloadSource("https://example.invalid/m.gguf", "m.gguf", 100, None)
    check_translatable(str(_changed(src, 120)))
    check_translatable(_why(httpx2.ConnectError("refused"), 30))
    check_translatable(_why(httpx2.ReadTimeout("slow"), 30))

    class Urls:
        def file_url(self, repo_id: str, revision: str, path: str) -> str:
            return f"https://example.invalid/{path}"

        def request_headers(self) -> dict[str, str]:
            return {}

    group = FileGroup("m.gguf", FileKind.MODEL, "Q4_K_M", (HubFile("m.gguf", None, None),))
    with pytest.raises(DownloadError) as info:
        sources_for(Urls(), "o/r", "main", group)
    check_translatable(str(info.value))


def test_storage_errors_are_translatable(tmp_path: Path) -> None:
    exc = sqlite3.OperationalError("database or disk is full")
    exc.sqlite_errorcode = SQLITE_FULL  # type: ignore[attr-defined]
    full = translate(exc, tmp_path / "hearth.db", T_("save the reply"))
    assert isinstance(full, StorageError)
    assert check_translatable(str(full)).count(MARK) == 2  # the sentence and the action
    assert str(full).startswith("The disk is full: Hearth could not save the reply.")
    check_translatable(str(damaged(tmp_path / "hearth.db", "file is not a database",
                                   T_("open its library"))))
    check_translatable(str(SecretStoreError(_keyring_trouble("read", OSError("locked")))))


def test_a_damaged_library_says_so_in_a_translatable_sentence(tmp_path: Path) -> None:
    from app.storage.db import open_database
    path = tmp_path / "hearth.db"
    path.write_bytes(b"this is not a database" * 100)
    with pytest.raises(StorageError) as info:
        open_database(path)
    check_translatable(str(info.value))


# -- the marker lupdate reads ---------------------------------------------------------------------


def _t_calls() -> list[tuple[Path, ast.Call]]:
    calls = []
    for path in sorted((ROOT / "app").rglob("*.py")):
        tree = ast.parse(path.read_text("utf-8"), str(path))
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and (
                    (isinstance(node.func, ast.Name) and node.func.id == "T_")
                    or (isinstance(node.func, ast.Attribute) and node.func.attr == "T_")):
                calls.append((path, node))
    return calls


def test_every_T_call_has_a_string_literal_template() -> None:
    calls = _t_calls()
    assert len(calls) > 100  # the packages really use the marker
    bad = [f"{p.relative_to(ROOT)}:{c.lineno}" for p, c in calls
           if not c.args or not isinstance(c.args[0], ast.Constant)
           or not isinstance(c.args[0].value, str)]
    assert not bad, f"T_ needs a string literal first (lupdate extracts it): {bad}"


def test_every_T_template_is_filled_by_its_keywords() -> None:
    """A placeholder no keyword fills would show braces to the person; a keyword no placeholder
    uses is a typo; a positional ``{}`` cannot be filled at all."""
    bad = []
    for path, call in _t_calls():
        if not call.args or not isinstance(call.args[0], ast.Constant):
            continue
        template = call.args[0].value
        where = f"{path.relative_to(ROOT)}:{call.lineno}"
        if "{}" in template.replace("{{}}", ""):
            bad.append(f"{where}: positional placeholder")
        if any(k.arg is None for k in call.keywords):
            continue  # **kwargs: cannot be checked here
        given = {k.arg for k in call.keywords}
        if placeholders(template) != given:
            bad.append(f"{where}: {sorted(placeholders(template))} vs {sorted(given)}")
        if "%n" in template and len(call.args) < 3:
            bad.append(f"{where}: %n without a count")
    assert not bad, bad
