"""The rows of the offload panel (app/ui/offload_panel.py): one per load setting, each a control
of the setting's kind (a slider for GPU layers, a spin box, a choice, a check box, the GPUs'
split), whether the planner chose the value or the user pinned it, and a reset button.

A row only shows a value and reports the user's changes; the panel plans with them. The panel
sets values with the control's signals blocked, so only the user's changes pin.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDoubleSpinBox,
    QHBoxLayout,
    QSlider,
    QSpinBox,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from app.loading.tuning import CACHE_TYPES, FLASH_ATTN, FieldState, TuningContext
from app.ui.common import plain_label
from app.ui.lang import tr
from app.ui.style.components import icon_button, set_tone, set_type
from app.ui.style.tokens import SPACING


def labels() -> dict[str, str]:
    """Each setting's name, in the window's language."""
    return {
        "n_gpu_layers": tr("GPU layers"),
        "n_ctx": tr("Context (tokens)"),
        "n_batch": tr("Batch"),
        "n_ubatch": tr("Micro-batch"),
        "n_threads": tr("Threads (generation)"),
        "n_threads_batch": tr("Threads (prompt)"),
        "flash_attn": tr("Flash attention"),
        "cache_type_k": tr("KV cache type, K"),
        "cache_type_v": tr("KV cache type, V"),
        "mmap": tr("Memory-map the file"),
        "mlock": tr("Lock in RAM"),
        "tensor_split": tr("GPUs and split"),
        "n_cpu_moe": tr("Experts on the CPU"),
    }


def tips() -> dict[str, str]:
    """What each setting does, for its tooltip."""
    return {
        "n_gpu_layers": tr("Layers on the GPUs (the output layer counts as one): more is faster, "
                           "and takes GPU memory."),
        "n_ctx": tr("How many tokens the model keeps in mind; the KV cache grows with it."),
        "n_batch": tr("Prompt tokens handed to llama.cpp at once."),
        "n_ubatch": tr("Tokens computed at once; the compute buffers grow with it."),
        "n_threads": tr("CPU threads while generating."),
        "n_threads_batch": tr("CPU threads while reading the prompt."),
        "flash_attn": tr("Smaller compute buffers; needed for a quantized V cache."),
        "cache_type_k": tr("q8_0 halves the K cache at a small cost in quality."),
        "cache_type_v": tr("q8_0 halves the V cache; needs flash attention."),
        "mmap": tr("Read the weights from the file as needed instead of copying them into RAM."),
        "mlock": tr("Keep the weights in RAM so the system never swaps them out."),
        "tensor_split": tr("Which GPUs hold layers, and in what proportion."),
        "n_cpu_moe": tr("The expert tensors of the first N layers stay in system RAM."),
    }


MAX_BATCH = 16384


class Field:
    """One setting's row: a control, whether it is automatic or pinned, and its reset button.

    ``on_pin(value)`` runs when the user changes the control; the panel sets values through
    :meth:`show` with the control's signals blocked, so only the user's changes pin.
    """

    def __init__(self, name: str, control: QWidget, on_pin: Callable[[Any], None],
                 on_reset: Callable[[], None]) -> None:
        self.name = name
        self.control = control
        self.on_pin = on_pin
        title, tip = labels()[name], tips()[name]
        self.label = plain_label(title, wrap=False, selectable=False)
        self.label.setToolTip(tip)
        self.state = plain_label(wrap=False, selectable=False)
        set_type(self.state, "small")
        # As wide as its longest words from the start: the columns do not jump when a pinned
        # setting stops fitting.
        self.state.setMinimumWidth(self.state.fontMetrics().horizontalAdvance(
            tr("pinned: does not fit")) + SPACING.xs)
        self.reset: QToolButton = icon_button(
            "retry", tr("Reset {setting} to automatic").format(setting=title))
        self.reset.setToolTip(tr("Reset to automatic"))
        self.reset.clicked.connect(lambda _checked=False: on_reset())
        control.setAccessibleName(title)
        control.setToolTip(tip)

    def widgets(self) -> list[QWidget]:
        """The row's widgets, one per grid column: label, control, state, reset."""
        return [self.label, self.control, self.state, self.reset]

    def show(self, state: FieldState, blamed: bool) -> None:
        """Show the plan's value and whether it is pinned; ``blamed``: in the danger tone, it
        does not fit (the words say so too)."""
        self.control.blockSignals(True)
        try:
            self.set_value(state.value)
        finally:
            self.control.blockSignals(False)
        if blamed:
            self.state.setText(tr("pinned: does not fit"))
        else:
            self.state.setText(tr("pinned") if state.pinned else
                               tr("measured") if state.measured else tr("automatic"))
        self.state.setToolTip(tr("The fastest for this model on this computer, measured at its "
                                 "first load") if state.measured and not state.pinned else "")
        self.reset.setEnabled(state.pinned)
        set_tone(self.label, "danger" if blamed else "")
        set_tone(self.state, "danger" if blamed else "info" if state.pinned else "muted")

    def set_value(self, value: Any) -> None:
        """Put ``value`` in the control (its signals are blocked by :meth:`show`)."""
        raise NotImplementedError


