"""The offload panel's memory bars in a person's first minutes (issue 25, defect 7).

- The header of a bar is the model's share of the device: the same settings on the same machine
  read the same at every open, however much RAM other programs happen to use; what is free now
  is said on its own line.
- A machine without a GPU has no offloaded layers: its RAM bar does not count layers.
- Once a load has measured what llama.cpp really allocated, the bar shows it, even in a panel
  opened after that load (the app makes a new panel each time the dialog opens).

Only the hardware is faked, at its lowest boundary: a recorded machine's report and runner
device list, and psutil's reading of free RAM. The measured marker comes from a real load of a
tiny generated model through the real runner.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from PySide6.QtCore import QObject

from app.planner.corrections import CorrectionStore
from app.planner.types import GiB
from app.services.storage import StoreService
from app.services.tasks import TaskRunner
from app.services.tuning import TuningService
from app.storage.db import StoreThread, open_database
from app.ui.offload_panel import OffloadPanel
from tests.gui.conftest import load
from tests.gui.screenshot_offload import header_model, recorded_machine


class FreeRam:
    """psutil's view of RAM on the recorded machine: its total, and what is available now."""

    def __init__(self, total: int, available: int) -> None:
        self.total = total
        self.available = available
        self.reads = 0

    def virtual_memory(self) -> Any:
        self.reads += 1
        return SimpleNamespace(total=self.total, available=self.available)

    def swap_memory(self) -> Any:
        return SimpleNamespace(total=0, free=0)


