"""A pseudo-locale for finding text left untranslated (issue 27).

``PseudoTranslator`` translates every string Qt asks it for into a marked look-alike:
"Load model" becomes "⟦Ŀőåđ ɱőđēŀ⟧", placeholders (``{name}``, ``%n``) kept so the sentence is
still filled in. A widget whose text went through ``tr`` or ``ui_text`` then shows only marked
text and data; ``visible_texts`` collects what a person sees on screen and ``untranslated``
finds the words that are neither (a string never marked for translation). Qt's own "no
unfinished string" check would pass a string that was never marked: this one cannot.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from PySide6.QtCore import QModelIndex, Qt, QTranslator
from PySide6.QtWidgets import (
    QAbstractButton,
    QAbstractItemView,
    QComboBox,
    QGroupBox,
    QLabel,
    QLineEdit,
    QMenu,
    QPlainTextEdit,
    QTabBar,
    QTextEdit,
    QWidget,
)

OPEN, CLOSE = "⟦", "⟧"
# Every ASCII letter has a look-alike, so no run of plain letters survives translation: a cut
# translated sentence (the window shows its first sentence somewhere) still reads as marked.
_LOOKALIKE = str.maketrans(
    "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ",
    "åƀçđēƒĝĥîĵķŀɱñőþʠŕšţüṽŵẋýžÅßÇĐĒƑĜĤÎĴĶĿṀÑŐÞǪŔŠŢÜṼŴẊÝŽ")
_KEEP = re.compile(r"(\{[^{}]*\}|%n|%L?\d|&&|<[^<>]*>|&[a-z]+;)")


def pseudo(text: str) -> str:
    """``text`` marked and in look-alike letters, its placeholders, markup and entities kept."""
    parts = _KEEP.split(text)
    return OPEN + "".join(p if _KEEP.fullmatch(p) else p.translate(_LOOKALIKE)
                          for p in parts) + CLOSE


class PseudoTranslator(QTranslator):
    """Translates everything into the pseudo-locale."""

    def translate(self, context: str, source: str, disambiguation: str | None = None,
                  n: int = -1) -> str:
        del context, disambiguation
        return pseudo(source.replace("%n", str(n)) if n >= 0 else source)

    def isEmpty(self) -> bool:
        return False


def _item_texts(view: QAbstractItemView, limit: int = 200) -> Iterable[str]:
    model = view.model()
    if model is None:
        return
    stack = [QModelIndex()]
    seen = 0
    while stack and seen < limit:
        parent = stack.pop()
        try:
            columns = model.columnCount(parent)
        except TypeError:  # a list model keeps it private: one column
            columns = 1
        for row in range(model.rowCount(parent)):
            for column in range(columns):
                index = model.index(row, column, parent)
                for role in (Qt.ItemDataRole.DisplayRole, Qt.ItemDataRole.ToolTipRole):
                    value = model.data(index, role)
                    if isinstance(value, str):
                        yield value
                seen += 1
            child = model.index(row, 0, parent)
            try:
                if model.hasChildren(child):
                    stack.append(child)
            except TypeError:  # a list model: no children
                pass


def visible_texts(root: QWidget) -> list[tuple[str, str]]:
    """(where, text) for every text a person can see or hear (a screen reader reads accessible
    names and tooltips) in ``root``'s visible widgets."""
    found: list[tuple[str, str]] = []

    def add(widget: QWidget, what: str, text: str) -> None:
        if text and text.strip():
            found.append((f"{type(widget).__name__}({widget.objectName()}).{what}", text))

    widgets = [root, *root.findChildren(QWidget)]
    for w in widgets:
        if not w.isVisible() and not isinstance(w, QMenu):
            continue
        if w.isWindow():
            add(w, "windowTitle", w.windowTitle())
        add(w, "toolTip", w.toolTip())
        add(w, "accessibleName", w.accessibleName())
        if isinstance(w, QLabel):
            add(w, "text", re.sub(r"<[^>]+>", " ", w.text()))
        elif isinstance(w, QAbstractButton):
            add(w, "text", w.text().replace("&", ""))
        elif isinstance(w, QLineEdit):
            add(w, "placeholder", w.placeholderText())
        elif isinstance(w, QTextEdit | QPlainTextEdit):
            add(w, "placeholder", w.placeholderText())
            if isinstance(w, QTextEdit) and w.isReadOnly():  # a transcript or a card: its words
                for line in w.document().toPlainText().splitlines():
                    add(w, "document", line)
        elif isinstance(w, QGroupBox):
            add(w, "title", w.title())
        elif isinstance(w, QTabBar):
            for i in range(w.count()):
                add(w, f"tab{i}", w.tabText(i).replace("&", ""))
        elif isinstance(w, QComboBox):
            for i in range(w.count()):
                add(w, f"item{i}", w.itemText(i))
        elif isinstance(w, QMenu):
            for action in w.actions():
                add(w, "action", action.text().replace("&", ""))
        if isinstance(w, QAbstractItemView) and w.isVisible():
            for text in _item_texts(w):
                add(w, "item", text)
    return found


# Words that are the same in every language: names of things, units, file types.
PROPER = {"Hearth", "GGUF", "GPU", "GPUs", "CPU", "RAM", "VRAM", "CUDA", "Vulkan", "Metal",
          "Hugging", "Face", "OpenAI", "API", "URL", "HTTP", "HTTPS", "GB", "MB", "kB", "TB",
          "GiB", "MiB", "KiB", "KV", "llama", "cpp", "Ctrl", "Shift", "Alt", "Enter", "Esc",
          "Tab", "Del", "PgUp", "PgDown", "Home", "End", "Return", "Space", "Backspace", "Up",
          "Down", "Left", "Right", "F1", "LM", "Studio", "Ollama", "Jan", "GPT4All", "AMD",
          "NVIDIA", "Apple", "Intel", "Linux", "Windows", "macOS", "MCP", "Deutsch", "English",
          "tok", "ms", "Gemma", "Qwen", "Llama", "Phi", "Mistral", "Markdown", "JSON", "ID"}


def strip_marked(text: str) -> str:
    """``text`` without its marked (translated) parts, innermost first."""
    previous = None
    while previous != text:
        previous = text
        text = re.sub(f"{OPEN}[^{OPEN}{CLOSE}]*{CLOSE}", " ", text)
    return text


def untranslated(texts: Iterable[tuple[str, str]], data: Iterable[str] = ()) -> list[str]:
    """The texts with a word outside the marked parts that is neither data (model and file
    names the test put there, given in ``data``) nor a name of a thing (:data:`PROPER`)."""
    data = sorted((d for d in data if d), key=len, reverse=True)
    bad = []
    for where, text in texts:
        rest = strip_marked(text)
        for d in data:
            rest = rest.replace(d, " ")
        rest = re.sub(r"</?[A-Za-z][^<>]*>", " ", rest)  # markup (a tooltip's <br>), never words shown
        rest = re.sub(r"\b[a-z][a-z+]*://\S*", " ", rest)  # an address is data
        rest = re.sub(r"(?:[A-Za-z]:)?[/\\][^\s]*", " ", rest)  # a path is data
        words = [w for w in re.findall(r"[A-Za-z]{2,}", rest) if w not in PROPER]
        if words:
            bad.append(f"{where}: {text!r} (unmarked: {' '.join(words[:6])})")
    return bad