class SpinField(Field):
    """A number in a range (context, batch sizes, threads, experts on the CPU)."""

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


class SliderField(Field):
    """A slider from 0 to ``top`` with "n of top" beside it (GPU layers)."""

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
            self._of(top)) + 4)
        row.addWidget(self.slider, 1)
        row.addWidget(self.value_label)
        super().__init__(name, box, on_pin, on_reset)
        self.slider.setAccessibleName(labels()[name])
        self.slider.valueChanged.connect(self._moved)

    def _of(self, v: int) -> str:
        return tr("{value} of {top}").format(value=v, top=self.top)

    def _moved(self, v: int) -> None:
        self.value_label.setText(self._of(v))
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
        self.value_label.setText(self._of(v))


class ComboField(Field):
    """One of a few named choices (flash attention, the KV cache types). Each item shows its
    words and carries llama.cpp's value as its data: "on" is a word to translate, "q8_0" a
    value shown as is."""

    def __init__(self, name: str, choices: Sequence[str], on_pin: Callable[[Any], None],
                 on_reset: Callable[[], None]) -> None:
        self.combo = QComboBox()
        words = choice_words()
        for value in choices:
            self.combo.addItem(words.get(value, value), value)
        super().__init__(name, self.combo, on_pin, on_reset)
        self.combo.currentIndexChanged.connect(
            lambda i: self.on_pin(str(self.combo.itemData(i))))

    def set_value(self, value: Any) -> None:
        index = self.combo.findData(str(value))
        if index < 0:
            self.combo.addItem(str(value), str(value))
            index = self.combo.count() - 1
        self.combo.setCurrentIndex(index)


def choice_words() -> dict[str, str]:
    """The words of the choices that are words (flash attention's); other values show as is."""
    return {"on": tr("on"), "off": tr("off"), "auto": tr("auto")}


class CheckField(Field):
    """On or off (mmap, mlock)."""

    def __init__(self, name: str, on_pin: Callable[[Any], None],
                 on_reset: Callable[[], None]) -> None:
        self.check = QCheckBox()
        super().__init__(name, self.check, on_pin, on_reset)
        self.check.toggled.connect(lambda on: self.on_pin(bool(on)))

    def set_value(self, value: Any) -> None:
        self.check.setChecked(bool(value))


class SplitField(Field):
    """A check box per GPU (use it or not) and its share of the layers."""

    def __init__(self, name: str, gpus: Sequence[str], on_pin: Callable[[Any], None],
                 on_reset: Callable[[], None]) -> None:
        box = QWidget()
        col = QVBoxLayout(box)
        col.setContentsMargins(0, 0, 0, 0)
        col.setSpacing(SPACING.xxs)
        self.checks: list[QCheckBox] = []
        self.shares: list[QDoubleSpinBox] = []
        for i, gpu in enumerate(gpus):
            row = QHBoxLayout()
            # A hardware name, shown as plain text.
            check = QCheckBox(tr("GPU {index}: {name}").format(index=i, name=gpu))
            share = QDoubleSpinBox()
            share.setRange(0.0, 1000.0)
            share.setDecimals(1)
            share.setKeyboardTracking(False)
            share.setAccessibleName(tr("Share of GPU {index}").format(index=i))
            check.setAccessibleName(tr("Use GPU {index}").format(index=i))
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


def make_field(name: str, ctx: TuningContext, on_pin: Callable[[Any], None],
               on_reset: Callable[[], None]) -> Field:
    """The row for setting ``name`` of the model and machine in ``ctx``, its control's range
    from them (the model's layers, its training context, this computer's threads and GPUs)."""
    model, cpu = ctx.model, ctx.hardware.cpu
    train = model.n_ctx_train or 4096
    threads = max(1, cpu.logical_cores or cpu.physical_cores or 1)
    if name == "n_gpu_layers":
        return SliderField(name, model.n_layer + 1, on_pin, on_reset)
    if name == "n_ctx":
        return SpinField(name, 256, max(train, 4096) * 4, 1024, on_pin, on_reset)
    if name in ("n_batch", "n_ubatch"):
        return SpinField(name, 32, MAX_BATCH, 128, on_pin, on_reset)
    if name in ("n_threads", "n_threads_batch"):
        return SpinField(name, 1, threads, 1, on_pin, on_reset)
    if name == "n_cpu_moe":
        return SpinField(name, 0, model.n_layer, 1, on_pin, on_reset)
    if name == "flash_attn":
        return ComboField(name, FLASH_ATTN, on_pin, on_reset)
    if name in ("cache_type_k", "cache_type_v"):
        return ComboField(name, CACHE_TYPES, on_pin, on_reset)
    if name == "tensor_split":
        return SplitField(name, ctx.gpu_names, on_pin, on_reset)
    return CheckField(name, on_pin, on_reset)
