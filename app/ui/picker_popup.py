"""The model picker's face: a button showing the chosen model's name with a chevron, and the
searchable popup it opens (issue 27).

:class:`PickerCombo` stays a ``QComboBox`` over app/ui/picker_model.py's rows, so everything that
reads or moves the selection (``currentData``, ``findData``, the arrow keys on the closed
button) works as before; only its face and its popup are Hearth's own. The popup lists the same
model's rows (a filter hides rows, it never copies them), under "Loaded", "On this computer" and
"Remote" headers a delegate draws above the first row of each group, each row with its name, its
detail line and a verdict chip in words. Typing filters, Up/Down move, Enter picks, Esc closes.
Its foot offers "Open GGUF file…" and "Get more models".
"""

from __future__ import annotations

from PySide6.QtCore import (
    QAbstractItemModel,
    QEvent,
    QModelIndex,
    QObject,
    QPersistentModelIndex,
    QPoint,
    QRect,
    QSize,
    Qt,
    Signal,
)
from PySide6.QtGui import QColor, QFont, QFontMetrics, QKeyEvent, QPainter, QPaintEvent, QPen
from PySide6.QtWidgets import (
    QAbstractItemView,
    QApplication,
    QComboBox,
    QFrame,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QListView,
    QStyle,
    QStyledItemDelegate,
    QStyleOptionComboBox,
    QStyleOptionViewItem,
    QStylePainter,
    QVBoxLayout,
    QWidget,
)

from app.hub.verdict import Fit
from app.ui.common import FIT_TONES, tone_color
from app.ui.lang import tr
from app.ui.picker_model import PickerRole, Section
from app.ui.style.components import ICON_SIZE, icon_button
from app.ui.style.icons import icon
from app.ui.style.palette import roles
from app.ui.style.tokens import RADII, SPACING, TYPE

_Index = QModelIndex | QPersistentModelIndex

POPUP_WIDTH = 460  # wide enough for a long file name beside its verdict chip
POPUP_ROWS = 8  # rows shown before the list scrolls
# The keys the search field hands to the list (Esc is "Stop reply" to the window otherwise).
_POPUP_KEYS = (Qt.Key.Key_Up, Qt.Key.Key_Down, Qt.Key.Key_PageUp, Qt.Key.Key_PageDown,
               Qt.Key.Key_Return, Qt.Key.Key_Enter, Qt.Key.Key_Escape)


def section_title(section: str) -> str:
    """The header over a group of rows."""
    return {Section.LOADED: tr("Loaded"), Section.LOCAL: tr("On this computer"),
            Section.REMOTE: tr("Remote")}.get(section, "")


def verdict_words(fit: Fit) -> str:
    """The words of a verdict chip (components.verdict_chip's, for a painted chip)."""
    return {Fit.GPU: tr("Fits on the GPU"), Fit.PARTIAL: tr("Partly on the GPU"),
            Fit.CPU: tr("CPU only"), Fit.NO_FIT: tr("Will not fit")}[fit]


def scaled_font(base: QFont, factor: float, bold: bool = False) -> QFont:
    """``base`` on the type scale (a painted text cannot take the sheet's ``type``)."""
    font = QFont(base)
    if base.pointSizeF() > 0:
        font.setPointSizeF(TYPE.size(factor, base.pointSizeF()))
    if bold:
        font.setWeight(QFont.Weight.DemiBold)
    return font


