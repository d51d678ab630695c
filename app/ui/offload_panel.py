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
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QFrame,
    QGridLayout,
    QHBoxLayout,
    QPushButton,
    QScrollArea,
    QToolButton,
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
from app.ui.common import plain_label
from app.ui.lang import tr, ui_text
from app.ui.memory_bar import DeviceIcon, MemoryBar, MemoryLegend
from app.ui.offload_fields import Field, make_field
from app.ui.style.components import (
    Banner,
    Card,
    chip,
    heading,
    primary_button,
    repolish,
    section_header,
    set_tone,
    set_type,
)
from app.ui.style.icons import icon
from app.ui.style.tokens import SPACING


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

        self.title = heading(tr("Offload settings"), "heading")
        self.title.setWordWrap(True)  # a long file name wraps
        self.verdict = chip("")
        self.verdict.hide()
        self.status = plain_label(tr("Choose a model to see how it will be loaded."))
        set_type(self.status, "small")
        set_tone(self.status, "muted")
        self.status.setAccessibleName(tr("Offload status"))
        top = QHBoxLayout()
        top.setSpacing(SPACING.md)
        top.addWidget(DeviceIcon("offload", 20, "accent"), 0, Qt.AlignmentFlag.AlignVCenter)
        top.addWidget(self.title, 1)
        top.addWidget(self.verdict, 0, Qt.AlignmentFlag.AlignVCenter)

        body = QWidget()
        cols = QHBoxLayout(body)
        cols.setContentsMargins(0, 0, SPACING.xs, 0)
        cols.setSpacing(SPACING.lg)
        cols.addLayout(self._settings_column(), 5)
        cols.addLayout(self._memory_column(), 6)
        scroll = self.body_scroll = _FittingScroll()
        scroll.setWidgetResizable(True)
        scroll.setFrameShape(QFrame.Shape.NoFrame)
        # The columns wrap their text to the width they get rather than scroll sideways; the
        # scroll area is at least as wide as what cannot wrap, so nothing is cut.
        scroll.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        scroll.setWidget(body)

        # The actions stay under the scrolling columns: visible on a 720-pixel screen however
        # long the settings and reasons are.
        self.reset_all_btn = QPushButton(icon("retry"), tr("Reset all to automatic"))
        self.reset_all_btn.setAccessibleName(tr("Reset all to automatic"))
        self.reset_all_btn.setProperty("flat", True)
        self.reset_all_btn.clicked.connect(self.reset_all)
        self.close_box = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        self.close_box.rejected.connect(self._close_window)
        self.apply_btn = primary_button(tr("Apply and reload"), icon_name="load")
        self.apply_btn.setDefault(True)
        self.apply_btn.clicked.connect(self.apply)
        footer = QHBoxLayout()
        footer.setSpacing(SPACING.md)
        footer.addWidget(self.reset_all_btn)
        footer.addStretch(1)
        footer.addWidget(self.close_box)
        footer.addWidget(self.apply_btn)

        outer = QVBoxLayout(self)
        outer.setContentsMargins(SPACING.xs, SPACING.xs, SPACING.xs, SPACING.xs)
        outer.setSpacing(SPACING.md)
        outer.addLayout(top)
        outer.addWidget(self.status)
        outer.addWidget(scroll, 1)
        outer.addLayout(footer)
        self._set_enabled(False)
        self.setTabOrder(self.apply_btn, self.close_box)

        tuning.opened.connect(self._on_opened)
        tuning.failed.connect(self._on_failed)
        tuning.saved.connect(self._on_saved)

    def _settings_column(self) -> QVBoxLayout:
        """The settings' card: a grid of rows, filled when a model is open."""
        self.settings_box = Card(spacing=SPACING.md)
        self.settings_box.body.addWidget(section_header(tr("Settings")))
        self.grid = QGridLayout()
        self.grid.setHorizontalSpacing(SPACING.md)
        self.grid.setVerticalSpacing(SPACING.sm)
        self.grid.setColumnStretch(1, 1)
        self.settings_box.body.addLayout(self.grid)
        left = QVBoxLayout()
        left.addWidget(self.settings_box)
        left.addStretch(1)
        return left

    def _memory_column(self) -> QVBoxLayout:
        """The plan's summary, why it does not fit, a bar per device with their legend, and
        the planner's other reasons behind "Why these numbers?"."""
        memory = Card(spacing=SPACING.md)
        memory.body.addWidget(section_header(tr("Memory, predicted before loading")))
        self.summary = plain_label()
        set_type(self.summary, "subheading")
        self.not_fit_banner = Banner(closable=False)
        # The banner's sentence: the planner's reason, kept whole.
        self.not_fit = self.not_fit_banner.text
        self.bars_box = QVBoxLayout()
        self.bars_box.setSpacing(SPACING.md)
        self.legend = MemoryLegend()
        memory.body.addWidget(self.summary)
        memory.body.addWidget(self.not_fit_banner)
        memory.body.addLayout(self.bars_box)
        memory.body.addWidget(self.legend)

        self.why_box = Card(spacing=SPACING.sm)
        self.why_toggle = QToolButton()
        self.why_toggle.setText(tr("Why these numbers?"))
        self.why_toggle.setAccessibleName(tr("Why these numbers?"))
        self.why_toggle.setToolTip(tr("Show or hide the planner's reasons"))
        self.why_toggle.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextBesideIcon)
        self.why_toggle.setIcon(icon("expand", "muted"))
        self.why_toggle.setCheckable(True)
        self.why_toggle.setChecked(True)  # the reasons are the best part: open at first
        self.why_toggle.setProperty("iconButton", True)
        self.why_toggle.setCursor(Qt.CursorShape.PointingHandCursor)
        self.reasons = plain_label()
        self.why_toggle.toggled.connect(self._show_reasons)
        self.why_box.body.addWidget(self.why_toggle, 0, Qt.AlignmentFlag.AlignLeft)
        self.why_box.body.addWidget(self.reasons)
        right = QVBoxLayout()
        right.setSpacing(SPACING.lg)
        right.addWidget(memory)
        right.addWidget(self.why_box)
        right.addStretch(1)
        return right

    def _show_reasons(self, on: bool) -> None:
        self.reasons.setVisible(on)
        self.why_toggle.setIcon(icon("expand" if on else "next", "muted"))

    # ---- public ------------------------------------------------------------------------------

    def open_model(self, path: str) -> None:
        """Show ``path``'s settings (read in the background; the panel waits disabled)."""
        self._path = path
        if self.ctx is None or self.ctx.path != path:
            self._measured = {}
        self.title.setText(tr("Offload settings: {name}").format(name=Path(path).name))
        self._say(tr("Reading the model and this computer's memory…"))
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
        if why is None:
            self.not_fit_banner.hide()
        else:
            self.not_fit_banner.show_message(ui_text(why), "danger")
        self.verdict.setText(tr("Fits") if plan.fits else tr("Does not fit"))
        self.verdict.setAccessibleName(self.verdict.text())
        self.verdict.setProperty("chip", "success" if plan.fits else "danger")
        repolish(self.verdict)
        self.verdict.show()
        self.summary.setText(tr("{summary}.").format(summary=ui_text(summary(plan)))
                             if plan.fits else tr("These settings do not fit:"))
        set_tone(self.summary, "" if plan.fits else "danger")
        # The reason it does not fit is in the banner above; the others stay here, each whole.
        others = [tr("• {reason}").format(reason=ui_text(t))
                  for t in plan.reason_texts() if t and t != why]
        self.reasons.setText("\n".join(others))
        self.why_box.setVisible(bool(others))
        self.apply_btn.setEnabled(plan.fits)
        self.apply_btn.setToolTip("" if plan.fits else tr(
            "These settings do not fit; change the ones marked \u201cdoes not fit\u201d first."))
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
        self._say(tr("Every setting starts at the planner's choice; change one to pin it. Apply "
                     "saves them for this model on this computer and reloads."))
        self.recompute()
        self._fit_window()

    def _fit_window(self) -> None:
        """Make the window at least as wide as the columns need now, at once: the fields and
        bars just built widened them, and a window left narrower until the next event-loop
        passes would cut them meanwhile."""
        self.body_scroll.updateGeometry()
        self.updateGeometry()
        for widget in (self, self.window()):
            layout = widget.layout()
            if layout is not None:
                layout.invalidate()
                layout.activate()

    def _on_failed(self, message: str) -> None:
        self._say(ui_text(message), error=True)

    def _say(self, text: str, *, error: bool = False) -> None:
        self.status.setText(text)
        set_tone(self.status, "danger" if error else "muted")

    def _on_saved(self, path: str) -> None:
        if self.ctx is not None and path == self.ctx.path:
            # Apply asked the window to reload with them (apply_requested): say so, not "later".
            self._say(tr("Saved for this model on this computer; it loads with these settings "
                         "now."))

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
                w.show()  # now, not by Qt's queued call: the window fits them at once
            self._fields[name] = f

    def _show_bars(self, plan: LaunchPlan) -> None:
        bars = self.ctx.bars(plan, self.pins) if self.ctx is not None else device_bars(plan)
        while len(self._bars) < len(bars):
            added = MemoryBar()
            self.bars_box.addWidget(added)
            added.show()  # now, not by Qt's queued call: the window fits it at once
            self._bars.append(added)
        while len(self._bars) > len(bars):
            old = self._bars.pop()
            self.bars_box.removeWidget(old)
            old.deleteLater()
        gpus = any(b.kind == "gpu" for b in bars)
        for widget, bar in zip(self._bars, bars, strict=True):
            widget.set_bar(bar, self._measured.get(bar.llama_name), gpus=gpus)
        self.legend.show_kinds({s.kind for b in bars for s in b.segments if s.bytes},
                               measured=any(b.llama_name in self._measured for b in bars))

    # For tests and the screenshot script: the row of one setting.
    def field(self, name: str) -> Field | None:
        return self._fields.get(name)

    @property
    def bars(self) -> list[MemoryBar]:
        return list(self._bars)

