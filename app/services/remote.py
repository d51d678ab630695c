"""The servers the user added, as a QObject: their list, their models, their keys.

Every network and keyring call runs on the task pool and answers with a signal; the list itself
(``servers.json``, a few hundred bytes) is written on the GUI thread like the app settings.
Hearth contacts a server only when the user adds or edits it, presses Refresh, chooses one of its
models (the model is checked to still be there) or chats with it: nothing at start.

Keys are read once, on the pool, and kept in memory for the run. They are kept by the rule
for all of Hearth's secrets (app/storage/secrets.py: the OS keyring, else an owner-only file);
where even that fails, a new key is kept in memory only, and ``failed`` says so.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from PySide6.QtCore import QObject, Signal

from app.i18n import T_
from app.remote import keys as keystore
from app.remote.client import ModelGone, RemoteClient, RemoteError
from app.remote.servers import (
    RemoteModel,
    Server,
    ServerList,
    check_name,
    new_id,
    normalize_base_url,
)
from app.services.tasks import TaskRunner

log = logging.getLogger(__name__)

KEY_UNREADABLE = ("The API key for this server could not be read (the keyring may be locked, "
                  "or the key gone): choose Edit and enter it again.")


@dataclass(frozen=True)
class _Checked:
    """What one check found, handed from the pool to the GUI thread."""

    key: str | None
    models: list[str] | None  # None: the check failed
    error: RemoteError | None
    key_note: str  # a keyring problem to tell the user, or ""


class RemoteService(QObject):
    """Satisfies app/services/protocols.py's RemoteLike."""

    changed = Signal()  # the list of servers or one's models changed
    checked = Signal(str, object, bool)  # server id, a sentence, whether it is an error
    in_use = Signal(RemoteModel)  # checked and ready to chat with
    use_failed = Signal(RemoteModel, object)  # the model, a sentence
    failed = Signal(object)  # a sentence: the list could not be saved, a keyring problem

    def __init__(self, tasks: TaskRunner, servers: ServerList, parent: QObject | None = None, *,
                 make_client: Callable[..., Any] = RemoteClient,
                 keys: Any = keystore, clock: Callable[[], float] = time.time) -> None:
        super().__init__(parent)
        self._tasks = tasks
        self._list = servers
        self._make_client = make_client
        self._keys_store = keys  # save_key / get_key / delete_key (app/remote/keys.py)
        self._clock = clock
        self._keys: dict[str, str | None] = {}  # read or entered this run (None: no key)
        self._notes: dict[str, tuple[str, bool]] = {}  # the last check's sentence per server
        self._gen: dict[str, int] = {}  # late answers for an edited or removed server drop

    # ---- reading ---------------------------------------------------------------------------

    def servers(self) -> list[Server]:
        return list(self._list.servers)

    def server(self, server_id: str) -> Server | None:
        return self._list.get(server_id)

    def note(self, server_id: str) -> tuple[str, bool]:
        """The last check's sentence for the server and whether it was an error."""
        return self._notes.get(server_id, ("", False))

    def connection(self, server_id: str) -> tuple[str, str]:
        """(base URL, key) for a chat with the server; the key is the one read or entered this
        run ("" before :meth:`use` read it, or when the server has none)."""
        server = self._list.get(server_id)
        return (server.base_url if server else "", self._keys.get(server_id) or "")

    # ---- changes ---------------------------------------------------------------------------

    def add(self, name: str, base_url: str, key: str) -> Server:
        """Add a server and check it (its models are fetched in the background).

        Raises ServerFormError (a ValueError) with a sentence when a field cannot be used."""
        server = Server(new_id(), check_name(name, self.servers()), normalize_base_url(base_url),
                        has_key=bool(keystore.check_key(key)))
        self._list.put(server)
        self._save()
        self.changed.emit()
        self._check(server.id, new_key=keystore.check_key(key))
        return server

    def edit(self, server_id: str, name: str, base_url: str, key: str | None) -> Server:
        """Change a server (``key`` None keeps its key, "" removes it) and check it again."""
        old = self._list.get(server_id)
        if old is None:
            raise ValueError("That server is no longer in the list.")
        new_key = None if key is None else keystore.check_key(key)
        server = Server(server_id, check_name(name, self.servers(), server_id),
                        normalize_base_url(base_url),
                        has_key=old.has_key if new_key is None else bool(new_key),
                        models=old.models if old.base_url == normalize_base_url(base_url) else (),
                        checked=old.checked)
        self._list.put(server)
        self._save()
        self.changed.emit()
        self._check(server_id, new_key=new_key)
        return server

    def remove(self, server_id: str) -> None:
        """Forget the server and its key."""
        if self._list.get(server_id) is None:
            return
        self._list.remove(server_id)
        self._gen[server_id] = self._gen.get(server_id, 0) + 1
        self._keys.pop(server_id, None)
        self._notes.pop(server_id, None)
        self._save()
        self.changed.emit()
        store = self._keys_store
        self._tasks.run(lambda: store.delete_key(server_id), lambda _r: None)

    def refresh(self, server_id: str) -> None:
        """Fetch the server's models again (Refresh, or a chat found its model gone)."""
        if self._list.get(server_id) is not None:
            self._check(server_id)

    def use(self, model: RemoteModel) -> None:
        """Get ready to chat with ``model``: its key is read and the model checked to still be
        on the server; ``in_use`` or ``use_failed`` follows."""
        if self._list.get(model.server_id) is None:
            self.use_failed.emit(model, T_("That server is no longer in Settings → Servers."))
            return
        self._check(model.server_id, want=model)

    # ---- the work --------------------------------------------------------------------------

    def _save(self) -> None:
        try:
            self._list.save()
        except OSError as exc:
            log.warning("servers could not be saved: %s", exc)
            self.failed.emit(T_("The list of servers could not be saved ({error}); it applies until "
                                "Hearth closes.", error=str(exc)))

    def _check(self, server_id: str, new_key: str | None = None,
               want: RemoteModel | None = None) -> None:
        server = self._list.get(server_id)
        assert server is not None
        gen = self._gen[server_id] = self._gen.get(server_id, 0) + 1
        known = server_id in self._keys
        cached = self._keys.get(server_id)
        store, make_client = self._keys_store, self._make_client

        def work() -> _Checked:
            key, note = cached, ""
            if new_key is not None:  # entered now: keep it, then use it
                key = new_key or None
                if new_key:
                    try:
                        store.save_key(server_id, new_key)
                    except keystore.KeyStoreError as exc:
                        log.info("keyring: %s", exc.detail)
                        note = str(exc)
                else:
                    store.delete_key(server_id)
            elif not known and server.has_key:
                key = store.get_key(server_id)
                if key is None:
                    note = KEY_UNREADABLE
            try:
                with make_client(server.base_url, key, name=server.name) as client:
                    models = client.models()
            except RemoteError as exc:
                return _Checked(key, None, exc, note)
            return _Checked(key, models, None, note)

        self._tasks.run(work, lambda r: self._on_checked(server_id, gen, r, want),
                        lambda exc: self._on_bug(server_id, gen, exc, want))

    def _on_checked(self, server_id: str, gen: int, result: _Checked,
                    want: RemoteModel | None) -> None:
        server = self._list.get(server_id)
        if server is None or gen != self._gen.get(server_id):
            return  # removed or changed meanwhile: a newer check answers
        if result.key_note != KEY_UNREADABLE:  # else the keyring is asked again next time
            self._keys[server_id] = result.key
        if result.key_note:
            self.failed.emit(result.key_note)
        if result.models is None:
            assert result.error is not None
            text = str(result.error)
            self._notes[server_id] = (text, True)
            self.checked.emit(server_id, text, True)
            if want is not None:
                self.use_failed.emit(want, text)
            return
        if list(server.models) != result.models or not server.checked:
            self._list.put(server.with_models(result.models, self._clock()))
            self._save()
            self.changed.emit()
        n = len(result.models)
        names = ", ".join(result.models[:5]) + (", …" if n > 5 else "")  # model names: data
        text = (T_("Connected: %n model(s) ({names}).", None, n, names=names) if n
                else T_("Connected, but the server lists no models."))
        self._notes[server_id] = (text, False)
        self.checked.emit(server_id, text, False)
        if want is None:
            return
        if want.model in result.models:
            self.in_use.emit(want)
        else:
            gone = ModelGone(T_("{name} no longer offers the model “{model}”. Its list of models "
                                "has been refreshed: pick another one.", name=server.name,
                                model=want.model))
            self.use_failed.emit(want, str(gone))

    def _on_bug(self, server_id: str, gen: int, exc: Exception, want: RemoteModel | None) -> None:
        if gen != self._gen.get(server_id):
            return
        text = T_("Checking the server failed: {error}", error=str(exc))
        self._notes[server_id] = (text, True)
        self.checked.emit(server_id, text, True)
        if want is not None:
            self.use_failed.emit(want, text)
