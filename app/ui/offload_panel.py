"""The per-model offload settings panel: every load setting at the planner's choice or pinned by
the user, a memory bar per device recomputed as a control moves, the planner's reasons, and Apply.

The panel asks its service (a :class:`~app.services.protocols.TuningLike`) to open a model off the
GUI thread, then plans synchronously on every change: the planner without the dry run takes a few
milliseconds, so dragging the GPU-layers slider redraws the bars at once. A setting that will not
fit turns red with the planner's reason before anything is loaded; Apply saves the pins and asks
the window (``apply_requested``) to reload the model with them, and the dry run confirms them
then, as for every load. After the load, :meth:`OffloadPanel.show_measured` puts what llama.cpp
allocated beside the prediction.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

from PySide6.QtCore import QEvent, QObject, QSize, Qt, Signal
from PySide6.QtGui import QPalette
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QDoubleSpinBox,
    QFrame,
    QGridLayout,
    QGroupBox,
    QHBoxLayout,
    QPushButton,
    QScrollArea,
    QSlider,
    QSpinBox,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from app.loading.text import summary
from app.loading.tuning import (
    CACHE_TYPES,
    FLASH_ATTN,
    FieldState,
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

LABELS = {
    "n_gpu_layers": "GPU layers",
    "n_ctx": "Context (tokens)",
    "n_batch": "Batch",
    "n_ubatch": "Micro-batch",
    "n_threads": "Threads (generation)",
    "n_threads_batch": "Threads (prompt)",
    "flash_attn": "Flash attention",
    "cache_type_k": "KV cache type, K",
    "cache_type_v": "KV cache type, V",
    "mmap": "Memory-map the file",
    "mlock": "Lock in RAM",
    "tensor_split": "GPUs and split",
    "n_cpu_moe": "Experts on the CPU",
}
TIPS = {
    "n_gpu_layers": "Layers on the GPUs (the output layer counts as one): more is faster, and "
                    "takes GPU memory.",
    "n_ctx": "How many tokens the model keeps in mind; the KV cache grows with it.",
    "n_batch": "Prompt tokens handed to llama.cpp at once.",
    "n_ubatch": "Tokens computed at once; the compute buffers grow with it.",
    "n_threads": "CPU threads while generating.",
    "n_threads_batch": "CPU threads while reading the prompt.",
    "flash_attn": "Smaller compute buffers; needed for a quantized V cache.",
    "cache_type_k": "q8_0 halves the K cache at a small cost in quality.",
    "cache_type_v": "q8_0 halves the V cache; needs flash attention.",
    "mmap": "Read the weights from the file as needed instead of copying them into RAM.",
    "mlock": "Keep the weights in RAM so the system never swaps them out.",
    "tensor_split": "Which GPUs hold layers, and in what proportion.",
    "n_cpu_moe": "The expert tensors of the first N layers stay in system RAM.",
}
MAX_BATCH = 16384


class _Field:
    """One setting's row: a control, whether it is automatic or pinned, and its reset button.

    ``on_pin(value)`` runs when the user changes the control; the panel sets values through
    :meth:`show` with the control's signals blocked, so only the user's changes pin.
    """

    def __init__(self, name: str, control: QWidget, on_pin: Callable[[Any], None],
                 on_reset: Callable[[], None]) -> None:
        self.name = name
        self.control = control
        self.on_pin = on_pin
        self.label = plain_label(LABELS[name], wrap=False, selectable=False)
        self.label.setToolTip(TIPS[name])
        self.state = plain_label(wrap=False, selectable=False)
        self.reset = QToolButton()
        self.reset.setText("↺")
        self.reset.setToolTip("Reset to automatic")
        self.reset.setAccessibleName(f"Reset {LABELS[name]} to automatic")
        self.reset.clicked.connect(lambda _checked=False: on_reset())
        control.setAccessibleName(LABELS[name])
        control.setToolTip(TIPS[name])

    def widgets(self) -> list[QWidget]:
        return [self.label, self.control, self.state, self.reset]

    def show(self, state: FieldState, blamed: bool) -> None:
        self.control.blockSignals(True)
        try:
            self.set_value(state.value)
        finally:
            self.control.blockSignals(False)
        self.state.setText("pinned" if state.pinned else "automatic")
        font = self.state.font()
        font.setBold(state.pinned)
        self.state.setFont(font)
        self.reset.setEnabled(state.pinned)
        red = text_color(self.label.palette(), RED) if blamed else None
        set_text_color(self.label, red)
        set_text_color(self.state, red)
        if blamed:
            self.state.setText("pinned: does not fit")

    def set_value(self, value: Any) -> None:
        raise NotImplementedError


class _SpinField(_Field):
    def __init__(self, name: str, lo: int, hi: int, step: int, on_pin: Callable[[Any], None],
                 on_reset: Callable[[], None]) -> None:
        self.spin = QSpinBox()
        self.spin.setRange(lo, hi)
        self.spin.setSingleStep(step)
        # Typing "8192" must not pin 8, 81 and 819 on the way: pin when the edit is done.
        self.spin.setKeyboardTracking(False)
        super().__init__(name, self.spin, on_pin, on_reset)
        self.spin.valueChanged.connect(lambda v: self.on_pin(int(v)))

    def set_value(self, value: Any) -> None:
        if int(value) > self.spin.maximum():
            self.spin.setMaximum(int(value))
        self.spin.setValue(int(value))


class _SliderField(_Field):
    def __init__(self, name: str, top: int, on_pin: Callable[[Any], None],
                 on_reset: Callable[[], None]) -> None:
        box = QWidget()
        row = QHBoxLayout(box)
        row.setContentsMargins(0, 0, 0, 0)
        self.slider = QSlider(Qt.Orientation.Horizontal)
        self.slider.setRange(0, top)
        self.slider.setPageStep(max(1, top // 8))
        self.top = top
        self.value_label = plain_label(wrap=False, selectable=False)
        self.value_label.setMinimumWidth(self.value_label.fontMetrics().horizontalAdvance(
            f"{top} of {top}") + 4)
        row.addWidget(self.slider, 1)
        row.addWidget(self.value_label)
        super().__init__(name, box, on_pin, on_reset)
        self.slider.setAccessibleName(LABELS[name])
        self.slider.valueChanged.connect(self._moved)

    def _moved(self, v: int) -> None:
        self.value_label.setText(f"{v} of {self.top}")
        self.on_pin(int(v))

    def show(self, state: FieldState, blamed: bool) -> None:
        self.slider.blockSignals(True)
        try:
            super().show(state, blamed)
        finally:
            self.slider.blockSignals(False)

    def set_value(self, value: Any) -> None:
        v = min(max(int(value), 0), self.top)
        self.slider.setValue(v)
        self.value_label.setText(f"{v} of {self.top}")


class _ComboField(_Field):
    def __init__(self, name: str, choices: Sequence[str], on_pin: Callable[[Any], None],
                 on_reset: Callable[[], None]) -> None:
        self.combo = QComboBox()
        self.combo.addItems(list(choices))
        super().__init__(name, self.combo, on_pin, on_reset)
        self.combo.currentTextChanged.connect(lambda t: self.on_pin(str(t)))

    def set_value(self, value: Any) -> None:
        if self.combo.findText(str(value)) < 0:
            self.combo.addItem(str(value))
        self.combo.setCurrentText(str(value))


class _CheckField(_Field):
    def __init__(self, name: str, on_pin: Callable[[Any], None],
                 on_reset: Callable[[], None]) -> None:
        self.check = QCheckBox()
        super().__init__(name, self.check, on_pin, on_reset)
        self.check.toggled.connect(lambda on: self.on_pin(bool(on)))

    def set_value(self, value: Any) -> None:
        self.check.setChecked(bool(value))


class _SplitField(_Field):
    """A check box per GPU (use it or not) and its share of the layers."""

    def __init__(self, name: str, gpus: Sequence[str], on_pin: Callable[[Any], None],
                 on_reset: Callable[[], None]) -> None:
        box = QWidget()
        col = QVBoxLayout(box)
        col.setContentsMargins(0, 0, 0, 0)
        col.setSpacing(2)
        self.checks: list[QCheckBox] = []
        self.shares: list[QDoubleSpinBox] = []
        for i, gpu in enumerate(gpus):
            row = QHBoxLayout()
            check = QCheckBox(f"GPU {i}: {gpu}")  # a hardware name, shown as plain text
            share = QDoubleSpinBox()
            share.setRange(0.0, 1000.0)
            share.setDecimals(1)
            share.setKeyboardTracking(False)
            share.setAccessibleName(f"Share of GPU {i}")
            check.setAccessibleName(f"Use GPU {i}")
            row.addWidget(check, 1)
            row.addWidget(share)
            col.addLayout(row)
            self.checks.append(check)
            self.shares.append(share)
            check.toggled.connect(lambda on, i=i: self._toggled(i, on))
            share.valueChanged.connect(lambda _v: self._changed())
        super().__init__(name, box, on_pin, on_reset)

    def _split(self) -> tuple[float, ...]:
        return tuple(s.value() if c.isChecked() else 0.0
                     for c, s in zip(self.checks, self.shares, strict=True))

    def _toggled(self, i: int, on: bool) -> None:
        if not on and not any(c.isChecked() for c in self.checks):
            # At least one GPU: no GPU at all is "GPU layers: 0".
            self._quiet(lambda: self.checks[i].setChecked(True))
            return
        if on and self.shares[i].value() == 0:
            self._quiet(lambda: self.shares[i].setValue(1.0))
        self._changed()

    def _changed(self) -> None:
        split = self._split()
        if sum(split) > 0:
            self.on_pin(split)

    def _quiet(self, fn: Callable[[], None]) -> None:
        for w in (*self.checks, *self.shares):
            w.blockSignals(True)
        try:
            fn()
        finally:
            for w in (*self.checks, *self.shares):
                w.blockSignals(False)

    def set_value(self, value: Any) -> None:
        values = list(value or ())
        values += [1.0] * (len(self.shares) - len(values))
        any_used = any(v > 0 for v in values)

        def apply() -> None:
            for c, s, v in zip(self.checks, self.shares, values, strict=False):
                c.setChecked(v > 0 or not any_used)
                s.setValue(float(v))

        self._quiet(apply)


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
        self._fields: dict[str, _Field] = {}
        self._bars: list[MemoryBar] = []

        self.title = heading_label("Offload settings", wrap=True)  # a long file name wraps
        self.status = plain_label("Choose a model to see how it will be loaded.", muted=True)
        self.status.setAccessibleName("Offload status")

        self.settings_box = QGroupBox("Settings")
        self.grid = QGridLayout(self.settings_box)
        self.grid.setColumnStretch(1, 1)
        self.reset_all_btn = QPushButton("Reset all to automatic")
        self.reset_all_btn.clicked.connect(self.reset_all)
        self.apply_btn = QPushButton("Apply and reload")
        self.apply_btn.setAccessibleName("Apply and reload")
        self.apply_btn.setDefault(True)
        self.apply_btn.clicked.connect(self.apply)

        self.bars_box = QVBoxLayout()
        self.bars_box.setSpacing(6)
        self.not_fit = plain_label()
        set_text_color(self.not_fit, text_color(self.not_fit.palette(), RED))
        self.not_fit.hide()
        self.reasons = plain_label()
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
        why = self.why_box = QGroupBox("Why these settings")
        why_col = QVBoxLayout(why)
        why_col.addWidget(self.reasons)

        left = QVBoxLayout()
        left.addWidget(self.settings_box)
        buttons = QHBoxLayout()
        buttons.addWidget(self.reset_all_btn)
        buttons.addStretch(1)
        buttons.addWidget(self.apply_btn)
        left.addLayout(buttons)
        left.addStretch(1)
        right = QVBoxLayout()
        right.addWidget(memory)
        right.addWidget(why)
        right.addStretch(1)

        body = QWidget()
        cols = QHBoxLayout(body)
        cols.setContentsMargins(0, 0, 0, 0)
        cols.addLayout(left, 5)
        cols.addLayout(right, 6)
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
        model, cpu = ctx.model, ctx.hardware.cpu
        train = model.n_ctx_train or 4096
        threads = max(1, cpu.logical_cores or cpu.physical_cores or 1)
        for row, name in enumerate(ctx.fields):
            def pin(value: Any, name: str = name) -> None:
                self.set_pin(name, value)

            def reset(name: str = name) -> None:
                self.reset_field(name)

            f: _Field
            if name == "n_gpu_layers":
                f = _SliderField(name, model.n_layer + 1, pin, reset)
            elif name == "n_ctx":
                f = _SpinField(name, 256, max(train, 4096) * 4, 1024, pin, reset)
            elif name in ("n_batch", "n_ubatch"):
                f = _SpinField(name, 32, MAX_BATCH, 128, pin, reset)
            elif name in ("n_threads", "n_threads_batch"):
                f = _SpinField(name, 1, threads, 1, pin, reset)
            elif name == "n_cpu_moe":
                f = _SpinField(name, 0, model.n_layer, 1, pin, reset)
            elif name == "flash_attn":
                f = _ComboField(name, FLASH_ATTN, pin, reset)
            elif name in ("cache_type_k", "cache_type_v"):
                f = _ComboField(name, CACHE_TYPES, pin, reset)
            elif name == "tensor_split":
                f = _SplitField(name, ctx.gpu_names, pin, reset)
            else:
                f = _CheckField(name, pin, reset)
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
    def field(self, name: str) -> _Field | None:
        return self._fields.get(name)

    @property
    def bars(self) -> list[MemoryBar]:
        return list(self._bars)

