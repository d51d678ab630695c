"""The chat's status line: the last reply's speed and time to first token, and the context meter.

The meter shows tokens used of the loaded context, warns from 80 % on, and says what happens when
it is full (app/chat/stats.py words it): the oldest turns are left out of what is sent, never out
of the stored conversation.
"""

from __future__ import annotations

from PySide6.QtWidgets import QHBoxLayout, QLabel, QProgressBar, QVBoxLayout, QWidget

from app.chat.stats import ContextMeter, Level, ReplyStats, status_text, trimmed_text
from app.ui.common import plain_label, set_text_color, text_color


class ChatStatus(QWidget):
    """Speed on the left, the context meter on the right, a warning line under both."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.speed = plain_label(muted=True, wrap=False)
        self.speed.setAccessibleName("Reply speed")
        self.meter = QProgressBar()
        self.meter.setRange(0, 1000)
        self.meter.setTextVisible(False)
        self.meter.setFixedWidth(120)
        self.meter.setMaximumHeight(10)
        self.meter.setAccessibleName("Context used")
        self.meter_label = plain_label(muted=True, wrap=False)
        self.warning = plain_label()
        self.warning.hide()
        row = QHBoxLayout()
        row.setContentsMargins(0, 0, 0, 0)
        row.addWidget(self.speed, 1)
        row.addWidget(self.meter_label)
        row.addWidget(self.meter)
        column = QVBoxLayout(self)
        column.setContentsMargins(0, 0, 0, 0)
        column.addLayout(row)
        column.addWidget(self.warning)
        self._context_size = 0
        self._used = 0
        self._trimmed = 0
        self.set_context_size(0)

    def set_context_size(self, n_ctx: int) -> None:
        """The loaded model's context (0: none loaded; the meter hides)."""
        self._context_size = n_ctx
        self._show()

    def show_stats(self, stats: ReplyStats) -> None:
        self.speed.setText(status_text(stats))
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
        self.meter_label.setText(meter.text())
        warning = trimmed_text(self._trimmed) or (meter.warning() if shown else "")
        self.warning.setText(warning)
        self.warning.setVisible(bool(warning))
        bad = meter.level is not Level.OK or self._trimmed > 0
        set_text_color(self.warning, text_color(self.palette(), "#b3261e" if meter.level is
                                                Level.FULL or self._trimmed else "#8a5a00")
                       if bad else None)
        _label_tooltip(self.meter_label, meter)


def _label_tooltip(label: QLabel, meter: ContextMeter) -> None:
    label.setToolTip(f"{meter.used:,} of the model's {meter.size:,} context tokens are taken by "
                     f"this conversation (its messages and the last reply).")
