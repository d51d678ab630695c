"""Screenshots of the Settings dialog (light and dark theme) and the first-run page, from the real
widgets on the in-memory fakes with realistic data.

    .venv/bin/python -m tests.gui.screenshot_settings [OUTDIR]   # default: docs/

Writes settings.png, dark-theme-settings.png and welcome.png.
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

    from app.hub.recommended import Recommendation
    from app.hub.verdict import Fit
    from app.library.folders import LibraryFolders
    from app.services.runner_process import RunnerState
    from app.settings import AppSettings
    from app.ui.settings_dialog import SettingsDialog
    from app.ui.theme import ThemeController
    from app.ui.welcome import WelcomePage
    from tests.fixtures.hardware.make_reports import load_report
    from tests.gui import model_fakes as mf
    from tests.gui.fakes import FakeRunner
    from tests.gui.test_welcome import FakeHardware

    app = QApplication.instance() or QApplication([])
    assert isinstance(app, QApplication)
    theme = ThemeController(app)
    theme.apply("light")
    out.mkdir(parents=True, exist_ok=True)
    saved: list[Path] = []

    def grab(widget: QWidget, name: str, width: int | None = None) -> None:
        """Save ``widget`` as ``name``; with ``width``, as tall as it wants at that width."""
        widget.show()
        for _ in range(5):
            app.processEvents()
        if width is not None:  # polished now: the style's own sizes are known
            widget.resize(width, widget.heightForWidth(width) if widget.hasHeightForWidth()
                          else widget.sizeHint().height())
            for _ in range(3):
                app.processEvents()
        path = out / name
        if widget.grab().save(str(path)):
            saved.append(path)

    class Runner(FakeRunner):
        """A loaded model on a fixed port with a key like the real ones."""

        _key = secrets.token_urlsafe(32)

        @property
        def key(self) -> str | None:
            return self._key if self.url else None

    # --- Settings, sharing on, a model loaded ---
    runner = Runner()
    runner.become(RunnerState.READY)
    runner.url = runner.listen_url = "http://127.0.0.1:8765"
    folders = LibraryFolders(Path("/home/you/.local/share/Hearth/models"),
                             (Path("/mnt/data/gguf"), Path("/home/you/Downloads/models")))

    def settings_dialog() -> SettingsDialog:
        return SettingsDialog(AppSettings(theme="system", runner_port=8765, share_runner=True),
                              models=mf.FakeLocalModels(), hub=mf.FakeHub(), runner=runner,
                              apply_theme=theme.apply, save=lambda _s: None,
                              folders=lambda: folders, open_url=lambda _u: None,
                              choose_folder=lambda *_a: "", copy_text=lambda _t: None,
                              log_folder=Path("/home/you/.local/state/Hearth/log"))

    dialog = settings_dialog()
    grab(dialog, "settings.png", 660)
    dialog.close()

    # --- the same on the dark theme ---
    theme.apply("dark")
    dialog = settings_dialog()
    dialog.theme_combo.setCurrentIndex(dialog.theme_combo.findData("dark"))
    grab(dialog, "dark-theme-settings.png", 660)
    dialog.close()
    theme.apply("light")

    # --- the first-run page ---
    hub, downloads = mf.FakeHub(), mf.FakeDownloads()
    hardware = FakeHardware(load_report("rtx4090_24gb"))
    page = WelcomePage(hub, downloads, hardware)
    page.resize(1000, 720)
    page.show()
    app.processEvents()
    recs = [
        (Recommendation("ggml-org/gemma-3-4b-it-GGUF", "Q4_K_M", "Gemma 3 4B",
                        "Quick and capable; a good first model."),
         mf.details("ggml-org/gemma-3-4b-it-GGUF",
                    mf.hub_files("gemma-3-4b-it", {"Q4_K_M": 2_490_000_000})),
         mf.verdict(Fit.GPU)),
        (Recommendation("bartowski/Meta-Llama-3.1-8B-Instruct-GGUF", "Q4_K_M", "Llama 3.1 8B",
                        "The classic 8B assistant; wants about 6 GB of memory."),
         mf.llama_details(), mf.verdict(Fit.GPU)),
        (Recommendation("unsloth/Qwen3-30B-A3B-GGUF", "Q4_K_M", "Qwen3 30B-A3B",
                        "A fast mixture of experts: 30B of knowledge at the speed of a 3B."),
         mf.details("unsloth/Qwen3-30B-A3B-GGUF",
                    mf.hub_files("Qwen3-30B-A3B", {"Q4_K_M": 18_600_000_000})),
         mf.verdict(Fit.PARTIAL, n_ctx=16384, gpu_layers=40, layers=48)),
        (Recommendation("unsloth/Qwen3-4B-GGUF", "Q4_K_M", "Qwen3 4B",
                        "Strong reasoning for its size; thinks before it answers."),
         mf.details("unsloth/Qwen3-4B-GGUF", mf.hub_files("Qwen3-4B", {"Q4_K_M": 2_500_000_000})),
         None),
    ]
    hub.recommended.emit(recs)
    for rec, d, v in recs:
        if v is not None:
            group = next(g for g in d.groups if g.quant == "Q4_K_M")
            hub.verdict.emit(rec.repo_id, group.name, v)
    download_id = page.download("ggml-org/gemma-3-4b-it-GGUF")
    if download_id is not None:
        downloads.tick(mf.download_row(download_id, "gemma", "downloading", 921_000_000,
                                       2_490_000_000, speed=38e6, eta=41))
    grab(page, "welcome.png")

    for p in saved:
        sys.stdout.write(f"{p}\n")
    return 0 if len(saved) == 3 else 1


if __name__ == "__main__":
    sys.exit(main(Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / "docs"))
