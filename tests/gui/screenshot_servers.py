"""Screenshots of Settings → Servers and of the sharing box with a model shared on the network,
from the real widgets on the in-memory fakes with realistic data.

    .venv/bin/python -m tests.gui.screenshot_servers [OUTDIR]   # default: docs/

Writes settings-servers.png and settings-sharing.png.
"""

from __future__ import annotations

import os
import secrets
import sys
import tempfile
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
os.environ.setdefault("HEARTH_HOME", tempfile.mkdtemp(prefix="hearth-shot-"))

ROOT = Path(__file__).resolve().parents[2]


def main(out: Path) -> int:
    from PySide6.QtWidgets import QApplication, QWidget

    from app.library.folders import LibraryFolders
    from app.remote.share import Interface
    from app.services.runner_process import RunnerState
    from app.settings import AppSettings
    from app.ui.settings_dialog import SettingsDialog
    from app.ui.theme import ThemeController
    from tests.gui import model_fakes as mf
    from tests.gui.fakes import FakeRemote, FakeRunner

    app = QApplication.instance() or QApplication([])
    assert isinstance(app, QApplication)
    ThemeController(app).apply("light")
    out.mkdir(parents=True, exist_ok=True)
    saved: list[Path] = []

    def grab(widget: QWidget, name: str) -> None:
        widget.show()
        for _ in range(5):
            app.processEvents()
        path = out / name
        if widget.grab().save(str(path)):
            saved.append(path)

    class Runner(FakeRunner):
        _key = secrets.token_urlsafe(32)

        @property
        def key(self) -> str | None:
            return self._key if self.url else None

    runner = Runner()
    runner.become(RunnerState.READY)
    runner.url, runner.listen_url = "http://127.0.0.1:8765", "http://0.0.0.0:8765"
    remote = FakeRemote()
    office = remote.put("Office PC", "http://192.168.1.40:8765/v1",
                        models=("Qwen3-30B-A3B-Q4_K_M", "gemma-3-12b-it-Q4_K_M"), key="k")
    remote.put("Work cloud", "https://llm.example.com/v1", models=("gpt-oss-120b",), key="k")
    lab = remote.put("Lab server", "https://10.0.0.9:8443/v1")
    remote.notes[office.id] = ("Connected: 2 models (Qwen3-30B-A3B-Q4_K_M, "
                               "gemma-3-12b-it-Q4_K_M).", False)
    remote.notes[lab.id] = ("The certificate of Lab server (10.0.0.9) is not trusted: "
                            "self-signed certificate. If this is your own server with a "
                            "self-signed certificate, add it to this computer's trusted "
                            "certificates, or use http:// on a network you trust.", True)
    lan = [Interface("eth0", "192.168.1.23"), Interface("wlan0", "10.0.0.7")]
    dialog = SettingsDialog(
        AppSettings(share_runner=True, runner_port=8765, share_host="0.0.0.0"),
        models=mf.FakeLocalModels(), hub=mf.FakeHub(), runner=runner,
        apply_theme=lambda _t: None, save=lambda _s: None,
        folders=lambda: LibraryFolders(Path("/home/you/.local/share/Hearth/models")),
        runtimes=lambda: [], remote=remote, interfaces=lambda: lan)
    dialog.resize(680, 820)
    grab(dialog.sharing_box, "settings-sharing.png")
    dialog.show_page("servers")
    panel = dialog.servers_panel
    assert panel is not None
    panel.list.setCurrentRow(2)
    panel.start_add()
    panel.name_edit.setText("Living-room PC")
    panel.url_edit.setText("192.168.1.31:8765")
    panel.key_edit.setText(secrets.token_urlsafe(32))
    dialog.resize(680, 640)
    grab(dialog, "settings-servers.png")
    for p in saved:
        sys.stdout.write(f"{p}\n")
    return 0 if len(saved) == 2 else 1


if __name__ == "__main__":
    sys.exit(main(Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / "docs"))
