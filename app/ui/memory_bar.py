"""A device's memory as one stacked bar: what other apps use, the model's weights, KV cache and
compute buffers from the left, the part Hearth keeps free at the right end of the capacity.

The model's parts are the point of the bar: they are drawn in full colour, each with its size
written on it where there is room. What other programs use and the part kept free are context,
drawn quiet (faded, hatched). The plan fits when its parts end before the kept-free part begins;
a plan that runs into it (or past the capacity) is drawn in the "over" colour with a danger
outline, and the caption under the bar says by how much. The header above the bar is the model's
share, which the settings alone decide; what other programs use now is a line of its own. What a
load measured is a dashed mark on the bar and a line of numbers beside the prediction.

The widget draws :class:`~app.loading.tuning.DeviceBar` data; its words and the mark's place come
from app/loading/bar_text.py, so it computes nothing itself. Colours are the theme's chart tokens
(style.palette.chart_colors), read when painted, so a switch between light and dark redraws it.
"""

from __future__ import annotations

from PySide6.QtCore import QEvent, QRectF, QSize, Qt
from PySide6.QtGui import QBrush, QColor, QPainter, QPainterPath, QPaintEvent, QPen
from PySide6.QtWidgets import QGridLayout, QHBoxLayout, QLabel, QSizePolicy, QVBoxLayout, QWidget

from app.loading import bar_text
from app.loading.tuning import DeviceBar, Measured, measured_text
from app.ui.common import plain_label
from app.ui.lang import format_number, tr, ui_text
from app.ui.style.components import chip, set_tone, set_type
from app.ui.style.icons import icon
from app.ui.style.palette import chart_colors, roles
from app.ui.style.tokens import RADII, SPACING, ChartColors

BAR_HEIGHT = 22
SWATCH = 12  # a legend swatch's side
ICON = 16  # the device icon beside a bar's header
QUIET_ALPHA = 0.45  # how much of its colour a context part (other programs) keeps
LABEL_GAP = 6  # the space a size written on a segment needs around it


def segment_color(kind: str, chart: ChartColors) -> QColor:
    """The fill of a segment ``kind`` (weights, kv, compute, overhead, shared, others, reserve);
    other programs faded, so the model's own parts stand out."""
    color = QColor(getattr(chart, kind, chart.others))
    if kind == "others":
        color.setAlphaF(QUIET_ALPHA)
    return color


def readable_on(fill: QColor) -> QColor:
    """Text that reads on ``fill``: the darker or the lighter of the theme's text colours."""
    c = roles()
    dark, light = QColor(c.text), QColor(c.raised_surface)
    if dark.lightnessF() > light.lightnessF():
        dark, light = light, dark
    return dark if fill.lightnessF() > 0.55 else light


def _short_size(n: int) -> str:
    """A segment's size, short enough to write on it: "8.3 GiB", "232 MiB"."""
    if n >= 1 << 30:
        return tr("{size} GiB").format(size=format_number(n / (1 << 30), ".1f"))
    return tr("{size} MiB").format(size=format_number(n / (1 << 20), ".0f"))


