"""Small pieces the model views share: plain-text labels, a scrolling column of
cards, a confirmation, sizes and counts for people, palette-aware colour hints, and a
window's opening size that fits the screen."""

from __future__ import annotations

from typing import Protocol

from PySide6.QtCore import QEvent, QObject, QSize, Qt
from PySide6.QtGui import QColor, QGuiApplication, QPalette
from PySide6.QtWidgets import (
    QFrame,
    QLabel,
    QLayout,
    QMessageBox,
    QPushButton,
    QScrollArea,
    QVBoxLayout,
    QWidget,
)

from app.hub.verdict import Fit
from app.ui.lang import format_number, tr
from app.ui.style.palette import roles

# The tone of each fit verdict (the chips' and the item views' colour; words always go with it).
FIT_TONES = {Fit.GPU: "success", Fit.PARTIAL: "info", Fit.CPU: "warning", Fit.NO_FIT: "danger"}


def plain_label(text: str = "", *, muted: bool = False, wrap: bool = True,
                selectable: bool = True, tone: str = "", kind: str = "") -> QLabel:
    """A label that shows its text as typed: Hub and file text must never be read as markup.
    ``tone`` and ``kind`` are the stylesheet's ``tone`` and ``type`` (app/ui/style/sheet.py)."""
    label = QLabel()
    label.setTextFormat(Qt.TextFormat.PlainText)
    label.setText(text)
    label.setWordWrap(wrap)
    if selectable:
        label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
    if muted:
        label.setForegroundRole(QPalette.ColorRole.PlaceholderText)
    if tone:
        label.setProperty("tone", tone)
    if kind:
        label.setProperty("type", kind)
    return label


def clear_layout(layout: QLayout) -> None:
    """Remove every item of ``layout``, its widgets deleted. Hidden and taken out of their
    parent now: deleteLater only acts on the next event-loop pass, and until then the old
    widgets would still be painted under the new ones."""
    while layout.count():
        item = layout.takeAt(0)
        widget = item.widget() if item is not None else None
        if widget is not None:
            widget.hide()
            widget.setParent(None)
            widget.deleteLater()


def named_button(text: str, tip: str = "") -> QPushButton:
    """A push button named for screen readers by its text, with an optional tooltip."""
    button = QPushButton(text)
    button.setAccessibleName(text)
    if tip:
        button.setToolTip(tip)
    return button


def scrolling_column(parent: QWidget) -> tuple[QScrollArea, QVBoxLayout]:
    """A frameless scroll area around ``parent``, whose column of widgets sits at the top;
    insert widgets before the last item (the stretch)."""
    layout = QVBoxLayout(parent)
    layout.setContentsMargins(0, 0, 4, 0)
    layout.setSpacing(6)
    layout.addStretch(1)
    scroll = QScrollArea()
    scroll.setWidgetResizable(True)
    scroll.setFrameShape(QFrame.Shape.NoFrame)
    scroll.setWidget(parent)
    return scroll, layout


def question_box(parent: QWidget | None, title: str, question: str, action: str = "",
                 keep: str = "") -> tuple[QMessageBox, QPushButton]:
    """The box :func:`ask` shows, and its action button: the action named by its verb
    (``action``: "Delete", "Cancel download"; default "OK") beside the way out (``keep``,
    default "Cancel"), which is the default and what Escape answers (the questions guard
    deleting something)."""
    box = QMessageBox(QMessageBox.Icon.Question, title, question,
                      QMessageBox.StandardButton.NoButton, parent)
    act = box.addButton(action or tr("OK"), QMessageBox.ButtonRole.DestructiveRole)
    act.setAccessibleName(act.text())
    cancel = box.addButton(keep or tr("Cancel"), QMessageBox.ButtonRole.RejectRole)
    cancel.setAccessibleName(cancel.text())
    box.setDefaultButton(cancel)
    box.setEscapeButton(cancel)
    return box, act


class Confirm(Protocol):
    """:func:`ask`'s signature, for the views that take a stand-in (tests answer it)."""

    def __call__(self, parent: QWidget, title: str, question: str, action: str = "",
                 keep: str = "") -> bool: ...


