"""A device's memory as one stacked bar: what other apps use, the model's weights, KV cache and
compute buffers from the left, the part Hearth keeps free at the right end of the capacity.

The plan fits when its parts end before the kept-free part begins; a plan that runs into it (or
past the capacity) is drawn in red, and the caption under the bar says by how much. The header
above the bar is the model's share, which the settings alone decide; what other programs use now
is a line of its own. What a load measured is a dashed mark on the bar and a line of numbers
beside the prediction.

The widget draws :class:`~app.loading.tuning.DeviceBar` data; its words and the mark's place come
from app/loading/bar_text.py, so it computes nothing itself.
"""

from __future__ import annotations

from PySide6.QtCore import QRectF, QSize, Qt
from PySide6.QtGui import QBrush, QColor, QPainter, QPaintEvent, QPalette, QPen
from PySide6.QtWidgets import QGridLayout, QLabel, QSizePolicy, QVBoxLayout, QWidget

from app.loading import bar_text
from app.loading.tuning import SEGMENT_LABELS, DeviceBar, Measured, measured_text
from app.ui.common import plain_label, set_text_color, text_color

# Fixed hues that read on light and dark themes alike; "others" and "reserve" stay neutral.
COLORS = {
    "others": "#8c8c8c",
    "weights": "#3f7fd0",
    "kv": "#2aa37a",
    "compute": "#e0902a",
    "overhead": "#b5653a",
    "shared": "#9a63c4",
    "reserve": "#bdbdbd",
}
RED = "#d0342c"
BAR_HEIGHT = 22


class _Strip(QWidget):
    """The painted bar itself."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.bar: DeviceBar | None = None
        self.measured: Measured | None = None
        self.setMinimumHeight(BAR_HEIGHT)
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)

    def sizeHint(self) -> QSize:
        return QSize(320, BAR_HEIGHT)

    def marker_bytes(self) -> int | None:
        """Where the measured mark stands, in bytes from the left end (None: no mark)."""
        if self.bar is None or self.measured is None:
            return None
        return bar_text.measured_mark(self.bar, self.measured)

    def paintEvent(self, event: QPaintEvent) -> None:
        bar = self.bar
        if bar is None or bar.capacity <= 0:
            return
        p = QPainter(self)
        p.setRenderHint(QPainter.RenderHint.Antialiasing, False)
        w, h = self.width() - 1, self.height() - 1
        # Past the capacity the scale grows, so the overflow is visible beyond the end mark.
        scale = max(bar.capacity, bar.used)
        px = w / scale

        base = self.palette().color(QPalette.ColorRole.Base)
        p.fillRect(QRectF(0, 0, w, h), base)
        x = 0.0
        for seg in bar.segments:
            width = seg.bytes * px
            if width > 0:
                p.fillRect(QRectF(x, 0, width, h), QColor(COLORS.get(seg.kind, "#777777")))
            x += width
        used_end = x

        # Kept free: at the right end of the capacity, hatched so it reads as "not for use".
        cap_x = bar.capacity * px
        res_x = max(0.0, cap_x - bar.reserve * px)
        reserve_rect = QRectF(res_x, 0, cap_x - res_x, h)
        p.fillRect(reserve_rect, QColor(COLORS["reserve"]))
        p.fillRect(reserve_rect, QBrush(QColor("#8a8a8a"), Qt.BrushStyle.BDiagPattern))
        if not bar.fits and used_end > res_x:
            over = QRectF(res_x, 0, used_end - res_x, h)
            p.fillRect(over, QColor(RED))
            p.fillRect(over, QBrush(QColor("#ffffff"), Qt.BrushStyle.BDiagPattern))

        text = self.palette().color(QPalette.ColorRole.WindowText)
        if cap_x < w:  # the capacity's end, inside an overflowing bar
            p.setPen(QPen(text, 2))
            p.drawLine(int(cap_x), 0, int(cap_x), h)
        mark = self.marker_bytes()
        if mark is not None:
            mx = mark * px
            p.setPen(QPen(text, 2, Qt.PenStyle.DashLine))
            p.drawLine(int(mx), -2, int(mx), h + 2)
        p.setPen(QPen(QColor(RED) if not bar.fits else self.palette().color(
            QPalette.ColorRole.Mid), 2 if not bar.fits else 1))
        p.setBrush(Qt.BrushStyle.NoBrush)
        p.drawRect(QRectF(0, 0, w, h))
        p.end()


class MemoryBar(QWidget):
    """One device: a caption, the bar, the plan's numbers and, after a load, the measured ones."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.caption = plain_label()
        font = self.caption.font()
        font.setBold(True)
        self.caption.setFont(font)
        self.strip = _Strip()
        self.detail = plain_label(muted=True)
        # Apart from the header: it changes from one open to the next, the header does not.
        self.free_now = plain_label(muted=True)
        self.measured_label = plain_label()
        self.measured_label.hide()
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 4)
        layout.setSpacing(2)
        for w in (self.caption, self.strip, self.detail, self.free_now, self.measured_label):
            layout.addWidget(w)
        self.bar: DeviceBar | None = None

    def set_bar(self, bar: DeviceBar, measured: Measured | None = None, *,
                gpus: bool = False) -> None:
        """Show ``bar``; ``measured``: what the last load of this model allocated here;
        ``gpus``: whether the plan has GPUs (only then are layers in RAM counted)."""
        self.bar = bar
        header = bar_text.header(bar, gpus=gpus)
        free = bar_text.free_now(bar)
        self.caption.setText(header)
        self.detail.setText(bar.detail())
        self.free_now.setText(free)
        # Muted when it fits; in red (the palette's text leaning red) when it does not.
        set_text_color(self.detail, None if bar.fits else text_color(self.palette(), RED))
        self.detail.setForegroundRole(QPalette.ColorRole.PlaceholderText if bar.fits
                                      else QPalette.ColorRole.WindowText)
        self.strip.bar = bar
        self.strip.measured = measured
        self.strip.setAccessibleName(f"Memory of {bar.name}")
        self.strip.setAccessibleDescription(f"{header}. {bar.detail()} {free}")
        self.strip.setToolTip(bar.detail())
        if measured is not None:
            self.measured_label.setText(measured_text(bar, measured))
            self.measured_label.show()
        else:
            self.measured_label.hide()
        self.strip.update()


class MemoryLegend(QWidget):
    """The colours of the bars, named once for all of them."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        layout = QGridLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setHorizontalSpacing(6)
        items = ("weights", "kv", "compute", "overhead", "reserve", "others")
        for i, kind in enumerate(items):
            swatch = QLabel()
            swatch.setFixedSize(12, 12)
            swatch.setAutoFillBackground(True)
            pal = swatch.palette()
            pal.setColor(QPalette.ColorRole.Window, QColor(COLORS[kind]))
            swatch.setPalette(pal)
            row, col = divmod(i, 3)
            layout.addWidget(swatch, row, 2 * col)
            layout.addWidget(plain_label(SEGMENT_LABELS[kind], wrap=False, selectable=False),
                             row, 2 * col + 1)
        # The measured mark takes the next free cell after the colours.
        row, col = divmod(len(items), 3)
        mark = plain_label("┆", wrap=False, selectable=False)
        mark.setAlignment(Qt.AlignmentFlag.AlignCenter)
        layout.addWidget(mark, row, 2 * col)
        layout.addWidget(plain_label("Measured after load", wrap=False, selectable=False),
                         row, 2 * col + 1)
        layout.setColumnStretch(6, 1)
