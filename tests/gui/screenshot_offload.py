"""Screenshots of the offload settings panel from the real widget and the real tuning service, on
a recorded machine (two RTX 3090s, the CUDA runner build's recorded device list) and the header
of a real model (Mixtral 8x7B, Q4_K_M; the tensor data is a hole, so nothing is loaded):

- docs/offload-fits.png: the planner's choice, every setting automatic;
- docs/offload-does-not-fit.png: every layer and expert pinned to the first GPU, in red with
  the reason.

    .venv/bin/python -m tests.gui.screenshot_offload [OUTDIR]
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
os.environ.setdefault("HEARTH_HOME", tempfile.mkdtemp(prefix="hearth-shot-"))

ROOT = Path(__file__).resolve().parents[2]
HARDWARE = ROOT / "tests" / "fixtures" / "hardware"
SIZE = (1180, 760)


@dataclass
class Rig:
    """A panel on the real services, for a recorded machine."""

    panel: Any  # OffloadPanel
    service: Any  # TuningService
    store: Any  # StoreService
    parent: Any  # QObject owning the services

    def close(self) -> None:
        self.service.cancel()
        self.store.close()


def recorded_machine(report: str = "2x3090", runner: str | None = "cuda_2x3090") -> Any:
    """(HardwareReport, find_build) of a recorded machine: a fake GPU at the report level."""
    from app.hardware import HardwareReport
    from app.runner_client.build import RunnerBuild, runner_build_from_json

    hw = HardwareReport.from_json(json.loads((HARDWARE / "reports" / f"{report}.json").read_text()))
    program = ["/opt/hearth/hearth-runner"]
    if runner is None:
        build = RunnerBuild.unknown(program, "not asked: a recorded machine")
    else:
        data = json.loads((HARDWARE / "runner" / f"{runner}.json").read_text())
        build = runner_build_from_json(program, data)
    return hw, (lambda _token: build)


def make_rig(folder: Path, report: str = "2x3090", runner: str | None = "cuda_2x3090",
             detect: Any = None) -> Rig:
    """The real TuningService (task runner, SQLite store in ``folder``) and the real panel;
    ``detect(report)`` wraps the recorded report's detection (tests watch its thread)."""
    from PySide6.QtCore import QObject

    from app.planner.corrections import CorrectionStore
    from app.services.storage import StoreService
    from app.services.tasks import TaskRunner
    from app.services.tuning import TuningService
    from app.storage.db import StoreThread, open_database
    from app.ui.offload_panel import OffloadPanel

    hw, find_build = recorded_machine(report, runner)
    parent = QObject()
    tasks = TaskRunner(parent, name="tasks")
    db_path = folder / "hearth.sqlite3"
    store = StoreService(StoreThread(lambda: open_database(db_path)), parent)
    service = TuningService(tasks, store, detect=(lambda: detect(hw)) if detect else lambda: hw,
                            find_build=find_build,
                            corrections=CorrectionStore(folder / "corrections.json"),
                            parent=parent)
    return Rig(OffloadPanel(service), service, store, parent)


def header_model(folder: Path, name: str = "Mixtral-8x7B-Instruct-v0.1") -> str:
    """A header-only GGUF of a real model's shape (sparse: megabytes on disk)."""
    from tests.fixtures.header_only import REAL_SHAPES, write_header_only

    shape = next(s for s in REAL_SHAPES if s.name == name)
    return str(write_header_only(folder / f"{shape.name}-Q4_K_M.gguf", shape))


def open_and_wait(rig: Rig, path: str, timeout_s: float = 30.0) -> None:
    import time

    from PySide6.QtWidgets import QApplication

    rig.panel.open_model(path)
    deadline = time.monotonic() + timeout_s
    while (rig.panel.ctx is None or rig.panel.ctx.path != path) and time.monotonic() < deadline:
        QApplication.processEvents()
        time.sleep(0.005)
    if rig.panel.ctx is None:
        raise RuntimeError(f"the panel did not open {path}: {rig.panel.status.text()}")
    QApplication.processEvents()  # the bars added to the shown panel are shown by a queued call


def main(out: Path) -> int:
    from PySide6.QtWidgets import QApplication

    app = QApplication.instance() or QApplication([])
    out.mkdir(parents=True, exist_ok=True)
    folder = Path(tempfile.mkdtemp(prefix="hearth-offload-shot-"))
    rig = make_rig(folder)
    panel = rig.panel
    panel.resize(*SIZE)
    panel.show()
    open_and_wait(rig, header_model(folder))

    def grab(name: str) -> Path:
        for _ in range(3):
            app.processEvents()
        path = out / name
        if not panel.grab().save(str(path)):
            raise RuntimeError(f"could not save {path}")
        return path

    saved = [grab("offload-fits.png")]
    # Every layer and expert on the first GPU: 26 GB of weights for a 24 GB card.
    panel.set_pin("n_gpu_layers", panel.ctx.model.n_layer + 1)
    panel.set_pin("n_cpu_moe", 0)
    panel.set_pin("tensor_split", (1.0, 0.0))
    assert panel.plan is not None and not panel.plan.fits, "the pinned plan should not fit"
    saved.append(grab("offload-does-not-fit.png"))
    rig.close()
    for path in saved:
        print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main(Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / "docs"))
