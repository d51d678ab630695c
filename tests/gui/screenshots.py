"""Every screen of Hearth, regenerated as PNGs from the real window (compose(), the real runner,
the real services), in each theme, size and language asked for.

    .venv/bin/python -m tests.gui.screenshots OUT_DIR [--sizes 1280x720,1400x900]
        [--themes light,dark] [--languages en,de] [--only NAME,...] [--list]

Each (theme, language, size) runs in a process of its own on an offscreen screen of exactly that
size: the theme and the language are installed before the window is built (as the app does at
start), dialogs size themselves for that screen, and one crash loses one combination only.
Files are named ``<screen>-<theme>-<WxH>-<lang>.png``; one screen failing is logged and the others
go on; the summary lists the failures and the exit status is 1 if there were any.

The language ``pseudo`` (issue 27) is the pseudo-locale of tests/gui/pseudo.py: every string
that goes through ``tr``/``ui_text`` comes back marked, and every widget grabbed is checked for
visible text that is neither marked nor data the screen legitimately shows (the fake Hub's
names, this machine's hardware, the conversations' words). The findings, per screen, go to
``OUT/untranslated.json``; the summary prints them and the exit status is 1 if there are any.

Chat pictures use the real Gemma 3 270M (tests/.models/gemma-3-270m-q4_k_m.gguf; DESIGN.md says
how to fetch it). It is a base model, so it is given text to continue. Where it is missing the
generated base model of tests/fixtures/models.py stands in (its words are random) and a log line
says so. The Hub is tests/fixtures/fake_hub.py (repositories named like the real ones, serving
header-only files); offline is a refused port.
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import subprocess
import sys
import tempfile
import time
import traceback
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
GEMMA = REPO / "tests" / ".models" / "gemma-3-270m-q4_k_m.gguf"
GEMMA_SIZE = 253_113_024
OFFLINE = "http://127.0.0.1:9"  # nothing listens on the discard port: refused at once
RESULT = "SHOT-RESULT "  # a worker's result lines on stdout start with this
PSEUDO = "pseudo"  # the pseudo-locale: every translated string marked (tests/gui/pseudo.py)
UNTRANSLATED = "untranslated.json"  # what the pseudo-locale found, per screen
# llama.cpp's names of the KV cache's types: shown as they are in every language.
KV_TYPES = ("f16", "f32", "bf16", "q8_0", "q4_0", "q4_1", "q5_0", "q5_1", "iq4_nl")

# Text a base model continues sensibly (it does not follow instructions).
PROMPTS = (
    "The three primary colours are",
    "def fibonacci(n):\n    \"\"\"Return the n-th Fibonacci number.\"\"\"\n",
    "A good night's sleep starts with",
)
STREAM_PROMPT = "Once upon a time, in a small village by the sea, there lived"

MARKDOWN_QUESTION = "How do I read a CSV file in Python and sum a column?"
MARKDOWN_REPLY = """Use the standard library's `csv` module; no extra packages are needed.

```python
import csv

def column_total(path: str, column: str) -> float:
    with open(path, newline="") as f:
        return sum(float(row[column]) for row in csv.DictReader(f))

print(column_total("sales.csv", "amount"))
```

`DictReader` maps each row to the header's names, so the column is read by name.

| Approach | Good for | Memory |
|---|---|---|
| `csv.DictReader` | small and medium files | one row at a time |
| `pandas.read_csv` | analysis, many columns | the whole file |
| `polars.scan_csv` | very large files | streamed, lazy |

