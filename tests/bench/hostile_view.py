"""What a hostile reply costs the chat view's main thread (issue 24, item 7).

Measured on the real view (app/ui/chat_view.py, offscreen, shown, 900 x 700), each figure the
median of several tries, with the garbage collector off while timing. The figure is the main
thread's own CPU time (``time.thread_time``): on a machine busy with other work, wall time
would also count the time spent waiting for a core, which is not the view's cost; the wall
time is printed beside it. Nothing measured here waits on anything but the CPU.

- opening a conversation (``set_messages``, then ``QApplication.processEvents()`` and a paint,
  ``grab()``) whose reply is a 1 MB line of words, a 1 MB line without a space (base64), and a
  2,000 x 50 Markdown table;
- one streamed update of each (``set_live`` with a few hundred more characters, then
  ``processEvents``), once the reply being streamed is already that big;
- "Show all" on each (a message this big opens in a window of its own), painted.

The baseline, from the same run: opening a conversation with a normal 2 KB reply, and one
update of a normal reply. Target: each hostile figure <= 100 ms. ``--strict`` exits 1 when one
is missed.

    .venv/bin/python -m tests.bench.hostile_view [--tries N] [--updates N] [--strict]

tests/bench/hostile.py can take the figures from :func:`measure`.
"""

from __future__ import annotations

import argparse
import gc
import os
import random
import statistics
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, NamedTuple

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from app.chat.message import Message

if TYPE_CHECKING:
    from app.ui.chat_view import ChatView

TARGET_MS = 100.0
SIZE = 1_000_000  # characters of the one-line replies
TABLE = (2000, 50)  # rows, columns
UPDATE_CHARS = 400  # what one streamed update adds (about 40 ms of a fast model)

NORMAL = """Here is one way to do it, with a **context manager** so the file is closed even \
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

| Method | Streams | Notes |
|:-------|--------:|-------|
| `open()` | yes | the usual way |
| `read_text()` | no | small files only |

That should cover most cases; ask again if your files are very large. You can also read the \
file in chunks with `f.read(65536)` in a loop, which keeps memory flat whatever its size. """ * 2


class Figure(NamedTuple):
    """One measured figure: what, its median main-thread CPU time and wall time in
    milliseconds, and its target (None: a baseline)."""

    what: str
    ms: float
    target_ms: float | None
    wall_ms: float


def one_line(size: int = SIZE, seed: int = 1) -> str:
    """A reply of ``size`` characters without a line break: words, some of them formatted."""
    rnd = random.Random(seed)
    words = ("lorem", "ipsum", "dolor", "sit", "amet,", "consectetur", "**adipiscing**", "elit.",
             "`sed`", "do", "eiusmod", "tempor", "*incididunt*", "ut", "labore")
    out: list[str] = []
    n = 0
    while n < size:
        w = rnd.choice(words)
        out.append(w)
        n += len(w) + 1
    return " ".join(out)[:size]


def no_spaces(size: int = SIZE, seed: int = 2) -> str:
    """A reply of ``size`` characters with neither a space nor a line break (base64-like)."""
    rnd = random.Random(seed)
    alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
    return "".join(rnd.choice(alphabet) for _ in range(size))


def table(rows: int = TABLE[0], cols: int = TABLE[1]) -> str:
    """A Markdown table of ``rows`` x ``cols`` short cells."""
    head = "| " + " | ".join(f"col {j}" for j in range(cols)) + " |"
    rule = "|" + "---|" * cols
    body = ("| " + " | ".join(f"r{i}c{j}" for j in range(cols)) + " |" for i in range(rows))
    return "\n".join([head, rule, *body]) + "\n"


@contextmanager
def _no_gc() -> Iterator[None]:
    gc.collect()
    gc.disable()  # a collection in one sample would only add noise
    try:
        yield
    finally:
        gc.enable()


def _view() -> ChatView:
    from app.ui.chat_view import ChatView

    view = ChatView()
    view.resize(900, 700)
    view.show()
    return view


def _ms(action: Callable[[], object]) -> tuple[float, float]:
    """(main-thread CPU, wall) milliseconds that ``action`` takes."""
    cpu, wall = time.thread_time(), time.perf_counter()
    action()
    return (time.thread_time() - cpu) * 1000, (time.perf_counter() - wall) * 1000


def _medians(times: list[tuple[float, float]]) -> tuple[float, float]:
    return statistics.median(t[0] for t in times), statistics.median(t[1] for t in times)