def ask(parent: QWidget, title: str, question: str, action: str = "", keep: str = "") -> bool:
    """Whether the person chose ``action`` (a translated verb: ``tr("Delete")``) over ``keep``
    (default Cancel), which is the default and what Escape answers."""
    box, act = question_box(parent, title, question, action, keep)
    box.exec()
    return box.clickedButton() is act


def human_size(n: int | None) -> str:
    """Bytes the way the Hub shows them (decimal units): "4.9 GB", "350 MB"."""
    if n is None:
        return "?"
    for unit, scale in (("TB", 1e12), ("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if n >= scale:
            value = n / scale
            number = format_number(value, ".1f" if value < 100 else ".0f")
            return f"{number} {unit}"  # units are the same in every language Hearth speaks
    return f"{n} B"


def human_params(n: int | None) -> str:
    """A parameter count: "8.0 B", "270 M"."""
    if n is None:
        return "?"
    if n >= 1_000_000_000:
        return f"{format_number(n / 1e9, '.1f')} B"
    if n >= 1_000_000:
        return f"{format_number(n / 1e6, '.0f')} M"
    return format_number(n, ",d")


def human_tokens(n: int | None) -> str:
    """A context length: "128k", "32k", "4,000"."""
    if n is None:
        return "?"
    if n >= 1024 and n % 1024 == 0:
        return f"{n // 1024}k"
    return format_number(n, ",d")


def tone_color(tone: str, palette: QPalette | None = None) -> QColor:
    """The token colour of ``tone`` (muted, success, warning, danger, info) in the scheme of
    ``palette`` (the application's when None): for text an item view or a painter draws, where
    the stylesheet's ``tone`` property cannot reach."""
    c = roles(palette)
    return QColor({"muted": c.muted_text, "success": c.success, "warning": c.warning,
                   "danger": c.danger, "info": c.info}.get(tone, c.text))


def fit_color(palette: QPalette, fit: Fit) -> QColor:
    """The colour hint for a fit verdict."""
    return tone_color(FIT_TONES[fit], palette)


# A window opens on at most this share of the screen's free area: its frame (title bar,
# borders) is outside its size, and a window as tall as a 720-pixel laptop screen hides its
# bottom row behind the taskbar.
SCREEN_SHARE = 0.9


def size_on_screen(widget: QWidget, wanted: QSize) -> QSize:
    """``wanted``, made smaller where the free area of the screen ``widget`` opens on (its
    parent's, else the primary one) is smaller, but never below the widget's minimum size."""
    anchor = widget.parentWidget() or widget
    screen = anchor.screen() or QGuiApplication.primaryScreen()
    if screen is None:
        return wanted
    free = screen.availableGeometry().size()
    least = widget.minimumSizeHint().expandedTo(widget.minimumSize())
    width = max(min(wanted.width(), int(free.width() * SCREEN_SHARE)), least.width())
    height = max(min(wanted.height(), int(free.height() * SCREEN_SHARE)), least.height())
    return QSize(width, height)


def open_at(widget: QWidget, width: int, height: int) -> None:
    """Give ``widget`` its opening size, fitted to the screen (:func:`size_on_screen`)."""
    widget.resize(size_on_screen(widget, QSize(width, height)))


class _WheelOnlyWhenFocused(QObject):
    """Leaves a wheel event over an unfocused widget to its parents (the page scrolls)."""

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if event.type() == QEvent.Type.Wheel and isinstance(watched, QWidget) \
                and not watched.hasFocus():
            event.ignore()  # not accepted: Qt offers it to the parents, the scroll area's
            return True
        return False


def wheel_only_when_focused(*widgets: QWidget) -> None:
    """Combo boxes and spin boxes in a scrolling page take the mouse wheel only once focused
    (clicked or tabbed to): otherwise scrolling the page changed whichever one passed under
    the pointer. They no longer take focus from the wheel either."""
    for widget in widgets:
        widget.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
        guard = _WheelOnlyWhenFocused(widget)  # lives as long as the widget
        widget.installEventFilter(guard)
