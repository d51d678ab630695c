"""The few pieces every screen is built from (issue 27): an icon button, a card, a chip (a fit
verdict in words), a section header, an empty state with its action, an inline banner for
notices and errors, and a progress row.

They carry no colours or sizes: each names what it is (a dynamic property or object name) and
the stylesheet (sheet.py) draws it. ``set_tone`` changes a label's tone and re-polishes it, since
Qt reads properties for a stylesheet only when a widget is polished.
"""

from __future__ import annotations

from PySide6.QtCore import QSize, Qt, Signal
from PySide6.QtGui import QKeySequence
from PySide6.QtWidgets import (
    QFrame,
    QHBoxLayout,
    QLabel,
    QProgressBar,
    QPushButton,
    QSizePolicy,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from app.hub.verdict import Fit
from app.ui.lang import tr
from app.ui.style.icons import icon, pixmap
from app.ui.style.tokens import SPACING

ICON_SIZE = 18  # an icon button's picture, in device-independent pixels
Tone = str  # "muted", "success", "warning", "danger", "info" or "" (the normal text)


def repolish(widget: QWidget) -> None:
    """Make ``widget`` read its dynamic properties again (after ``setProperty``)."""
    style = widget.style()
    style.unpolish(widget)
    style.polish(widget)
    widget.update()


def set_shown(widget: QWidget, shown: bool) -> None:
    """Show or hide ``widget`` as part of its parent, even before it has one.

    ``show()`` on a widget without a parent opens it as a window of its own: on a desktop a
    chip or a button flashes up as a window and takes the activation from the main window. A
    parentless widget is hidden without being explicitly hidden instead, which a layout shows
    with its parent."""
    if widget.parentWidget() is None and shown:
        widget.setAttribute(Qt.WidgetAttribute.WA_WState_ExplicitShowHide, False)
        return
    widget.setVisible(shown)


def set_tone(widget: QWidget, tone: Tone) -> None:
    """Colour ``widget``'s text by ``tone`` ("" for the normal text colour)."""
    if (widget.property("tone") or "") == tone:
        return
    widget.setProperty("tone", tone or None)
    repolish(widget)


def set_type(label: QLabel, kind: str) -> None:
    """Size ``label``'s text on the type scale: caption, small, subheading, heading, title,
    section (a small, muted, bold header)."""
    label.setProperty("type", kind)
    repolish(label)


def tooltip_with_shortcut(tip: str, shortcut: QKeySequence | str | None) -> str:
    """``tip`` followed by its keyboard shortcut in the platform's spelling: "Copy (Ctrl+C)"."""
    if not shortcut:
        return tip
    keys = QKeySequence(shortcut).toString(QKeySequence.SequenceFormat.NativeText)
    return f"{tip} ({keys})" if keys else tip


def icon_button(name: str, tip: str, *, shortcut: QKeySequence | str | None = None,
                tone: str = "text", checkable: bool = False, text: str = "") -> QToolButton:
    """A flat button showing ``name``'s icon, named for screen readers and tooltips by ``tip``
    (with its shortcut, when it has one). ``text`` beside the icon when given."""
    button = QToolButton()
    button.setIcon(icon(name, tone))
    button.setIconSize(QSize(ICON_SIZE, ICON_SIZE))
    button.setToolTip(tooltip_with_shortcut(tip, shortcut))
    button.setAccessibleName(tip)
    button.setProperty("iconButton", True)
    button.setCheckable(checkable)
    button.setCursor(Qt.CursorShape.PointingHandCursor)
    button.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
    if shortcut:
        button.setShortcut(QKeySequence(shortcut))
    if text:
        button.setText(text)
        button.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextBesideIcon)
    return button


def primary_button(text: str, tip: str = "", icon_name: str | None = None) -> QPushButton:
    """The main action of a place, in the accent colour."""
    button = QPushButton(text)
    button.setAccessibleName(text)
    button.setProperty("primary", True)
    if tip:
        button.setToolTip(tip)
    if icon_name:
        button.setIcon(icon(icon_name, "on_accent"))
    return button


class Card(QFrame):
    """A raised, rounded block holding one thing (a model, a recommendation, a setting group)."""

    def __init__(self, parent: QWidget | None = None, *, spacing: int = SPACING.sm) -> None:
        super().__init__(parent)
        self.setProperty("card", True)
        self.body = QVBoxLayout(self)
        self.body.setContentsMargins(SPACING.lg, SPACING.lg, SPACING.lg, SPACING.lg)
        self.body.setSpacing(spacing)