For files with a different separator, pass `delimiter=";"`.
"""

# Conversations for the sidebar: (title, days ago, pinned).
# A reply that called the built-in calculator (issue 31), as the app keeps one: the round's text,
# the call with its arguments, result and time, then the answer written after it.
TOOL_QUESTION = "How many days are there in 7 weeks and 3 days, and how many hours is that?"
TOOL_ANSWER = ("**52 days**, which is **1,248 hours** (52 × 24). The calculator did the "
               "multiplication; expand the call above to see what it was asked and what it said.")
TOOL_META = {"tool_rounds": [{"text": "Let me work that out exactly.", "calls": [
    {"id": "call_1", "name": "calculate", "tool": "builtin/calculate",
     "arguments": '{"expression": "(7*7 + 3) * 24"}', "status": "ok", "result": "1248",
     "ms": 3}]}], "finish": "stop"}

SIDEBAR = (
    ("Trip plan for Lisbon", 0.1, True),
    ("Regex for ISO dates", 0.2, False),
    ("Explain attention in transformers", 1.2, False),
    ("Birthday message for Ana", 1.4, False),
    ("SQL: top customers per month", 4.0, False),
    ("Why is the sky blue?", 12.0, False),
    ("Translate a letter to German", 40.0, False),
)


# ---- the screens ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class Screen:
    name: str
    run: Callable[[Shot], None]
    needs_model: bool = False


SCREENS: list[Screen] = []


def screen(name: str, needs_model: bool = False) -> Callable[[Callable[[Shot], None]],
                                                             Callable[[Shot], None]]:
    def add(fn: Callable[[Shot], None]) -> Callable[[Shot], None]:
        SCREENS.append(Screen(name, fn, needs_model))
        return fn
    return add


def names() -> list[str]:
    return [s.name for s in SCREENS]


# ---- one process: one theme, one language, one size ----------------------------------------------


@dataclass
class Shot:
    """The window of one (theme, language, size) and what the screens need to fill it."""

    out: Path
    theme: str
    lang: str
    size: tuple[int, int]
    app: Any = None
    gui: Any = None
    hub: Any = None  # the fake Hub
    controller: Any = None  # ThemeController
    model: Path | None = None
    model_note: str = ""
    results: list[tuple[str, str, str]] = field(default_factory=list)  # (screen, status, detail)
    untranslated: dict[str, list[str]] = field(default_factory=dict)  # pseudo: screen -> texts
    data: list[str] = field(default_factory=list)  # pseudo: what may show unmarked (fixed part)
    also_shown: list[str] = field(default_factory=list)  # pseudo: a reply caught mid-way
    _loaded: bool = False
    _welcome_closed: bool = False
    _seeded: dict[str, int] = field(default_factory=dict)
    _live: str = ""

    # -- waiting -------------------------------------------------------------------------------

    def settle(self, ms: int = 250) -> None:
        deadline = time.monotonic() + ms / 1000
        while time.monotonic() < deadline:
            self.app.processEvents()
            time.sleep(0.01)

    def wait_until(self, done: Callable[[], bool], seconds: float, what: str) -> None:
        deadline = time.monotonic() + seconds
        while not done():
            if time.monotonic() > deadline:
                raise TimeoutError(f"waited {seconds:.0f} s for {what}")
            self.app.processEvents()
            time.sleep(0.01)

    # -- saving --------------------------------------------------------------------------------

    def path(self, name: str) -> Path:
        w, h = self.size
        return self.out / f"{name}-{self.theme}-{w}x{h}-{self.lang}.png"

    def save(self, name: str, pixmap: Any, *shown: Any) -> Path:
        """Save ``pixmap`` as screen ``name``; in the pseudo-locale check the ``shown`` widgets
        (what the picture is of) for text left untranslated."""
        path = self.path(name)
        if pixmap.isNull() or not pixmap.save(str(path)):
            raise RuntimeError(f"could not save {path}")
        self.check(name, *shown)
        return path

    def check(self, name: str, *widgets: Any) -> None:
        """Pseudo-locale only: record the visible texts of ``widgets`` left untranslated."""
        if self.lang != PSEUDO or not widgets:
            return
        from tests.gui.pseudo import untranslated, visible_texts

        data = self.shown_data()
        found = self.untranslated.setdefault(name, [])
        for widget in widgets:
            for line in untranslated(visible_texts(widget), data):
                if line not in found:
                    found.append(line)

    def shown_data(self) -> list[str]:
        """What a screen may show unmarked now: the fixed data (:meth:`fixed_data`), the
        conversations' titles and words (seeded here or the model's replies), the downloads'
        titles and the hardware report's names."""
        found = list(self.data)

        def read(db: Any) -> list[str]:
            rows = [r[0] for r in db.query("SELECT title FROM conversations", action="read")]
            rows += [r[0] for r in db.query("SELECT model FROM conversations", action="read")]
            for (content,) in db.query("SELECT content FROM messages", action="read"):
                rows += written(content)
            for (meta,) in db.query("SELECT meta FROM messages", action="read"):
                rows += _tool_words(meta)  # a reply's tool calls: the model's and the tool's
            return rows

        found += self.store(read)
        window = self.gui.window
        for message in window.chat.messages():  # those not stored yet (a reply streaming)
            found += written(getattr(message, "content", "") or "")
            found += _tool_words(json.dumps(getattr(message, "meta", {}) or {}))
        for text in self.also_shown:
            found += written(text)
        for path in window.chat_panel.attachments.paths:  # the chips: the files' names
            found += [path, os.path.basename(path)]
        found += [row.title for row in self.gui.downloads.rows()]
        for row in self.gui.local.rows():  # the library's files: names and their headers' words
            found += [row.name, row.path, row.architecture or "", row.quantization or ""]
        report = self.gui.hardware.report
        if report is not None:
            cpu = report.cpu
            found += [getattr(cpu, "model", "") or "", *(getattr(cpu, "flags", ()) or ()),
                      *(getattr(cpu, "features", ()) or ())]
            found += [getattr(report, "os", "") or "", getattr(report, "os_name", "") or ""]
            found += [g.name for g in getattr(report, "gpus", ())]
        return [d for d in found if isinstance(d, str) and d.strip()]

    def fixed_data(self) -> list[str]:
        """Data known before the window: paths, the models' files and the Hub's repositories
        (their names, files and cards), the recommended list's names, names of things."""
        from app.hub.recommended import load_recommended

        found = [os.environ.get("HEARTH_HOME", ""), os.environ.get("HEARTH_MODELS_DIR", ""),
                 os.environ.get("HOME", ""), str(Path.home())]
        if self.model is not None:
            found += [self.model.name, self.model.stem, str(self.model.parent)]
        # What other apps downloaded (tests/gui/screenshot_hub.other_apps): their own names.
        found += ["tinyllama:1b", "tinyllama", "lmstudio-community/Tiny-GGUF", "Tiny-GGUF",
                  "tiny-Q8_0.gguf", "tiny-Q8_0"]
        for repo in self.hub._repos.values():  # the fake Hub's repositories, files and cards
            found += [repo.repo_id, *repo.repo_id.split("/"), repo.license or "", *repo.tags]
            for files in repo.commits.values():
                for file in files:
                    found += [file, file.rsplit(".", 1)[0]]
            found += written(repo.card)  # the model card: the repository's own words
        for rec in load_recommended():  # model names and quantizations (the blurbs translate)
            found += [rec.title, rec.quant, rec.repo_id]
        found.append("built-in")  # the runtime of llama-cpp-python itself: a folder name
        from app.runtimes.catalog import list_runtimes

        # The installed runtimes' folder names and labels ("cpu-portable (CPU)"): data.
        found += [text for rt in list_runtimes() for text in (rt.name, rt.label())]
        found += KV_TYPES
        found.append("hf_…")  # the token field's placeholder: how a Hugging Face token begins
        return [d for d in found if d and d.strip()]

    def window_shot(self, name: str) -> Path:
        window = self.gui.window
        window.resize(*self.size)
        self.settle()
        return self.save(name, window.grab(), window)

    def widget_shot(self, name: str, widget: Any) -> Path:
        self.settle()
        return self.save(name, widget.grab(), widget)

    def composite_shot(self, name: str, *popups: Any) -> Path:
        """The window with top-level popups painted where they are on the screen."""
        from PySide6.QtGui import QPainter

        window = self.gui.window
        picture = window.grab()
        painter = QPainter(picture)
        for popup in popups:
            origin = window.mapFromGlobal(popup.mapToGlobal(popup.rect().topLeft()))
            painter.drawPixmap(origin, popup.grab())
        painter.end()
        return self.save(name, picture, window, *popups)

    @contextmanager
    def modal(self, name: str) -> Iterator[list[Path]]:
        """Grab the modal dialog (QMessageBox.exec()) the block opens, then cancel it."""
        from PySide6.QtCore import QTimer
        from PySide6.QtWidgets import QApplication

        saved: list[Path] = []
        errors: list[str] = []

        def grab() -> None:
            box = QApplication.activeModalWidget()
            if box is None:
                errors.append("no modal dialog opened")
                return
            try:
                for _ in range(5):
                    QApplication.processEvents()
                saved.append(self.save(name, box.grab(), box))
            finally:
                box.close()

        QTimer.singleShot(400, grab)
        yield saved
        if errors or not saved:
            raise RuntimeError(errors[0] if errors else "the dialog was not grabbed")

    # -- state the screens share ---------------------------------------------------------------

    def page(self, key: str) -> Any:
        """Show the window's page ``key`` (chat, discover, models, downloads, hardware)."""
        self.close_welcome()
        tabs = self.gui.window.tabs
        index = {"chat": 0, "discover": 1, "models": 2, "downloads": 3, "hardware": 4}[key]
        tabs.setCurrentIndex(index)
        self.settle()
        return tabs.widget(index)

    def close_welcome(self) -> None:
        if not self._welcome_closed:
            self._welcome_closed = True
            window = self.gui.window
            if window.pages.currentWidget() is not window.tabs:
                page = window.pages.currentWidget()
                page.skip_btn.click()
                self.settle()

    def online(self, yes: bool) -> None:
        """Point the Hub client at the fake Hub, or at a refused port."""
        os.environ["HF_ENDPOINT"] = self.hub.url if yes else OFFLINE
        self.gui.hub_client.reset()

    def load_model(self) -> None:
        if self._loaded:
            return
        from app.services.runner_process import RunnerState

        assert self.model is not None
        window = self.gui.window
        self.close_welcome()
        window.tabs.setCurrentIndex(0)
        window.choose_model(str(self.model))
        window.load_selected()
        self.wait_until(lambda: self.gui.runner.state == RunnerState.READY, 180,
                        "the model to load")
        self.settle(500)
        self._loaded = True

    def ask(self, prompt: str, seconds: float = 120) -> None:
        """Send ``prompt`` in the conversation shown and wait for the whole reply."""
        session, window = self.gui.session, self.gui.window
        finished: list[object] = []
        session.reply_finished.connect(finished.append)
        try:
            window.input.setPlainText(prompt)
            window.send()
            self.wait_until(lambda: bool(finished), seconds, "the reply")
        finally:
            session.reply_finished.disconnect(finished.append)
        self.settle(300)

    def store(self, fn: Callable[[Any], Any]) -> Any:
        """Run ``fn(db)`` on the app's store thread and wait for its result."""
        return self.gui.store.call(fn).result(timeout=30)

    def seed_conversations(self) -> dict[str, int]:
        """Stored conversations of the last weeks (pinned, today, yesterday, older) and one with
        Markdown (code and a table), written through the app's own store."""
        if self._seeded:
            return self._seeded
        from app.library.conversations import ConversationStore

        now = time.time()

        def write(db: Any) -> dict[str, int]:
            ids: dict[str, int] = {}
            for title, days, pinned in reversed(SIDEBAR):
                at = now - days * 86_400
                convs = ConversationStore(db, clock=functools.partial(float, at))
                conv = convs.create(title, self.model.name if self.model else "")
                convs.append_message(conv, "user", title)
                convs.append_message(conv, "assistant", "…")
                if pinned:
                    convs.set_pinned(conv, True)
                ids[title] = conv
            convs = ConversationStore(db)
            conv = convs.create("Read a CSV and sum a column", self.model.name if self.model else "")
            convs.append_message(conv, "user", MARKDOWN_QUESTION)
            convs.append_message(conv, "assistant", MARKDOWN_REPLY)
            ids["markdown"] = conv
            conv = convs.create("Seven weeks in days", self.model.name if self.model else "")
            convs.append_message(conv, "user", TOOL_QUESTION)
            convs.append_message(conv, "assistant", TOOL_ANSWER, meta=TOOL_META)
            ids["tools"] = conv
            return ids

        self._seeded = self.store(write)
        self.gui.conversations.list_conversations()
        self.settle(300)
        return self._seeded

    # -- running -------------------------------------------------------------------------------

    def run(self, screens: list[Screen]) -> None:
        for s in screens:
            started = time.monotonic()
            try:
                s.run(self)
                status, detail = "ok", f"{time.monotonic() - started:.1f} s"
            except Exception as exc:  # one screen failing must not stop the others
                traceback.print_exc()
                status, detail = "FAILED", f"{type(exc).__name__}: {exc}"
            self.results.append((s.name, status, detail))
            print(f"{RESULT}{json.dumps([s.name, status, detail, str(self.path(s.name))])}",
                  flush=True)
            self.tidy()

    def tidy(self) -> None:
        """Close what a screen left open (dialogs, popups) before the next one."""
        from PySide6.QtWidgets import QApplication, QDialog

        window = self.gui.window
        window.picker.hidePopup()
        for w in QApplication.topLevelWidgets():
            if isinstance(w, QDialog) and w.isVisible():
                w.reject()
        self.settle(100)


