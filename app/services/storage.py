"""The SQLite store as Qt services: every database call runs on the store's one thread.

app/storage/db.py's :class:`StoreThread` owns the only connection; this module submits work to it
and delivers results on the GUI thread through a queued signal. The GUI thread never waits on the
disk (except for a bounded flush when the window closes).

Writes are queued in order on that one thread, so "append the live reply, then update it as it
streams" needs no locking: the update job runs after the append job has stored the row id.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from concurrent.futures import Future
from typing import Any, TypeVar

from PySide6.QtCore import QObject, Signal

from app.chat.message import Message
from app.chat.transcript import Transcript
from app.library.conversations import ConversationStore
from app.library.models import ModelLibrary
from app.storage.db import Database, StorageError, StoreThread
from app.storage.legacy import short_title

log = logging.getLogger(__name__)

T = TypeVar("T")
RECENT_LIMIT = 10


class StoreService(QObject):
    """Runs store calls on the store thread; results come back on the GUI thread."""

    failed = Signal(str)  # a storage failure, as a sentence for the user
    _done = Signal(object)  # (callback, value), emitted on the store thread

    def __init__(self, thread: StoreThread, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._thread = thread
        self._done.connect(self._deliver)

    def call(self, fn: Callable[[Database], T], on_ok: Callable[[T], None] | None = None,
             on_err: Callable[[Exception], None] | None = None) -> Future[T]:
        """Run ``fn(db)`` on the store thread; ``on_ok``/``on_err`` run on this thread."""
        future = self._thread.submit(fn)

        def done(f: Future[T]) -> None:
            exc = f.exception()
            if exc is None:
                if on_ok is not None:
                    self._done.emit((on_ok, f.result()))
                return
            if not isinstance(exc, StorageError):
                log.error("store call failed", exc_info=exc)
            self._done.emit((on_err or self._report, exc))

        future.add_done_callback(done)
        return future

    def flush(self, timeout_s: float) -> bool:
        """Wait until every queued call has run (only when the window closes)."""
        try:
            self._thread.submit(lambda _db: None).result(timeout=timeout_s)
        except Exception as exc:  # a stuck disk must not keep the window from closing
            log.warning("the store did not finish in %.1f s: %s", timeout_s, exc)
            return False
        return True

    def close(self, timeout_s: float = 3.0) -> None:
        self.flush(timeout_s)
        self._thread.close()

    def _report(self, exc: Exception) -> None:
        self.failed.emit(str(exc))

    def _deliver(self, item: tuple[Callable[[Any], None], Any]) -> None:
        callback, value = item
        callback(value)


class _Ref:
    """A row id known only once the store thread has inserted the row."""

    def __init__(self, value: int | None = None) -> None:
        self.value = value


class ConversationService(QObject):
    """Keeps conversations in the store (the chat session's ChatStore)."""

    failed = Signal(str)

    def __init__(self, store: StoreService, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._store = store
        # Rows being inserted, keyed by the object's id; the object itself is held so the id
        # cannot be reused before the row id is known.
        self._conversations: dict[int, tuple[_Ref, Transcript]] = {}
        self._messages: dict[int, tuple[_Ref, Message]] = {}

    def save_message(self, transcript: Transcript, message: Message) -> None:
        conv = self._conversation(transcript, message)
        # A snapshot taken now, on the GUI thread: the live reply keeps growing meanwhile.
        role, content, note = message.role, message.content, message.note
        if message.id is not None:
            row = message.id
            self._store.call(lambda db: ConversationStore(db).update_message(row, content, note),
                             on_err=self._failed)
            return
        pending = self._messages.get(id(message))
        if pending is not None:
            ref = pending[0]

            def update(db: Database) -> None:
                assert ref.value is not None  # the append before this one set it
                ConversationStore(db).update_message(ref.value, content, note)

            self._store.call(update, on_err=self._failed)
            return
        ref = _Ref()
        self._messages[id(message)] = (ref, message)

        def append(db: Database) -> int:
            assert conv.value is not None
            ref.value = ConversationStore(db).append_message(conv.value, role, content, note)
            return ref.value

        def stored(row: int) -> None:
            message.id = row
            self._messages.pop(id(message), None)

        self._store.call(append, stored, self._failed)

    def flush(self, timeout_s: float) -> bool:
        return self._store.flush(timeout_s)

    def _conversation(self, transcript: Transcript, first: Message) -> _Ref:
        if transcript.conversation_id is not None:
            return _Ref(transcript.conversation_id)
        pending = self._conversations.get(id(transcript))
        if pending is not None:
            return pending[0]
        ref = _Ref()
        self._conversations[id(transcript)] = (ref, transcript)
        title = short_title(first.content) if first.role == "user" else "New conversation"
        model = transcript.model

        def create(db: Database) -> int:
            ref.value = ConversationStore(db).create(title, model)
            return ref.value

        def created(row: int) -> None:
            transcript.conversation_id = row
            self._conversations.pop(id(transcript), None)

        self._store.call(create, created, self._failed)
        return ref

    def _failed(self, exc: Exception) -> None:
        self.failed.emit(str(exc))


class ModelLibraryService(QObject):
    """The models the user has used, newest first (the picker's list)."""

    recent_changed = Signal(list)  # list[str]

    def __init__(self, store: StoreService, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._store = store
        self._recent: list[str] = []
        store.call(lambda db: [m.path for m in ModelLibrary(db).recent(RECENT_LIMIT)],
                   self._loaded)

    def recent(self) -> list[str]:
        return list(self._recent)

    def use(self, path: str) -> list[str]:
        self._recent = [path, *[p for p in self._recent if p != path]][:RECENT_LIMIT]
        self._store.call(lambda db: ModelLibrary(db).add_or_touch(path))
        return list(self._recent)

    def _loaded(self, paths: list[str]) -> None:
        # Models chosen before the list arrived stay on top.
        chosen = [p for p in self._recent if p not in paths]
        self._recent = [*chosen, *paths][:RECENT_LIMIT]
        self.recent_changed.emit(self.recent())