def _verdict(fit: Fit) -> tuple[str, Tone]:
    """The words and tone of a fit verdict's chip: words always, colour as a second sign."""
    return {
        Fit.GPU: (tr("Fits on the GPU"), "success"),
        Fit.PARTIAL: (tr("Partly on the GPU"), "info"),
        Fit.CPU: (tr("CPU only"), "warning"),
        Fit.NO_FIT: (tr("Will not fit"), "danger"),
    }[fit]


def chip(text: str, tone: Tone = "muted") -> QLabel:
    """A small rounded badge with ``text`` (plain text, never markup)."""
    label = QLabel()
    label.setTextFormat(Qt.TextFormat.PlainText)
    label.setText(text)
    label.setProperty("chip", tone or "muted")
    label.setSizePolicy(QSizePolicy.Policy.Maximum, QSizePolicy.Policy.Fixed)
    return label


def verdict_chip(fit: Fit | None) -> QLabel:
    """A chip saying whether a model fits this computer; hidden while ``fit`` is unknown."""
    label = chip("")
    set_verdict(label, fit)
    return label


def set_verdict(label: QLabel, fit: Fit | None) -> None:
    """Show ``fit`` on a chip made by :func:`verdict_chip`."""
    if fit is None:
        label.hide()
        return
    text, tone = _verdict(fit)
    label.setText(text)
    label.setAccessibleName(text)
    label.setProperty("chip", tone)
    repolish(label)
    set_shown(label, True)


def section_header(text: str) -> QLabel:
    """A small, muted, bold header over a group of rows ("Today", "On this computer")."""
    label = QLabel()
    label.setTextFormat(Qt.TextFormat.PlainText)
    label.setText(text)
    label.setProperty("type", "section")
    return label


def heading(text: str, kind: str = "heading") -> QLabel:
    """A place's title on the type scale (``title``, ``heading`` or ``subheading``)."""
    label = QLabel()
    label.setTextFormat(Qt.TextFormat.PlainText)
    label.setText(text)
    label.setProperty("type", kind)
    return label


class EmptyState(QWidget):
    """What an empty place says, centred: an icon, a title, a sentence and the action that
    fills it (the action is the part that matters: an empty place is never a dead end)."""

    activated = Signal()

    def __init__(self, icon_name: str, title: str, body: str, action: str = "",
                 parent: QWidget | None = None) -> None:
        super().__init__(parent)
        layout = QVBoxLayout(self)
        layout.setSpacing(SPACING.md)
        layout.addStretch(1)
        self.picture = QLabel()
        self.picture.setTextFormat(Qt.TextFormat.PlainText)  # every label here is plain text
        self.picture.setPixmap(pixmap(icon_name, 40, "muted"))
        self.picture.setAlignment(Qt.AlignmentFlag.AlignHCenter)
        self.title = heading(title, "subheading")
        self.title.setAlignment(Qt.AlignmentFlag.AlignHCenter)
        self.body = QLabel()
        self.body.setTextFormat(Qt.TextFormat.PlainText)
        self.body.setText(body)
        self.body.setWordWrap(True)
        self.body.setAlignment(Qt.AlignmentFlag.AlignHCenter)
        self.body.setProperty("tone", "muted")
        for widget in (self.picture, self.title, self.body):
            layout.addWidget(widget)
        self.action = QPushButton(action, self)
        self.action.setProperty("primary", True)
        self.action.setAccessibleName(action)
        self.action.setVisible(bool(action))
        self.action.clicked.connect(self.activated)
        row = QHBoxLayout()
        row.addStretch(1)
        row.addWidget(self.action)
        row.addStretch(1)
        layout.addLayout(row)
        layout.addStretch(2)

    def set_text(self, title: str, body: str, action: str | None = None) -> None:
        """Say something else (an empty list that went offline, say)."""
        self.title.setText(title)
        self.body.setText(body)
        if action is not None:
            self.action.setText(action)
            self.action.setAccessibleName(action)
            set_shown(self.action, bool(action))


_BANNER_ICONS = {"danger": "error", "warning": "warning", "success": "ok", "info": "info",
                 "muted": "info"}