class DeviceIcon(QWidget):
    """A device's icon (monitor for a GPU, memory for RAM), tinted when painted: a switch of
    theme redraws it in the new colours (a QLabel's pixmap would keep the old)."""

    def __init__(self, name: str, size: int = ICON, tone: str = "muted",
                 parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._name = name
        self._tone = tone
        self.setFixedSize(size, size)

    def set_icon(self, name: str, tone: str | None = None) -> None:
        self._name = name
        self._tone = tone or self._tone
        self.update()

    def paintEvent(self, event: QPaintEvent) -> None:
        p = QPainter(self)
        icon(self._name, self._tone).paint(p, self.rect())
        p.end()


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

    def changeEvent(self, event: QEvent) -> None:
        super().changeEvent(event)
        if event.type() in (QEvent.Type.PaletteChange, QEvent.Type.ApplicationPaletteChange):
            self.update()  # the colours are the new scheme's

    def paintEvent(self, event: QPaintEvent) -> None:
        bar = self.bar
        if bar is None or bar.capacity <= 0:
            return
        chart, c = chart_colors(), roles()
        p = QPainter(self)
        p.setRenderHint(QPainter.RenderHint.Antialiasing, True)
        w, h = float(self.width()), float(self.height())
        outline = QRectF(0.5, 0.5, w - 1, h - 1)
        clip = QPainterPath()
        clip.addRoundedRect(outline, RADII.sm, RADII.sm)
        p.setClipPath(clip)
        # Past the capacity the scale grows, so the overflow is visible beyond the end mark.
        scale = max(bar.capacity, bar.used)
        px = w / scale

        p.fillRect(QRectF(0, 0, w, h), QColor(c.sunken))  # free memory
        x = 0.0
        labels: list[tuple[QRectF, str, QColor]] = []
        for seg in bar.segments:
            width = seg.bytes * px
            if width > 0:
                fill = segment_color(seg.kind, chart)
                rect = QRectF(x, 0, width, h)
                p.fillRect(rect, fill)
                if seg.kind != "others":
                    labels.append((rect, _short_size(seg.bytes), readable_on(fill)))
            x += width
        used_end = x

        # Kept free: at the right end of the capacity, hatched so it reads as "not for use".
        cap_x = bar.capacity * px
        res_x = max(0.0, cap_x - bar.reserve * px)
        reserve_rect = QRectF(res_x, 0, cap_x - res_x, h)
        p.fillRect(reserve_rect, QBrush(QColor(chart.reserve), Qt.BrushStyle.BDiagPattern))
        if not bar.fits and used_end > res_x:
            over = QRectF(res_x, 0, used_end - res_x, h)
            p.fillRect(over, QColor(chart.over))
            p.fillRect(over, QBrush(QColor(c.raised_surface), Qt.BrushStyle.BDiagPattern))

        # Each of the model's parts with its size written on it, where the size fits.
        font = p.font()
        font.setPointSizeF(font.pointSizeF() * 0.85)
        font.setBold(True)
        p.setFont(font)
        metrics = p.fontMetrics()
        for rect, words, color in labels:
            if metrics.horizontalAdvance(words) + 2 * LABEL_GAP <= rect.width():
                p.setPen(color)
                p.drawText(rect, Qt.AlignmentFlag.AlignCenter, words)

        text = QColor(c.text)
        if cap_x < w:  # the capacity's end, inside an overflowing bar
            p.setPen(QPen(text, 2))
            p.drawLine(int(cap_x), 0, int(cap_x), int(h))
        mark = self.marker_bytes()
        if mark is not None:
            mx = mark * px
            p.setPen(QPen(text, 2, Qt.PenStyle.DashLine))
            p.drawLine(int(mx), 0, int(mx), int(h))
        p.setClipping(False)
        p.setPen(QPen(QColor(c.danger), 2) if not bar.fits else QPen(QColor(c.border), 1))
        p.setBrush(Qt.BrushStyle.NoBrush)
        p.drawRoundedRect(outline, RADII.sm, RADII.sm)
        p.end()


class MemoryBar(QWidget):
    """One device: a caption, the bar, the plan's numbers and, after a load, the measured ones."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.device_icon = DeviceIcon("memory")
        self.caption = plain_label()
        set_type(self.caption, "subheading")
        self.verdict = chip(tr("Does not fit"), "danger")
        self.verdict.hide()
        head = QHBoxLayout()
        head.setSpacing(SPACING.sm)
        head.addWidget(self.device_icon, 0, Qt.AlignmentFlag.AlignTop)
        head.addWidget(self.caption, 1)
        head.addWidget(self.verdict, 0, Qt.AlignmentFlag.AlignTop)
        self.strip = _Strip()
        self.detail = plain_label()
        set_type(self.detail, "small")
        set_tone(self.detail, "muted")
        # Apart from the header: it changes from one open to the next, the header does not.
        self.free_now = plain_label()
        set_type(self.free_now, "small")
        set_tone(self.free_now, "muted")
        self.measured_label = plain_label()
        set_type(self.measured_label, "small")
        self.measured_label.hide()
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, SPACING.xs)
        layout.setSpacing(SPACING.xs)
        layout.addLayout(head)
        for w in (self.strip, self.detail, self.free_now, self.measured_label):
            layout.addWidget(w)
        self.bar: DeviceBar | None = None

    def set_bar(self, bar: DeviceBar, measured: Measured | None = None, *,
                gpus: bool = False) -> None:
        """Show ``bar``; ``measured``: what the last load of this model allocated here;
        ``gpus``: whether the plan has GPUs (only then are layers in RAM counted)."""
        self.bar = bar
        header = ui_text(bar_text.header(bar, gpus=gpus))
        free = ui_text(bar_text.free_now(bar))
        detail = ui_text(bar.detail())
        self.device_icon.set_icon("monitor" if bar.kind == "gpu" else "memory")
        self.caption.setText(header)
        self.detail.setText(detail)
        self.free_now.setText(free)
        # Muted when it fits; in the danger tone, with a chip in words, when it does not.
        set_tone(self.detail, "muted" if bar.fits else "danger")
        self.verdict.setVisible(not bar.fits)
        self.strip.bar = bar
        self.strip.measured = measured
        self.strip.setAccessibleName(tr("Memory of {device}").format(device=bar.name))
        self.strip.setAccessibleDescription(f"{header}. {detail} {free}")
        self.strip.setToolTip(detail)
        if measured is not None:
            self.measured_label.setText(ui_text(measured_text(bar, measured)))
            self.measured_label.show()
        else:
            self.measured_label.hide()
        self.strip.update()


def legend_words() -> dict[str, str]:
    """What each colour of the bars is, in words a newcomer reads (the model's parts first)."""
    return {
        "weights": tr("This model (weights)"),
        "kv": tr("Its context (KV cache)"),
        "compute": tr("Working memory"),
        "overhead": tr("GPU driver's own"),
        "projector": tr("Vision projector"),
        "draft": tr("Draft model"),
        "shared": tr("Shared with the GPU"),
        "others": tr("Other programs"),
        "reserve": tr("Kept free"),
    }


def legend_tips() -> dict[str, str]:
    """Each colour of the bars explained, for the legend's tooltips."""
    return {
        "weights": tr("The model's weights, read from its file."),
        "kv": tr("What the model remembers of the conversation; it grows with the context "
                 "length."),
        "compute": tr("Scratch space llama.cpp computes in (the compute buffers)."),
        "overhead": tr("What the GPU's driver and libraries take for themselves (context, "
                       "cuBLAS)."),
        "projector": tr("The part that lets the model see images (its mmproj file) and the "
                        "memory it encodes an image in."),
        "draft": tr("A small model of the same family that proposes a few words at a time for "
                    "this one to check (speculative decoding), with its own context."),
        "shared": tr("Memory a GPU uses that is system RAM (Apple Silicon, an integrated GPU)."),
        "others": tr("What other programs used when the memory was last read."),
        "reserve": tr("Left free for the system and your other programs."),
        "measured": tr("What the last load really allocated (a dashed line on the bar)."),
    }


class _Swatch(QWidget):
    """A legend's colour sample, painted from the chart tokens (so it follows the theme)."""

    def __init__(self, kind: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.kind = kind
        self.setFixedSize(SWATCH, SWATCH)

    def paintEvent(self, event: QPaintEvent) -> None:
        chart = chart_colors()
        p = QPainter(self)
        p.setRenderHint(QPainter.RenderHint.Antialiasing, True)
        rect = QRectF(0.5, 0.5, SWATCH - 1, SWATCH - 1)
        p.setPen(QPen(QColor(roles().border), 1))
        if self.kind == "reserve":
            p.setBrush(QBrush(QColor(chart.reserve), Qt.BrushStyle.BDiagPattern))
        elif self.kind == "measured":
            p.setBrush(Qt.BrushStyle.NoBrush)
            p.setPen(QPen(QColor(roles().text), 2, Qt.PenStyle.DashLine))
            p.drawLine(SWATCH // 2, 0, SWATCH // 2, SWATCH)
            p.end()
            return
        else:
            p.setBrush(segment_color(self.kind, chart))
        p.drawRoundedRect(rect, 2, 2)
        p.end()


class MemoryLegend(QWidget):
    """The colours of the bars, named once for all of them: the model's parts first, in the
    normal text colour; other programs and the part kept free after them, muted. Only the
    kinds the bars show are listed (:meth:`show_kinds`)."""

    MODEL = ("weights", "kv", "compute", "projector", "draft", "overhead", "shared")
    CONTEXT = ("others", "reserve")
    COLUMNS = 3

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._grid = QGridLayout(self)
        self._grid.setContentsMargins(0, 0, 0, 0)
        self._grid.setHorizontalSpacing(SPACING.sm)
        self._grid.setVerticalSpacing(SPACING.xs)
        words, tips = legend_words(), legend_tips()
        self.items: dict[str, tuple[_Swatch, QLabel]] = {}
        for kind in (*self.MODEL, *self.CONTEXT, "measured"):
            text = words.get(kind) or tr("Measured after load")
            label = plain_label(text, wrap=False, selectable=False)
            set_type(label, "small")
            if kind not in self.MODEL:
                set_tone(label, "muted")
            swatch = _Swatch(kind)
            label.setToolTip(tips[kind])
            swatch.setToolTip(tips[kind])
            self.items[kind] = (swatch, label)
        self.show_kinds({"weights", "kv", "compute", "others", "reserve"})

    def show_kinds(self, kinds: set[str], measured: bool = False) -> None:
        """List ``kinds`` (segment kinds the bars show) and the measured mark when there is one."""
        wanted = [k for k in (*self.MODEL, *self.CONTEXT) if k in kinds or k in self.CONTEXT]
        if measured:
            wanted.append("measured")
        for swatch, label in self.items.values():
            self._grid.removeWidget(swatch)
            self._grid.removeWidget(label)
            swatch.hide()
            label.hide()
        for i, kind in enumerate(wanted):
            swatch, label = self.items[kind]
            row, col = divmod(i, self.COLUMNS)
            self._grid.addWidget(swatch, row, 2 * col)
            self._grid.addWidget(label, row, 2 * col + 1)
            swatch.show()
            label.show()
        for col in range(self.COLUMNS):
            self._grid.setColumnStretch(2 * col + 1, 1)
