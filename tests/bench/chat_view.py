"""What one streamed update costs the chat view, against the length of the conversation.

The view (app/ui/chat_view.py, offscreen, shown, 900 x 700) holds 10, 100 and 1,000 finished
messages of realistic Markdown (paragraphs, a list, a fenced code block, alternating with short
user questions), then a reply streams: each update grows it by a few tokens and calls
``set_live``, then ``QApplication.processEvents()`` so Qt's layout, scroll bar and paint are in
the figure. The figure is the median over many updates, after a few warm-up ones; the three
views take turns update by update, so the machine's other work weighs on each size alike.

The old approach (the whole transcript as one ``setHtml`` per update, as app/ui/chat_view.py
did before it updated in place) is measured in the same run on the same messages and HTML, as a
baseline.

    .venv/bin/python -m tests.bench.chat_view            # prints the figures
    .venv/bin/python -m tests.bench.chat_view --strict   # exit 1 unless 1,000 <= 1.5 x 10

Target: an update costs the same at 1,000 messages as at 10 (within 1.5x).
"""

from __future__ import annotations

import argparse
import gc
import os
import statistics
import sys
import time
from collections.abc import Callable
from typing import TYPE_CHECKING

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from app.chat.message import Message

if TYPE_CHECKING:
    from PySide6.QtWidgets import QWidget

SIZES = (10, 100, 1000)
TARGET_RATIO = 1.5

ANSWER = """Here is one way to do it, with a **context manager** so the file is closed even \
when decoding fails, and `pathlib` for the path handling.

```python
from pathlib import Path

def read_lines(path: str) -> list[str]:
    with open(Path(path), encoding="utf-8") as f:
        return [line.rstrip("\\n") for line in f]
```

Things to keep in mind:

- pass an `encoding`: the default depends on the platform;
- prefer `Path.read_text()` for *small* files;
- see the [docs](https://docs.python.org/3/library/pathlib.html) for more.

That should cover most cases; ask again if your files are very large."""

TOKENS = ("The ", "next ", "part ", "of ", "the ", "answer ", "keeps ", "streaming, ", "word ",
          "by ", "word; ", "`code` ", "and ", "**bold** ", "too.\n\n")


def conversation(n: int) -> list[Message]:
    return [Message("user", f"Question {i}: how do I read a file line by line?") if i % 2 == 0
            else Message("assistant", f"Answer {i}. {ANSWER}") for i in range(n)]


class _Stream:
    """A reply growing by a few tokens per update, the same sequence for every view."""

    def __init__(self) -> None:
        self.text = "Sure. Here is what I would do, step by step.\n\n"
        self.i = 0

    def grow(self) -> str:
        self.text += "".join(TOKENS[(self.i + k) % len(TOKENS)] for k in range(3))
        self.i += 1
        return self.text


def measure(updaters: dict[int, Callable[[str], None]], updates: int,
            warmup: int = 5) -> dict[int, float]:
    """Median ms per update for each view. The views take turns, update by update, so that
    whatever else the machine is doing weighs on every size alike."""
    from PySide6.QtWidgets import QApplication

    streams = {n: _Stream() for n in updaters}
    times: dict[int, list[float]] = {n: [] for n in updaters}
    gc.collect()
    gc.disable()  # a collection in one sample would only add noise
    try:
        for i in range(warmup + updates):
            for n, update in updaters.items():
                text = streams[n].grow()
                start = time.perf_counter()
                update(text)
                QApplication.processEvents()
                if i >= warmup:
                    times[n].append(time.perf_counter() - start)
    finally:
        gc.enable()
    return {n: statistics.median(t) * 1000 for n, t in times.items()}


def in_place(n: int) -> tuple[QWidget, Callable[[str], None]]:
    """Today's view: only the live message is re-rendered."""
    from app.ui.chat_view import ChatView

    view = ChatView()
    view.resize(900, 700)
    view.show()
    view.set_messages(conversation(n))
    live = Message("assistant", "")

    def update(text: str) -> None:
        live.content = text
        view.set_live(live)

    return view, update


def whole_transcript(n: int) -> tuple[QWidget, Callable[[str], None]]:
    """The old view: the whole transcript as one setHtml on every update (same HTML)."""
    from PySide6.QtWidgets import QTextBrowser

    from app.chat.render import render_message
    from app.ui.chat_view import theme_for

    view = QTextBrowser()
    view.resize(900, 700)
    view.show()
    theme = theme_for(view.palette())
    done = "".join(render_message(m, theme) for m in conversation(n))
    live = Message("assistant", "")
    bar = view.verticalScrollBar()

    def update(text: str) -> None:
        live.content = text
        at_end = bar.value() >= bar.maximum() - 4
        view.setHtml(done + render_message(live, theme, streaming=True))
        if at_end:
            bar.setValue(bar.maximum())

    return view, update


def run(make: Callable[[int], tuple[QWidget, Callable[[str], None]]],
        updates: int) -> dict[int, float]:
    made = {n: make(n) for n in SIZES}
    try:
        return measure({n: update for n, (_, update) in made.items()}, updates)
    finally:
        for view, _ in made.values():
            view.close()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.bench.chat_view", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--strict", action="store_true",
                        help=f"exit 1 unless the 1,000-message cost is within {TARGET_RATIO}x "
                             "of the 10-message cost")
    parser.add_argument("--updates", type=int, default=100, help="updates measured per size")
    args = parser.parse_args(argv)

    from PySide6.QtWidgets import QApplication

    QApplication.instance() or QApplication([])
    new = run(in_place, args.updates)
    # The old way takes most of a second per update at 1,000 messages: fewer samples.
    old = run(whole_transcript, max(5, args.updates // 5))
    print(f"one live update (set_live + processEvents): median of {args.updates} updates "
          f"(old way: {max(5, args.updates // 5)})")
    print(f"{'messages':>8}  {'in place':>10}  {'old: setHtml of all':>20}")
    for n in SIZES:
        print(f"{n:>8}  {new[n]:>8.2f} ms  {old[n]:>17.2f} ms")
    ratio = new[SIZES[-1]] / new[SIZES[0]]
    ok = ratio <= TARGET_RATIO
    print(f"ratio {SIZES[-1]:,} / {SIZES[0]} messages (in place): {ratio:.2f}x "
          f"(target <= {TARGET_RATIO}x: {'met' if ok else 'MISSED'})")
    return 0 if ok or not args.strict else 1


if __name__ == "__main__":
    sys.exit(main())