def paint_chip(painter: QPainter, right: int, mid_y: int, text: str, color: QColor,
               font: QFont) -> int:
    """A chip (the sheet's look: a rounded outline in the tone, bold caption text) ending at
    ``right`` and centred on ``mid_y``; returns its left edge."""
    metrics = QFontMetrics(font)
    width = metrics.horizontalAdvance(text) + 2 * SPACING.sm
    height = metrics.height() + SPACING.xxs
    rect = QRect(right - width, mid_y - height // 2, width, height)
    painter.save()
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    painter.setPen(QPen(color, 1))
    painter.setBrush(Qt.BrushStyle.NoBrush)
    painter.drawRoundedRect(rect.adjusted(0, 0, -1, -1), RADII.sm, RADII.sm)
    painter.setFont(font)
    painter.drawText(rect, Qt.AlignmentFlag.AlignCenter, text)
    painter.restore()
    return rect.left()


class _RowDelegate(QStyledItemDelegate):
    """Draws a picker row: a header above the first row of a group, the name over a muted
    detail line, the verdict (or "In use") chip at the right."""

    def __init__(self, popup: PickerPopup) -> None:
        super().__init__(popup)
        self._popup = popup

    def _fonts(self, option: QStyleOptionViewItem) -> tuple[QFont, QFont, QFont]:
        base = option.font
        return (scaled_font(base, TYPE.body, bold=True), scaled_font(base, TYPE.small),
                scaled_font(base, TYPE.caption, bold=True))

    def _header_height(self, option: QStyleOptionViewItem) -> int:
        return QFontMetrics(self._fonts(option)[2]).height() + SPACING.md + SPACING.xs

    def sizeHint(self, option: QStyleOptionViewItem, index: _Index) -> QSize:
        name, detail, _ = self._fonts(option)
        height = QFontMetrics(name).height() + QFontMetrics(detail).height() + 2 * SPACING.md
        if self._popup.heads_group(index.row()):
            height += self._header_height(option)
        return QSize(POPUP_WIDTH - 2 * SPACING.md, height)

    def paint(self, painter: QPainter, option: QStyleOptionViewItem, index: _Index) -> None:
        rect: QRect = option.rect
        c = roles(option.palette)
        name_font, detail_font, caption = self._fonts(option)
        painter.save()
        if self._popup.heads_group(index.row()):
            head = QRect(rect.left() + SPACING.md, rect.top(), rect.width() - SPACING.md,
                         self._header_height(option))
            painter.setFont(caption)
            painter.setPen(QColor(c.muted_text))
            painter.drawText(head.adjusted(0, SPACING.md, 0, 0),
                             Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignTop,
                             section_title(str(index.data(PickerRole.SECTION) or "")))
            rect = rect.adjusted(0, head.height(), 0, 0)
        state = option.state
        current = self._popup.list.currentIndex().row() == index.row()
        if current or state & QStyle.StateFlag.State_MouseOver:
            painter.setRenderHint(QPainter.RenderHint.Antialiasing)
            painter.setPen(Qt.PenStyle.NoPen)
            painter.setBrush(QColor(c.sunken))
            painter.drawRoundedRect(rect.adjusted(SPACING.xxs, 0, -SPACING.xxs, 0),
                                    RADII.md, RADII.md)
            if current:  # a second sign besides the fill: an accent bar at the left
                painter.setBrush(QColor(c.accent))
                painter.drawRoundedRect(QRect(rect.left() + SPACING.xxs, rect.top() + SPACING.md,
                                              3, rect.height() - 2 * SPACING.md), 1, 1)
        inner = rect.adjusted(SPACING.lg, SPACING.md, -SPACING.lg, -SPACING.md)
        right = inner.right()
        fit = index.data(PickerRole.FIT)
        mark = str(index.data(PickerRole.MARK) or "")
        mid = inner.center().y()
        if isinstance(fit, Fit):
            right = paint_chip(painter, right, mid, verdict_words(fit),
                               tone_color(FIT_TONES[fit], option.palette),
                               caption) - SPACING.sm
        if mark and index.data(PickerRole.SECTION) != Section.LOADED:
            right = paint_chip(painter, right, mid, mark, QColor(c.accent), caption) - SPACING.sm
        text_width = max(0, right - inner.left())
        name_metrics, detail_metrics = QFontMetrics(name_font), QFontMetrics(detail_font)
        painter.setPen(QColor(c.text))
        painter.setFont(name_font)
        name = str(index.data(PickerRole.NAME) or "")
        painter.drawText(QRect(inner.left(), inner.top(), text_width, name_metrics.height()),
                         Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter,
                         name_metrics.elidedText(name, Qt.TextElideMode.ElideMiddle, text_width))
        painter.setPen(QColor(c.muted_text))
        painter.setFont(detail_font)
        detail = str(index.data(PickerRole.DETAIL) or "")
        painter.drawText(QRect(inner.left(), inner.top() + name_metrics.height(), text_width,
                               detail_metrics.height()),
                         Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter,
                         detail_metrics.elidedText(detail, Qt.TextElideMode.ElideMiddle,
                                                   text_width))
        painter.restore()


class PickerPopup(QFrame):
    """The list the picker opens: a search field, the grouped rows, and the foot's actions."""

    picked = Signal(int)  # the row chosen
    open_file = Signal()  # "Open GGUF file…"
    discover = Signal()  # "Get more models"

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.hide()
        self.setProperty("card", True)
        # A window paints the sheet's fill and edge only when asked to.
        self.setAttribute(Qt.WidgetAttribute.WA_StyledBackground, True)
        self.setAccessibleName(tr("Choose a model"))
        self._heads: set[int] = set()  # the rows a group header is drawn above
        self._anchor: QWidget | None = None  # the button it opened under
        self._watching = False  # the application's clicks and focus are watched (to close)
        self.search = QLineEdit()
        self.search.setPlaceholderText(tr("Search models"))
        self.search.setAccessibleName(tr("Search models"))
        self.search.setClearButtonEnabled(True)
        self.search.addAction(icon("search", "muted"), QLineEdit.ActionPosition.LeadingPosition)
        self.search.textChanged.connect(self._filter)
        self.search.installEventFilter(self)
        self.list = QListView()
        self.list.setAccessibleName(tr("Models"))
        self.list.setFrameShape(QFrame.Shape.NoFrame)
        self.list.setObjectName("pickerList")
        self.list.setFocusPolicy(Qt.FocusPolicy.NoFocus)  # the keys stay in the search field
        self.list.setMouseTracking(True)
        self.list.setVerticalScrollMode(QAbstractItemView.ScrollMode.ScrollPerPixel)
        self.list.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.list.setItemDelegate(_RowDelegate(self))
        self.list.clicked.connect(lambda index: self._pick(index.row()))
        # Said inside the list when no row is shown (the list stays: it is what opened).
        self.nothing = QLabel(self.list.viewport())
        self.nothing.setTextFormat(Qt.TextFormat.PlainText)
        self.nothing.setProperty("tone", "muted")
        self.nothing.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.nothing.setWordWrap(True)
        self.nothing.hide()
        self.list.viewport().installEventFilter(self)
        self.open_btn = icon_button("open", tr("Open GGUF file…"), text=tr("Open GGUF file…"))
        self.open_btn.clicked.connect(self._on_open)
        self.more_btn = icon_button("discover", tr("Get more models"),
                                    text=tr("Get more models"))
        self.more_btn.clicked.connect(self._on_discover)
        for button in (self.open_btn, self.more_btn):
            button.setFocusPolicy(Qt.FocusPolicy.TabFocus)
        foot = QHBoxLayout()
        foot.setContentsMargins(SPACING.xs, 0, SPACING.xs, 0)
        foot.setSpacing(SPACING.sm)
        foot.addWidget(self.open_btn)
        foot.addStretch(1)
        foot.addWidget(self.more_btn)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(SPACING.md, SPACING.md, SPACING.md, SPACING.sm)
        layout.setSpacing(SPACING.sm)
        layout.addWidget(self.search)
        layout.addWidget(self.list, 1)
        layout.addLayout(foot)

    # ---- what it shows -------------------------------------------------------------------------

    def set_model(self, model: QAbstractItemModel) -> None:
        self.list.setModel(model)

    def heads_group(self, row: int) -> bool:
        """Whether a group header is drawn above ``row`` (the first row shown of its group)."""
        return row in self._heads

    def open_at(self, anchor: QWidget, row: int) -> None:
        """Show under ``anchor`` with every row listed and ``row`` current."""
        self.search.blockSignals(True)
        self.search.clear()
        self.search.blockSignals(False)
        self._filter("")
        model = self.list.model()
        if model is not None and self._shown(row):
            self.list.setCurrentIndex(model.index(row, 0))
        else:
            self._step(1)
        # A layer over the window, not a window of its own: no window manager to place it or
        # to move the activation around, and it closes as a popup does (_watch).
        window = anchor.window()
        if self.parentWidget() is not window:
            self.setParent(window)
        self._anchor = anchor
        width = max(anchor.width(), POPUP_WIDTH)
        self.resize(min(width, window.width()), self._height())
        self._place(anchor)
        self.show()
        self.raise_()
        app = QApplication.instance()
        if isinstance(app, QApplication) and not self._watching:
            app.installEventFilter(self)
            app.focusChanged.connect(self._on_focus_changed)
            self._watching = True
        self.search.setFocus(Qt.FocusReason.PopupFocusReason)
        self.list.scrollTo(self.list.currentIndex())

    def _height(self) -> int:
        rows = [r for r in range(self._count()) if self._shown(r)][:POPUP_ROWS]
        list_height = sum(self.list.sizeHintForRow(r) for r in rows) + 2 * SPACING.xs
        layout = self.layout()
        chrome = layout.sizeHint().height() - self.list.sizeHint().height() \
            if layout is not None else 0
        return max(list_height, 3 * QFontMetrics(self.font()).height()) + max(chrome, 0)

    def _place(self, anchor: QWidget) -> None:
        """Under ``anchor`` (above it when the window has no room below), inside the window."""
        window = anchor.window()
        top = anchor.mapTo(window, QPoint(0, 0))
        x = max(0, min(top.x(), window.width() - self.width()))
        y = top.y() + anchor.height() + SPACING.xs
        if y + self.height() > window.height():
            y = max(0, top.y() - self.height() - SPACING.xs)
            self.resize(self.width(), min(self.height(), window.height() - y))
        self.move(x, y)

    def _inside(self, widget: QObject | None) -> bool:
        while widget is not None:
            if widget is self:
                return True
            widget = widget.parent()
        return False

    def _on_focus_changed(self, _old: QWidget | None, new: QWidget | None) -> None:
        """The keyboard went elsewhere (Tab out, a click on another control): close."""
        if self.isVisible() and new is not None and not self._inside(new):
            self.hide()

    # ---- filtering and moving ------------------------------------------------------------------

    def _count(self) -> int:
        model = self.list.model()
        return model.rowCount() if model is not None else 0

    def _listed(self, row: int) -> bool:
        """Whether ``row`` is a model (not a line between groups, not "Open…": at the foot)."""
        model = self.list.model()
        if model is None:
            return False
        index = model.index(row, 0)
        return not index.data(PickerRole.SEPARATOR) and \
            index.data(PickerRole.SECTION) in (Section.LOADED, Section.LOCAL, Section.REMOTE)

    def _shown(self, row: int) -> bool:
        return 0 <= row < self._count() and not self.list.isRowHidden(row)

    def _filter(self, text: str) -> None:
        words = text.casefold().split()
        model = self.list.model()
        self._heads = set()
        seen: set[str] = set()
        for row in range(self._count()):
            index = model.index(row, 0)
            haystack = " ".join(str(index.data(role) or "") for role in (
                Qt.ItemDataRole.DisplayRole, PickerRole.NAME, PickerRole.DETAIL)).casefold()
            show = self._listed(row) and all(w in haystack for w in words)
            self.list.setRowHidden(row, not show)
            section = str(index.data(PickerRole.SECTION) or "")
            if show and section not in seen:
                seen.add(section)
                self._heads.add(row)
        self.list.doItemsLayout()  # the headers moved: the rows' heights changed
        if self.isVisible():
            self.resize(self.width(), self._height())
        self.nothing.setVisible(not seen)
        self.nothing.setGeometry(self.list.viewport().rect().adjusted(
            SPACING.md, SPACING.md, -SPACING.md, -SPACING.md))
        self.nothing.setText(tr("No models match “{query}”.").format(query=text.strip())
                             if words else tr("No models yet. Open a GGUF file or get one."))
        if not self._shown(self.list.currentIndex().row()):
            self.list.setCurrentIndex(QModelIndex())
            self._step(1)

    def _step(self, delta: int) -> None:
        """Move the current row by ``delta`` shown rows (stops at either end)."""
        model = self.list.model()
        if model is None:
            return
        row = self.list.currentIndex().row()
        start = row if row >= 0 else (-1 if delta > 0 else self._count())
        target = row
        step = 1 if delta > 0 else -1
        at = start
        for _ in range(abs(delta)):
            nxt = at + step
            while 0 <= nxt < self._count() and not self._shown(nxt):
                nxt += step
            if not 0 <= nxt < self._count():
                break
            at = target = nxt
        if target >= 0 and target != row:
            self.list.setCurrentIndex(model.index(target, 0))
            self.list.scrollTo(model.index(target, 0))
        self.list.viewport().update()

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        kind = event.type()
        if self.isVisible() and kind == QEvent.Type.MouseButtonPress \
                and isinstance(watched, QWidget) and watched.isWidgetType() \
                and not self._inside(watched):
            self.hide()  # a click outside closes it, as a popup; the click goes on
            # A click on the button that opened it only closes it (not opens it again).
            return watched is self._anchor
        if self.isVisible() and kind == QEvent.Type.Resize and watched is self.parentWidget():
            self.hide()
        if watched is self.list.viewport() and event.type() == QEvent.Type.Resize:
            self.nothing.setGeometry(self.list.viewport().rect().adjusted(
                SPACING.md, SPACING.md, -SPACING.md, -SPACING.md))
        if watched is self.search and kind == QEvent.Type.ShortcutOverride:
            assert isinstance(event, QKeyEvent)
            if event.key() in _POPUP_KEYS:  # the popup's keys, before the window's shortcuts
                event.accept()
                return True
        if watched is self.search and kind == QEvent.Type.KeyPress:
            assert isinstance(event, QKeyEvent)
            key = event.key()
            moves = {Qt.Key.Key_Down: 1, Qt.Key.Key_Up: -1, Qt.Key.Key_PageDown: POPUP_ROWS,
                     Qt.Key.Key_PageUp: -POPUP_ROWS}
            if key in moves:
                self._step(moves[Qt.Key(key)])
                return True
            if key in (Qt.Key.Key_Return, Qt.Key.Key_Enter):
                row = self.list.currentIndex().row()
                if self._shown(row):
                    self._pick(row)
                return True
            if key == Qt.Key.Key_Escape:
                if self._anchor is not None:  # back to the button, as a closed popup leaves it
                    self._anchor.setFocus(Qt.FocusReason.PopupFocusReason)
                self.hide()
                return True
        return super().eventFilter(watched, event)

    # ---- choices -------------------------------------------------------------------------------

    def _pick(self, row: int) -> None:
        if self._shown(row):
            self.hide()
            self.picked.emit(row)

    def _on_open(self) -> None:
        self.hide()
        self.open_file.emit()

    def _on_discover(self) -> None:
        self.hide()
        self.discover.emit()


class PickerCombo(QComboBox):
    """The picker's button: a combo box whose face shows the chosen model's name (not its
    whole one-line label) and whose popup is :class:`PickerPopup`."""

    open_file_requested = Signal()
    discover_requested = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setCursor(Qt.CursorShape.PointingHandCursor)
        # Not the combo box's child: the sheet draws a QComboBox's child frame as the combo's
        # own list, not as a card. It goes when the button goes.
        self.popup = PickerPopup()
        self.destroyed.connect(self.popup.deleteLater)
        self.popup.picked.connect(self._on_picked)
        self.popup.open_file.connect(self.open_file_requested)
        self.popup.discover.connect(self.discover_requested)

    def setModel(self, model: QAbstractItemModel) -> None:
        super().setModel(model)
        self.popup.set_model(model)

    def view(self) -> QListView:
        """The list the person sees when the picker is open (the popup's, not Qt's own)."""
        return self.popup.list

    def showPopup(self) -> None:
        if self.isEnabled():
            self.popup.open_at(self, self.currentIndex())

    def hidePopup(self) -> None:
        self.popup.hide()

    def changeEvent(self, event: QEvent) -> None:
        super().changeEvent(event)
        if event.type() == QEvent.Type.EnabledChange and not self.isEnabled():
            self.popup.hide()  # a load began: nothing can be picked until it ends

    def face_text(self) -> str:
        """What the button says: the model's name, or an invitation when none is listed."""
        if self.currentData() is None:
            return tr("Choose a model")
        return str(self.itemData(self.currentIndex(), PickerRole.NAME) or self.currentText())

    def paintEvent(self, _event: QPaintEvent) -> None:
        painter = QStylePainter(self)
        option = QStyleOptionComboBox()
        self.initStyleOption(option)
        remote = str(self.itemData(self.currentIndex(), PickerRole.SECTION) or "") == \
            Section.REMOTE
        option.currentIcon = icon("server" if remote else "model", "muted")
        option.iconSize = QSize(16, 16)
        field = self.style().subControlRect(QStyle.ComplexControl.CC_ComboBox, option,
                                            QStyle.SubControl.SC_ComboBoxEditField, self)
        option.currentText = self.fontMetrics().elidedText(
            self.face_text(), Qt.TextElideMode.ElideMiddle, max(0, field.width() - 24))
        # The style's arrow is left out: a chevron icon says "opens a list" in Hearth's look.
        option.subControls = QStyle.SubControl.SC_ComboBoxFrame | \
            QStyle.SubControl.SC_ComboBoxEditField
        painter.drawComplexControl(QStyle.ComplexControl.CC_ComboBox, option)
        painter.drawControl(QStyle.ControlElement.CE_ComboBoxLabel, option)
        side = ICON_SIZE - 2
        chevron = QRect(self.width() - side - SPACING.md, (self.height() - side) // 2, side, side)
        icon("expand", "muted").paint(painter, chevron)

    def _on_picked(self, row: int) -> None:
        self.setCurrentIndex(row)
        self.activated.emit(row)
        self.setFocus(Qt.FocusReason.PopupFocusReason)
