"""A screenshot of the chat settings panel as a conversation shows it: a system prompt, the
model's own sampling with a fixed seed, and in the empty fields the defaults of a model file that
names some (Qwen 3's temperature 0.6 and top-k 20; llama.cpp's for the rest).

    .venv/bin/python -m tests.gui.screenshot_chat_settings [OUT.png]   (default: docs/chat-settings.png)
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

DEFAULT_OUT = Path(__file__).resolve().parents[2] / "docs" / "chat-settings.png"


def main(out: Path = DEFAULT_OUT) -> int:
    from PySide6.QtWidgets import QApplication

    from app.chat.sampling import Sampling, model_defaults
    from app.ui.chat_settings import ChatSettingsPanel

    app = QApplication.instance() or QApplication([])
    panel = ChatSettingsPanel()
    defaults = model_defaults({"general.sampling.temp": 0.6, "general.sampling.top_k": 20,
                               "general.sampling.top_p": 0.95})
    panel.set_values("You are a patient tutor. Explain step by step, and ask before you give "
                     "away an answer.",
                     Sampling(seed=42), defaults)
    panel.resize(340, 440)
    panel.show()
    app.processEvents()
    out.parent.mkdir(parents=True, exist_ok=True)
    ok = panel.grab().save(str(out))
    print(out if ok else "could not save the screenshot")
    panel.close()
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(Path(sys.argv[1]) if len(sys.argv) > 1 else DEFAULT_OUT))
