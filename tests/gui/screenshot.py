"""Make the README's screenshots from the real window: load a generated model through the real
runner (planned first), send a message, wait for the streamed reply, grab the window; then with
the plan's reasons unfolded (load-plan.png), then the Hardware tab.

    .venv/bin/python -m tests.gui.screenshot [OUT.png]
"""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
os.environ.setdefault("HEARTH_HOME", tempfile.mkdtemp(prefix="hearth-shot-"))

DEFAULT_OUT = Path(__file__).resolve().parents[2] / "resources" / "screenshots" / "main-window.png"


def main(out: Path = DEFAULT_OUT) -> int:
    from PySide6.QtCore import QEventLoop, QObject, QTimer
    from PySide6.QtWidgets import QApplication

    from app.__main__ import compose
    from tests.fixtures.models import TINY, model_path

    app = QApplication.instance() or QApplication([])
    parent = QObject()
    gui = compose(parent, chat_params={"max_tokens": 60, "seed": 3})
    window, runner = gui.window, gui.runner
    window.resize(900, 600)
    window.show()

    def wait_for(signal: object, ms: int = 30_000) -> None:
        loop = QEventLoop()
        signal.connect(loop.quit)  # type: ignore[attr-defined]
        QTimer.singleShot(ms, loop.quit)
        loop.exec()

    window.choose_model(str(model_path(TINY)))
    window.load_selected()
    wait_for(runner.ready)
    window.input.setPlainText("Hello! What can you tell me about running models locally?")
    window.send()
    wait_for(gui.session.reply_finished)
    window.input.setPlainText("And a second question, typed while you read this…")
    app.processEvents()
    out.parent.mkdir(parents=True, exist_ok=True)
    ok = window.grab().save(str(out))
    window.why_btn.setChecked(True)  # the plan's reasons, unfolded
    app.processEvents()
    ok = window.grab().save(str(out.with_name("load-plan.png"))) and ok
    window.why_btn.setChecked(False)
    app.processEvents()
    panel = gui.window.hardware_panel  # the Hardware tab, detected off the GUI thread
    window.tabs.setCurrentWidget(panel)
    wait_for(panel.report_ready, 10_000)  # the machine, as detected
    wait_for(panel.report_ready, 30_000)  # then merged with what the app's runner can use
    app.processEvents()
    ok = window.grab().save(str(out.with_name("hardware.png"))) and ok
    window.close()
    gui.close()
    print(out if ok else "could not save the screenshot")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(Path(sys.argv[1]) if len(sys.argv) > 1 else DEFAULT_OUT))
