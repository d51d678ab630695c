"""The offload panel's prediction against what the real runner measured: a generated model opened
in the panel (the real tuning service, this machine's hardware and runner build), started with the
flags of the plan the panel shows, and the runner's ``/runner/status`` memory put beside it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("llama_cpp")

from app.loading.flags import plan_flags
from app.planner.types import Pins
from tests.fixtures.models import ModelSpec, model_path
from tests.integration.conftest import StartRunner

# Big enough that llama.cpp's buffers dwarf its rounding (weights of tens of MiB, a KV cache and
# compute buffers of MiB), small enough to build and load in seconds.
SHAPE = ModelSpec(n_layer=4, n_embd=512, n_head=8, n_head_kv=4, n_ff=1408, n_vocab=8000,
                  n_ctx_train=8192, quant="Q8_0", name="hearth-tune-measured")


@pytest.fixture
def panel(qtbot: Any, tmp_path: Path) -> Any:
    from PySide6.QtCore import QObject

    from app.planner.corrections import CorrectionStore
    from app.services.storage import StoreService
    from app.services.tasks import TaskRunner
    from app.services.tuning import TuningService
    from app.storage.db import StoreThread, open_database
    from app.ui.offload_panel import OffloadPanel

    parent = QObject()
    store = StoreService(StoreThread(lambda: open_database(tmp_path / "h.sqlite3")), parent)
    # This machine and the runner this checkout starts, as the app plans; no measurements yet.
    service = TuningService(TaskRunner(parent), store,
                            corrections=CorrectionStore(tmp_path / "c.json"), parent=parent)
    widget = OffloadPanel(service)
    qtbot.addWidget(widget)
    widget.show()
    yield widget
    store.close()


def test_the_prediction_matches_what_the_runner_allocated(panel: Any, qtbot: Any,
                                                         start_runner: StartRunner) -> None:
    path = str(model_path(SHAPE))
    with qtbot.waitSignal(panel.tuning.opened, timeout=120_000):
        panel.open_model(path)
    # Pinned like a user would: a context and micro-batch of our choosing, on the CPU.
    for name, value in (("n_ctx", 4096), ("n_ubatch", 256), ("n_gpu_layers", 0)):
        if panel.field(name) is not None:
            panel.set_pin(name, value)
    plan = panel.plan
    assert plan is not None and plan.fits
    assert panel.pins.n_ctx == 4096 and plan.settings.n_ctx == 4096

    runner = start_runner(*plan_flags(plan, path), model=path)
    with runner.client() as http:
        status = http.get("/runner/status").json()
    assert status["settings"]["ctx_size"] == 4096
    memory = status["memory"]
    panel.show_measured(memory, path=path)
    qtbot.wait(10)

    shown = {b.bar.llama_name: b for b in panel.bars if b.bar is not None}
    checked = 0
    for entry in memory:
        widget = shown.get(entry["device"])
        if widget is None or not (entry["weights"] or entry["kv"] or entry["compute"]):
            continue
        checked += 1
        predicted = {s.kind: s.bytes for s in widget.bar.segments}
        assert widget.measured_label.isVisible()
        assert widget.measured_label.text().startswith("Measured after load:")
        # Weights come from the file: exact but for llama.cpp's alignment padding.
        assert entry["weights"] == pytest.approx(predicted["weights"], rel=0.01)
        # The KV cache is a formula of the shape; the log rounds to 0.01 MiB.
        assert entry["kv"] == pytest.approx(predicted["kv"], rel=0.001, abs=16 << 10)
        total = entry["weights"] + entry["kv"] + entry["compute"]
        want = predicted["weights"] + predicted["kv"] + predicted["compute"]
        assert total == pytest.approx(want, rel=0.02), (entry, predicted)
    assert checked >= 1  # at least the CPU's RAM was measured and compared


def test_the_panel_opens_without_blocking_the_gui_thread(panel: Any, qtbot: Any) -> None:
    path = str(model_path(SHAPE))
    with qtbot.waitSignal(panel.tuning.opened, timeout=120_000):
        panel.open_model(path)
        # Returned before the model was read: reading the header, the hardware and the runner
        # build happens on a worker thread, and arrives through the event loop.
        assert panel.ctx is None and not panel.settings_box.isEnabled()
    assert panel.ctx is not None and panel.ctx.path == path
    assert panel.pins == Pins()
