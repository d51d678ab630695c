"""Translatable sentences from the Qt-free packages (issue 27).

The planner, the GGUF reader, the Hub client, downloads and storage explain themselves in
sentences a person reads. They must not import Qt, so they cannot call Qt's translator; instead
they build each sentence with :func:`T_`, which returns a :class:`Text`: a ``str`` whose value is
the English sentence (so logs, tests and every ``str`` use keep working) and which remembers its
template and arguments. The window translates it at the boundary (``app.ui.lang.ui_text``): the
template through Qt's catalog, then the arguments put in, numbers in the person's locale.

Qt's extraction tool reads the marker: ``pyside6-lupdate -tr-function-alias tr+=T_`` (see
``installers/translations.py``) takes the first argument of every ``T_(...)`` call as a source
text, in the one empty context the window's ``tr`` uses too. So the first argument must be a
string literal, never an f-string or a variable: an f-string would be extracted with its
placeholders already filled and could never match. Plurals follow Qt: the template holds ``%n``
and the count goes in as ``n``; the English fallback turns ``(s)`` into the right ending.

Rules for a template: named ``{placeholders}`` only (no positional ``{}``), filled by keyword
arguments; a format spec such as ``{size:.1f}`` is allowed and the window keeps it, formatting
the number with the locale's decimal separator.

The runner's API errors stay English on purpose: they are read by programs and logs.
"""

from __future__ import annotations

import re
import string
from collections.abc import Callable, Mapping
from typing import Any

_PLURAL_MARK = "(s)"

# A callable that translates ``(template, n)`` into the person's language.
Translate = Callable[[str, int], str]
# A callable that formats a number with a format spec (".1f", ",d", "") for the locale.
FormatNumber = Callable[[float | int, str], str]


def english_plural(text: str, n: int) -> str:
    """``text`` with Qt's ``%n`` replaced by ``n`` and each ``(s)`` made right for English."""
    if n < 0:
        return text
    return text.replace("%n", str(n)).replace(_PLURAL_MARK, "" if n == 1 else "s")


class _LocaleFormatter(string.Formatter):
    """``str.format`` that hands numbers to a locale-aware formatter."""

    def __init__(self, number: FormatNumber | None) -> None:
        super().__init__()
        self._number = number

    def format_field(self, value: Any, format_spec: str) -> str:
        if (self._number is not None and isinstance(value, int | float)
                and not isinstance(value, bool)):
            return self._number(value, format_spec)
        return super().format_field(value, format_spec)


def fill(template: str, args: Mapping[str, object], *, n: int = -1,
         number: FormatNumber | None = None) -> str:
    """``template`` (already translated or English) with ``%n`` and its ``{placeholders}`` put in.

    A placeholder the template does not use is ignored; a translation that names one the
    arguments lack keeps it visible rather than raising, so a faulty catalog entry shows a
    wrong word, never a crash."""
    text = english_plural(template, n)
    try:
        return _LocaleFormatter(number).vformat(text, (), dict(args))
    except (KeyError, IndexError, ValueError):
        return text


class Text(str):
    """An English sentence (its ``str`` value) that remembers how to say it in another language."""

    template: str
    args: dict[str, object]
    n: int

    def __new__(cls, template: str, args: Mapping[str, object] | None = None,
                n: int = -1) -> Text:
        values = dict(args or {})
        self = super().__new__(cls, fill(template, values, n=n))
        self.template = template
        self.args = values
        self.n = n
        return self

    def translated(self, translate: Translate, number: FormatNumber | None = None) -> str:
        """This sentence in the language ``translate`` speaks; arguments that are themselves
        :class:`Text` are translated too."""
        args = {key: value.translated(translate, number) if isinstance(value, Text) else value
                for key, value in self.args.items()}
        return fill(translate(self.template, self.n), args, n=self.n, number=number)


class TextError(Exception):
    """An exception whose message a person reads: ``str()`` returns the :class:`Text` itself
    (``Exception.__str__`` would copy it into a plain ``str`` and lose its translation), so the
    window can translate ``str(exc)``. Use it as the first base: ``class E(TextError, ValueError)``."""

    def __str__(self) -> str:
        message = self.args[0] if len(self.args) == 1 else None
        return message if isinstance(message, Text) else super().__str__()


def T_(template: str, disambiguation: str | None = None, count: int = -1, /,
       **args: object) -> Text:
    """Mark ``template`` (a string literal) for translation and fill it: ``T_("{count} files",
    count=3)``; for a plural, ``T_("%n layer(s) on the GPU", None, layers)``.

    ``disambiguation`` is Qt's comment for two sources spelled alike; it is not used here but
    keeps the argument positions lupdate reads."""
    del disambiguation  # positional-only parameters: any keyword, ``n`` too, is a placeholder
    return Text(template, args, count)


def english(template: str, disambiguation: str | None = None, count: int = -1, /,
            **args: object) -> Text:
    """A sentence that stays English everywhere, filled as :func:`T_` fills one: what a
    model or a program reads (a tool's result and the sentences about a call, like the
    runner's API errors). Qt's extraction tool does not read this name, so no catalog holds
    it and the window shows it as the model got it."""
    del disambiguation
    return Text(template, args, count)


_PLACEHOLDER = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)(?:[:!][^{}]*)?\}")


def placeholders(template: str) -> set[str]:
    """The names of ``template``'s ``{placeholders}`` (a check that a translation keeps them)."""
    return set(_PLACEHOLDER.findall(template))
