"""The SQLite store as Qt services: every database call runs on the store's one thread.

app/storage/db.py's :class:`StoreThread` owns the only connection; this module submits work to it
and delivers results on the GUI thread through a queued signal. The GUI thread never waits on the
disk (except for a bounded flush when the window closes).

Writes are queued in order on that one thread, so "append the live reply, then update it as it
streams" needs no locking: the update job runs after the append job has stored the row id.

Failures to read (the sidebar's list, opening a conversation) are reported apart from failures to
save: the window shows ``failed`` as "Could not save the conversation", which is wrong, and
alarming, when nothing was being saved.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from concurrent.futures import Future
from pathlib import Path
from typing import Any, TypeVar

from PySide6.QtCore import QObject, Signal

from app.chat.message import Message
from app.chat.transcript import Transcript
from app.i18n import T_
from app.library import export
from app.library.conversations import Conversation, ConversationStore
from app.library.models import ModelLibrary
from app.storage.atomic import write_atomic
from app.storage.db import Database, SetAside, StorageError, StoreThread
from app.storage.images import ImageStore
from app.storage.legacy import short_title

log = logging.getLogger(__name__)

T = TypeVar("T")
RECENT_LIMIT = 10


class StoreService(QObject):
    """Runs store calls on the store thread; results come back on the GUI thread."""

    failed = Signal(object)  # a storage failure, as a sentence for the user
    # Once, when the store thread has opened the library or given up: the database's SetAside
    # (a damaged library was moved away and a new one begun), None (opened as it was), or the
    # exception that kept it closed. What the person must hear about at start.
    opened = Signal(object)
    _done = Signal(object)  # (callback, value), emitted on the store thread

    def __init__(self, thread: StoreThread, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._thread = thread
        self._done.connect(self._deliver)
        self._outcome: list[object] = []  # the opening's outcome, once delivered
        self._waiting: list[Callable[[object], None]] = []
        # The first job on the thread: it runs right after the opening, before any other call.
        self.call(_set_aside, self._on_opened, self._on_opened)

    def when_opened(self, fn: Callable[[object], None]) -> None:
        """Call ``fn(outcome)`` on this thread once the library has opened or failed to (now,
        when that is already known); the outcome is as :attr:`opened` carries it."""
        if self._outcome:
            fn(self._outcome[0])
        else:
            self._waiting.append(fn)

    def call(self, fn: Callable[[Database], T], on_ok: Callable[[T], None] | None = None,
             on_err: Callable[[Exception], None] | None = None) -> Future[T]:
        """Run ``fn(db)`` on the store thread; ``on_ok``/``on_err`` run on this thread.

        After :meth:`close` (the window is going) a call is dropped, its future cancelled: a
        widget's timer that fires during the teardown must not raise in the event loop."""
        try:
            future = self._thread.submit(fn)
        except RuntimeError:
            log.info("a store call after the store closed was dropped")
            dropped: Future[T] = Future()
            dropped.cancel()
            return dropped

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

    def _on_opened(self, outcome: object) -> None:
        self._outcome.append(outcome)
        waiting, self._waiting = self._waiting, []
        for fn in waiting:
            fn(outcome)
        self.opened.emit(outcome)

    def _deliver(self, item: tuple[Callable[[Any], None], Any]) -> None:
        callback, value = item
        callback(value)


def _set_aside(db: Database) -> SetAside | None:
    return db.set_aside


class _Ref:
    """A row id known only once the store thread has inserted the row."""

    def __init__(self, value: int | None = None) -> None:
        self.value = value


