"""Screenshots of getting a model, from the real window and services: the real Hugging Face client
against the fake Hub (repositories named like the real ones, serving header-only files with the
real models' headers), verdicts planned for this machine, a real download, the library scan.

    .venv/bin/python -m tests.gui.screenshot_hub [OUTDIR]   (default: resources/screenshots)
"""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
os.environ.setdefault("HEARTH_HOME", tempfile.mkdtemp(prefix="hearth-shot-"))
os.environ.setdefault("HEARTH_MODELS_DIR", os.path.join(os.environ["HEARTH_HOME"], "models"))

DEFAULT_OUT = Path(__file__).resolve().parents[2] / "resources" / "screenshots"
CARD = """# Llama 3.1 8B Instruct — GGUF

Quantized with llama.cpp's imatrix. Pick **Q4_K_M** for most computers; Q8_0 if you have
the memory to spare.

| file | use |
|---|---|
| Q4_K_M | recommended |
| Q8_0 | near lossless |

```
hearth download bartowski/Meta-Llama-3.1-8B-Instruct-GGUF --quant Q4_K_M
```
"""


def other_apps(home: Path, model: Path) -> None:
    """Models other apps already downloaded, laid out as those apps lay them out."""
    import hashlib
    import json

    os.environ["HOME"] = str(home)
    data = model.read_bytes()
    digest = hashlib.sha256(data).hexdigest()
    ollama = home / ".ollama" / "models"
    (ollama / "blobs").mkdir(parents=True)
    (ollama / "blobs" / f"sha256-{digest}").write_bytes(data)
    manifest = ollama / "manifests" / "registry.ollama.ai" / "library" / "tinyllama"
    manifest.mkdir(parents=True)
    (manifest / "1b").write_text(json.dumps({"schemaVersion": 2, "layers": [
        {"mediaType": "application/vnd.ollama.image.model", "digest": f"sha256:{digest}",
         "size": len(data)}]}))
    lms = home / ".lmstudio" / "models" / "lmstudio-community" / "Tiny-GGUF"
    lms.mkdir(parents=True)
    (lms / "tiny-Q8_0.gguf").write_bytes(data)


def main(out: Path = DEFAULT_OUT) -> int:
    from PySide6.QtCore import QEventLoop, QObject, QTimer
    from PySide6.QtWidgets import QApplication

    from app.__main__ import compose
    from tests.fixtures.fake_hub import FakeHub
    from tests.fixtures.header_only import (
        GEMMA3_27B,
        GPT_OSS_20B,
        LLAMA31_8B,
        LLAMA31_70B,
        Shape,
        write_header_only,
    )
    from tests.fixtures.models import TINY, model_path

    app = QApplication.instance() or QApplication([])
    files = Path(tempfile.mkdtemp(prefix="hearth-shot-files-"))
    other_apps(Path(os.environ["HEARTH_HOME"]) / "home", Path(model_path(TINY)))

    def sparse(shape: Shape, name: str) -> Path:
        return write_header_only(files / name, shape)

    with FakeHub() as hub:
        os.environ["HF_ENDPOINT"] = hub.url
        # Header-only files are gigabytes of holes: the Hub listing gets a made-up hash.
        llama: dict[str, bytes | Path] = {
            "Meta-Llama-3.1-8B-Instruct-Q4_K_M.gguf": sparse(LLAMA31_8B, "l8-q4.gguf"),
            "Meta-Llama-3.1-8B-Instruct.imatrix": b"imatrix" * 700_000}
        mmproj = files / "mmproj.gguf"
        with mmproj.open("wb") as f:  # a hole of a realistic size: listed, never planned
            f.truncate(600_000_000)
        llama["mmproj-Meta-Llama-3.1-8B-F16.gguf"] = mmproj
        sha = {k: f"{n:064x}" for n, k in enumerate(llama) if isinstance(llama[k], Path)}
        hub.add_repo("bartowski/Meta-Llama-3.1-8B-Instruct-GGUF", llama, card=CARD,
                     sha256s=sha, downloads=1_204_332, likes=640, license="llama3.1",
                     gguf={"architecture": "llama", "total": 8_030_261_248,
                           "context_length": 131072})
        for repo, shape, name in (
                ("ggml-org/gpt-oss-20b-GGUF", GPT_OSS_20B, "gpt-oss-20b-mxfp4.gguf"),
                ("unsloth/gemma-3-27b-it-GGUF", GEMMA3_27B, "gemma-3-27b-it-Q4_K_M.gguf"),
                ("bartowski/Meta-Llama-3.1-70B-Instruct-GGUF", LLAMA31_70B,
                 "Meta-Llama-3.1-70B-Instruct-Q4_K_M.gguf")):
            hub.add_repo(repo, {name: sparse(shape, name)}, sha256s={name: "ab" * 32},
                         downloads=300_000, likes=200)
        hub.add_repo("acme/Tiny-Story-GGUF", {"tiny-story-F32.gguf": Path(model_path(TINY))},
                     card="# Tiny Story\nA very small model for tests.", downloads=12, likes=1)

        parent = QObject()
        gui = compose(parent)
        window = gui.window
        window.resize(1180, 760)
        window.show()

        def wait(ms: int) -> None:
            loop = QEventLoop()
            QTimer.singleShot(ms, loop.quit)
            loop.exec()

        def shot(name: str) -> bool:
            app.processEvents()
            return bool(window.grab().save(str(out / name)))

        out.mkdir(parents=True, exist_ok=True)
        tabs = {window.tabs.tabText(i): window.tabs.widget(i) for i in range(window.tabs.count())}
        discover = tabs["Discover"]
        window.tabs.setCurrentWidget(discover)
        wait(6000)  # hardware detection, then each recommended entry's header and verdict
        ok = shot("discover.png")

        discover.search_edit.setText("llama")
        discover.search()
        wait(1500)
        discover.open_repo("bartowski/Meta-Llama-3.1-8B-Instruct-GGUF")
        wait(3000)
        ok = shot("discover-repo.png") and ok

        # A finished download, and a big one paused part-way.
        tiny = gui.hub_client.get().details("acme/Tiny-Story-GGUF")
        gui.downloads.enqueue(tiny, tiny.groups[0])
        wait(2000)
        d = gui.hub_client.get().details("bartowski/Meta-Llama-3.1-8B-Instruct-GGUF")
        hub.throttle_bps = 40_000_000
        big = next(g for g in d.groups if g.quant == "Q4_K_M")
        big_id = gui.downloads.enqueue(d, big)
        wait(2500)
        window.tabs.setCurrentWidget(tabs["Downloads"])
        ok = shot("downloads.png") and ok
        gui.downloads.pause(big_id)

        window.tabs.setCurrentWidget(tabs["Models"])
        gui.local.rescan()
        wait(3000)
        ok = shot("models.png") and ok
        window.close()
        gui.close()
    print(out if ok else "could not save the screenshots")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(Path(sys.argv[1]) if len(sys.argv) > 1 else DEFAULT_OUT))
