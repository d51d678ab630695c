"""Issue 27: Hearth's translation catalogs (resources/translations) are complete, current and load.

- ``installers/translations.py check`` finds no problem: every string the app marks with
  ``tr``/``T_`` is in each catalog, translated, with the same placeholders, and the committed
  ``.qm`` is the one ``lrelease`` builds from the ``.ts``.
- The script's ``CATALOGS`` are the languages ``app.ui.lang.LANGUAGES`` offers, less English.
- The German ``.qm`` really translates: window strings, a sentence from the Qt-free packages
  (``T_`` through ``ui_text``, nested pieces included) and plurals (``%n``) with a German form
  for one and another for several.
"""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from PySide6.QtCore import QCoreApplication, QTranslator

from app.i18n import T_
from app.ui.lang import LANGUAGES, SOURCE_LANGUAGE, tr, ui_text

ROOT = Path(__file__).resolve().parents[2]


def _script():
    """installers/translations.py (a script, not a package) as a module."""
    spec = importlib.util.spec_from_file_location("hearth_translations",
                                                  ROOT / "installers" / "translations.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up while being made
    spec.loader.exec_module(module)
    return module


translations = _script()


def _qt_tools_or_skip() -> None:
    try:
        translations._tool("lupdate")
        translations._tool("lrelease")
    except SystemExit as missing:
        pytest.skip(f"Qt's translation tools are not installed here: {missing}")


def test_catalogs_are_complete_and_current() -> None:
    _qt_tools_or_skip()
    for code in translations.CATALOGS:
        found = translations.problems(code)
        assert not found, f"hearth_{code}: " + "\n".join(found[:20])


def test_catalogs_are_the_languages_offered() -> None:
    assert set(translations.CATALOGS) == set(LANGUAGES) - {SOURCE_LANGUAGE}
    for code in translations.CATALOGS:
        assert translations.ts_path(code).is_file()
        assert translations.qm_path(code).is_file()


@pytest.fixture
def german(qapp) -> Iterator[QTranslator]:
    """Hearth's German catalog installed for one test, then removed again."""
    translator = QTranslator()
    assert translator.load(str(translations.qm_path("de"))), "hearth_de.qm does not load"
    QCoreApplication.installTranslator(translator)
    try:
        yield translator
    finally:
        QCoreApplication.removeTranslator(translator)


def test_german_window_strings(german: QTranslator) -> None:
    assert tr("Cancel") == "Abbrechen"
    assert tr("Models") == "Modelle"
    assert tr("Send") == "Senden"
    assert tr("&File") == "&Datei"  # the mnemonic is kept
    assert tr("Keyboard shortcuts") == "Tastenkürzel"


def test_german_sentence_from_the_qt_free_packages(german: QTranslator) -> None:
    text = T_("{path} does not exist.", path="/models/x.gguf")
    assert str(text) == "/models/x.gguf does not exist."  # the English value is unchanged
    assert ui_text(text) == "/models/x.gguf existiert nicht."
    # A nested piece (the action) is translated too.
    nested = T_("The disk is full: Hearth could not {action}. Free some space; nothing already "
                "saved is lost.", action=T_("save the reply"))
    said = ui_text(nested)
    assert "die Antwort zu speichern" in said and said.startswith("Der Datenträger ist voll")


def test_german_plurals(german: QTranslator) -> None:
    one, five = tr("%n layer(s)", None, 1), tr("%n layer(s)", None, 5)
    assert (one, five) == ("1 Schicht", "5 Schichten")
    one = ui_text(T_("%n message(s)", None, 1))
    five = ui_text(T_("%n message(s)", None, 5))
    assert (one, five) == ("1 Nachricht", "5 Nachrichten")


def test_german_placeholders_filled(german: QTranslator) -> None:
    said = ui_text(T_("{label} is a whole number from {low} to {high}.", label="Top-k", low=0,
                      high=200))
    assert said == "Top-k ist eine ganze Zahl von 0 bis 200."