class ConversationService(QObject):
    """Keeps conversations in the store (the chat session's ChatStore) and serves the sidebar.

    Saving never blocks: rows are inserted on the store thread, and a message saved before its
    parent's row id is known refers to the parent's pending row (the store thread runs jobs in
    order, so the parent's insert has run by then).
    """

    failed = Signal(object)  # a save failed (the chat session reports it)
    read_failed = Signal(object)  # the list or a conversation could not be read (the sidebar)
    listed = Signal(object)  # list[ConversationSummary]: the answer to list_conversations()
    opened = Signal(Conversation)  # the answer to open(), show_branch()
    changed = Signal()  # the list's order or contents changed (a new conversation, a reply)
    exported = Signal(str)  # the path of a finished export

    def __init__(self, store: StoreService, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._store = store
        # Where the chat's images are kept: an export carries them (set by the composition).
        self.images: ImageStore | None = None
        # Rows being inserted, keyed by the object's id; the object itself is held so the id
        # cannot be reused before the row id is known.
        self._conversations: dict[int, tuple[_Ref, Transcript]] = {}
        self._messages: dict[int, tuple[_Ref, Message]] = {}

    # ---- saving (the chat session) -----------------------------------------------------------

    def save_message(self, transcript: Transcript, message: Message) -> None:
        conv = self._conversation(transcript, message)
        # A snapshot taken now, on the GUI thread: the live reply keeps growing meanwhile.
        role, content, note, meta = message.role, message.content, message.note, dict(message.meta)
        known = self._ref(message)
        if known is not None:
            def update(db: Database) -> None:
                assert known.value is not None  # the append before this one set it
                ConversationStore(db).update_message(known.value, content, note, meta)

            self._store.call(update, on_err=self._failed)
            return
        parent = self._ref(message.parent) if message.parent is not None else None
        ref = _Ref()
        self._messages[id(message)] = (ref, message)

        def append(db: Database) -> int:
            assert conv.value is not None
            ref.value = ConversationStore(db).append_message(
                conv.value, role, content, note, meta=meta,
                parent=None if parent is None else parent.value)
            return ref.value

        def stored(row: int) -> None:
            message.id = row
            self._messages.pop(id(message), None)
            self.changed.emit()

        self._store.call(append, stored, self._failed)

    def save_settings(self, transcript: Transcript) -> None:
        """Store the conversation's settings (once it exists; a new one is created with them)."""
        if transcript.conversation_id is None and id(transcript) not in self._conversations:
            return  # kept in the transcript; stored when the first message creates the row
        conv = self._conversation(transcript, None)
        settings = dict(transcript.settings)

        def put(db: Database) -> None:
            assert conv.value is not None
            ConversationStore(db).set_settings(conv.value, settings)

        self._store.call(put, on_err=self._failed)

    def set_model(self, transcript: Transcript) -> None:
        """Remember the model the conversation is now written with."""
        if transcript.conversation_id is not None:
            conv, model = transcript.conversation_id, transcript.model
            self._store.call(lambda db: ConversationStore(db).set_model(conv, model),
                             on_err=self._failed)

    def flush(self, timeout_s: float) -> bool:
        return self._store.flush(timeout_s)

    # ---- the sidebar -------------------------------------------------------------------------

    def list_conversations(self, query: str = "") -> None:
        """The sidebar's rows (pinned first), filtered by ``query``; answered by ``listed``."""
        self._store.call(lambda db: ConversationStore(db).search(query), self.listed.emit,
                         self._read_failed(T_("the conversations")))

    def open(self, conv_id: int) -> None:
        """Read a conversation; answered by ``opened``."""
        self._store.call(lambda db: ConversationStore(db).get(conv_id), self.opened.emit,
                         self._read_failed(T_("the conversation")))

    def show_branch(self, conv_id: int, message_id: int) -> None:
        """Show another version at a branch point; answered by ``opened``."""
        self._store.call(lambda db: ConversationStore(db).show_branch(conv_id, message_id),
                         self.opened.emit, self._failed)

    def rename(self, conv_id: int, title: str) -> None:
        self._change(lambda db: ConversationStore(db).rename(conv_id, title))

    def set_pinned(self, conv_id: int, pinned: bool) -> None:
        self._change(lambda db: ConversationStore(db).set_pinned(conv_id, pinned))

    def delete(self, conv_id: int) -> None:
        self._change(lambda db: ConversationStore(db).delete(conv_id))

    def export(self, conv_id: int, path: str, kind: str) -> None:
        """Write the conversation to ``path`` as "markdown" or "json"; answered by ``exported``
        (or ``failed`` with the reason: a full disk, a folder without write access)."""
        images = self.images

        def write(db: Database) -> str:
            conv = ConversationStore(db).get(conv_id)
            text = export.to_json(conv, images) if kind == "json" else \
                export.to_markdown(conv, images)
            try:
                write_atomic(Path(path), text.encode("utf-8"))
            except OSError as exc:
                raise StorageError(T_("Could not write {path}: {error}. Choose another folder, or "
                                      "free some space.", path=path, error=exc.strerror or str(exc)),
                                   Path(path)) from exc
            return path

        self._store.call(write, self.exported.emit, self._failed)

    # ---- inside ------------------------------------------------------------------------------

    def _change(self, fn: Callable[[Database], None]) -> None:
        self._store.call(fn, lambda _none: self.changed.emit(), self._failed)

    def _ref(self, message: Message) -> _Ref | None:
        """The message's row: known, being inserted, or None when never saved."""
        if message.id is not None:
            return _Ref(message.id)
        pending = self._messages.get(id(message))
        return pending[0] if pending is not None else None

    def _conversation(self, transcript: Transcript, first: Message | None) -> _Ref:
        if transcript.conversation_id is not None:
            return _Ref(transcript.conversation_id)
        pending = self._conversations.get(id(transcript))
        if pending is not None:
            return pending[0]
        ref = _Ref()
        self._conversations[id(transcript)] = (ref, transcript)
        title = short_title(first.content) if first is not None and first.role == "user" \
            else "New conversation"
        model, settings = transcript.model, dict(transcript.settings)

        def create(db: Database) -> int:
            store = ConversationStore(db)
            ref.value = store.create(title, model)
            if settings:
                store.set_settings(ref.value, settings)
            return ref.value

        def created(row: int) -> None:
            transcript.conversation_id = row
            self._conversations.pop(id(transcript), None)

        self._store.call(create, created, self._failed)
        return ref

    def _failed(self, exc: Exception) -> None:
        self.failed.emit(str(exc))

    def _read_failed(self, what: str) -> Callable[[Exception], None]:
        def report(exc: Exception) -> None:
            # A StorageError is a sentence for the person; anything else is a bug, already in
            # the log with its traceback (StoreService.call).
            why = str(exc) if isinstance(exc, StorageError) else \
                T_("an unexpected error (the details are in the log)")
            self.read_failed.emit(T_("Could not read {what}. {why}", what=what, why=why))

        return report


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
