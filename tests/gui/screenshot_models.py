"""Screenshots of the Discover, Downloads and Library views on the in-memory fakes, with realistic
data (several repositories, a split Q8_0, a vision projector, verdicts of every kind, downloads
in every state, models from Hearth, Ollama, LM Studio and the Hugging Face cache).

    .venv/bin/python -m tests.gui.screenshot_models OUTDIR
"""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
os.environ.setdefault("HEARTH_HOME", tempfile.mkdtemp(prefix="hearth-shot-"))

SIZE = (1100, 720)


def main(out: Path) -> int:
    from PySide6.QtWidgets import QApplication, QWidget

    from app.hub.recommended import Recommendation
    from app.hub.verdict import Fit
    from app.ui.discover import DiscoverTab
    from app.ui.downloads_view import DownloadsView
    from app.ui.library_view import LibraryView
    from tests.gui import model_fakes as mf

    app = QApplication.instance() or QApplication([])
    out.mkdir(parents=True, exist_ok=True)
    saved: list[Path] = []

    def grab(widget: QWidget, name: str) -> None:
        widget.resize(*SIZE)
        widget.show()
        for _ in range(3):
            app.processEvents()
        path = out / name
        if widget.grab().save(str(path)):
            saved.append(path)

    # --- Discover: recommended list ---
    hub = mf.FakeHub()
    downloads = mf.FakeDownloads()
    tab = DiscoverTab(hub, downloads, open_url=lambda _u: None)
    tab.resize(*SIZE)
    tab.show()
    app.processEvents()
    recs = [
        (Recommendation("ggml-org/gemma-3-1b-it-GGUF", "Q4_K_M", "Gemma 3 1B",
                        "Tiny and quick; runs on almost any computer. Good for trying Hearth out."),
         mf.details("ggml-org/gemma-3-1b-it-GGUF",
                    mf.hub_files("gemma-3-1b-it", {"Q4_K_M": 806_000_000})),
         mf.verdict(Fit.GPU)),
        (Recommendation("bartowski/Meta-Llama-3.1-8B-Instruct-GGUF", "Q4_K_M", "Llama 3.1 8B",
                        "The classic 8B assistant; wants about 6 GB of memory."),
         mf.llama_details(), mf.verdict(Fit.PARTIAL, n_ctx=8192, gpu_layers=20)),
        (Recommendation("unsloth/Qwen3-30B-A3B-GGUF", "Q4_K_M", "Qwen3 30B-A3B",
                        "A fast mixture of experts: 30B of knowledge at the speed of a 3B."),
         mf.details("unsloth/Qwen3-30B-A3B-GGUF",
                    mf.hub_files("Qwen3-30B-A3B", {"Q4_K_M": 18_600_000_000})),
         mf.verdict(Fit.CPU, n_ctx=16384)),
        (Recommendation("unsloth/gemma-3-27b-it-GGUF", "Q4_K_M", "Gemma 3 27B",
                        "Among the best models a single 24 GB GPU can hold."),
         mf.details("unsloth/gemma-3-27b-it-GGUF",
                    mf.hub_files("gemma-3-27b-it", {"Q4_K_M": 16_500_000_000})),
         mf.verdict(Fit.NO_FIT)),
        (Recommendation("unsloth/Qwen3-4B-GGUF", "Q4_K_M", "Qwen3 4B",
                        "Strong reasoning for its size; thinks before it answers."),
         None, None),
    ]
    hub.recommended.emit(recs)
    hub.unreachable.emit("no network connection (the last search could not be sent).")
    grab(tab, "discover-recommended.png")

    # --- Discover: results and a repository page ---
    tab.search_edit.setText("llama 8b")
    tab.search()
    repos = [
        mf.summary("bartowski/Meta-Llama-3.1-8B-Instruct-GGUF", 1_234_567, 640),
        mf.summary("lmstudio-community/Meta-Llama-3.1-8B-Instruct-GGUF", 987_654, 210),
        mf.summary("QuantFactory/Meta-Llama-3-8B-Instruct-GGUF", 45_321, 95, 1_716_000_000.0),
        mf.summary("NousResearch/Hermes-3-Llama-3.1-8B-GGUF", 30_210, 140, 1_723_500_000.0),
        mf.summary("meta-llama/Llama-Guard-3-8B-GGUF", 12_000, 33, gated=True),
        mf.summary("unsloth/Llama-3.1-8B-Instruct-GGUF", 8_800, 51),
        mf.summary("someone/<b>html</b>-name-GGUF", 12, 0),
    ]
    hub.results.emit(repos, False, True)
    tab.open_repo("bartowski/Meta-Llama-3.1-8B-Instruct-GGUF", "Q4_K_M")
    d = mf.llama_details()
    hub.details.emit(d)
    fits = {"Q2_K": mf.verdict(Fit.GPU), "Q3_K_M": mf.verdict(Fit.GPU),
            "IQ4_XS": mf.verdict(Fit.GPU), "Q4_K_M": mf.verdict(Fit.GPU, n_ctx=16384),
            "Q5_K_M": mf.verdict(Fit.PARTIAL, n_ctx=8192, gpu_layers=27),
            "Q6_K": mf.verdict(Fit.PARTIAL, n_ctx=8192, gpu_layers=20),
            "Q8_0": mf.verdict(Fit.NO_FIT)}
    for g in d.groups:
        if g.quant in fits and g.quant != "Q2_K":  # Q2_K is still being checked
            hub.verdict.emit(d.repo_id, g.name, fits[g.quant])
    grab(tab, "discover-repo.png")
    tab.close()

    # --- Downloads ---
    rows = [
        mf.download_row("a", "bartowski/Meta-Llama-3.1-8B-Instruct-GGUF · "
                        "Meta-Llama-3.1-8B-Instruct-Q4_K_M.gguf", "downloading",
                        1_720_000_000, 4_920_000_000, 35_000_000, 91),
        mf.download_row("b", "unsloth/Qwen3-30B-A3B-GGUF · Qwen3-30B-A3B-Q4_K_M.gguf",
                        "downloading", 18_600_000_000, 18_600_000_000, 0, None,
                        phase="verifying"),
        mf.download_row("c", "bartowski/Meta-Llama-3.1-8B-Instruct-GGUF · "
                        "Meta-Llama-3.1-8B-Instruct-Q8_0.gguf (3 parts)", "queued", 0,
                        14_940_000_000),
        mf.download_row("d", "unsloth/gemma-3-27b-it-GGUF · gemma-3-27b-it-Q4_K_M.gguf",
                        "paused", 6_100_000_000, 16_500_000_000,
                        error="The disk is full: 9.6 GB more are needed, 2.1 GB are free. "
                              "Free some space and press Resume."),
        mf.download_row("e", "ggml-org/gemma-3-1b-it-GGUF · gemma-3-1b-it-Q4_K_M.gguf",
                        "failed", 402_000_000, 806_000_000,
                        error="The connection to Hugging Face was lost five times in a row. "
                              "Check the network and press Retry."),
        mf.download_row("f", "ggml-org/gpt-oss-20b-GGUF · gpt-oss-20b-mxfp4.gguf", "paused",
                        3_000_000_000, 12_100_000_000),
        mf.download_row("g", "unsloth/Qwen3-4B-GGUF · Qwen3-4B-Q4_K_M.gguf", "done",
                        2_500_000_000, 2_500_000_000),
    ]
    dls = mf.FakeDownloads(rows)
    dview = DownloadsView(dls, confirm=lambda *_a, **_k: False)
    dls.failed.emit("e", rows[4].error)
    grab(dview, "downloads.png")
    dview.close()

    # --- Library ---
    home = "/home/ana"
    local = [
        mf.local_row(f"{home}/.local/share/hearth/models/Meta-Llama-3.1-8B-Instruct-Q4_K_M.gguf",
                     "Meta-Llama-3.1-8B-Instruct-Q4_K_M", verdict=mf.verdict(Fit.GPU, n_ctx=16384)),
        mf.local_row(f"{home}/.local/share/hearth/models/Qwen3-30B-A3B-Q4_K_M.gguf",
                     "Qwen3-30B-A3B-Q4_K_M", size=18_600_000_000, architecture="qwen3moe",
                     parameters=30_532_122_624, context_length=40960,
                     verdict=mf.verdict(Fit.PARTIAL, n_ctx=8192, gpu_layers=30, layers=49)),
        mf.local_row(f"{home}/.ollama/models/blobs/sha256-6a0746a1ec1aef3e7ec53868f220ff6e389f6f8e",
                     "llama3.2:3b", size=2_020_000_000, source="Ollama", own=False,
                     parameters=3_212_749_888, verdict=mf.verdict(Fit.GPU)),
        mf.local_row(f"{home}/.lmstudio/models/lmstudio-community/gemma-3-27b-it-GGUF/"
                     "gemma-3-27b-it-Q4_K_M.gguf", "gemma-3-27b-it-Q4_K_M",
                     size=16_500_000_000, source="LM Studio", own=False, architecture="gemma3",
                     parameters=27_009_346_304, verdict=mf.verdict(Fit.CPU, n_ctx=8192)),
        mf.local_row(f"{home}/.cache/huggingface/hub/models--unsloth--Llama-3.3-70B-Instruct-GGUF/"
                     "snapshots/abc/Llama-3.3-70B-Instruct-Q4_K_M.gguf",
                     "Llama-3.3-70B-Instruct-Q4_K_M", size=42_500_000_000,
                     source="Hugging Face cache", own=False, parameters=70_553_706_496,
                     verdict=mf.verdict(Fit.NO_FIT)),
        mf.local_row(f"{home}/Models/phi-4-mini-Q5_K_M.gguf", "phi-4-mini-Q5_K_M",
                     size=2_850_000_000, source="Folder", own=False, quantization="Q5_K_M",
                     architecture="phi3", parameters=3_836_021_760),
        mf.local_row(f"{home}/Models/broken-download.gguf", "broken-download", size=1_200_000_000,
                     source="Folder", own=False, quantization=None, architecture=None,
                     parameters=None, context_length=None,
                     error="the file ends in the middle of its header (it may be incomplete)"),
    ]
    lib_models = mf.FakeLocalModels(local)
    lview = LibraryView(lib_models, lambda _p: None, open_url=lambda _u: None,
                        choose_folder=lambda _w: "", confirm=lambda *_a, **_k: False)
    lview.select(local[0].path)
    lib_models.busy_changed.emit(True)
    lib_models.verified.emit(local[0].path, True, "The file matches the checksum it was "
                             "downloaded with.")
    grab(lview, "library.png")
    lib_models.busy_changed.emit(False)
    lib_models.set_rows([])
    grab(lview, "library-empty.png")
    # --- the repository page and the library again on a dark palette: colours must still read ---
    app.setPalette(dark_palette())
    hub = mf.FakeHub()
    tab = DiscoverTab(hub, mf.FakeDownloads(), open_url=lambda _u: None)
    tab.resize(*SIZE)
    tab.show()
    tab.open_repo(d.repo_id, "Q4_K_M")
    hub.details.emit(d)
    for g in d.groups:
        if g.quant in fits and g.quant != "Q2_K":
            hub.verdict.emit(d.repo_id, g.name, fits[g.quant])
    hub.unreachable.emit("the connection timed out.")
    grab(tab, "discover-repo-dark.png")
    tab.close()
    lib_models.set_rows(local)
    lview.select(local[1].path)
    lib_models.verified.emit(local[1].path, False, "The file does not match its checksum.")
    grab(lview, "library-dark.png")

    for p in saved:
        print(p)
    return 0 if len(saved) == 7 else 1


def dark_palette() -> object:
    from PySide6.QtGui import QColor, QPalette

    pal = QPalette()
    role = QPalette.ColorRole
    for r, c in ((role.Window, "#2b2b2b"), (role.WindowText, "#e6e6e6"), (role.Base, "#1e1e1e"),
                 (role.AlternateBase, "#262626"), (role.Text, "#e6e6e6"), (role.Button, "#353535"),
                 (role.ButtonText, "#e6e6e6"), (role.Highlight, "#3d6fb4"),
                 (role.HighlightedText, "#ffffff"), (role.Link, "#78aeed"),
                 (role.PlaceholderText, "#9a9a9a"), (role.Mid, "#444444")):
        pal.setColor(r, QColor(c))
    return pal


if __name__ == "__main__":
    if len(sys.argv) != 2:
        print(__doc__)
        sys.exit(2)
    sys.exit(main(Path(sys.argv[1])))
