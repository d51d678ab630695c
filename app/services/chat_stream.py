"""Streaming a chat reply off the GUI thread.

A worker QObject lives in its own QThread and owns its own httpx client. Deltas leave it as
queued signals; the view coalesces them on a timer so a fast model cannot flood the event loop.
Stop sets a flag and closes the response: the runner sees the disconnect and stops generating.
"""

from __future__ import annotations

import logging
import threading
from typing import Any

from PySide6.QtCore import QObject, QThread, Signal, Slot

from app.runner_client import ChatStream, RunnerClient, RunnerError

log = logging.getLogger(__name__)


class _Worker(QObject):
    delta = Signal(str)
    done = Signal(str, object)  # finish_reason ("stop", "length", "stopped"), usage dict | None
    failed = Signal(str)

    def __init__(self) -> None:
        super().__init__()
        self._stop = threading.Event()
        self._stream: ChatStream | None = None
        self._lock = threading.Lock()

    @Slot(str, str, list, dict)
    def run(self, url: str, key: str, messages: list[dict[str, Any]],
            params: dict[str, Any]) -> None:
        self._stop.clear()
        try:
            with RunnerClient(url, key) as client:
                stream = client.stream_chat(messages, **params)
                with self._lock:
                    self._stream = stream
                if self._stop.is_set():
                    stream.close()
                for text in stream:
                    if self._stop.is_set():
                        break
                    self.delta.emit(text)
                if self._stop.is_set():
                    self.done.emit("stopped", None)
                else:
                    end = stream.end
                    self.done.emit(end.finish_reason if end else "stop", end.usage if end else None)
        except RunnerError as exc:
            if self._stop.is_set():
                self.done.emit("stopped", None)
            else:
                self.failed.emit(str(exc))
        except Exception as exc:  # a bug, but the chat must survive it
            log.exception("chat stream failed")
            self.failed.emit(f"The reply failed: {exc}")
        finally:
            with self._lock:
                self._stream = None

    def stop(self) -> None:
        """Called from the GUI thread."""
        self._stop.set()
        with self._lock:
            stream = self._stream
        if stream is not None:
            stream.close()


class ChatStreamer(QObject):
    """Owns the worker thread. One reply at a time."""

    delta = Signal(str)
    done = Signal(str, object)
    failed = Signal(str)
    _start = Signal(str, str, list, dict)

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._thread = QThread(self)
        self._thread.setObjectName("chat-stream")
        self._worker = _Worker()
        self._worker.moveToThread(self._thread)
        self._start.connect(self._worker.run)
        self._worker.delta.connect(self.delta)
        self._worker.done.connect(self._on_done)
        self._worker.failed.connect(self._on_failed)
        self._thread.start()
        self.busy = False

    def send(self, url: str, key: str, messages: list[dict[str, Any]],
             params: dict[str, Any] | None = None) -> None:
        if self.busy:
            raise RuntimeError("a reply is already streaming")
        self.busy = True
        self._start.emit(url, key, messages, dict(params or {}))

    def stop(self) -> None:
        if self.busy:
            self._worker.stop()

    def shutdown(self) -> None:
        self._worker.stop()
        self._thread.quit()
        self._thread.wait(3000)

    def _on_done(self, reason: str, usage: object) -> None:
        self.busy = False
        self.done.emit(reason, usage)

    def _on_failed(self, message: str) -> None:
        self.busy = False
        self.failed.emit(message)