class Banner(QFrame):
    """An inline notice or error across its place: an icon, a sentence (plain text), an
    optional action and a close button. Hidden until :meth:`show_message`."""

    action_clicked = Signal()
    closed = Signal()

    def __init__(self, parent: QWidget | None = None, *, closable: bool = True) -> None:
        super().__init__(parent)
        self.setProperty("banner", "info")
        row = QHBoxLayout(self)
        row.setContentsMargins(SPACING.lg, SPACING.sm, SPACING.sm, SPACING.sm)
        row.setSpacing(SPACING.md)
        self.picture = QLabel()
        self.picture.setTextFormat(Qt.TextFormat.PlainText)  # every label here is plain text
        self.text = QLabel()
        self.text.setTextFormat(Qt.TextFormat.PlainText)
        self.text.setWordWrap(True)
        self.text.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.text.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Preferred)
        self.action = QPushButton(self)
        self.action.hide()
        self.action.clicked.connect(self.action_clicked)
        self.close_button = icon_button("close", tr("Dismiss"))
        self.close_button.setParent(self)
        self.close_button.setVisible(closable)
        self.close_button.clicked.connect(self._close)
        row.addWidget(self.picture, 0, Qt.AlignmentFlag.AlignTop)
        row.addWidget(self.text, 1)
        row.addWidget(self.action, 0, Qt.AlignmentFlag.AlignVCenter)
        row.addWidget(self.close_button, 0, Qt.AlignmentFlag.AlignTop)
        self.hide()

    @property
    def tone(self) -> str:
        """The banner's tone: danger, warning, success, info."""
        return str(self.property("banner") or "info")

    def show_message(self, text: str, tone: Tone = "info", action: str = "") -> None:
        """Show ``text`` (plain) with ``tone``'s icon and edge, and ``action`` as a button."""
        self.setProperty("banner", tone or "info")
        self.picture.setPixmap(pixmap(_BANNER_ICONS.get(tone, "info"), ICON_SIZE, tone or "info"))
        self.text.setText(text)
        self.setAccessibleName(text)
        self.action.setText(action)
        self.action.setAccessibleName(action)
        self.action.setVisible(bool(action))
        repolish(self)
        set_shown(self, True)

    def _close(self) -> None:
        self.hide()
        self.closed.emit()


class ProgressBar(QProgressBar):
    """A progress bar that repaints with the next frame, not inside the call that moves it.

    Qt's ``QProgressBar.setValue`` repaints at once (a synchronous ``repaint()``, not
    ``update()``) whenever the bar moves by a pixel; a rounded, styled bar is not opaque, so what
    lies under it is painted too. At the end of a reply the context meter moved that way inside
    the turn that also renders the finished message: 23 ms of the 45 ms it took on a busy
    2-core machine (tests/bench/ui.py). With updates off while the value changes, Qt only
    queues the paint, which then joins the window's next one.
    """

    def setValue(self, value: int) -> None:
        if value == self.value() or not self.updatesEnabled():
            super().setValue(value)
            return
        self.setUpdatesEnabled(False)
        try:
            super().setValue(value)
        finally:
            self.setUpdatesEnabled(True)  # queues an update()


class ProgressRow(QWidget):
    """One task's progress: what it is, a thin bar, a detail line (speed, time left) and a
    cancel button."""

    cancel_clicked = Signal()

    def __init__(self, title: str = "", parent: QWidget | None = None) -> None:
        super().__init__(parent)
        grid = QVBoxLayout(self)
        grid.setContentsMargins(0, 0, 0, 0)
        grid.setSpacing(SPACING.xs)
        top = QHBoxLayout()
        self.title = QLabel()
        self.title.setTextFormat(Qt.TextFormat.PlainText)
        self.title.setText(title)
        self.cancel = icon_button("close", tr("Cancel"))
        self.cancel.clicked.connect(self.cancel_clicked)
        top.addWidget(self.title, 1)
        top.addWidget(self.cancel)
        self.bar = ProgressBar()
        self.bar.setTextVisible(False)
        self.bar.setRange(0, 1000)
        self.detail = QLabel()
        self.detail.setTextFormat(Qt.TextFormat.PlainText)
        self.detail.setProperty("tone", "muted")
        self.detail.setProperty("type", "small")
        grid.addLayout(top)
        grid.addWidget(self.bar)
        grid.addWidget(self.detail)

    def set_progress(self, fraction: float | None, detail: str = "") -> None:
        """Show ``fraction`` done (None: unknown, a busy bar) and ``detail``."""
        if fraction is None:
            self.bar.setRange(0, 0)
        else:
            self.bar.setRange(0, 1000)
            self.bar.setValue(round(max(0.0, min(1.0, fraction)) * 1000))
        self.detail.setText(detail)
        self.bar.setAccessibleName(detail or self.title.text())
