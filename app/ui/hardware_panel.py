"""The Hardware panel: a card per device (the CPU, the memory, each GPU) with its icon, a used/free
bar and its facts, and a card for the runtime (llama.cpp) saying in words what it can use;
refreshed on demand.

The report belongs to the hardware service (app/services/hardware.py), which detects off the
GUI thread; the panel only shows what the service publishes: first what the machine has, then
what this runner build can use of it.
"""

from __future__ import annotations

import logging

from PySide6.QtCore import QEvent, QRectF, QSize, Qt, Signal
from PySide6.QtGui import QColor, QPainter, QPainterPath, QPaintEvent, QShowEvent
from PySide6.QtWidgets import (
    QFrame,
    QGridLayout,
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
from app.ui.common import clear_layout, plain_label
from app.ui.lang import format_number, tr, ui_text
from app.ui.memory_bar import DeviceIcon
from app.ui.style.components import Card, chip, heading, section_header, set_shown, set_tone, set_type
from app.ui.style.icons import icon
from app.ui.style.palette import chart_colors, roles
from app.ui.style.tokens import RADII, SPACING

log = logging.getLogger(__name__)

GiB = 1024**3
BAR_HEIGHT = 10
CARD_ICON = 22


def human_bytes(n: int) -> str:
    """``n`` bytes as a person reads them, the number in the locale's format ("23,5 GiB")."""
    if n >= GiB:
        return tr("{size} GiB").format(size=format_number(n / GiB, ".1f"))
    if n >= 1024**2:
        return tr("{size} MiB").format(size=format_number(n / 1024**2, ".0f"))
    return tr("{size} B").format(size=format_number(n, ""))


class MemoryBar(QWidget):
    """A thin bar split into memory used by other apps and free memory; its numbers are in
    :meth:`text` (the card shows them beside it, the screen reader hears them)."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._total = 0
        self._used = 0
        self._note = ""
        self.setMinimumHeight(BAR_HEIGHT)
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)

    @staticmethod
    def used_color() -> QColor:
        """The used part's fill in the scheme on screen (a chart token)."""
        return QColor(chart_colors().used)

    @staticmethod
    def free_color() -> QColor:
        """The free part's fill in the scheme on screen (a chart token)."""
        return QColor(chart_colors().free)

    def set_values(self, total: int, used_by_others: int, note: str = "") -> None:
        self._total = max(0, total)
        self._used = min(max(0, used_by_others), self._total)
        self._note = note
        free = self._total - self._used
        tip = tr("{used} bytes used by other apps\n{free} bytes free\n{total} bytes in total"
                 ).format(used=f"{self._used:,}", free=f"{free:,}", total=f"{self._total:,}")
        self.setToolTip(f"{tip}\n{note}" if note else tip)
        self.setAccessibleName(self.text())
        self.update()

    @property
    def used(self) -> int:
        return self._used

    @property
    def total(self) -> int:
        return self._total

    @property
    def free(self) -> int:
        return self._total - self._used

    def text(self) -> str:
        if not self._total:
            return tr("memory unknown")
        return tr("{used} used by other apps · {free} free of {total}").format(
            used=human_bytes(self._used), free=human_bytes(self.free),
            total=human_bytes(self._total))

    def sizeHint(self) -> QSize:
        return QSize(360, BAR_HEIGHT)

    def changeEvent(self, event: QEvent) -> None:
        super().changeEvent(event)
        if event.type() in (QEvent.Type.PaletteChange, QEvent.Type.ApplicationPaletteChange):
            self.update()  # the colours are the new scheme's

    def paintEvent(self, event: QPaintEvent) -> None:
        painter = QPainter(self)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        rect = QRectF(self.rect())
        radius = float(RADII.sm)
        track = QPainterPath()
        track.addRoundedRect(rect, radius, radius)
        painter.setClipPath(track)
        painter.fillRect(rect, QColor(roles().sunken))
        if self._total:
            used_w = rect.width() * self._used / self._total
            painter.fillRect(QRectF(rect.left() + used_w, rect.top(), rect.width() - used_w,
                                    rect.height()), self.free_color())
            if used_w > 0:
                painter.fillRect(QRectF(rect.left(), rect.top(), used_w, rect.height()),
                                 self.used_color())
        painter.end()


class _Swatch(QWidget):
    """A small sample of a bar's colour beside its words (used or free)."""

    def __init__(self, used: bool, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._used = used
        self.setFixedSize(SPACING.md + 2, SPACING.md + 2)

    def paintEvent(self, event: QPaintEvent) -> None:
        p = QPainter(self)
        p.setRenderHint(QPainter.RenderHint.Antialiasing)
        p.setPen(Qt.PenStyle.NoPen)
        p.setBrush(MemoryBar.used_color() if self._used else MemoryBar.free_color())
        p.drawRoundedRect(QRectF(self.rect()), 2, 2)
        p.end()


def _label(text: str, *, muted: bool = False, wrap: bool = True, small: bool = False) -> QLabel:
    return plain_label(text, wrap=wrap, tone="muted" if muted else "",
                       kind="small" if small else "")


class DeviceCard(Card):
    """One device: its icon, a title and subtitle, and whatever the device has to say."""

    def __init__(self, icon_name: str, title: str, subtitle: str = "",
                 parent: QWidget | None = None) -> None:
        super().__init__(parent, spacing=SPACING.sm)
        self.icon = DeviceIcon(icon_name, CARD_ICON, "accent")
        self.title = heading(title, "subheading")
        self.title.setWordWrap(True)
        self.title.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.subtitle = _label(subtitle, muted=True, small=True)
        set_shown(self.subtitle, bool(subtitle))
        self.chips = QHBoxLayout()
        self.chips.setSpacing(SPACING.xs)
        names = QVBoxLayout()
        names.setSpacing(0)
        names.addWidget(self.title)
        names.addWidget(self.subtitle)
        top = QHBoxLayout()
        top.setSpacing(SPACING.md)
        top.addWidget(self.icon, 0, Qt.AlignmentFlag.AlignTop)
        top.addLayout(names, 1)
        top.addLayout(self.chips)
        self.body.addLayout(top)

    def add_chip(self, text: str, tone: str) -> QLabel:
        c = chip(text, tone)
        c.setAccessibleName(text)
        self.chips.addWidget(c, 0, Qt.AlignmentFlag.AlignTop)
        return c

    def add_memory(self, bar: MemoryBar) -> None:
        """``bar`` with its numbers in words: free (large), used by other apps and the total."""
        free = QLabel()
        free.setTextFormat(Qt.TextFormat.PlainText)
        if bar.total:
            free.setText(tr("{free} free").format(free=human_bytes(bar.free)))
            of = tr("of {total}").format(total=human_bytes(bar.total))
        else:
            free.setText(tr("memory unknown"))
            of = ""
        set_type(free, "heading")
        total = _label(of, muted=True, wrap=False)
        head = QHBoxLayout()
        head.setSpacing(SPACING.sm)
        head.addWidget(free, 0, Qt.AlignmentFlag.AlignBaseline)
        head.addWidget(total, 0, Qt.AlignmentFlag.AlignBaseline)
        head.addStretch(1)
        key = QHBoxLayout()
        key.setSpacing(SPACING.xs)
        key.addWidget(_Swatch(True))
        key.addWidget(_label(tr("Used by other programs: {used}").format(
            used=human_bytes(bar.used)), muted=True, wrap=False, small=True))
        key.addSpacing(SPACING.lg)
        key.addWidget(_Swatch(False))
        key.addWidget(_label(tr("Free"), muted=True, wrap=False, small=True))
        key.addStretch(1)
        self.body.addLayout(head)
        self.body.addWidget(bar)
        self.body.addLayout(key)


class HardwarePanel(QWidget):
    """Shows the hardware service's report; Refresh asks the service to detect again."""

    # Each report the panel shows: the machine's, then (with runner devices) the merged one.
    report_ready = Signal(object)  # HardwareReport
    failed = Signal(str)

    def __init__(self, service: HardwareService, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._service = service
        self._shown_once = False

        self.refresh_button = QPushButton(icon("regenerate"), tr("Refresh"))
        self.refresh_button.setAccessibleName(tr("Refresh"))
        self.refresh_button.setToolTip(
            tr("Detect the hardware again (memory use changes as apps run)"))
        self.refresh_button.clicked.connect(self.refresh)
        self.status = _label("", muted=True, wrap=False, small=True)
        title = heading(tr("Hardware"), "title")
        subtitle = _label(tr("What this computer has, and what Hearth's runtime can use of it."),
                          muted=True)
        names = QVBoxLayout()
        names.setSpacing(SPACING.xxs)
        names.addWidget(title)
        names.addWidget(subtitle)
        header = QHBoxLayout()
        header.setSpacing(SPACING.md)
        header.addLayout(names, 1)
        header.addWidget(self.status, 0, Qt.AlignmentFlag.AlignVCenter)
        header.addWidget(self.refresh_button, 0, Qt.AlignmentFlag.AlignVCenter)

        self._content = QWidget()
        self._content_layout = QVBoxLayout(self._content)
        self._content_layout.setContentsMargins(0, 0, SPACING.xs, 0)
        scroll = QScrollArea()
        scroll.setWidgetResizable(True)
        scroll.setFrameShape(QFrame.Shape.NoFrame)
        scroll.setWidget(self._content)

        layout = QVBoxLayout(self)
        layout.setContentsMargins(SPACING.xl, SPACING.lg, SPACING.xl, SPACING.lg)
        layout.setSpacing(SPACING.lg)
        layout.addLayout(header)
        layout.addWidget(scroll, 1)
        self._show_placeholder(tr("Press Refresh to detect this computer's hardware."))
        service.report_changed.connect(self._on_report)
        service.status_changed.connect(self._on_status)
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

    def _on_status(self, text: str) -> None:
        self.status.setText(ui_text(text))

    def _on_busy(self, busy: bool) -> None:
        self.refresh_button.setEnabled(not busy)

    def _on_report(self, report: HardwareReport) -> None:
        self._rebuild(report)
        self.report_ready.emit(report)

    def _on_error(self, message: str) -> None:
        if self._service.report is None:
            self._show_placeholder(ui_text(message))
        self.status.setToolTip(message)
        self.failed.emit(message)

    def _clear(self) -> None:
        clear_layout(self._content_layout)

    def _show_placeholder(self, text: str) -> None:
        self._clear()
        self._content_layout.addWidget(_label(text, muted=True))
        self._content_layout.addStretch(1)

    def _rebuild(self, r: HardwareReport) -> None:
        self._clear()
        page = QWidget()
        column = QVBoxLayout(page)
        column.setContentsMargins(0, 0, 0, 0)
        column.setSpacing(SPACING.lg)
        grid = QGridLayout()
        grid.setSpacing(SPACING.lg)
        grid.setColumnStretch(0, 1)
        grid.setColumnStretch(1, 1)
        cards: list[DeviceCard] = [self._cpu_card(r), self._memory_card(r)]
        cards += [self._gpu_card(g, r) for g in r.gpus] or [self._no_gpu_card()]
        for i, card in enumerate(cards):
            card.body.addStretch(1)  # the cards of a row are as tall as the tallest
            grid.addWidget(card, i // 2, i % 2)
        column.addLayout(grid)
        column.addWidget(self._runtime_card(r))

        missing = [s for s in r.sources if not s.present]
        if missing:
            lines = "\n".join(tr("{source}: {reason}").format(source=s.name,
                                                              reason=ui_text(s.reason))
                               for s in missing)
            sources = _label(lines, muted=True, small=True)
            sources.setObjectName("sources")
            sources.setAccessibleName(tr("Not found"))
            found = QVBoxLayout()
            found.setSpacing(SPACING.xs)
            found.addWidget(section_header(tr("Not found")))
            found.addWidget(sources)
            column.addLayout(found)
        column.addStretch(1)
        self._content_layout.addWidget(page)

    def _cpu_card(self, r: HardwareReport) -> DeviceCard:
        card = DeviceCard("hardware", tr("CPU"), r.cpu.model)
        card.setObjectName("cpu")
        cores = tr("{cores} cores, {threads} threads").format(
            cores=r.cpu.physical_cores, threads=r.cpu.logical_cores)
        if r.cpu.performance_cores:
            cores = tr("{cores} ({performance} performance cores)").format(
                cores=cores, performance=r.cpu.performance_cores)
        card.body.addWidget(_label(tr("{arch} · {cores}").format(arch=r.cpu.arch, cores=cores)))
        system = (tr("{os} · kernel {kernel}").format(os=r.os.version, kernel=r.os.kernel)
                  if r.os.kernel else r.os.version)
        card.body.addWidget(_label(system, muted=True, small=True))
        features = " ".join(r.usable_cpu_features) or tr("no SIMD features detected")
        card.body.addWidget(_label(tr("Instruction sets: {features}").format(features=features),
                                   muted=True, small=True))
        return card

    def _memory_card(self, r: HardwareReport) -> DeviceCard:
        card = DeviceCard("memory", tr("Memory"), tr("System RAM: where a model's layers go "
                                                     "when they are not on a GPU"))
        card.setObjectName("memory")
        ram = MemoryBar()
        ram.setObjectName("ram_bar")
        ram.set_values(r.memory.total, max(0, r.memory.total - r.memory.available))
        card.add_memory(ram)
        swap = (tr("Swap: {free} free of {total}").format(
            free=human_bytes(r.memory.swap_free), total=human_bytes(r.memory.swap_total))
            if r.memory.swap_total else tr("No swap"))
        card.body.addWidget(_label(swap, muted=True, small=True))
        return card

    def _no_gpu_card(self) -> DeviceCard:
        card = DeviceCard("monitor", tr("GPU"))
        card.setObjectName("no_gpu")
        card.add_chip(tr("None found"), "muted")
        card.body.addWidget(_label(tr("No GPU found: models will run on the CPU."), muted=True))
        return card

    def _runtime_card(self, r: HardwareReport) -> DeviceCard:
        """What the runtime (this llama.cpp build) can use, and what that means for a model."""
        card = DeviceCard("fast", tr("Runtime"), tr("llama.cpp, which runs the models"))
        card.setObjectName("runtime")
        runner = r.runner
        if runner is None:
            card.add_chip(tr("Not asked yet"), "muted")
            card.body.addWidget(_label(tr(
                "Which of these devices the runtime can use is not known yet: it is asked "
                "after the hardware is detected."), muted=True))
            return card
        gpus = [d for d in runner.devices if d.type in ("gpu", "igpu")]
        if gpus:
            card.add_chip(tr("GPU acceleration"), "success")
            meaning = tr("It can use %n GPU(s): the layers of a model that fit in GPU memory "
                         "run there, fast; the rest run on the CPU from system RAM.", None,
                         len(gpus))
        else:
            card.add_chip(tr("CPU only"), "warning")
            meaning = tr("This build runs models on the CPU only: they load into system RAM and "
                         "answer more slowly than on a GPU.")
        card.body.addWidget(_label(meaning))
        if runner.devices:
            devices = " · ".join(f"{d.name} ({d.description})" if d.description else d.name
                                 for d in runner.devices)
            card.body.addWidget(_label(tr("Devices: {devices}").format(devices=devices),
                                       muted=True, small=True))
        if runner.unused_gpus:
            unused = _label(tr("Not used by this runner build: {gpus}").format(
                gpus="; ".join(ui_text(g) for g in runner.unused_gpus)))
            set_tone(unused, "warning")
            card.body.addWidget(unused)
        return card

    def _gpu_card(self, g: GpuInfo, r: HardwareReport) -> DeviceCard:
        card = DeviceCard("monitor", tr("GPU {index} · {name}").format(index=g.index,
                                                                       name=g.name))
        card.setObjectName(f"gpu_{g.vendor}_{g.index}")
        card.add_chip(g.backend.upper(), "info")
        if r.runner is not None:
            if g.runner_device:
                card.add_chip(tr("Used by the runtime"), "success")
            else:
                card.add_chip(tr("Not used"), "warning")
        bar = MemoryBar()
        bar.setObjectName("gpu_bar")
        bar.set_values(g.total, g.used_by_others, tr("estimated") if g.estimate else "")
        card.add_memory(bar)
        facts: list[str] = []
        if g.unified:
            facts.append(tr("shares system RAM"))
        if g.estimate:
            facts.append(tr("memory estimated"))
        if g.compute_capability:
            facts.append(tr("compute {version}").format(version=g.compute_capability))
        if g.driver_version:
            facts.append(tr("driver {version}").format(version=g.driver_version))
        if g.cuda_driver_version:
            facts.append(tr("CUDA {version}").format(version=g.cuda_driver_version))
        if g.runner_device:
            facts.append(tr("runner device {name}").format(name=g.runner_device))
        facts += [f"{k} {v}" for k, v in g.details.items() if k != "device type"]
        if facts:
            card.body.addWidget(_label(" · ".join(facts), muted=True, small=True))
        if g.processes:
            procs = ", ".join(
                f"{p.name} ({human_bytes(p.used)})" if p.used is not None else p.name
                for p in g.processes[:6]
            )
            text = tr("Using it now: {programs}").format(programs=procs)
            if len(g.processes) > 6:
                text = tr("Using it now: {programs} and {count} more").format(
                    programs=procs, count=len(g.processes) - 6)
            card.body.addWidget(_label(text, muted=True, small=True))
        return card
