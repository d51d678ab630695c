"""The chat page's screenshots from the real window and a real model: the sidebar with a few
conversations, a reply with Markdown, the model picker with verdicts, the dark theme.

    .venv/bin/python -m tests.gui.screenshot_chat [MODEL.gguf] [OUT_DIR]

MODEL defaults to the real Gemma 3 270M in tests/.models (DESIGN.md says how to fetch it): a
person reads these pictures, so the replies should be words. Everything runs through compose(),
the real runner and a temporary database.
"""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
os.environ.setdefault("HEARTH_HOME", tempfile.mkdtemp(prefix="hearth-shot-"))
os.environ.setdefault("HF_ENDPOINT", "http://127.0.0.1:9")  # no Hub: the shots are offline
os.environ.setdefault("HEARTH_MODELS_DIR", os.path.join(os.environ["HEARTH_HOME"], "models"))

REPO = Path(__file__).resolve().parents[2]
DEFAULT_MODEL = REPO / "tests" / ".models" / "gemma-3-270m-q4_k_m.gguf"
DEFAULT_OUT = REPO / "docs"
QUESTIONS = [
    "Write a short Python function that reverses a string, with an example.",
    "What is the capital of France?",
    "Give me three tips for a good night's sleep.",
]


def main(model: Path = DEFAULT_MODEL, out: Path = DEFAULT_OUT) -> int:
    from PySide6.QtCore import QEventLoop, QObject, QTimer
    from PySide6.QtWidgets import QApplication

    from app.__main__ import compose
    from app.ui.theme import ThemeController
    from tests.fixtures.models import TINY, model_path

    # The library lists the model (and a small generated one) with their verdicts.
    library = Path(os.environ["HEARTH_MODELS_DIR"])
    library.mkdir(parents=True, exist_ok=True)
    for source in (model, model_path(TINY)):
        link = library / source.name
        if not link.exists():
            link.symlink_to(source.resolve())
    model = library / model.name
    app = QApplication.instance() or QApplication([])
    assert isinstance(app, QApplication)
    theme = ThemeController(app)
    theme.apply("light")
    parent = QObject()
    gui = compose(parent, chat_params={"max_tokens": 120, "seed": 7, "temperature": 0.7,
                                         "repeat_penalty": 1.3},
                  apply_theme=theme.apply)
    window, runner = gui.window, gui.runner
    window.resize(1200, 760)
    window.show()

    def wait_for(signal: object, ms: int = 60_000) -> None:
        loop = QEventLoop()
        signal.connect(loop.quit)  # type: ignore[attr-defined]
        QTimer.singleShot(ms, loop.quit)
        loop.exec()

    def settle(ms: int = 300) -> None:
        loop = QEventLoop()
        QTimer.singleShot(ms, loop.quit)
        loop.exec()

    window.choose_model(str(model))
    window.load_selected()
    wait_for(runner.ready, 120_000)
    for i, question in enumerate(reversed(QUESTIONS)):
        if i:
            window.new_conversation()
        window.input.setPlainText(question)
        window.send()
        wait_for(gui.session.reply_finished)
    settle(800)
    if window.sidebar is not None:
        rows = window.sidebar.rows()
        if rows:  # pin one, to show the Pinned heading
            gui.conversations.set_pinned(rows[-1].id, True)
    settle(800)
    out.mkdir(parents=True, exist_ok=True)
    ok = window.grab().save(str(out / "chat.png"))
    window.settings_btn.setChecked(True)  # the chat settings drawer
    settle()
    ok = window.grab().save(str(out / "chat-with-settings.png")) and ok
    window.settings_btn.setChecked(False)
    theme.apply("dark")
    settle(600)
    ok = window.grab().save(str(out / "chat-dark.png")) and ok
    theme.apply("light")
    settle()
    window.picker.showPopup()
    settle(400)
    popup = window.picker.view().window()
    picker = window.grab()
    from PySide6.QtGui import QPainter

    painter = QPainter(picker)
    origin = window.mapFromGlobal(popup.mapToGlobal(popup.rect().topLeft()))
    painter.drawPixmap(origin, popup.grab())
    painter.end()
    ok = picker.save(str(out / "model-picker.png")) and ok
    window.picker.hidePopup()
    window.close()
    gui.close()
    print("saved" if ok else "FAILED", out)
    return 0 if ok else 1


if __name__ == "__main__":
    args = sys.argv[1:]
    sys.exit(main(Path(args[0]) if args else DEFAULT_MODEL,
                  Path(args[1]) if len(args) > 1 else DEFAULT_OUT))
