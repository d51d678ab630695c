"""The chat's status line, quiet under the message box: the last reply's speed and time to first
token, and the context meter.

The meter shows tokens used of the loaded context, warns from 80 % on, and says what happens when
it is full (app/chat/stats.py words it): the oldest turns are left out of what is sent, never out
of the stored conversation. The warning is the one loud part: words in the warning (or, when
turns were left out, the danger) tone, with an icon.
"""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QHBoxLayout, QLabel, QVBoxLayout, QWidget

from app.chat.stats import ContextMeter, Level, ReplyStats, status_text, trimmed_text
from app.ui.lang import format_number, tr, ui_text
from app.ui.style.components import ICON_SIZE, ProgressBar, set_tone
from app.ui.style.icons import pixmap
from app.ui.style.tokens import SPACING


def _caption(tone: str = "muted") -> QLabel:
    label = QLabel()
    label.setTextFormat(Qt.TextFormat.PlainText)
    label.setProperty("type", "caption")
    label.setProperty("tone", tone)
    return label


class ChatStatus(QWidget):
    """Speed on the left, the context meter on the right, a warning line under both."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.speed = _caption()
        self.speed.setAccessibleName(tr("Reply speed"))
        self.meter = ProgressBar()
        self.meter.setRange(0, 1000)
        self.meter.setTextVisible(False)
        self.meter.setFixedWidth(96)
        self.meter.setMaximumHeight(SPACING.sm)
        self.meter.setAccessibleName(tr("Context used"))
        self.meter_label = _caption()
        self.warning_icon = QLabel()
        self.warning = _caption("warning")
        self.warning.setWordWrap(True)
        self.warning.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.warning_icon.hide()
        self.warning.hide()
        row = QHBoxLayout()
        row.setContentsMargins(0, 0, 0, 0)
        row.setSpacing(SPACING.md)
        row.addWidget(self.speed, 1)
        row.addWidget(self.meter_label)
        row.addWidget(self.meter, 0, Qt.AlignmentFlag.AlignVCenter)
        warning_row = QHBoxLayout()
        warning_row.setContentsMargins(0, 0, 0, 0)
        warning_row.setSpacing(SPACING.sm)
        warning_row.addWidget(self.warning_icon, 0, Qt.AlignmentFlag.AlignTop)
        warning_row.addWidget(self.warning, 1)
        column = QVBoxLayout(self)
        column.setContentsMargins(SPACING.xs, 0, SPACING.xs, 0)
        column.setSpacing(SPACING.xs)
        column.addLayout(row)
        column.addLayout(warning_row)
        self._context_size = 0
        self._used = 0
        self._trimmed = 0
        self.set_context_size(0)

    def set_context_size(self, n_ctx: int) -> None:
        """The loaded model's context (0: none loaded; the meter hides)."""
        self._context_size = n_ctx
        self._show()

    def show_stats(self, stats: ReplyStats) -> None:
        self.speed.setText(ui_text(status_text(stats)))
        if stats.context_used is not None:
            self._used = stats.context_used
        self._show()

    def show_trimmed(self, dropped: int) -> None:
        self._trimmed = dropped
        self._show()

    def reset(self) -> None:
        """Another conversation: nothing measured for it yet."""
        self.speed.setText("")
        self._used = self._trimmed = 0
        self._show()

    def meter_state(self) -> ContextMeter:
        return ContextMeter(self._used, self._context_size)

    def _show(self) -> None:
        meter = self.meter_state()
        shown = self._context_size > 0 and self._used > 0
        self.meter.setVisible(shown)
        self.meter_label.setVisible(shown)
        self.meter.setValue(round(meter.share * 1000))
        self.meter_label.setText(ui_text(meter.text()))
        warning = ui_text(trimmed_text(self._trimmed) or (meter.warning() if shown else ""))
        self.warning.setText(warning)
        self.warning.setVisible(bool(warning))
        self.warning_icon.setVisible(bool(warning))
        danger = meter.level is Level.FULL or self._trimmed > 0
        tone = "danger" if danger else "warning"
        if warning:
            set_tone(self.warning, tone)
            self.warning_icon.setPixmap(pixmap("warning", ICON_SIZE - 2, tone))
        self.meter_label.setToolTip(tr(
            "{used} of the model's {size} context tokens are taken by this conversation (its "
            "messages and the last reply).").format(used=format_number(meter.used, ","),
                                                    size=format_number(meter.size, ",")))
        self.meter.setToolTip(self.meter_label.toolTip())
