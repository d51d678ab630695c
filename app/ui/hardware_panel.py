"""The Hardware panel: CPU, memory and each GPU with a memory bar, refreshed on demand.

The report belongs to the hardware service (app/services/hardware.py), which detects off the
GUI thread; the panel only shows what the service publishes: first what the machine has, then
what this runner build can use of it.
"""

from __future__ import annotations

import logging

from PySide6.QtCore import QRectF, QSize, Qt, Signal
from PySide6.QtGui import QColor, QPainter, QPaintEvent, QPalette, QShowEvent
from PySide6.QtWidgets import (
    QFrame,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QScrollArea,
    QSizePolicy,
    QVBoxLayout,
    QWidget,
)

from app.hardware.report import GpuInfo, HardwareReport
from app.services.hardware import HardwareService

log = logging.getLogger(__name__)

GiB = 1024**3


def human_bytes(n: int) -> str:
    if n >= GiB:
        return f"{n / GiB:.1f} GiB"
    if n >= 1024**2:
        return f"{n / 1024**2:.0f} MiB"
    return f"{n} B"


class MemoryBar(QWidget):
    """A bar split into memory used by other apps and free memory, with the numbers on it."""

    USED = QColor("#d9822b")
    FREE = QColor("#3d9970")

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._total = 0
        self._used = 0
        self._note = ""
        self.setMinimumHeight(24)
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)

    def set_values(self, total: int, used_by_others: int, note: str = "") -> None:
        self._total = max(0, total)
        self._used = min(max(0, used_by_others), self._total)
        self._note = note
        free = self._total - self._used
        self.setToolTip(
            f"{self._used:,} bytes used by other apps\n{free:,} bytes free\n"
            f"{self._total:,} bytes in total" + (f"\n{note}" if note else "")
        )
        self.setAccessibleName(self.text())
        self.update()

    @property
    def used(self) -> int:
        return self._used

    @property
    def total(self) -> int:
        return self._total

    def text(self) -> str:
        if not self._total:
            return "memory unknown"
        free = self._total - self._used
        return (f"{human_bytes(self._used)} used by other apps · {human_bytes(free)} free "
                f"of {human_bytes(self._total)}")

    def sizeHint(self) -> QSize:
        return QSize(360, 24)

    def paintEvent(self, event: QPaintEvent) -> None:
        painter = QPainter(self)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        rect = QRectF(self.rect()).adjusted(0.5, 0.5, -0.5, -0.5)
        radius = 4.0
        painter.setPen(Qt.PenStyle.NoPen)
        painter.setBrush(self.palette().color(QPalette.ColorRole.Mid))
        painter.drawRoundedRect(rect, radius, radius)
        if self._total:
            used_w = rect.width() * self._used / self._total
            painter.setBrush(self.FREE)
            painter.drawRoundedRect(rect, radius, radius)
            if used_w > 0:
                painter.setClipRect(QRectF(rect.left(), rect.top(), used_w, rect.height()))
                painter.setBrush(self.USED)
                painter.drawRoundedRect(rect, radius, radius)
                painter.setClipping(False)
        painter.setPen(QColor("white"))
        font = painter.font()
        font.setBold(True)
        painter.setFont(font)
        painter.drawText(rect.adjusted(8, 0, -8, 0),
                         Qt.AlignmentFlag.AlignVCenter | Qt.AlignmentFlag.AlignLeft, self.text())
        painter.end()


def _label(text: str, *, muted: bool = False, wrap: bool = True) -> QLabel:
    label = QLabel(text)
    label.setWordWrap(wrap)
    label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
    if muted:
        label.setForegroundRole(QPalette.ColorRole.PlaceholderText)
    return label


