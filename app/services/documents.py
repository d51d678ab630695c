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

from PySide6.QtCore import QObject, Signal

from app.chat.transcript import DOCUMENTS, DOCUMENTS_USED, estimate_tokens
from app.i18n import T_, TextError
from app.jobs import CancelToken
from app.loading.endpoint import ChatEndpoint
from app.services.tasks import TaskRunner

if TYPE_CHECKING:  # the readers are imported by the job, not on the way to the first frame
    from app.documents.extract import Document
    from app.documents.index import PassageIndex

log = logging.getLogger(__name__)

# Below this many tokens of room, documents cannot say anything useful: the person is told.
MIN_ROOM = 128
# The context assumed for a server's model, whose size Hearth does not know.
UNKNOWN_CONTEXT = 8192
# Files read from one attached folder at most (a home folder's 50,000 is refused with a sentence).
MAX_FOLDER_FILES = 2000


class DocumentService(QObject):
    ready = Signal(object)  # the question's meta (DOCUMENTS, DOCUMENTS_USED)
    failed = Signal(object)  # a sentence (Text)
    busy_changed = Signal(bool)

    def __init__(self, tasks: TaskRunner, index: PassageIndex | None = None,
                 parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._tasks = tasks
        self._index = index
        self._token: CancelToken | None = None

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

        def work(token: CancelToken) -> dict[str, Any]:
            return _prepare(files, question, texts, _counter(endpoint), room, index, token)

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


def _files(paths: list[str]) -> list[tuple[str, bool]]:
    """The files to read: each file, and each readable file of each folder (in a folder's
    order, hidden ones left out), with whether it came from a folder."""
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
            found += [os.path.join(folder, n) for n in sorted(names)
                      if not n.startswith(".") and readable(n)]
            if len(found) > MAX_FOLDER_FILES:
                raise DocumentError(T_("{folder} holds more than {count} documents: attach a "
                                       "smaller folder, or the files you need.",
                                       folder=os.path.basename(path), count=MAX_FOLDER_FILES))
        out += [(f, True) for f in found]
    return out


def _stored(index: PassageIndex, doc_id: int, path: str) -> Document:
    """A document indexed before, from its passages (not read again)."""
    from app.documents.extract import Document, Section

    passages = index.all_passages(doc_id)
    name = passages[0].document if passages else os.path.basename(path)
    return Document(path, name, tuple(Section(p.where, p.text) for p in passages))


def _prepare(paths: list[str], question: str, texts: list[str], count: Count,
             room: int | None, index: PassageIndex | None, token: CancelToken
             ) -> dict[str, Any]:
    from app.documents.extract import DocumentError, extract
    from app.documents.fit import fit
    from app.documents.index import PassageIndex

    index = index or PassageIndex()
    documents = []
    for path, in_folder in _files(paths):
        token.check()
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
    fitted = fit(documents, question, budget, count, index)
    if not fitted.text:
        raise DocumentError(T_("Not even one passage of the documents fits the room this "
                               "conversation leaves: start a new conversation, or load the "
                               "model with a larger context."))
    paths_by_name = {doc.name: doc.path for _, doc in documents}
    used = [{**u.to_meta(), "path": paths_by_name.get(u.name, "")} for u in fitted.used]
    log.info("documents for a question: %d tokens of %d (%s)", fitted.tokens, budget,
             ", ".join(f"{u['name']}: {'whole' if u['whole'] else u['passages']}" for u in used))
    return {DOCUMENTS: fitted.text, DOCUMENTS_USED: used}
