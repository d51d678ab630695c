"""Capture llama.cpp's own log lines.

llama.cpp reports what it allocated (``llama_kv_cache: size = ...``, ``... compute buffer size =
...``) and why a load failed only through its log callback. The callback is process-global, so
it is installed once and fans lines out to whoever is capturing, and to our logger at debug level.
"""

from __future__ import annotations

import ctypes
import logging
import os
import sys
import tempfile
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass

log = logging.getLogger("llama.cpp")

_lock = threading.Lock()
_sinks: list[list[str]] = []
_partial: list[str] = []
_callback: object | None = None  # kept referenced: ctypes callbacks die with their object


def install() -> None:
    """Route llama.cpp's log into ours (idempotent)."""
    global _callback
    if _callback is not None:
        return
    import llama_cpp

    @llama_cpp.llama_log_callback
    def _on_log(level: int, text: bytes, _user: ctypes.c_void_p) -> None:
        _feed(text.decode("utf-8", errors="replace") if text else "")

    _callback = _on_log
    llama_cpp.llama_log_set(_on_log, ctypes.c_void_p(0))


def install_mtmd() -> None:
    """Route libmtmd's log (images) into ours as well: it has its own callback."""
    install()
    from llama_cpp import mtmd_cpp

    mtmd_cpp.mtmd_helper_log_set(_callback, ctypes.c_void_p(0))


def _feed(chunk: str) -> None:
    # llama.cpp may emit one line in several calls (e.g. progress dots); join until newline.
    with _lock:
        _partial.append(chunk)
        if "\n" not in chunk:
            return
        text = "".join(_partial)
        _partial.clear()
        *lines, rest = text.split("\n")
        if rest:
            _partial.append(rest)
        for line in lines:
            if not line.strip():
                continue
            for sink in _sinks:
                sink.append(line)
    for line in lines:
        if line.strip():
            log.debug("%s", line)


@contextmanager
def capture() -> Iterator[list[str]]:
    """Collect every llama.cpp log line emitted inside the block."""
    install()
    lines: list[str] = []
    with _lock:
        _sinks.append(lines)
    try:
        yield lines
    finally:
        with _lock:
            _sinks.remove(lines)


def last_error(lines: list[str]) -> str:
    """The last captured line that says why something failed ("" when none does)."""
    for line in reversed(lines):
        low = line.lower()
        if "error" in low or "failed" in low or "out of memory" in low:
            return line.strip()
    return ""


@dataclass
class Captured:
    text: str = ""


_stderr_lock = threading.Lock()


@contextmanager
def stderr_captured(keep: Callable[[str], str] = lambda text: text) -> Iterator[Captured]:
    """What is written to the process's stderr inside the block, in ``Captured.text``.

    A few llama.cpp failures bypass the log callback and ``fprintf`` to stderr themselves (a
    grammar it cannot parse, written out whole). The file descriptor is process-wide, so whatever
    other threads write meanwhile lands here too: ``keep(text)`` is written back to stderr after
    the block, so nothing but what the caller drops is lost. One capture at a time.
    """
    captured = Captured()
    with _stderr_lock:
        try:
            sys.stderr.flush()
            saved = os.dup(2)
        except (OSError, ValueError, AttributeError):  # no stderr to borrow: capture nothing
            yield captured
            return
        with tempfile.TemporaryFile() as spool:
            try:
                os.dup2(spool.fileno(), 2)
                yield captured
            finally:
                try:
                    sys.stderr.flush()
                except (OSError, ValueError, AttributeError):
                    pass
                os.dup2(saved, 2)
                os.close(saved)
                spool.seek(0)
                captured.text = spool.read().decode("utf-8", errors="replace")
                _write_all(2, keep(captured.text).encode("utf-8", errors="replace"))


def _write_all(fd: int, data: bytes) -> None:
    while data:
        data = data[os.write(fd, data):]