class HardwarePanel(QWidget):
    """Shows the hardware service's report; Refresh asks the service to detect again."""

    # Each report the panel shows: the machine's, then (with runner devices) the merged one.
    report_ready = Signal(object)  # HardwareReport
    failed = Signal(str)

    def __init__(self, service: HardwareService, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._service = service
        self._shown_once = False

        self.refresh_button = QPushButton("Refresh")
        self.refresh_button.setToolTip("Detect the hardware again (memory use changes as apps run)")
        self.refresh_button.clicked.connect(self.refresh)
        self.status = _label("", muted=True, wrap=False)
        title = QLabel("<b>Hardware</b>")
        header = QHBoxLayout()
        header.addWidget(title)
        header.addStretch(1)
        header.addWidget(self.status)
        header.addWidget(self.refresh_button)

        self._content = QWidget()
        self._content_layout = QVBoxLayout(self._content)
        self._content_layout.setContentsMargins(0, 0, 0, 0)
        scroll = QScrollArea()
        scroll.setWidgetResizable(True)
        scroll.setFrameShape(QFrame.Shape.NoFrame)
        scroll.setWidget(self._content)

        layout = QVBoxLayout(self)
        layout.addLayout(header)
        layout.addWidget(scroll, 1)
        self._show_placeholder("Press Refresh to detect this computer's hardware.")
        service.report_changed.connect(self._on_report)
        service.status_changed.connect(self.status.setText)
        # A bound method, not a lambda: Qt disconnects it when the panel is destroyed, while the
        # service (and a detection it is running) may outlive the window.
        service.busy_changed.connect(self._on_busy)
        service.failed.connect(self._on_error)
        if service.report is not None:
            self._rebuild(service.report)

    # -- public --------------------------------------------------------------------------------

    @property
    def report(self) -> HardwareReport | None:
        return self._service.report

    @property
    def busy(self) -> bool:
        return self._service.busy

    def refresh(self) -> None:
        """Detect again in the background; the panel updates when the report arrives."""
        self._service.refresh()

    def set_report(self, report: HardwareReport) -> None:
        """Show ``report`` (a recorded machine); it becomes the service's report."""
        self._service.set_report(report)

    # -- internals -----------------------------------------------------------------------------

    def showEvent(self, event: QShowEvent) -> None:
        super().showEvent(event)
        if not self._shown_once:
            self._shown_once = True
            if self._service.report is None:
                self.refresh()

    def _on_busy(self, busy: bool) -> None:
        self.refresh_button.setEnabled(not busy)

    def _on_report(self, report: HardwareReport) -> None:
        self._rebuild(report)
        self.report_ready.emit(report)

    def _on_error(self, message: str) -> None:
        if self._service.report is None:
            self._show_placeholder(message)
        self.status.setToolTip(message)
        self.failed.emit(message)

    def _clear(self) -> None:
        while self._content_layout.count():
            item = self._content_layout.takeAt(0)
            widget = item.widget() if item is not None else None
            if widget is not None:
                # Hide now: deleteLater only acts on the next event-loop pass, and until then
                # the old widget would still be painted under the new ones.
                widget.hide()
                widget.setParent(None)
                widget.deleteLater()

    def _show_placeholder(self, text: str) -> None:
        self._clear()
        self._content_layout.addWidget(_label(text, muted=True))
        self._content_layout.addStretch(1)

    def _rebuild(self, r: HardwareReport) -> None:
        self._clear()
        add = self._content_layout.addWidget

        system = QGroupBox("System")
        sys_layout = QVBoxLayout(system)
        sys_layout.addWidget(_label(f"{r.os.version}" + (f" · kernel {r.os.kernel}"
                                                         if r.os.kernel else "")))
        cores = f"{r.cpu.physical_cores} cores, {r.cpu.logical_cores} threads"
        if r.cpu.performance_cores:
            cores += f" ({r.cpu.performance_cores} performance cores)"
        sys_layout.addWidget(_label(f"<b>{_esc(r.cpu.model)}</b> · {_esc(r.cpu.arch)} · {cores}"))
        features = " ".join(r.usable_cpu_features) or "no SIMD features detected"
        sys_layout.addWidget(_label(f"Instruction sets: {features}", muted=True))
        add(system)

        memory = QGroupBox("Memory")
        mem_layout = QVBoxLayout(memory)
        ram = MemoryBar()
        ram.setObjectName("ram_bar")
        ram.set_values(r.memory.total, max(0, r.memory.total - r.memory.available))
        mem_layout.addWidget(ram)
        swap = (f"Swap: {human_bytes(r.memory.swap_free)} free of "
                f"{human_bytes(r.memory.swap_total)}") if r.memory.swap_total else "No swap"
        mem_layout.addWidget(_label(swap, muted=True))
        add(memory)

        if not r.gpus:
            add(_label("No GPU found: models will run on the CPU.", muted=True))
        for gpu in r.gpus:
            add(self._gpu_box(gpu))

        if r.runner is not None and r.runner.unused_gpus:
            add(_label("Not used by this runner build: " + "; ".join(r.runner.unused_gpus),
                       muted=True))
        missing = [s for s in r.sources if not s.present]
        if missing:
            lines = "<br>".join(f"{_esc(s.name)}: {_esc(s.reason)}" for s in missing)
            sources = _label(f"<small>Not found:<br>{lines}</small>", muted=True)
            sources.setObjectName("sources")
            add(sources)
        self._content_layout.addStretch(1)

    def _gpu_box(self, g: GpuInfo) -> QGroupBox:
        box = QGroupBox(f"GPU {g.index} · {g.name}")
        box.setObjectName(f"gpu_{g.vendor}_{g.index}")
        layout = QVBoxLayout(box)
        bar = MemoryBar()
        bar.setObjectName("gpu_bar")
        note = "estimated" if g.estimate else ""
        bar.set_values(g.total, g.used_by_others, note)
        layout.addWidget(bar)
        facts = [g.backend.upper()]
        if g.unified:
            facts.append("shares system RAM")
        if g.estimate:
            facts.append("memory estimated")
        if g.compute_capability:
            facts.append(f"compute {g.compute_capability}")
        if g.driver_version:
            facts.append(f"driver {g.driver_version}")
        if g.cuda_driver_version:
            facts.append(f"CUDA {g.cuda_driver_version}")
        if g.runner_device:
            facts.append(f"runner device {g.runner_device}")
        facts += [f"{k} {v}" for k, v in g.details.items() if k != "device type"]
        layout.addWidget(_label(" · ".join(facts), muted=True))
        if g.processes:
            procs = ", ".join(
                f"{p.name} ({human_bytes(p.used)})" if p.used is not None else p.name
                for p in g.processes[:6]
            )
            more = f" and {len(g.processes) - 6} more" if len(g.processes) > 6 else ""
            layout.addWidget(_label(f"Using it now: {procs}{more}", muted=True))
        return box


def _esc(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
