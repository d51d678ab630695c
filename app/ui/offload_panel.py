"""The per-model offload settings panel: every load setting at the planner's choice or pinned by
the user, a memory bar per device recomputed as a control moves, the planner's reasons, and Apply.

The panel asks its service (a :class:`~app.services.protocols.TuningLike`) to open a model off the
GUI thread, then plans synchronously on every change: the planner without the dry run takes a few
milliseconds, so dragging the GPU-layers slider redraws the bars at once. A setting that will not
fit turns red with the planner's reason before anything is loaded; Apply saves the pins and asks
the window (``apply_requested``) to reload the model with them, and the dry run confirms them
then, as for every load. After the load, :meth:`OffloadPanel.show_measured` puts what llama.cpp
allocated beside the prediction. Each setting's row (its control, automatic or pinned, and its
reset button) is app/ui/offload_fields.py's.
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from PySide6.QtCore import QEvent, QObject, QSize, Qt, Signal
from PySide6.QtGui import QPalette
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QFrame,
    QGridLayout,
    QGroupBox,
    QHBoxLayout,
    QPushButton,
    QScrollArea,
    QVBoxLayout,
    QWidget,
)

from app.loading.text import summary
from app.loading.tuning import (
    Measured,
    TuningContext,
    blamed_fields,
    device_bars,
    field_states,
    measured_by_device,
    not_fit_text,
    with_pin,
)
from app.planner.plan import LaunchPlan
from app.planner.types import Pins
from app.services.protocols import TuningLike
from app.services.tuning import MeasuredContext
from app.ui.common import heading_label, plain_label, set_text_color, text_color
from app.ui.memory_bar import RED, MemoryBar, MemoryLegend
from app.ui.offload_fields import Field, make_field


class _FittingScroll(QScrollArea):
    """A vertical scroll area as wide as its content needs: its text wraps to the width it gets,
    but the columns' controls, legend and GPU names cannot shrink, so the window holding it may
    not be made narrower than they are (nothing is cut off at the right edge)."""

    def minimumSizeHint(self) -> QSize:
        hint = super().minimumSizeHint()
        body = self.widget()
        if body is None:
            return hint
        width = (body.minimumSizeHint().width() + self.verticalScrollBar().sizeHint().width()
                 + 2 * self.frameWidth())
        return QSize(max(hint.width(), width), hint.height())

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if watched is self.widget() and event.type() == QEvent.Type.LayoutRequest:
            self.updateGeometry()  # the content's needs changed (fields built, bars added)
        return super().eventFilter(watched, event)


class OffloadPanel(QWidget):
    """The offload settings of one model; ``open_model`` chooses which."""

    apply_requested = Signal(str, object)  # model path, Pins: reload the model with these pins
    # The size a dialog holding the panel opens at (fitted to the screen by open_at): wide
    # enough for both columns with a GPU's name, before the model's fields are built.
    OPENING_SIZE = (1150, 720)
    recomputed = Signal(object)  # LaunchPlan: the plan the panel shows now

    def __init__(self, tuning: TuningLike, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.tuning = tuning
        self.ctx: TuningContext | None = None
        self.pins = Pins()
        self.plan: LaunchPlan | None = None
        self.last_recompute_ms = 0.0
        self._path = ""  # the model being opened or shown
        self._measured: dict[str, Measured] = {}
        self._fields: dict[str, Field] = {}
        self._bars: list[MemoryBar] = []

        self.title = heading_label("Offload settings", wrap=True)  # a long file name wraps
        self.status = plain_label("Choose a model to see how it will be loaded.", muted=True)
        self.status.setAccessibleName("Offload status")
        body = QWidget()
        cols = QHBoxLayout(body)
        cols.setContentsMargins(0, 0, 0, 0)
        cols.addLayout(self._settings_column(), 5)
        cols.addLayout(self._memory_column(), 6)
        scroll = self.body_scroll = _FittingScroll()
        scroll.setWidgetResizable(True)
        scroll.setFrameShape(QFrame.Shape.NoFrame)
        # The columns wrap their text to the width they get rather than scroll sideways; the
        # scroll area is at least as wide as what cannot wrap, so nothing is cut.
        scroll.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        scroll.setWidget(body)
        self.close_box = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        self.close_box.rejected.connect(self._close_window)

        outer = QVBoxLayout(self)
        outer.addWidget(self.title)
        outer.addWidget(self.status)
        outer.addWidget(scroll, 1)
        outer.addWidget(self.close_box)
        self._set_enabled(False)

        tuning.opened.connect(self._on_opened)
        tuning.failed.connect(self._on_failed)
        tuning.saved.connect(self._on_saved)

    def _settings_column(self) -> QVBoxLayout:
        """The settings' grid (filled when a model is open), Reset all and Apply."""
        self.settings_box = QGroupBox("Settings")
        self.grid = QGridLayout(self.settings_box)
        self.grid.setColumnStretch(1, 1)
        self.reset_all_btn = QPushButton("Reset all to automatic")
        self.reset_all_btn.clicked.connect(self.reset_all)
        self.apply_btn = QPushButton("Apply and reload")
        self.apply_btn.setAccessibleName("Apply and reload")
        self.apply_btn.setDefault(True)
        self.apply_btn.clicked.connect(self.apply)
        buttons = QHBoxLayout()
        buttons.addWidget(self.reset_all_btn)
        buttons.addStretch(1)
        buttons.addWidget(self.apply_btn)
        left = QVBoxLayout()
        left.addWidget(self.settings_box)
        left.addLayout(buttons)
        left.addStretch(1)
        return left

    def _memory_column(self) -> QVBoxLayout:
        """The plan's summary, a bar per device, why it does not fit, and the planner's
        other reasons."""
        self.bars_box = QVBoxLayout()
        self.bars_box.setSpacing(6)
        self.not_fit = plain_label()
        set_text_color(self.not_fit, text_color(self.not_fit.palette(), RED))
        self.not_fit.hide()
        self.summary = plain_label()
        bold = self.summary.font()
        bold.setBold(True)
        self.summary.setFont(bold)
        memory = QGroupBox("Memory, predicted before loading")
        mem_col = QVBoxLayout(memory)
        mem_col.addWidget(self.summary)
        mem_col.addLayout(self.bars_box)
        mem_col.addWidget(MemoryLegend())
        mem_col.addWidget(self.not_fit)
        self.reasons = plain_label()
        self.why_box = QGroupBox("Why these settings")
        why_col = QVBoxLayout(self.why_box)
        why_col.addWidget(self.reasons)
        right = QVBoxLayout()
        right.addWidget(memory)
        right.addWidget(self.why_box)
        right.addStretch(1)
        return right

    # ---- public ------------------------------------------------------------------------------

    def open_model(self, path: str) -> None:
        """Show ``path``'s settings (read in the background; the panel waits disabled)."""
        self._path = path
        if self.ctx is None or self.ctx.path != path:
            self._measured = {}
        self.title.setText(f"Offload settings: {Path(path).name}")
        self._say("Reading the model and this computer's memory…")
        self._set_enabled(False)
        self.tuning.open(path)

    def show_measured(self, entries: Iterable[Any], path: str | None = None) -> None:
        """Put what a load allocated beside the prediction: the runner's ``/runner/status``
        ``memory`` entries or the loader's ``measured`` signal's list. ``path``: the model
        they are of (ignored when the panel shows another one)."""
        if path is not None and path != self._path:
            return
        self._measured = measured_by_device(entries)
        if self.plan is not None:
            self._show_bars(self.plan)

    def set_pin(self, name: str, value: Any) -> None:
        """Pin one setting (what its control does) and plan again."""
        self.pins = with_pin(self.pins, name, value)
        self.recompute()

    def reset_field(self, name: str) -> None:
        self.set_pin(name, None)

    def reset_all(self) -> None:
        """Every setting back to the planner's choice."""
        self.pins = Pins()
        self.recompute()

    def apply(self) -> None:
        """Save the pins for this model and machine, and ask for a reload with them."""
        if self.ctx is None or self.plan is None or not self.plan.fits:
            return
        self.tuning.save(self.ctx, self.pins)
        self.apply_requested.emit(self.ctx.path, self.pins)

    def recompute(self) -> LaunchPlan | None:
        """Plan for the current pins and show it (no dry run: milliseconds)."""
        if self.ctx is None:
            return None
        start = time.perf_counter()
        plan = self.tuning.plan(self.ctx, self.pins)
        self.plan = plan
        blamed = blamed_fields(plan)
        states = field_states(plan, self.pins)
        for name, f in self._fields.items():
            f.show(states[name], name in blamed)
        self._show_bars(plan)
        why = not_fit_text(plan)
        self.not_fit.setText(why or "")
        self.not_fit.setVisible(why is not None)
        self.summary.setText(f"{summary(plan)}." if plan.fits else
                             "These settings do not fit:")
        set_text_color(self.summary, None if plan.fits else text_color(self.palette(), RED))
        # The reason it does not fit is in red above; the others stay here.
        others = [f"• {t}" for t in plan.reason_texts() if t and t != why]
        self.reasons.setText("\n".join(others))
        self.why_box.setVisible(bool(others))
        self.apply_btn.setEnabled(plan.fits)
        self.apply_btn.setToolTip("" if plan.fits else "These settings do not fit; change "
                                  "the ones in red first.")
        self.reset_all_btn.setEnabled(bool(self.pins.pinned()))
        self.last_recompute_ms = (time.perf_counter() - start) * 1000
        self.recomputed.emit(plan)
        return plan

    # ---- internals ---------------------------------------------------------------------------

    def _close_window(self) -> None:
        """Close: the dialog the panel sits in (rejected, as Esc does), or the panel's window."""
        window = self.window()
        if isinstance(window, QDialog):
            window.reject()
        else:
            window.close()

    def _on_opened(self, ctx: TuningContext) -> None:
        if ctx.path != self._path:
            return  # another model was chosen meanwhile
        self.ctx = ctx
        self.pins = ctx.saved
        if isinstance(ctx, MeasuredContext) and ctx.measured and not self._measured:
            # The load that measured them ended before this panel was made, so its signal
            # never reached it. A measurement that came by signal while opening is newer.
            self._measured = measured_by_device(ctx.measured)
        self._build_fields(ctx)
        self._set_enabled(True)
        self._say("Every setting starts at the planner's choice; change one to pin "
                            "it. Apply saves them for this model on this computer and reloads.")
        self.recompute()

    def _on_failed(self, message: str) -> None:
        self._say(message, error=True)

    def _say(self, text: str, *, error: bool = False) -> None:
        self.status.setText(text)
        set_text_color(self.status, text_color(self.palette(), RED) if error else None)
        self.status.setForegroundRole(QPalette.ColorRole.WindowText if error
                                      else QPalette.ColorRole.PlaceholderText)

    def _on_saved(self, path: str) -> None:
        if self.ctx is not None and path == self.ctx.path:
            # Apply asked the window to reload with them (apply_requested): say so, not "later".
            self._say("Saved for this model on this computer; it loads with these settings "
                      "now.")

    def _set_enabled(self, on: bool) -> None:
        self.settings_box.setEnabled(on)
        self.apply_btn.setEnabled(on)
        self.reset_all_btn.setEnabled(on)

    def _build_fields(self, ctx: TuningContext) -> None:
        for old in self._fields.values():
            for w in old.widgets():
                self.grid.removeWidget(w)
                w.deleteLater()
        self._fields = {}
        for row, name in enumerate(ctx.fields):
            def pin(value: Any, name: str = name) -> None:
                self.set_pin(name, value)

            def reset(name: str = name) -> None:
                self.reset_field(name)

            f = make_field(name, ctx, pin, reset)
            for col, w in enumerate(f.widgets()):
                align = Qt.AlignmentFlag.AlignTop if name == "tensor_split" else \
                    Qt.AlignmentFlag.AlignVCenter
                self.grid.addWidget(w, row, col, align)
            self._fields[name] = f

    def _show_bars(self, plan: LaunchPlan) -> None:
        bars = self.ctx.bars(plan, self.pins) if self.ctx is not None else device_bars(plan)
        while len(self._bars) < len(bars):
            added = MemoryBar()
            self.bars_box.addWidget(added)
            self._bars.append(added)
        while len(self._bars) > len(bars):
            old = self._bars.pop()
            self.bars_box.removeWidget(old)
            old.deleteLater()
        gpus = any(b.kind == "gpu" for b in bars)
        for widget, bar in zip(self._bars, bars, strict=True):
            widget.set_bar(bar, self._measured.get(bar.llama_name), gpus=gpus)

    # For tests and the screenshot script: the row of one setting.
    def field(self, name: str) -> Field | None:
        return self._fields.get(name)

    @property
    def bars(self) -> list[MemoryBar]:
        return list(self._bars)

