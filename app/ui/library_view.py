"""The Models page: the GGUF models on this computer, wherever they came from.

The local-models service (app/services/local_models.py) scans Hearth's own folder, the Hugging
Face cache, LM Studio, Ollama and folders the user added; the page shows one row per model (its
name, size, quantization, whether it fits, where it lives) with that model's actions, and sends
the user's wishes back. Only models in Hearth's own folder can be deleted from here: the others
belong to another app. A model's name and metadata come from its file and are shown as plain
text. Dialogs (folder picker, confirmation) and opening the file manager are constructor
arguments, so tests can answer them; what belongs to other pages (Discover, the Open file
dialog, the offload panel) is asked for with signals the window connects.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QEvent, QSize, Qt, QUrl, Signal
from PySide6.QtGui import QDesktopServices, QMouseEvent, QResizeEvent
from PySide6.QtWidgets import (
    QApplication,
    QComboBox,
    QFileDialog,
    QFrame,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QSizePolicy,
    QStackedWidget,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from app.hub.verdict import Verdict
from app.services.protocols import LocalModelsLike, LocalRow
from app.ui.common import (
    FIT_TONES,
    Confirm,
    ask,
    human_params,
    human_size,
    human_tokens,
    plain_label,
    scrolling_column,
)
from app.ui.lang import tr, ui_text
from app.ui.style.components import (
    Banner,
    EmptyState,
    ProgressBar,
    chip,
    heading,
    icon_button,
    set_shown,
)
from app.ui.style.icons import pixmap
from app.ui.style.tokens import SPACING

log = logging.getLogger(__name__)

# What a row's buttons ask for; the view maps each to the service or to a signal.
LOAD, OFFLOAD, FOLDER, VERIFY, DELETE = "load", "offload", "folder", "verify", "delete"
# The orders the sort box offers (the first is the service's own: Hearth's folder first).
SORTS = ("found", "name", "size", "fit", "source")
_NOT_CHECKED = 99  # sorts after every fit rank


def _choose_folder(parent: QWidget) -> str:
    return QFileDialog.getExistingDirectory(parent, tr("Add a folder of GGUF models"))


def _short_path(path: str) -> str:
    """``path`` with the home folder as "~": the part a person recognises fits the row."""
    home = os.path.expanduser("~")
    if home not in ("", "~", "/") and (path == home or path.startswith(home + os.sep)):
        return "~" + path[len(home):]
    return path


class ElidedLabel(QLabel):
    """A one-line plain-text label that shortens its text with "…" to the width it is given
    (a model's name or folder can be longer than a row); ``full_text`` is the whole text, which
    the tooltip shows too."""

    def __init__(self, text: str = "", mode: Qt.TextElideMode = Qt.TextElideMode.ElideRight,
                 parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setTextFormat(Qt.TextFormat.PlainText)
        self._mode = mode
        self._full = ""
        # As wide as its text where there is room, narrower (elided) where there is not.
        self.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Preferred)
        self.set_full_text(text)

    def full_text(self) -> str:
        return self._full

    def set_full_text(self, text: str) -> None:
        self._full = text
        self.setToolTip(text)
        self.setAccessibleName(text)
        self._elide()

    def sizeHint(self) -> QSize:
        return QSize(self.fontMetrics().horizontalAdvance(self._full) + 2,
                     super().sizeHint().height())

    def minimumSizeHint(self) -> QSize:
        return QSize(0, super().minimumSizeHint().height())

    def resizeEvent(self, e: QResizeEvent) -> None:
        super().resizeEvent(e)
        self._elide()

    def changeEvent(self, e: QEvent) -> None:
        super().changeEvent(e)
        if e.type() == QEvent.Type.FontChange:  # the type scale came with the stylesheet
            self._elide()

    def _elide(self) -> None:
        width = self.width()
        shown = self.fontMetrics().elidedText(self._full, self._mode, width) if width > 8 \
            else self._full
        if shown != self.text():
            self.setText(shown)


def _label(text: str = "", *, tone: str = "", kind: str = "", wrap: bool = False) -> QLabel:
    """A plain-text label with a tone and a type: file text must never be read as markup."""
    return plain_label(text, wrap=wrap, selectable=False, tone=tone, kind=kind)


def _facts(r: LocalRow) -> str:
    """The facts line under a model's name: size, architecture, parameters, context."""
    parts = [human_size(r.size)]
    if r.architecture:
        parts.append(r.architecture)
    if r.parameters:
        parts.append(tr("{count} parameters").format(count=human_params(r.parameters)))
    if r.context_length:
        parts.append(tr("{tokens} context").format(tokens=human_tokens(r.context_length)))
    return " · ".join(parts)


def _fit_rank(r: LocalRow) -> int:
    if r.error is not None:
        return _NOT_CHECKED + 1
    return r.verdict.fit.rank if isinstance(r.verdict, Verdict) else _NOT_CHECKED


class ModelRow(QFrame):
    """One model on this computer, as a card: its name and facts, whether it fits, where it is,
    and its actions. ``action`` says which button was pressed (the view decides what it does)."""

    action = Signal(str, str)  # (LOAD | OFFLOAD | FOLDER | VERIFY | DELETE, path)
    picked = Signal(str)  # the row was clicked: the page's current model

    def __init__(self, r: LocalRow, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.row = r
        self.setProperty("card", True)
        self.setAccessibleName(r.name)
        self.picture = QLabel()
        self.picture.setTextFormat(Qt.TextFormat.PlainText)
        self.picture.setFixedSize(QSize(28, 28))
        self.picture.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self._paint_picture()

        self.name = ElidedLabel(r.name, Qt.TextElideMode.ElideMiddle)
        self.name.setProperty("type", "subheading")
        self.quant = chip(r.quantization or "", "muted")
        set_shown(self.quant, bool(r.quantization) and r.error is None)
        self.quant.setToolTip(tr("Quantization"))
        top = QHBoxLayout()
        top.setSpacing(SPACING.sm)
        top.addWidget(self.name)
        top.addWidget(self.quant)
        top.addStretch(1)

        if r.error is not None:
            # The header could not be read: the reason is what matters, in place of the facts.
            self.facts = _label(ui_text(r.error), tone="danger", kind="small", wrap=True)
            self.facts.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        else:
            self.facts = _label(_facts(r), tone="muted", kind="small")
        folder = _short_path(os.path.dirname(r.path))
        self.where = ElidedLabel(tr("{source} · {folder}").format(source=ui_text(r.source),
                                                                  folder=folder))
        self.where.setProperty("tone", "muted")
        self.where.setProperty("type", "caption")
        self.where.setToolTip(r.path)
        self.source_tip = tr("In Hearth's models folder") if r.own else \
            tr("Belongs to {source}: Hearth lists it but does not delete it").format(
                source=ui_text(r.source))
        text = QVBoxLayout()
        text.setSpacing(SPACING.xxs)
        text.addLayout(top)
        text.addWidget(self.facts)
        text.addWidget(self.where)

        self.verdict = self._verdict_chip(r)
        buttons = self._buttons(r)

        layout = QHBoxLayout(self)
        layout.setContentsMargins(SPACING.lg, SPACING.md, SPACING.md, SPACING.md)
        layout.setSpacing(SPACING.lg)
        layout.addWidget(self.picture, 0, Qt.AlignmentFlag.AlignTop)
        layout.addLayout(text, 1)
        layout.addWidget(self.verdict, 0, Qt.AlignmentFlag.AlignVCenter)
        layout.addLayout(buttons)

    def _verdict_chip(self, r: LocalRow) -> QLabel:
        """Whether the model fits, in words with the verdict's tone; why, in the tooltip."""
        if r.error is not None:
            label = chip(tr("Cannot be used"), "danger")
            label.setToolTip(ui_text(r.error))
        elif isinstance(r.verdict, Verdict):
            label = chip(ui_text(r.verdict.label()), FIT_TONES[r.verdict.fit])
            label.setToolTip(ui_text(r.verdict.tooltip()))
        else:
            label = chip(tr("Not checked yet"), "muted")
            label.setToolTip(tr("Hearth has not yet worked out how this model fits this "
                                "computer"))
        label.setAccessibleName(label.text())
        return label

    def _buttons(self, r: LocalRow) -> QHBoxLayout:
        usable = r.error is None
        self.load_btn = icon_button("load", tr("Load {name} in chat").format(name=r.name),
                                    text=tr("Load"))
        self.load_btn.setEnabled(usable)
        self.offload_btn = icon_button("offload", tr("Offload settings…"))
        self.offload_btn.setEnabled(usable)
        self.folder_btn = icon_button("open", tr("Show in folder"))
        self.verify_btn = icon_button("check", tr("Verify against the download's checksum"))
        self.delete_btn = icon_button("delete", tr("Delete this model from Hearth's folder"),
                                      tone="danger")
        self.delete_btn.setEnabled(r.own)
        if not r.own:
            # Only Hearth's own files can go; the button keeps its place so the columns line up.
            keep = self.delete_btn.sizePolicy()
            keep.setRetainSizeWhenHidden(True)
            self.delete_btn.setSizePolicy(keep)
            self.delete_btn.setToolTip(tr("Only models in Hearth's own folder can be deleted "
                                          "here; this one belongs to {source}.").format(
                                              source=ui_text(r.source)))
            self.delete_btn.hide()
        row = QHBoxLayout()
        row.setSpacing(SPACING.xxs)
        for what, b in ((LOAD, self.load_btn), (OFFLOAD, self.offload_btn),
                        (FOLDER, self.folder_btn), (VERIFY, self.verify_btn),
                        (DELETE, self.delete_btn)):
            b.clicked.connect(lambda _c=False, what=what: self.action.emit(what, self.row.path))
            row.addWidget(b, 0, Qt.AlignmentFlag.AlignVCenter)
        return row

    def buttons(self) -> list[QToolButton]:
        """The row's buttons, in order (tab order and tests)."""
        return [self.load_btn, self.offload_btn, self.folder_btn, self.verify_btn,
                self.delete_btn]

    def _paint_picture(self) -> None:
        self.picture.setPixmap(pixmap("model", 22, "danger" if self.row.error else "muted"))

    def changeEvent(self, e: QEvent) -> None:
        super().changeEvent(e)
        if e.type() in (QEvent.Type.PaletteChange, QEvent.Type.ApplicationPaletteChange) and \
                hasattr(self, "picture"):
            self._paint_picture()  # a pixmap keeps the colour of the theme it was drawn in

    def mousePressEvent(self, e: QMouseEvent) -> None:
        self.picked.emit(self.row.path)
        super().mousePressEvent(e)

    def mouseDoubleClickEvent(self, e: QMouseEvent) -> None:
        if self.row.error is None:
            self.action.emit(LOAD, self.row.path)
        super().mouseDoubleClickEvent(e)


class LibraryView(QWidget):
    """The models on this computer, with what can be done to each."""

    discover_requested = Signal()  # the empty page's "Discover models"
    open_file_requested = Signal()  # the empty page's "Open GGUF file…"
    offload_requested = Signal(str)  # a row's "Offload settings…": the model's path

    def __init__(self, models: LocalModelsLike, on_use: Callable[[str], None],
                 parent: QWidget | None = None, *,
                 open_url: Callable[[QUrl], object] | None = None,
                 choose_folder: Callable[[QWidget], str] | None = None,
                 confirm: Confirm | None = None, below: QWidget | None = None) -> None:
        """``on_use(path)`` loads a model for chat. ``below``: a section under the list (the
        model server's). ``open_url`` shows a folder in the file
        manager (default: QDesktopServices), ``choose_folder(parent)`` returns a folder or ""
        (default: QFileDialog), ``confirm(parent, title, question)`` asks before deleting
        (default: a QMessageBox)."""
        super().__init__(parent)
        self._models = models
        self._on_use = on_use
        self._open_url = open_url or QDesktopServices.openUrl
        self._choose_folder = choose_folder or _choose_folder
        self._confirm = confirm or ask
        self._rows: list[LocalRow] = []
        self._widgets: dict[str, ModelRow] = {}
        self._current: str | None = None

        header = self._header()
        self.message = Banner()
        self.message.setObjectName("message")
        self.empty = self._empty_state()
        self.empty.setObjectName("empty")
        self._column = QWidget()
        self.area, self._list = scrolling_column(self._column)
        self._list.setContentsMargins(0, 0, SPACING.xs, 0)
        self._list.setSpacing(SPACING.sm)
        self.stack = QStackedWidget()
        self.stack.addWidget(self.empty)
        self.stack.addWidget(self.area)

        layout = QVBoxLayout(self)
        layout.setContentsMargins(SPACING.xxl, SPACING.xl, SPACING.xxl, SPACING.lg)
        layout.setSpacing(SPACING.lg)
        layout.addLayout(header)
        layout.addWidget(self.message)
        layout.addWidget(self.stack, 1)
        if below is not None:
            layout.addWidget(below)

        models.changed.connect(self.set_rows)
        models.busy_changed.connect(self._set_busy)
        models.verified.connect(self._on_verified)
        models.failed.connect(self._on_failed)  # bound: disconnected when the view is gone
        self.set_rows(models.rows())

    def _header(self) -> QHBoxLayout:
        """The title and a summary, the scan's progress, the order, and the buttons about where
        models are."""
        title = heading(tr("Models on this computer"), "heading")
        self.summary = _label(tone="muted", kind="small")
        self.summary.setObjectName("summary")
        titles = QVBoxLayout()
        titles.setSpacing(SPACING.xxs)
        titles.addWidget(title)
        titles.addWidget(self.summary)
        self.busy = ProgressBar()
        self.busy.setRange(0, 0)
        self.busy.setMaximumWidth(96)
        self.busy.setTextVisible(False)
        self.busy.setAccessibleName(tr("Scanning for models"))
        self.busy_label = _label(tr("Scanning…"), tone="muted", kind="small")
        self.sort_label = _label(tr("Sort by"), tone="muted", kind="small")
        self.sort = QComboBox()
        self.sort.setAccessibleName(tr("Sort models by"))
        self.sort_label.setBuddy(self.sort)
        for key, text in zip(SORTS, (tr("Where found"), tr("Name"), tr("Size"),
                                     tr("Fit"), tr("Source")), strict=True):
            self.sort.addItem(text, key)
        self.sort.currentIndexChanged.connect(lambda _i: self.set_rows(self._rows))
        self.add_btn = icon_button("new", tr("Also list the GGUF models in a folder of your "
                                             "choice"), text=tr("Add folder…"))
        self.add_btn.clicked.connect(self.add_folder)
        self.models_dir_btn = icon_button(
            "downloads", tr("Where Hearth downloads models to (the only folder Hearth ever "
                            "deletes from)"), text=tr("Download folder…"))
        self.models_dir_btn.clicked.connect(self.change_models_dir)
        self.rescan_btn = icon_button("regenerate", tr("Look for models again (in every known "
                                                       "place)"))
        self.rescan_btn.clicked.connect(self._models.rescan)
        header = QHBoxLayout()
        header.setSpacing(SPACING.sm)
        header.addLayout(titles)
        header.addStretch(1)
        for w in (self.busy_label, self.busy, self.sort_label, self.sort, self.models_dir_btn,
                  self.add_btn, self.rescan_btn):
            header.addWidget(w, 0, Qt.AlignmentFlag.AlignVCenter)
        self._set_busy(False)
        return header

    def _empty_state(self) -> EmptyState:
        """No model yet: where to get one (Discover), or open or list the files already here."""
        empty = EmptyState("models", tr("No models yet"),
                           tr("Find a model in Discover, or open a GGUF file you already have. "
                              "“Add folder…” lists every GGUF model in a folder."),
                           tr("Discover models"))
        empty.activated.connect(self.discover_requested)
        self.open_btn = QPushButton(tr("Open GGUF file…"))
        self.open_btn.setAccessibleName(tr("Open GGUF file…"))
        self.open_btn.clicked.connect(self.open_file_requested)
        # Beside the main action, in the row EmptyState centres it in.
        column = empty.layout()
        for i in range(column.count() if column is not None else 0):
            item = column.itemAt(i) if column is not None else None
            row = item.layout() if item is not None else None
            if isinstance(row, QHBoxLayout) and row.indexOf(empty.action) >= 0:
                row.insertWidget(row.indexOf(empty.action) + 1, self.open_btn)
                break
        QWidget.setTabOrder(empty.action, self.open_btn)
        return empty

    # ---- public ----------------------------------------------------------------------------------

    def set_rows(self, rows: list[LocalRow]) -> None:
        """Show ``rows`` (the service's list) in the chosen order, keeping the current model."""
        self._rows = list(rows)
        focus = self._focused_button()  # a rescan must not throw a keyboard user out
        for w in self._widgets.values():
            self._list.removeWidget(w)
            w.deleteLater()
        self._widgets = {}
        for i, r in enumerate(self._sorted(self._rows)):
            w = ModelRow(r, self._column)
            w.action.connect(self._on_action)
            w.picked.connect(self._pick)
            self._list.insertWidget(i, w)
            w.show()  # now, not when the layout gets to it: the focus may be given back to it
            self._widgets[r.path] = w
        self.stack.setCurrentIndex(1 if rows else 0)
        self.sort.setVisible(len(rows) > 1)
        self.sort_label.setVisible(len(rows) > 1)
        if not rows:
            self.message.hide()
        if self._current not in self._widgets:
            self._current = None
        if focus is not None and focus[0] in self._widgets:
            button = self._widgets[focus[0]].buttons()[focus[1]]
            if button.isEnabled() and button.isVisibleTo(self):
                button.setFocus(Qt.FocusReason.OtherFocusReason)
        self.summary.setText(tr("%n model(s) · {size}", None, len(rows)).format(
            size=human_size(sum(r.size for r in rows))) if rows else "")
        self.summary.setVisible(bool(rows))

    def rows_shown(self) -> list[LocalRow]:
        """The rows in the order they are shown."""
        return [w.row for w in self._row_widgets()]

    def row_widget(self, path: str) -> ModelRow | None:
        """The row showing ``path`` (for tests and the screenshot script)."""
        return self._widgets.get(path)

    def selected(self) -> LocalRow | None:
        """The model last clicked or selected, if it is still listed."""
        w = self._widgets.get(self._current or "")
        return w.row if w is not None else None

    def select(self, path: str) -> bool:
        """Make ``path`` the current model and scroll to it; False when it is not listed."""
        w = self._widgets.get(path)
        if w is None:
            return False
        self._pick(path)
        self.area.ensureWidgetVisible(w)
        return True

    def use(self, path: str) -> None:
        r = self._row(path)
        if r is not None and r.error is None:
            self._on_use(r.path)

    def show_in_folder(self, path: str) -> None:
        r = self._row(path)
        if r is not None:
            self._open_url(QUrl.fromLocalFile(os.path.dirname(r.path)))

    def verify(self, path: str) -> None:
        r = self._row(path)
        if r is not None:
            self._set_message(tr("Verifying {name}…").format(name=r.name), "info")
            self._models.verify(r.path)

    def delete(self, path: str) -> None:
        r = self._row(path)
        if r is None or not r.own:
            return
        if self._confirm(self, tr("Delete the model?"),
                         tr("Delete {name} ({size}) from this computer? It would have to be "
                            "downloaded again.").format(name=r.name, size=human_size(r.size)),
                         action=tr("Delete")):
            self._models.delete(r.path)

    def add_folder(self) -> None:
        folder = self._choose_folder(self)
        if folder:
            self._models.add_folder(folder)

    def change_models_dir(self) -> None:
        folder = self._choose_folder(self)
        if folder:
            self._models.set_models_dir(folder)

    # ---- rows ----------------------------------------------------------------------------------

    def _focused_button(self) -> tuple[str, int] | None:
        """Which row's which button has the keyboard focus, if one does."""
        focused = QApplication.focusWidget()
        for path, w in self._widgets.items():
            buttons = w.buttons()
            if focused in buttons:
                return path, buttons.index(focused)
        return None

    def _row(self, path: str) -> LocalRow | None:
        return next((r for r in self._rows if r.path == path), None)

    def _row_widgets(self) -> list[ModelRow]:
        items = (self._list.itemAt(i) for i in range(self._list.count()))
        return [w for item in items if item is not None
                and isinstance(w := item.widget(), ModelRow)]

    def _sorted(self, rows: list[LocalRow]) -> list[LocalRow]:
        key = self.sort.currentData() if hasattr(self, "sort") else "found"
        keys: dict[str, Callable[[LocalRow], Any]] = {
            "name": lambda r: r.name.lower(),
            "size": lambda r: -r.size,  # the biggest first: what takes the room
            "fit": lambda r: (_fit_rank(r), r.name.lower()),
            "source": lambda r: (not r.own, r.source.lower(), r.name.lower()),
        }
        return sorted(rows, key=keys[key]) if key in keys else list(rows)

    def _pick(self, path: str) -> None:
        self._current = path

    def _on_action(self, what: str, path: str) -> None:
        self._pick(path)
        if what == LOAD:
            self.use(path)
        elif what == OFFLOAD:
            r = self._row(path)
            if r is not None and r.error is None:
                self.offload_requested.emit(path)
        elif what == FOLDER:
            self.show_in_folder(path)
        elif what == VERIFY:
            self.verify(path)
        elif what == DELETE:
            self.delete(path)
        else:
            log.warning("a model row asked for an unknown action: %r", what)

    # ---- service signals -----------------------------------------------------------------------

    def _set_busy(self, busy: bool) -> None:
        self.busy.setVisible(busy)
        self.busy_label.setVisible(busy)
        self.rescan_btn.setEnabled(not busy)

    def _on_verified(self, path: str, ok: object, sentence: str) -> None:
        name = next((r.name for r in self._rows if r.path == path), os.path.basename(path))
        tone = "success" if ok is True else "danger" if ok is False else "warning"
        text = tr("{name}: {sentence}").format(name=name, sentence=ui_text(sentence)) \
            if sentence else name
        self._set_message(text, tone)

    def _on_failed(self, sentence: str) -> None:
        self._set_message(ui_text(sentence), "danger")

    def _set_message(self, text: str, tone: str) -> None:
        if text:
            self.message.show_message(text, tone)
        else:
            self.message.hide()

