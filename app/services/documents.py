"""Documents attached to a question, made ready off the GUI thread: each file's text (read once
per version, app/documents/index.py), counted with the loaded model's own tokenizer (the
runner's ``/runner/tokens``; an estimate for a server's model), and what fits the room the
conversation leaves, whole or the best passages (app/documents/fit.py).

One preparation at a time, as a cancellable job: a 1,000-page PDF never freezes the window,
and a new question or closing the window stops it.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QFileSystemWatcher, QObject, QTimer, Signal

from app.chat.transcript import DOCUMENTS, DOCUMENTS_USED, estimate_tokens
from app.i18n import T_, TextError
from app.jobs import CancelToken
from app.loading.endpoint import ChatEndpoint
from app.services.tasks import TaskRunner

if TYPE_CHECKING:  # the readers are imported by the job, not on the way to the first frame
    from app.documents.extract import Document
    from app.documents.fit import Similar
    from app.documents.index import PassageIndex
    from app.runner_client.embedding import EmbeddingRunner

log = logging.getLogger(__name__)

# Below this many tokens of room, documents cannot say anything useful: the person is told.
MIN_ROOM = 128
# The context assumed for a server's model, whose size Hearth does not know.
UNKNOWN_CONTEXT = 8192
# Files read from one attached folder at most (a home folder's 50,000 is refused with a sentence).
MAX_FOLDER_FILES = 2000
WATCH_SETTLE_MS = 800  # a folder quiet this long after a change is read again


class DocumentService(QObject):
    ready = Signal(object)  # the question's meta (DOCUMENTS, DOCUMENTS_USED)
    failed = Signal(object)  # a sentence (Text)
    busy_changed = Signal(bool)
    refreshed = Signal(int)  # the watched knowledge was brought up to date: files read again
    progress = Signal(int, int)  # files read of those a question has (before the next one)

    def __init__(self, tasks: TaskRunner, index: PassageIndex | None = None,
                 parent: QObject | None = None, settle_ms: int = WATCH_SETTLE_MS,
                 embedder: Callable[[], EmbeddingRunner | None] = lambda: None) -> None:
        super().__init__(parent)
        self._tasks = tasks
        self._index = index
        # The library's embedding model's runner, if it has one (asked on this thread): search
        # by meaning, fused with the words' (app/documents/fit.py).
        self._embedder = embedder
        self._token: CancelToken | None = None
        # The open conversation's knowledge, watched (this process owns the index): a change
        # is read again once the folder has been quiet for settle_ms.
        self._watched: list[str] = []
        self._watcher = QFileSystemWatcher(self)
        self._watcher.directoryChanged.connect(self._changed)
        self._watcher.fileChanged.connect(self._changed)
        self._settle = QTimer(self)
        self._settle.setSingleShot(True)
        self._settle.setInterval(settle_ms)
        self._settle.timeout.connect(self.refresh)
        self._refreshing: CancelToken | None = None
        self._again = False

    def watch(self, paths: Sequence[str]) -> None:
        """Watch ``paths`` (the open conversation's knowledge) and bring their passages up to
        date now: files changed while Hearth was closed are read again before a question."""
        self._watched = list(paths)
        old = self._watcher.directories() + self._watcher.files()
        if old:
            self._watcher.removePaths(old)
        if self._watched:
            self.refresh()

    def refresh(self) -> None:
        """Read again what of the watched knowledge is new or changed (a cancellable job)."""
        if self._refreshing is not None:
            self._again = True  # one more pass once this one ends
            return
        paths, index, similar = list(self._watched), self._index, self._similar()

        def work(token: CancelToken) -> tuple[int, list[str]]:
            return _refresh(paths, index or _default_index(), token, similar)

        self._refreshing = self._tasks.start_job(work, self._on_refreshed, self._on_refresh_failed,
                                                 name="knowledge", expected=(TextError, OSError))

    def _similar(self) -> Similar | None:
        embedding = self._embedder()
        return embedding.similar if embedding is not None else None

    def _changed(self, _path: str) -> None:
        self._settle.start()

    def _on_refreshed(self, result: tuple[int, list[str]]) -> None:
        self._refreshing = None
        read, watch = result
        have = set(self._watcher.directories() + self._watcher.files())
        roots = [w.rstrip(os.sep) for w in self._watched]  # a pass for an earlier list: not those
        missing = [p for p in watch if p not in have
                   and any(p == r or p.startswith(r + os.sep) for r in roots)]
        if missing:
            self._watcher.addPaths(missing)
        self.refreshed.emit(read)
        if self._again:
            self._again = False
            self.refresh()

    def _on_refresh_failed(self, exc: Exception) -> None:
        self._refreshing = None
        log.info("the knowledge could not be read again: %s", exc)

    @property
    def busy(self) -> bool:
        return self._token is not None

    def prepare(self, paths: Sequence[str], question: str, endpoint: ChatEndpoint,
                room: int | None, history: Sequence[str]) -> None:
        """Make ``paths`` ready to go with ``question``: ``room`` is the tokens the sent
        conversation may take (None: unknown), ``history`` what of it is sent before."""
        self.cancel()
        index = self._index
        files, texts = list(paths), [*history, question]
        similar = self._similar()

        def work(token: CancelToken) -> dict[str, Any]:
            # Emitted from the job's thread: Qt queues it to the window's.
            return _prepare(files, question, texts, _counter(endpoint), room, index, token,
                            similar, self.progress.emit)

        self._token = self._tasks.start_job(work, self._on_ready, self._on_failed,
                                            name="documents",
                                            expected=(TextError, OSError))
        self.busy_changed.emit(True)

    def cancel(self) -> None:
        token, self._token = self._token, None
        if token is not None:
            token.cancel()
            self.busy_changed.emit(False)

    def _on_ready(self, meta: dict[str, Any]) -> None:
        self._token = None
        self.busy_changed.emit(False)
        self.ready.emit(meta)

    def _on_failed(self, exc: Exception) -> None:
        self._token = None
        self.busy_changed.emit(False)
        self.failed.emit(str(exc))


Count = Callable[[Sequence[str]], list[int]]


def _counter(endpoint: ChatEndpoint) -> Count:
    """The loaded model's own count on this computer; an estimate for a server's model."""
    if endpoint.is_remote:
        return lambda texts: [estimate_tokens(t) for t in texts]

    def count(texts: Sequence[str]) -> list[int]:
        from app.runner_client import RunnerClient

        with RunnerClient(endpoint.url, endpoint.key, timeout=30.0) as client:
            counts, _context = client.count_tokens(texts)
        return counts

    return count


def _files(paths: list[str], folders: list[str] | None = None) -> list[tuple[str, bool]]:
    """The files to read: each file, and each readable file of each folder (in a folder's
    order, hidden ones left out), with whether it came from a folder. ``folders`` gets every
    folder walked (a watch sees its own entries only)."""
    from app.documents.extract import DocumentError
    from app.documents.kinds import readable

    out: list[tuple[str, bool]] = []
    for path in paths:
        if not os.path.isdir(path):
            out.append((path, False))
            continue
        found = []
        for folder, dirs, names in os.walk(path):
            dirs[:] = sorted(d for d in dirs if not d.startswith("."))
            if folders is not None:
                folders.append(folder)
            found += [os.path.join(folder, n) for n in sorted(names)
                      if not n.startswith(".") and readable(n)]
            if len(found) > MAX_FOLDER_FILES:
                raise DocumentError(T_("{folder} holds more than {count} documents: attach a "
                                       "smaller folder, or the files you need.",
                                       folder=os.path.basename(path), count=MAX_FOLDER_FILES))
        out += [(f, True) for f in found]
    return out


def _default_index() -> PassageIndex:
    from app.documents.index import PassageIndex

    return PassageIndex()


def _refresh(paths: list[str], index: PassageIndex, token: CancelToken,
             similar: Similar | None = None) -> tuple[int, list[str]]:
    """Index what of ``paths`` is new or changed; the number read, and the folders and files to
    watch (a folder's subfolders too: a watch sees its own entries only). With ``similar``, the
    passages are embedded now too, not at the next question."""
    from app.documents.extract import DocumentError, extract

    read = 0
    present = [p for p in paths if os.path.exists(p)]
    folders: list[str] = []
    try:
        files = _files(present, folders)
    except DocumentError:
        files = []  # a folder grown past the limit: a question says so
    watch = list(dict.fromkeys([*present, *folders]))
    ids: list[int] = []
    for path, _in_folder in files:
        token.check()
        watch.append(path)
        known = index.known(path)
        if known is not None:
            ids.append(known)
            continue
        try:
            ids.append(index.add(extract(path, token)))
            read += 1
        except DocumentError as exc:
            log.info("knowledge: %s", exc)
    if similar is not None and ids and read:
        try:
            similar("", ids, 1)  # the embedding runner embeds what it has not yet
        except Exception as exc:
            log.info("knowledge: not embedded now (%s); the next question will", exc)
    return read, watch


def _stored(index: PassageIndex, doc_id: int, path: str) -> Document:
    """A document indexed before, from its passages (not read again)."""
    from app.documents.extract import Document, Section

    passages = index.all_passages(doc_id)
    name = passages[0].document if passages else os.path.basename(path)
    return Document(path, name, tuple(Section(p.where, p.text) for p in passages))


def _prepare(paths: list[str], question: str, texts: list[str], count: Count,
             room: int | None, index: PassageIndex | None, token: CancelToken,
             similar: Similar | None = None,
             progress: Callable[[int, int], None] = lambda _done, _total: None
             ) -> dict[str, Any]:
    from app.documents.extract import DocumentError, extract
    from app.documents.fit import fit
    from app.documents.index import PassageIndex

    index = index or PassageIndex()
    documents = []
    files = _files(paths)
    for done, (path, in_folder) in enumerate(files):
        token.check()
        progress(done, len(files))
        known = index.known(path)
        if known is not None:  # this version read before: its passages are indexed
            documents.append((known, _stored(index, known, path)))
            continue
        try:
            doc = extract(path, token)
        except DocumentError:
            if in_folder:
                continue  # a folder's odd file (a binary, a scan) does not stop the question
            raise
        documents.append((index.add(doc), doc))
    if not documents:
        raise DocumentError(T_("None of the attached files has text Hearth can read."))
    token.check()
    budget = (room if room is not None else UNKNOWN_CONTEXT) - sum(count(texts))
    if budget < MIN_ROOM:
        raise DocumentError(T_("This conversation leaves no room for documents in the model's "
                               "context: start a new conversation, or load the model with a "
                               "larger context."))
    fitted = fit(documents, question, budget, count, index, similar)
    if not fitted.text:
        raise DocumentError(T_("Not even one passage of the documents fits the room this "
                               "conversation leaves: start a new conversation, or load the "
                               "model with a larger context."))
    paths_by_name = {doc.name: doc.path for _, doc in documents}
    used = [{**u.to_meta(), "path": paths_by_name.get(u.name, "")} for u in fitted.used]
    log.info("documents for a question: %d tokens of %d (%s)", fitted.tokens, budget,
             ", ".join(f"{u['name']}: {'whole' if u['whole'] else u['passages']}" for u in used))
    return {DOCUMENTS: fitted.text, DOCUMENTS_USED: used}
