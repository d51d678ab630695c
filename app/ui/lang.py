"""The window's language (issue 27): Qt's translation system, one catalog per language.

- ``tr("text")`` translates a widget's string. Every user-visible string in ``app/ui`` goes
  through it (or through Qt's ``QCoreApplication.translate``). It uses one empty context, the
  one ``pyside6-lupdate`` gives a bare ``tr(...)`` call and the ``T_`` marker of the Qt-free
  packages (``app/i18n.py``), so a sentence is translated once wherever it appears. Plurals:
  ``tr("%n file(s)", None, count)``.
- ``ui_text(value)`` is the boundary for sentences from the Qt-free packages: a
  :class:`app.i18n.Text` is translated (its template, then its arguments put in, numbers in the
  locale's format); any other string is data (a file or model name) and is shown as it is.
- ``install_language(app, choice)`` loads Hearth's catalog and Qt's own for ``choice``
  ("system" follows the system's language) from ``resources/translations``.

Catalogs are built with Qt's tools by ``installers/translations.py`` (lupdate, lrelease).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path

from PySide6.QtCore import QCoreApplication, QLibraryInfo, QLocale, QTranslator

from app import paths
from app.i18n import Text, english_plural

log = logging.getLogger(__name__)

# Languages Hearth speaks: code -> the language's own name (shown in Settings as is).
LANGUAGES: dict[str, str] = {"en": "English", "de": "Deutsch"}
SOURCE_LANGUAGE = "en"


def tr(text: str, disambiguation: str | None = None, n: int = -1) -> str:
    """``text`` in the window's language; ``%n`` is ``n`` and ``(s)`` its English ending."""
    translated = QCoreApplication.translate("", text, disambiguation, n)
    return english_plural(translated, n) if n >= 0 else translated


def _translate_template(template: str, n: int) -> str:
    return QCoreApplication.translate("", template, None, n) if n >= 0 else \
        QCoreApplication.translate("", template)


def format_number(value: float | int, spec: str) -> str:
    """``value`` as ``format(value, spec)`` would, with the locale's separators."""
    locale = _number_locale()
    if isinstance(value, int) and not spec.endswith(("f", "%", "e", "g")):
        return locale.toString(value) if "," in spec else str(value)
    if spec.endswith("f"):
        digits = spec.rstrip("f").lstrip(",").lstrip(".") or "6"
        try:
            return locale.toString(float(value), "f", int(digits))
        except ValueError:
            return format(value, spec)
    if spec.endswith("%"):
        digits = spec.rstrip("%").lstrip(".") or "0"
        try:
            return locale.toString(float(value) * 100, "f", int(digits)) + "%"
        except ValueError:
            return format(value, spec)
    return format(value, spec) if spec else locale.toString(float(value), "g", 6)


def _number_locale() -> QLocale:
    # Qt's "C" locale (no LANG set: a test machine, a service) writes 4000 for 4,000; English
    # is the source language, so it writes numbers as English does.
    locale = QLocale()
    return QLocale(QLocale.Language.English, QLocale.Country.UnitedStates) \
        if locale.language() == QLocale.Language.C else locale


def ui_text(value: str) -> str:
    """A sentence from the Qt-free packages in the window's language; other strings unchanged."""
    if isinstance(value, Text):
        return value.translated(_translate_template, format_number)
    return value


def said(exc: BaseException) -> str:
    """An exception's sentence in the window's language: the Qt-free packages raise with a
    translatable :class:`app.i18n.Text` (``str(exc)`` would lose it), others are shown as is."""
    if len(exc.args) == 1 and isinstance(exc.args[0], str):
        return ui_text(exc.args[0])
    return str(exc)


def translations_dir() -> Path:
    """Where Hearth's compiled catalogs (``hearth_<code>.qm``) are."""
    return paths.resources_dir() / "translations"


@dataclass
class Language:
    """What is installed: the language code and the translators (kept alive while in use)."""

    code: str
    translators: list[QTranslator]


def resolve(choice: str, system: QLocale | None = None) -> str:
    """The language code ``choice`` means: itself when Hearth speaks it; for "system", the
    system's language when Hearth speaks it, else English."""
    if choice in LANGUAGES:
        return choice
    locale = system or QLocale.system()
    for name in locale.uiLanguages():
        code = name.replace("_", "-").split("-")[0].lower()
        if code in LANGUAGES:
            return code
    return SOURCE_LANGUAGE


_installed: Language | None = None


def install_language(app: QCoreApplication, choice: str = "system",
                     folder: Path | None = None) -> Language:
    """Translate the window into ``choice`` ("system", "en", "de"); replaces what was installed.

    Qt's own catalog (``qtbase_<code>.qm``: the standard buttons, the file dialog) is read from
    Hearth's folder first (the frozen app ships it there) and from Qt's otherwise. A missing
    catalog leaves English with one warning: the window still works."""
    global _installed
    if _installed is not None:
        for old in _installed.translators:
            app.removeTranslator(old)
    code = resolve(choice)
    QLocale.setDefault(QLocale(code if code != SOURCE_LANGUAGE else "en_US"))
    translators: list[QTranslator] = []
    if code != SOURCE_LANGUAGE:
        folder = folder or translations_dir()
        ours = QTranslator(app)
        if ours.load(str(folder / f"hearth_{code}.qm")):
            translators.append(ours)
        else:
            log.warning("no %s catalog in %s: the window stays in English", code, folder)
        qt = QTranslator(app)
        qt_dirs = (folder, Path(QLibraryInfo.path(QLibraryInfo.LibraryPath.TranslationsPath)))
        if any(qt.load(f"qtbase_{code}", str(d)) for d in qt_dirs):
            translators.append(qt)
        for translator in translators:
            app.installTranslator(translator)
    _installed = Language(code, translators)
    return _installed


def current_language() -> str:
    """The code of the language on screen ("en" before any is installed)."""
    return _installed.code if _installed else SOURCE_LANGUAGE
