#!/usr/bin/env python3
"""Hearth's translation catalogs, built with Qt's own tools (issue 27).

    .venv/bin/python installers/translations.py update   # lupdate: sources -> resources/translations/*.ts
    .venv/bin/python installers/translations.py release  # lrelease: *.ts -> *.qm (committed, shipped)
    .venv/bin/python installers/translations.py check    # exit 1 when a catalog is stale or unfinished

``pyside6-lupdate`` reads every Python file of the app: the window's ``tr("...")`` calls and the
Qt-free packages' ``T_("...")`` marker (``-tr-function-alias tr+=T_``), all in one empty context.
A translator edits ``resources/translations/hearth_<code>.ts`` (Qt Linguist, or by hand), then
runs ``release``. The compiled ``.qm`` files are committed so that a checkout, the wheel and the
frozen app have them without Qt's tools; ``check`` (run by the tests) proves they are current.
Qt's own catalog for the standard dialogs (``qtbase_<code>.qm``) comes from PySide6 itself.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FOLDER = ROOT / "resources" / "translations"
# The languages with a catalog: app/ui/lang.LANGUAGES less the source language (kept here as
# data so this script needs no Qt import; tests/unit/test_translations.py checks they agree).
CATALOGS = ("de",)
ALIAS = "tr+=T_"


def _tool(name: str) -> str:
    """``pyside6-<name>`` beside this Python (the venv's), else on PATH."""
    here = Path(sys.executable).parent / f"pyside6-{name}"
    found = str(here) if here.exists() else shutil.which(f"pyside6-{name}")
    if not found:
        raise SystemExit(f"pyside6-{name} is missing: install PySide6 (pip install -e .)")
    return found


def sources(root: Path = ROOT) -> list[Path]:
    """Every Python file whose strings a person may read: the app, not the runner (whose API
    messages stay English) nor the tests."""
    return sorted(p for p in (root / "app").rglob("*.py") if "__pycache__" not in p.parts)


def ts_path(code: str, folder: Path = FOLDER) -> Path:
    return folder / f"hearth_{code}.ts"


def qm_path(code: str, folder: Path = FOLDER) -> Path:
    return folder / f"hearth_{code}.qm"


WORDS = ROOT / "app" / "hub" / "recommended_words.py"


def recommended_words(root: Path = ROOT) -> str:
    """The source of app/hub/recommended_words.py: the curated list's blurbs
    (resources/recommended.json, data lupdate cannot read) as ``T_`` calls it can."""
    import json

    data = json.loads((root / "resources" / "recommended.json").read_text("utf-8"))
    blurbs = [str(m.get("blurb") or "").replace("{", "(").replace("}", ")")
              for m in data["models"]]
    lines = ['"""The curated models\' blurbs (resources/recommended.json) for the translation',
             "catalog: written by installers/translations.py update, never by hand; the window",
             'shows them through app.hub.recommended, whose Text they match."""', "",
             "from app.i18n import T_", "", "BLURBS = ("]
    lines += [f"    T_({b!r})," for b in blurbs if b]
    lines += [")", ""]
    return "\n".join(lines)


def update(code: str, ts: Path | None = None) -> None:
    """Bring ``code``'s .ts up to the sources: new strings appear unfinished, gone ones leave."""
    words = recommended_words()
    if not WORDS.is_file() or WORDS.read_text("utf-8") != words:
        WORDS.write_text(words, "utf-8")
    ts = ts or ts_path(code)
    ts.parent.mkdir(parents=True, exist_ok=True)
    files = [str(p.relative_to(ROOT)) for p in sources()]
    subprocess.run([_tool("lupdate"), *files, "-tr-function-alias", ALIAS, "-no-obsolete",
                    "-locations", "none", "-source-language", "en", "-target-language", code,
                    "-ts", str(ts)], cwd=ROOT, check=True, capture_output=True, text=True)


def release(code: str, ts: Path | None = None, qm: Path | None = None) -> None:
    """Compile ``code``'s .ts into the .qm the app loads."""
    subprocess.run([_tool("lrelease"), str(ts or ts_path(code)), "-qm", str(qm or qm_path(code))],
                   cwd=ROOT, check=True, capture_output=True, text=True)


@dataclass
class Entry:
    source: str
    translation: str
    unfinished: bool
    numerus: bool
    forms: list[str]


def entries(ts: Path) -> list[Entry]:
    """The messages of a .ts file."""
    out = []
    for message in ET.parse(ts).getroot().iter("message"):
        source = message.findtext("source") or ""
        node = message.find("translation")
        kind = node.get("type", "") if node is not None else "unfinished"
        forms = [f.text or "" for f in node.iter("numerusform")] if node is not None else []
        text = (node.text or "") if node is not None else ""
        out.append(Entry(source, text, kind in ("unfinished", "vanished", "obsolete"),
                         message.get("numerus") == "yes", forms))
    return out


_PLACEHOLDER = re.compile(r"\{[A-Za-z_][A-Za-z0-9_]*(?:[:!][^{}]*)?\}")


def problems(code: str, folder: Path = FOLDER) -> list[str]:
    """What keeps ``code``'s catalog from being complete and current."""
    found: list[str] = []
    if not WORDS.is_file() or WORDS.read_text("utf-8") != recommended_words():
        found.append(f"{WORDS.name} does not match recommended.json: run `update`")
    committed = ts_path(code, folder)
    if not committed.is_file():
        return [f"{committed} is missing: run `installers/translations.py update`"]
    with tempfile.TemporaryDirectory() as tmp:
        fresh = Path(tmp) / committed.name
        shutil.copy(committed, fresh)
        update(code, fresh)
        have = {e.source for e in entries(committed)}
        now = {e.source for e in entries(fresh)}
        if have != now:
            new, gone = sorted(now - have), sorted(have - now)
            found.append(f"{committed.name} is stale: {len(new)} new strings {new[:5]}, "
                         f"{len(gone)} gone {gone[:5]}: run `installers/translations.py update`")
        qm = Path(tmp) / "check.qm"
        release(code, committed, qm)
        if not qm_path(code, folder).is_file() or qm.read_bytes() != qm_path(code, folder).read_bytes():
            found.append(f"hearth_{code}.qm is not built from {committed.name}: run `release`")
    for e in entries(committed):
        shown = e.forms if e.numerus else [e.translation]
        if e.unfinished or not all(s.strip() for s in shown):
            found.append(f"untranslated: {e.source!r}")
            continue
        want = set(_PLACEHOLDER.findall(e.source))
        for text in shown:
            if set(_PLACEHOLDER.findall(text)) != want:
                found.append(f"placeholders differ: {e.source!r} -> {text!r}")
            if e.numerus and "%n" in e.source and "%n" not in text:
                found.append(f"the count is lost: {e.source!r} -> {text!r}")
    return found


def main(argv: list[str]) -> int:
    if not argv or argv[0] not in ("update", "release", "check"):
        print(__doc__.strip())
        return 2
    if argv[0] == "update":
        for code in CATALOGS:
            update(code)
            print(f"updated {ts_path(code).relative_to(ROOT)}")
    elif argv[0] == "release":
        for code in CATALOGS:
            release(code)
            print(f"built {qm_path(code).relative_to(ROOT)}")
    else:
        all_problems = [p for code in CATALOGS for p in problems(code)]
        for p in all_problems[:50]:
            print(p)
        if len(all_problems) > 50:
            print(f"... and {len(all_problems) - 50} more")
        return 1 if all_problems else 0
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