def written(text: str) -> list[str]:
    """The ways a view may show ``text`` (a message, a model card): whole, line by line, and
    line by line as its Markdown renders (code blocks' language names included)."""
    import re

    from PySide6.QtGui import QTextDocument

    document = QTextDocument()
    document.setMarkdown(text)
    lines = [*text.splitlines(), *document.toPlainText().splitlines()]
    return [text, *(line.strip() for line in lines), *re.findall(r"```\s*([\w+#-]+)", text)]


def find_model() -> tuple[Path, str]:
    """The real Gemma 3 270M where it is in tests/.models, else a generated base model."""
    if GEMMA.is_file() and GEMMA.stat().st_size == GEMMA_SIZE:
        return GEMMA, "Gemma 3 270M (real)"
    from tests.fixtures.models import GEMMA_BASE, model_path

    return Path(model_path(GEMMA_BASE)), "generated tiny base model (Gemma 3 270M not found)"


def fill_hub(hub: Any, folder: Path) -> None:
    """Repositories named like the real ones: the recommended list's, and a few to search."""
    from tests.fixtures.header_only import (
        GEMMA3_12B,
        GEMMA3_27B,
        GPT_OSS_20B,
        LLAMA31_8B,
        LLAMA31_70B,
        QWEN25_1_5B,
        QWEN25_32B,
        Shape,
        write_header_only,
    )
    from tests.fixtures.models import TINY, model_path
    from tests.gui.screenshot_hub import CARD

    def sparse(shape: Shape, name: str) -> Path:
        return write_header_only(folder / name, shape)

    repos: list[tuple[str, Shape, str, int]] = [
        ("ggml-org/gemma-3-1b-it-GGUF", QWEN25_1_5B, "gemma-3-1b-it-Q4_K_M.gguf", 402_113),
        ("bartowski/Llama-3.2-3B-Instruct-GGUF", QWEN25_1_5B,
         "Llama-3.2-3B-Instruct-Q4_K_M.gguf", 312_004),
        ("unsloth/Qwen3-4B-GGUF", QWEN25_1_5B, "Qwen3-4B-Q4_K_M.gguf", 288_310),
        ("unsloth/gemma-3-4b-it-GGUF", QWEN25_1_5B, "gemma-3-4b-it-Q4_K_M.gguf", 190_422),
        ("unsloth/Qwen3-8B-GGUF", LLAMA31_8B, "Qwen3-8B-Q4_K_M.gguf", 170_001),
        ("bartowski/Mistral-Nemo-Instruct-2407-GGUF", GEMMA3_12B,
         "Mistral-Nemo-Instruct-2407-Q4_K_M.gguf", 98_777),
        ("ggml-org/gpt-oss-20b-GGUF", GPT_OSS_20B, "gpt-oss-20b-mxfp4.gguf", 300_000),
        ("unsloth/Qwen3-30B-A3B-GGUF", QWEN25_32B, "Qwen3-30B-A3B-Q4_K_M.gguf", 250_000),
        ("unsloth/gemma-3-27b-it-GGUF", GEMMA3_27B, "gemma-3-27b-it-Q4_K_M.gguf", 400_000),
        ("bartowski/Meta-Llama-3.1-70B-Instruct-GGUF", LLAMA31_70B,
         "Meta-Llama-3.1-70B-Instruct-Q4_K_M.gguf", 120_000),
        ("lmstudio-community/Meta-Llama-3.1-8B-Instruct-GGUF", LLAMA31_8B,
         "Meta-Llama-3.1-8B-Instruct-Q4_K_M.gguf", 987_654),
    ]
    for n, (repo, shape, name, downloads) in enumerate(repos):
        hub.add_repo(repo, {name: sparse(shape, f"{n}-{name}")}, sha256s={name: f"{n:064x}"},
                     downloads=downloads, likes=downloads // 1000)
    llama = {"Meta-Llama-3.1-8B-Instruct-Q4_K_M.gguf": sparse(LLAMA31_8B, "l8-q4.gguf"),
             "Meta-Llama-3.1-8B-Instruct-Q8_0.gguf": sparse(LLAMA31_8B, "l8-q8.gguf"),
             "Meta-Llama-3.1-8B-Instruct.imatrix": b"imatrix" * 1000}
    hub.add_repo("bartowski/Meta-Llama-3.1-8B-Instruct-GGUF", llama, card=CARD,
                 sha256s={k: f"{n + 90:064x}" for n, k in enumerate(llama)},
                 downloads=1_204_332, likes=640, license="llama3.1",
                 gguf={"architecture": "llama", "total": 8_030_261_248, "context_length": 131072})
    tiny = Path(model_path(TINY))
    hub.add_repo("acme/Tiny-Story-GGUF", {"tiny-story-F32.gguf": tiny},
                 card="# Tiny Story\nA very small model.", downloads=12, likes=1)
    hub.add_repo("acme/Broken-Mirror-GGUF", {"broken-mirror-F32.gguf": tiny},
                 card="# Broken mirror", downloads=3, likes=0)


def worker(out: Path, theme: str, lang: str, size: tuple[int, int], only: list[str] | None,
           ) -> list[tuple[str, str, str]]:
    """One (theme, language, size): compose the window, run the screens, return the results.
    Call in a fresh process whose screen is ``size`` (see :func:`spawn`)."""
    home = Path(tempfile.mkdtemp(prefix="hearth-shots-"))
    os.environ["HEARTH_HOME"] = str(home / "hearth")
    os.environ["HEARTH_MODELS_DIR"] = str(home / "models")
    os.environ["HF_HOME"] = str(home / "hf")
    os.environ["HF_ENDPOINT"] = OFFLINE
    from PySide6.QtCore import QObject
    from PySide6.QtWidgets import QApplication

    from tests.fixtures.fake_hub import FakeHub
    from tests.fixtures.models import TINY, model_path
    from tests.gui.screenshot_hub import other_apps

    model, note = find_model()
    print(f"model: {note}: {model}", flush=True)
    # Models other apps downloaded (Ollama, LM Studio), and ours, for the Models page.
    other_apps(home / "home", Path(model_path(TINY)))
    library = Path(os.environ["HEARTH_MODELS_DIR"])
    library.mkdir(parents=True, exist_ok=True)
    (library / model.name).symlink_to(model.resolve())
    app = QApplication.instance() or QApplication([])
    assert isinstance(app, QApplication)
    from app.__main__ import compose
    from app.settings import AppSettings
    from app.ui.lang import install_language
    from app.ui.theme import ThemeController

    if lang == PSEUDO:  # every string marked; numbers and dates as in English
        from PySide6.QtCore import QLocale

        from tests.gui.pseudo import PseudoTranslator

        QLocale.setDefault(QLocale("en_US"))
        app.installTranslator(PseudoTranslator(app))
    else:
        install_language(app, lang)  # before the window: its widgets are built translated
    controller = ThemeController(app)
    controller.apply(theme)
    out.mkdir(parents=True, exist_ok=True)
    shot = Shot(out, theme, lang, size, app=app, controller=controller,
                model=library / model.name, model_note=note)
    chosen = [s for s in SCREENS if only is None or s.name in only]
    with FakeHub() as hub:
        shot.hub = hub
        fill_hub(hub, home)
        parent = QObject()
        settings = AppSettings(theme=theme,  # type: ignore[arg-type]
                               language="en" if lang == PSEUDO else lang)
        shot.gui = compose(parent, settings=settings, apply_theme=controller.apply,
                           show_welcome=True,
                           chat_params={"max_tokens": 90, "seed": 7, "temperature": 0.7,
                                        "repeat_penalty": 1.3})
        window = shot.gui.window
        window.resize(*size)
        window.show()
        shot.settle(500)
        try:
            if lang == PSEUDO:
                shot.data = shot.fixed_data()
            shot.run(chosen)
        finally:
            shot.tidy()
            window.close()
            shot.gui.close()
    if lang == PSEUDO:  # added to what other combinations of this run found
        report = out / UNTRANSLATED
        found = json.loads(report.read_text()) if report.is_file() else {}
        for name, lines in shot.untranslated.items():
            found.setdefault(name, []).extend(x for x in lines if x not in found.get(name, []))
        found = {name: lines for name, lines in found.items() if lines}
        report.write_text(json.dumps(found, indent=1, ensure_ascii=False))
    return shot.results


# ---- the screens, in the order they run (each may rely on what the ones before did) ---------------


@screen("welcome-offline")
def _welcome_offline(s: Shot) -> None:
    page = s.gui.window.pages.currentWidget()
    s.wait_until(lambda: page.retry_btn.isVisible() or page.cards(), 40,
                 "the recommended list to give up")
    s.wait_until(lambda: s.gui.hardware.report is not None, 60, "the hardware report")
    s.settle(800)
    s.window_shot("welcome-offline")


@screen("welcome-online")
def _welcome_online(s: Shot) -> None:
    window = s.gui.window
    if window.pages.currentWidget() is window.tabs:
        raise RuntimeError("the welcome page was already closed")
    page = window.pages.currentWidget()
    s.online(True)
    if page.retry_btn.isVisible():
        page.retry_btn.click()
    s.wait_until(lambda: len(page.cards()) > 0, 60, "the recommended cards")
    s.settle(8000)  # each card's header and verdict
    s.window_shot("welcome-online")


@screen("chat-no-model")
def _chat_no_model(s: Shot) -> None:
    s.page("chat")
    s.window_shot("chat-no-model")


@screen("chat-empty", needs_model=True)
def _chat_empty(s: Shot) -> None:
    s.load_model()
    s.gui.window.new_conversation()
    s.settle(500)
    print(f"base-model notice shown: {s.gui.window.base_box.isVisible()}", flush=True)
    s.window_shot("chat-empty")


@screen("chat-streaming", needs_model=True)
def _chat_streaming(s: Shot) -> None:
    s.load_model()
    window, session = s.gui.window, s.gui.session
    window.new_conversation()
    s.settle(200)
    live: list[str] = [""]

    def on_live(message: object) -> None:
        live[0] = getattr(message, "content", "") or ""

    session.live_changed.connect(on_live)
    finished: list[object] = []
    session.reply_finished.connect(finished.append)
    try:
        window.input.setPlainText(STREAM_PROMPT)
        window.send()
        s.wait_until(lambda: len(live[0]) > 40 or bool(finished), 120, "the reply to start")
        if finished:
            raise RuntimeError("the reply finished before it could be caught mid-way")
        window.input.setPlainText("And then?")
        s.app.processEvents()
        # The reply as far as the view shows it: its lines may lag behind the words streamed.
        lines = (line.strip().rstrip("▍").rstrip()
                 for line in window.chat.document().toPlainText().splitlines())
        s.also_shown = [live[0], *(line for line in lines if line and line in live[0])]
        try:
            s.save("chat-streaming", window.grab(), window)
        finally:
            s.also_shown = []
        window.chat_panel.escape()  # stop
        s.wait_until(lambda: bool(finished), 60, "the stopped reply")
    finally:
        session.live_changed.disconnect(on_live)
        session.reply_finished.disconnect(finished.append)
    window.input.clear()
    s.settle(300)


@screen("chat-reply", needs_model=True)
def _chat_reply(s: Shot) -> None:
    s.load_model()
    window = s.gui.window
    for i, prompt in enumerate(PROMPTS[:2]):
        if i:
            window.new_conversation()
        s.ask(prompt)
    s.window_shot("chat-reply")


@screen("chat-document", needs_model=True)
def _chat_document(s: Shot) -> None:
    """A question with a PDF attached (issue 30): the passages that went in, under it."""
    from tests.fixtures.pdf import write_pdf

    s.load_model()
    window = s.gui.window
    window.new_conversation()
    folder = Path(tempfile.mkdtemp(prefix="hearth-document-shot-"))
    pages = [f"Harbour notes, page {n}. Ships are counted at the north pier every morning."
             for n in range(1, 13)]
    pages[3] = ("Harbour fees. A fishing boat pays 12 coins a night at the north pier and 8 at "
                "the south pier; a ferry pays 40.")
    pages[8] = "Opening hours. The harbour office opens at six and closes at noon on Sundays."
    pdf = write_pdf(folder / "harbour-notes.pdf", pages)
    window.chat_panel.attachments.add([str(pdf)])
    window.input.setPlainText("Harbour fees at the north pier: a fishing boat pays")
    s.settle(300)
    s.window_shot("chat-document-attached")  # the chip above the message box, before Send
    s.ask("Harbour fees at the north pier: a fishing boat pays")
    s.window_shot("chat-document")
    _cited(s, pdf)


def _cited(s: Shot, pdf: Path) -> None:
    """A reply that cites the PDF, each citation a link that opens it. The small base model does
    not cite on its own: this exchange is written through the app's store, as an instruct model
    answers (the question's record is the one the chat made above)."""
    from app.chat.transcript import DOCUMENTS, DOCUMENTS_USED
    from app.library.conversations import ConversationStore

    question = s.gui.session.transcript.messages[-2]
    meta = {DOCUMENTS: question.meta.get(DOCUMENTS, ""),
            DOCUMENTS_USED: [{"name": pdf.name, "whole": False, "passages": 2,
                              "places": ["page 4", "page 9"], "path": str(pdf)}]}
    reply = (f"A fishing boat pays **12 coins a night** at the north pier [{pdf.name}, page 4] "
             f"(8 at the south pier). The harbour office that takes the fees closes at noon on "
             f"Sundays [{pdf.name}, page 9].")

    def write(db: Any) -> int:
        convs = ConversationStore(db)
        conv = convs.create("Harbour fees", s.model.name if s.model else "")
        convs.append_message(conv, "user", "What does a fishing boat pay at the north pier?",
                             meta=meta)
        convs.append_message(conv, "assistant", reply)
        return conv

    s.data += [reply, *written(reply)]
    s.gui.conversations.open(s.store(write))
    s.gui.conversations.list_conversations()
    s.settle(800)
    s.window_shot("chat-document-cited")


def _landscape() -> Any:
    """A small painted picture (sky, sun, hills, a house) to ask a vision model about."""
    from PySide6.QtCore import QPointF, QRectF
    from PySide6.QtGui import QColor, QImage, QLinearGradient, QPainter, QPainterPath, QPolygonF

    image = QImage(640, 400, QImage.Format.Format_RGB32)
    p = QPainter(image)
    p.setRenderHint(QPainter.RenderHint.Antialiasing)
    sky = QLinearGradient(0, 0, 0, 400)
    sky.setColorAt(0, QColor("#f6a55f"))
    sky.setColorAt(0.6, QColor("#fbd7a1"))
    p.fillRect(image.rect(), sky)
    p.setBrush(QColor("#f26b3a"))
    p.setPen(QColor("#f26b3a"))
    p.drawEllipse(QRectF(420, 90, 110, 110))
    for color, top in (("#6f8f5e", 250), ("#4e6e45", 300)):
        hill = QPainterPath(QPointF(0, 400))
        hill.cubicTo(QPointF(160, top - 60), QPointF(420, top + 40), QPointF(640, top - 20))
        hill.lineTo(QPointF(640, 400))
        p.setBrush(QColor(color))
        p.setPen(QColor(color))
        p.drawPath(hill)
    p.setBrush(QColor("#e9dcc6"))
    p.setPen(QColor("#5b4636"))
    p.drawRect(QRectF(150, 260, 90, 70))
    p.setBrush(QColor("#9c3b2f"))
    p.drawPolygon(QPolygonF([QPointF(140, 262), QPointF(195, 220), QPointF(250, 262)]))
    p.setBrush(QColor("#ffd874"))
    p.drawRect(QRectF(170, 280, 20, 18))
    p.end()
    return image


@screen("chat-image", needs_model=True)
def _chat_image(s: Shot) -> None:
    """A picture pasted into the message box and asked about (issue 30), with a generated tiny
    vision model: its reply is noise, the picture and the way it goes are what is shown."""
    import shutil

    from app.services.runner_process import RunnerState
    from tests.fixtures.vision import vision_pair

    text_model, projector = vision_pair()
    folder = Path(tempfile.mkdtemp(prefix="hearth-image-shot-"))
    model = folder / "tiny-vision-F32.gguf"
    shutil.copy(text_model, model)
    shutil.copy(projector, folder / "mmproj-tiny-vision-F32.gguf")
    window = s.gui.window
    s.close_welcome()
    window.tabs.setCurrentIndex(0)
    window.choose_model(str(model))
    window.load_selected()
    s._loaded = False  # the next screen loads the real model again
    s.wait_until(lambda: s.gui.runner.state == RunnerState.READY
                 and s.gui.window.chat_panel.active.plan is not None, 180, "the vision model")
    window.new_conversation()
    chips = window.chat_panel.attachments
    chips.image_pasted.emit(_landscape())  # as Ctrl+V with a copied picture does
    s.wait_until(lambda: len(chips.images) == 1, 30, "the pasted picture")
    window.input.setPlainText("What is in this picture?")
    s.settle(300)
    s.window_shot("chat-image-attached")
    params = dict(s.gui.session.params)
    s.gui.session.params["max_tokens"] = 24  # a short reply: the picture stays in view
    try:
        s.ask("What is in this picture?")
    finally:
        s.gui.session.params = params
    s.data += [model.name, model.stem]
    s.window_shot("chat-image")


def _tool_words(meta: str) -> list[str]:
    """What a reply's tool calls show (app/chat/toolcalls.py): the rounds' text, the calls'
    names, arguments (as the view pretty-prints them) and results: data, not Hearth's words."""
    from app.chat.message import Message
    from app.chat.render import pretty_json
    from app.chat.toolcalls import calls_of, rounds_of

    try:
        parsed = json.loads(meta)
    except ValueError:
        return []
    found: list[str] = []
    for round_ in rounds_of(Message("assistant", "", meta=parsed if isinstance(parsed, dict)
                                    else {})):
        found += written(str(round_.get("text") or ""))
        for call in calls_of(round_):
            arguments = pretty_json(str(call.get("arguments") or ""))  # as the view shows it
            found += [str(call.get("name") or ""), *arguments.splitlines(),
                      *written(arguments), *written(str(call.get("result") or ""))]
    return found


@screen("chat-tool-call", needs_model=True)
def _chat_tool_call(s: Shot) -> None:
    """A stored reply that called a tool (written by the script, as the app keeps one), its
    call unfolded; and the question before a call runs, over the message box."""
    from app.services.tool_round import Approval
    from app.tools.builtin import BUILTIN_TOOLS

    s.load_model()
    ids = s.seed_conversations()
    s.gui.conversations.open(ids["tools"])
    s.settle(800)
    view = s.gui.window.chat_panel.chat
    view._on_action("think/1")  # the call unfolded, as a click on its line does
    s.settle(300)
    s.window_shot("chat-tool-call")
    bar = s.gui.window.chat_panel.approval
    call = {"id": "call_2", "name": "calculate", "tool": "builtin/calculate",
            "arguments": '{"expression": "52 * 24 * 60"}', "status": "asking"}
    bar.show_approval(Approval("shot", BUILTIN_TOOLS["calculate"].spec, call))
    s.settle(300)
    try:
        s.window_shot("chat-tool-approval")
    finally:
        bar.show_approval(None)


@screen("chat-markdown", needs_model=True)
def _chat_markdown(s: Shot) -> None:
    s.load_model()
    ids = s.seed_conversations()
    s.gui.conversations.open(ids["markdown"])
    s.settle(800)
    s.window_shot("chat-markdown")


@screen("chat-settings", needs_model=True)
def _chat_settings(s: Shot) -> None:
    s.load_model()
    window = s.gui.window
    window.settings_btn.setChecked(True)
    try:
        s.window_shot("chat-settings")
    finally:
        window.settings_btn.setChecked(False)


@screen("sidebar")
def _sidebar(s: Shot) -> None:
    s.page("chat")
    ids = s.seed_conversations()
    sidebar = s.gui.window.sidebar
    s.wait_until(lambda: len(sidebar.rows()) >= len(SIDEBAR), 10, "the sidebar's rows")
    s.gui.conversations.open(ids["Regex for ISO dates"])
    s.settle(500)
    s.window_shot("sidebar")


@screen("model-picker")
def _model_picker(s: Shot) -> None:
    s.page("chat")
    window = s.gui.window
    window.resize(*s.size)
    window.picker.showPopup()
    s.settle(500)
    popup = window.picker.popup
    if not popup.isVisible():
        raise RuntimeError("the picker's popup did not open")
    try:
        s.composite_shot("model-picker", popup)
    finally:
        window.picker.hidePopup()


@screen("discover-recommended")
def _discover_recommended(s: Shot) -> None:
    s.online(True)
    tab = s.page("discover")
    s.settle(4000)
    s.window_shot("discover-recommended")
    assert tab is not None


@screen("discover-results")
def _discover_results(s: Shot) -> None:
    s.online(True)
    tab = s.page("discover")
    tab.search_edit.setText("llama")
    tab.search()
    s.settle(2500)
    s.window_shot("discover-results")


@screen("discover-repo")
def _discover_repo(s: Shot) -> None:
    s.online(True)
    tab = s.page("discover")
    tab.open_repo("bartowski/Meta-Llama-3.1-8B-Instruct-GGUF")
    s.wait_until(lambda: tab.details is not None, 30, "the repository's details")
    s.settle(3000)  # the verdicts
    s.window_shot("discover-repo")


@screen("dialog-token")
def _dialog_token(s: Shot) -> None:
    from app.ui.token_dialog import TokenDialog

    tab = s.page("discover")
    tab.edit_token()
    s.settle(500)
    dialogs = [d for d in tab.findChildren(TokenDialog) if d.isVisible()]
    if not dialogs:
        raise RuntimeError("the token dialog did not open")
    s.widget_shot("dialog-token", dialogs[-1])
    dialogs[-1].reject()


@screen("downloads")
def _downloads(s: Shot) -> None:
    s.online(True)
    s.page("discover")
    client = s.gui.hub_client.get()
    downloads = s.gui.downloads
    tiny = client.details("acme/Tiny-Story-GGUF")
    done_id = downloads.enqueue(tiny, tiny.groups[0])
    s.wait_until(lambda: any(r.id == done_id and r.state == "done" for r in downloads.rows()),
                 60, "the small download to finish")
    s.hub.fail_next(404, count=50, path_contains="broken-mirror")
    broken = client.details("acme/Broken-Mirror-GGUF")
    failed_id = downloads.enqueue(broken, broken.groups[0])
    s.wait_until(lambda: any(r.id == failed_id and r.state == "failed"
                             for r in downloads.rows()), 60, "the broken download to fail")
    s.hub.throttle_bps = 30_000_000
    big = client.details("bartowski/Meta-Llama-3.1-8B-Instruct-GGUF")
    running = [downloads.enqueue(big, g) for g in big.groups if g.quant in ("Q4_K_M", "Q8_0")]
    s.settle(2500)
    s.page("downloads")
    s.settle(500)
    try:
        s.window_shot("downloads")
    finally:
        for id_ in running:
            downloads.cancel(id_)
        s.hub.throttle_bps = 0


@screen("models")
def _models(s: Shot) -> None:
    s.page("models")
    s.gui.local.rescan()
    s.settle(4000)
    s.window_shot("models")


@screen("hardware")
def _hardware(s: Shot) -> None:
    s.page("hardware")
    hw = s.gui.hardware
    if hw.report is None and not hw.busy:
        hw.refresh()
    s.wait_until(lambda: hw.report is not None and not hw.busy, 90, "the hardware report")
    s.settle(800)
    s.window_shot("hardware")


def _offload(s: Shot, name: str, pinned: bool, draft: bool = False, speed: bool = False
             ) -> None:
    from PySide6.QtWidgets import QDialog, QVBoxLayout

    from app.loading.drafts import DraftSense
    from app.planner.speculation import SpecMemory
    from app.ui.offload_panel import OffloadPanel
    from tests.gui.screenshot_offload import header_model, make_rig, open_and_wait

    folder = Path(tempfile.mkdtemp(prefix="hearth-offload-shot-"))
    rig = make_rig(folder, *(("h100_80gb", "cuda_h100") if speed else ()))
    panel = rig.panel
    model = "Mixtral-8x7B-Instruct-v0.1"
    if speed:  # Llama 3.1 8B with what the speed trial chose on an H200 (docs/gpu.md)
        model = "Llama-3.1-8B-Instruct"
        rig.service.speed = _measured_speed(folder, header_model(folder, model))
    if draft:  # Qwen 2.5 32B, and its 1.5B on this computer to draft for it (not measured yet)
        from tests.fixtures.header_only import QWEN25_1_5B, write_header_only

        model = "Qwen2.5-32B-Instruct"
        small = str(write_header_only(folder / f"{QWEN25_1_5B.name}-Q4_K_M.gguf", QWEN25_1_5B))
        rig.service.drafts = DraftSense(lambda: [small], SpecMemory(folder / "spec.json"),
                                        "this computer")
    # In a dialog as app/ui/offload_dialog.py shows it (with its margins), over the window.
    dialog = QDialog(s.gui.window)
    QVBoxLayout(dialog).addWidget(panel)
    try:
        w, h = OffloadPanel.OPENING_SIZE
        dialog.resize(min(w, s.size[0]), min(h, s.size[1]))
        dialog.show()
        open_and_wait(rig, header_model(folder, model))
        if pinned:  # every layer and expert on the first GPU: more than its 24 GB
            panel.set_pin("n_gpu_layers", panel.ctx.model.n_layer + 1)
            panel.set_pin("n_cpu_moe", 0)
            panel.set_pin("tensor_split", (1.0, 0.0))
            if panel.plan is None or panel.plan.fits:
                raise RuntimeError("the pinned plan should not fit")
        s.widget_shot(name, dialog)
    finally:
        dialog.reject()
        rig.close()
        dialog.deleteLater()


@screen("offload-fits")
def _offload_fits(s: Shot) -> None:
    _offload(s, "offload-fits", pinned=False)


@screen("offload-draft")
def _offload_draft(s: Shot) -> None:
    _offload(s, "offload-draft", pinned=False, draft=True)


@screen("offload-speed")
def _offload_speed(s: Shot) -> None:
    _offload(s, "offload-speed", pinned=False, speed=True)


def _measured_speed(folder: Path, path: str) -> Any:
    """A speed verdict for ``path`` on the recorded H100 machine, as the H200's trial reported
    it (tests/fixtures/gpu/h200-speed-2026-11-27-run3.json)."""
    import json

    from app.loading.prepare import prepare_load
    from app.loading.speed import SpeedSense, record_speed
    from app.planner import Wishes
    from app.planner.speed import SpeedMemory
    from tests.gui.screenshot_offload import recorded_machine

    sense = SpeedSense(SpeedMemory(folder / "speed.json"), "this computer")
    hw, find_build = recorded_machine("h100_80gb", "cuda_h100")
    first = prepare_load(path, cached=hw, detect=lambda: hw, wishes=Wishes(), store=None,
                         build=find_build(None), probe=None, speed=sense)
    run = json.loads((REPO / "tests" / "fixtures" / "gpu" /
                      "h200-speed-2026-11-27-run3.json").read_text())
    trial = run["trial"]["result"]["trial"]
    record_speed(first.plan, sense, first.build.key, {"speed_trial": trial})
    return sense


@screen("offload-does-not-fit")
def _offload_nofit(s: Shot) -> None:
    _offload(s, "offload-does-not-fit", pinned=True)


@screen("offload-dialog", needs_model=True)
def _offload_dialog(s: Shot) -> None:
    """The real Offload dialog for the loaded model, on this machine."""
    from PySide6.QtWidgets import QApplication, QDialog

    s.load_model()
    s.page("chat")
    s.gui.window.bar.offload()
    s.settle(3000)
    found = [w for w in QApplication.topLevelWidgets()
             if isinstance(w, QDialog) and w.isVisible()]
    if not found:
        raise RuntimeError("the offload dialog did not open")
    s.widget_shot("offload-dialog", found[-1])


def _settings_dialog(s: Shot) -> Any:
    from app.ui.settings_dialog import SettingsDialog

    s.close_welcome()
    s.gui.window.settings_requested.emit()
    s.settle(600)
    found = [d for d in s.gui.window.findChildren(SettingsDialog) if d.isVisible()]
    if not found:
        raise RuntimeError("the settings dialog did not open")
    return found[-1]


def _settings_page(key: str) -> Callable[[Shot], None]:
    def run(s: Shot) -> None:
        dialog = _settings_dialog(s)
        try:
            keys = dialog.page_keys
            keys = keys() if callable(keys) else keys
            if key not in keys:
                raise RuntimeError(f"the dialog has no page {key!r}: {keys}")
            dialog.show_page(key)
            s.settle(1500 if key in ("models", "runtime", "runtimes") else 500)
            s.widget_shot(f"settings-{key}", dialog)
        finally:
            dialog.reject()
    return run


def _settings_keys() -> list[str]:
    """The dialog's pages in its rail's order (its module's list: no dialog needs making)."""
    from app.ui.settings_dialog import PAGES

    return [key for key, _icon in PAGES]


@screen("dialog-servers-form")
def _servers_form(s: Shot) -> None:
    dialog = _settings_dialog(s)
    try:
        dialog.show_page("servers")
        panel = dialog.servers_panel
        panel.start_add()
        panel.name_edit.setText("Living-room PC")
        panel.url_edit.setText("192.168.1.31:8765")
        panel.key_edit.setText("k3y-" + "x" * 28)
        s.widget_shot("dialog-servers-form", dialog)
    finally:
        dialog.reject()


@screen("dialog-confirm-delete")
def _confirm_delete(s: Shot) -> None:
    s.page("chat")
    ids = s.seed_conversations()
    sidebar = s.gui.window.sidebar
    s.wait_until(lambda: len(sidebar.rows()) >= len(SIDEBAR), 10, "the sidebar's rows")
    sidebar.set_current(ids["Why is the sky blue?"])
    s.settle(200)
    with s.modal("dialog-confirm-delete"):
        sidebar.delete_selected()


@screen("dialog-shortcuts")
def _shortcuts(s: Shot) -> None:
    from app.ui.shortcuts_dialog import ShortcutsDialog

    s.page("chat")
    s.gui.window.show_shortcuts()
    s.settle(500)
    found = [d for d in s.gui.window.findChildren(ShortcutsDialog) if d.isVisible()]
    if not found:
        raise RuntimeError("the shortcuts dialog did not open")
    s.widget_shot("dialog-shortcuts", found[-1])
    found[-1].reject()


@screen("discover-offline")
def _discover_offline(s: Shot) -> None:
    s.online(False)
    tab = s.page("discover")
    tab.search_edit.setText("qwen coder")
    tab.search()
    s.settle(4000)
    s.window_shot("discover-offline")


def _register_settings() -> None:
    # Before the offline Discover (the last screen), after the dialogs of the window.
    at = names().index("dialog-servers-form")
    for key in _settings_keys():
        SCREENS.insert(at, Screen(f"settings-{key}", _settings_page(key)))
        at += 1


_register_settings()


# ---- the parent: one process per (theme, language, size) ------------------------------------------


def parse_size(text: str) -> tuple[int, int]:
    w, h = text.lower().split("x")
    return int(w), int(h)


def spawn(out: Path, theme: str, lang: str, size: tuple[int, int], only: list[str] | None,
          timeout_s: float = 1800) -> list[tuple[str, str, str]]:
    """Run one combination in a fresh process whose offscreen screen is ``size``."""
    w, h = size
    screen_conf = Path(tempfile.mkdtemp(prefix="hearth-screen-")) / "screen.json"
    screen_conf.write_text(json.dumps({"screens": [{
        "name": "shot", "x": 0, "y": 0, "width": w, "height": h,
        "logicalDpi": 96, "logicalBaseDpi": 96, "dpr": 1}]}))
    env = dict(os.environ, QT_QPA_PLATFORM=f"offscreen:configfile={screen_conf}")
    cmd = [sys.executable, "-m", "tests.gui.screenshots", str(out), "--worker",
           "--themes", theme, "--languages", lang, "--sizes", f"{w}x{h}"]
    if only:
        cmd += ["--only", ",".join(only)]
    results: list[tuple[str, str, str]] = []
    tag = f"[{theme} {lang} {w}x{h}]"
    proc = subprocess.Popen(cmd, cwd=REPO, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True)
    assert proc.stdout is not None
    deadline = time.monotonic() + timeout_s
    for line in proc.stdout:
        if line.startswith(RESULT):
            name, status, detail, path = json.loads(line[len(RESULT):])
            results.append((name, status, detail))
            print(f"{tag} {status:6} {name}: {detail if status != 'ok' else path}", flush=True)
        elif line.strip() and not line.startswith("  ") and "propagateSizeHints" not in line:
            print(f"{tag} {line.rstrip()}", flush=True)
        if time.monotonic() > deadline:
            proc.kill()
            break
    code = proc.wait()
    if code != 0 and not results:
        results.append(("(process)", "FAILED", f"the worker exited with {code}"))
    elif code not in (0, 1):
        results.append(("(process)", "FAILED", f"the worker exited with {code}"))
    return results


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.gui.screenshots",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("out", type=Path, nargs="?")
    parser.add_argument("--sizes", default="1280x720,1400x900")
    parser.add_argument("--themes", default="light,dark")
    parser.add_argument("--languages", default="en")
    parser.add_argument("--only", default="", help="screens to take (comma-separated names)")
    parser.add_argument("--list", action="store_true", help="list the screens and stop")
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.list:
        print("\n".join(names()))
        return 0
    if args.out is None:
        parser.error("OUT_DIR is required")
    only = [n.strip() for n in args.only.split(",") if n.strip()] or None
    unknown = sorted(set(only or ()) - set(names()))
    if unknown:
        parser.error(f"unknown screens: {', '.join(unknown)} (see --list)")
    sizes = [parse_size(x) for x in args.sizes.split(",") if x.strip()]
    themes = [t.strip() for t in args.themes.split(",") if t.strip()]
    langs = [x.strip() for x in args.languages.split(",") if x.strip()]
    out = args.out.resolve()
    if args.worker:
        os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
        results = worker(out, themes[0], langs[0], sizes[0], only)
        sys.stdout.flush()
        # Threads of the services may still be winding down: leave without waiting on them.
        os._exit(1 if any(r[1] != "ok" for r in results) else 0)
    started = time.monotonic()
    if PSEUDO in langs:  # the findings of this run only
        (out / UNTRANSLATED).unlink(missing_ok=True)
    everything: list[tuple[str, str, str, str]] = []
    for lang in langs:
        for theme in themes:
            for size in sizes:
                combo = f"{theme}-{size[0]}x{size[1]}-{lang}"
                for name, status, detail in spawn(out, theme, lang, size, only):
                    everything.append((combo, name, status, detail))
    failed = [r for r in everything if r[2] != "ok"]
    took = time.monotonic() - started
    print(f"\n{len(everything) - len(failed)} screenshots in {out} ({took:.0f} s); "
          f"{len(failed)} failed")
    for combo, name, _status, detail in failed:
        print(f"  FAILED {name} ({combo}): {detail}")
    left = 0
    if PSEUDO in langs:
        report = out / UNTRANSLATED
        found: dict[str, list[str]] = json.loads(report.read_text()) if report.is_file() else {}
        left = sum(len(lines) for lines in found.values())
        print(f"\npseudo-locale: {left} text(s) left untranslated on {len(found)} screen(s)"
              + (f" ({report})" if found else ""))
        for name, lines in found.items():
            for line in lines:
                print(f"  UNTRANSLATED [{name}] {line}")
    return 1 if failed or left else 0


if __name__ == "__main__":
    sys.exit(main())