@pytest.fixture
def machine(monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    """Make a recorded machine the app's: its report is the hardware service's cached one (as in
    the app, where the tuning service re-reads free RAM at every open), its RAM read by psutil."""
    import psutil

    made: list[tuple[QObject, StoreService, TuningService]] = []

    def make(tmp: Path, report: str = "cpu_only_16gb",
             runner: str = "cpu_only_build") -> tuple[TuningService, FreeRam]:
        hw, find_build = recorded_machine(report, runner)
        ram = FreeRam(hw.memory.total, hw.memory.available)
        monkeypatch.setattr(psutil, "virtual_memory", ram.virtual_memory)
        monkeypatch.setattr(psutil, "swap_memory", ram.swap_memory)
        parent = QObject()
        store = StoreService(StoreThread(lambda: open_database(tmp / "h.sqlite3")), parent)
        service = TuningService(TaskRunner(parent), store, cached_hardware=lambda: hw,
                                find_build=find_build,
                                corrections=CorrectionStore(tmp / "corrections.json"),
                                parent=parent)
        made.append((parent, store, service))  # the QObject tree lives as long as the test
        return service, ram

    yield make
    for _parent, store, service in made:
        service.cancel()
        store.close()


def _open(qtbot: Any, service: TuningService, path: str) -> OffloadPanel:
    """A new panel on ``service`` showing ``path``, as each open of the dialog makes one."""
    panel = OffloadPanel(service)
    qtbot.addWidget(panel)
    panel.resize(1000, 700)
    panel.show()
    with qtbot.waitSignal(service.opened, timeout=60_000):
        panel.open_model(path)
    assert panel.plan is not None and panel.bars
    return panel


def test_the_header_reads_the_same_at_every_open_of_the_same_settings(
        machine: Any, qtbot: Any, tmp_path: Path, tiny_model: str) -> None:
    service, ram = machine(tmp_path)
    seen = []
    for available in (11 * GiB, 3 * GiB):  # a quiet machine; a browser and a game later
        ram.available = available
        reads = ram.reads
        panel = _open(qtbot, service, tiny_model)
        assert ram.reads > reads  # free RAM really was read again at this open
        bar = panel.bars[-1]
        assert panel.plan is not None and bar.bar is not None and bar.bar.kind == "cpu"
        seen.append((panel.plan.settings, bar.bar.need, bar.caption.text(),
                     bar.free_now.text() if hasattr(bar, "free_now") else ""))
        panel.close()
    (settings, need, header, free), (settings2, need2, header2, free2) = seen
    assert settings == settings2 and need == need2  # the same settings, the same need...
    # ...read the same in the header: the model's share, not what other programs use now.
    assert header == header2
    assert "GiB" in header or "MiB" in header
    # What is free now is said apart from it, and does change.
    assert free != free2 and "now" in free and "3.0 GiB" in free2
    # The screen reader hears the header and the free memory apart as well.
    assert header2 in bar.strip.accessibleDescription()
    assert free2 in bar.strip.accessibleDescription()


def test_a_machine_without_a_gpu_counts_no_layers(machine: Any, qtbot: Any, tmp_path: Path,
                                                  tiny_model: str) -> None:
    service, _ram = machine(tmp_path)
    panel = _open(qtbot, service, tiny_model)
    assert panel.plan is not None and panel.plan.fits and not panel.plan.gpus
    assert panel.field("n_gpu_layers") is None  # no GPU, no GPU layers to set
    assert len(panel.bars) == 1
    bar = panel.bars[0]
    assert bar.bar is not None and bar.bar.kind == "cpu"
    assert "layer" not in bar.caption.text(), bar.caption.text()
    assert "layer" not in bar.strip.accessibleDescription()
    assert "layer" not in panel.summary.text().replace("on the CPU", "")


def test_gpu_bars_still_count_the_layers_they_hold(machine: Any, qtbot: Any, tmp_path: Path
                                                   ) -> None:
    service, _ram = machine(tmp_path, "2x3090", "cuda_2x3090")
    panel = _open(qtbot, service, header_model(tmp_path))
    assert panel.plan is not None and panel.plan.fits
    gpus = [b for b in panel.bars if b.bar is not None and b.bar.kind == "gpu"]
    assert len(gpus) == 2
    for widget, planned in zip(gpus, panel.plan.gpus, strict=True):
        assert f"{planned.usage.layers} layers" in widget.caption.text()
    # Ten layers pinned to the GPUs: the rest are in RAM, and its bar says how many.
    panel.set_pin("n_gpu_layers", 10)
    ram = panel.bars[-1]
    assert ram.bar is not None and ram.bar.kind == "cpu"
    assert f"{panel.plan.cpu.usage.layers} layers" in ram.caption.text()


def test_the_measured_marker_appears_in_a_panel_opened_after_the_load(
        make_window: Any, qtbot: Any, tiny_model: str) -> None:
    window = make_window()
    loader = window.gui.loader
    with qtbot.waitSignal(loader.measured, timeout=60_000) as measured:
        load(qtbot, window, tiny_model)
    assert measured.args[0], "the load recorded nothing to show"
    devices = {m.device for m in measured.args[0]}

    # The person opens Offload… after the model is ready: the panel is made now.
    for _ in range(2):  # and again: each open makes a new panel
        before = set(window.findChildren(OffloadPanel))
        window.offload_btn.click()
        panel = next(iter(set(window.findChildren(OffloadPanel)) - before))
        qtbot.waitUntil(lambda p=panel: p.plan is not None, timeout=60_000)

        def shown(p: OffloadPanel = panel) -> bool:
            return any(b.bar is not None and b.bar.llama_name in devices
                       and b.measured_label.isVisible() for b in p.bars)

        qtbot.waitUntil(shown, timeout=30_000)
        bar = next(b for b in panel.bars if b.bar is not None and b.bar.llama_name in devices)
        assert bar.strip.measured is not None
        assert bar.measured_label.text().startswith("Measured after load:")
        # The mark stands where the load ended: after the weights (the loader's measurement
        # has none of its own; they come from the file and are the predicted ones).
        weights = {s.kind: s.bytes for s in bar.bar.segments}["weights"]
        assert bar.strip.marker_bytes() >= weights > 0
        panel.window().close()
