"""A screenshot of Settings → Other computers: two workers (one answered the check, one did not)
and this computer lent through a real ``hearth-runner rpc-worker``.

    .venv/bin/python -m tests.gui.screenshot_workers [OUTDIR]   # default: docs/

Writes settings-workers.png. Needs the portable CPU runtime (installers/build_runtime.py cpu).
"""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
os.environ.setdefault("HEARTH_HOME", tempfile.mkdtemp(prefix="hearth-shot-"))

ROOT = Path(__file__).resolve().parents[2]


def main(out: Path) -> int:
    from PySide6.QtCore import QEventLoop, QTimer
    from PySide6.QtWidgets import QApplication

    from app.loading.workers import WorkerCheck, worker_program
    from app.planner.types import WorkerDevice
    from app.runtimes.select import RuntimeSelection
    from app.services.tasks import TaskRunner
    from app.services.workers import WorkersService
    from app.ui.theme import ThemeController
    from app.ui.workers_box import WorkersBox

    app = QApplication.instance() or QApplication([])
    assert isinstance(app, QApplication)
    ThemeController(app).apply("light")
    runtime = RuntimeSelection()  # as the app composes it: lends with the chosen runtime
    svc = WorkersService(TaskRunner(name="shot"),
                         program=lambda: worker_program(runtime.program()),
                         load=lambda: ["192.168.1.20:50052", "192.168.1.21:50052"],
                         save=lambda _e: None)
    box = WorkersBox(svc)
    box.resize(640, 440)
    box.show()
    # What a check of two real machines looks like (one lends a 12 GiB GPU, one is off).
    svc.checked.emit(WorkerCheck(
        (WorkerDevice("192.168.1.20:50052", 0, 11_200_000_000, 12_884_901_888),),
        (("192.168.1.21:50052", "the worker at 192.168.1.21:50052 cannot be reached "
          "(Connection refused): start it with 'hearth-runner rpc-worker' on that machine"),)))
    loop = QEventLoop()
    svc.lending_changed.connect(lambda _e: loop.quit())
    box.lend.setChecked(True)  # lends this computer for real, on loopback
    QTimer.singleShot(30_000, loop.quit)
    loop.exec()
    for _ in range(5):
        app.processEvents()
    out.mkdir(parents=True, exist_ok=True)
    path = out / "settings-workers.png"
    ok = box.grab().save(str(path))
    svc.stop_lending()
    print(path if ok else f"could not write {path}")
    return 0 if ok and svc.lent == "" else 1


if __name__ == "__main__":
    sys.exit(main(Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / "docs"))