def open_ms(reply: str, tries: int) -> tuple[float, float]:
    """Median main-thread time to open a conversation (a question and ``reply``) and paint it."""
    from PySide6.QtWidgets import QApplication

    view = _view()
    other = [Message("user", "Something else?"), Message("assistant", "Yes.")]
    conversation = [Message("user", "Show me."), Message("assistant", reply)]
    times: list[tuple[float, float]] = []

    def show() -> None:
        view.set_messages(conversation)
        QApplication.processEvents()
        view.grab()  # the first paint

    try:
        for _ in range(tries):
            view.set_messages(other)  # the view showed another conversation before
            QApplication.processEvents()
            with _no_gc():
                times.append(_ms(show))
    finally:
        view.close()
    return _medians(times)


def update_ms(reply: str, updates: int, warmup: int = 3) -> tuple[float, float]:
    """Median main-thread time of one streamed update once ``reply`` has mostly arrived."""
    from PySide6.QtWidgets import QApplication

    view = _view()
    view.set_messages([Message("user", "Show me.")])
    steps = warmup + updates
    start = max(0, len(reply) - steps * UPDATE_CHARS)
    live = Message("assistant", reply[:start])
    view.set_live(live)  # the reply so far, as if streamed until now
    QApplication.processEvents()
    times: list[tuple[float, float]] = []

    def update() -> None:
        live.content = reply[:len(live.content) + UPDATE_CHARS]
        view.set_live(live)
        QApplication.processEvents()

    try:
        with _no_gc():
            for i in range(steps):
                t = _ms(update)
                if i >= warmup:
                    times.append(t)
    finally:
        view.close()
    return _medians(times)


def show_all_ms(reply: str, tries: int) -> tuple[float, float]:
    """Median main-thread time of "Show all" on a folded ``reply``, painted: in the transcript,
    or past WHOLE_INLINE_CHARS in a window of its own."""
    from PySide6.QtCore import QUrl
    from PySide6.QtWidgets import QApplication

    from app.ui.chat_view import WholeText

    view = _view()
    times: list[tuple[float, float]] = []

    def show() -> None:
        view.anchorClicked.emit(QUrl("hearth:whole/1"))
        QApplication.processEvents()
        for window in view.findChildren(WholeText):
            window.grab()
        view.grab()

    try:
        for _ in range(tries):
            view.set_messages([Message("user", "Show me."), Message("assistant", reply)])
            QApplication.processEvents()
            with _no_gc():
                times.append(_ms(show))
            for window in view.findChildren(WholeText):
                window.close()
            QApplication.processEvents()
    finally:
        view.close()
    return _medians(times)


def measure(tries: int = 5, updates: int = 20) -> list[Figure]:
    """The figures of this benchmark (a QApplication is made if there is none)."""
    from PySide6.QtWidgets import QApplication

    QApplication.instance() or QApplication([])
    replies = {"a 1 MB one-line reply": one_line(),
               "a 1 MB line without spaces": no_spaces(),
               f"a {TABLE[0]:,} x {TABLE[1]} table": table()}
    open_ms(NORMAL, 2)  # warm up: imports, fonts, Pygments' lexer
    out = [Figure(f"open a normal {len(NORMAL) / 1000:.1f} KB reply (baseline)",
                  *_cpu_target_wall(open_ms(NORMAL, tries), None))]
    out += [Figure(f"open {what}", *_cpu_target_wall(open_ms(reply, tries), TARGET_MS))
            for what, reply in replies.items()]
    out.append(Figure("one update of a normal reply (baseline)",
                      *_cpu_target_wall(update_ms(NORMAL * 4, updates), None)))
    out += [Figure(f"one update of {what}",
                   *_cpu_target_wall(update_ms(reply, updates), TARGET_MS))
            for what, reply in replies.items()]
    out += [Figure(f"show all of {what}", *_cpu_target_wall(show_all_ms(reply, 3), TARGET_MS))
            for what, reply in replies.items()]
    return out


def _cpu_target_wall(ms: tuple[float, float],
                     target: float | None) -> tuple[float, float | None, float]:
    return ms[0], target, ms[1]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.bench.hostile_view", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--strict", action="store_true",
                        help=f"exit 1 unless every hostile figure is <= {TARGET_MS:.0f} ms")
    parser.add_argument("--tries", type=int, default=5, help="opens measured per reply")
    parser.add_argument("--updates", type=int, default=20, help="updates measured per reply")
    args = parser.parse_args(argv)

    figures = measure(args.tries, args.updates)
    print(f"chat view, main-thread CPU time (median of {args.tries} opens, {args.updates} "
          "updates; wall time beside it)")
    missed = 0
    for f in figures:
        if f.target_ms is None:
            verdict = ""
        elif f.ms <= f.target_ms:
            verdict = f"target <= {f.target_ms:.0f} ms: met"
        else:
            verdict = f"target <= {f.target_ms:.0f} ms: MISSED"
            missed += 1
        print(f"  {f.what:<48} {f.ms:>8.1f} ms  (wall {f.wall_ms:>7.1f} ms)   {verdict}")
    return 1 if missed and args.strict else 0


if __name__ == "__main__":
    sys.exit(main())
