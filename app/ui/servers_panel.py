"""Settings → Servers: the OpenAI-compatible servers whose models the picker offers.

A list of the servers the user added, with Add, Edit, Remove and Refresh; the form to add or edit
one sits under the list (name, address, API key: :class:`ServerForm`, which only collects the
fields). Every change goes to the remote service (app/services/remote.py), which saves the list,
keeps the key (app/storage/secrets.py) and checks the server off the GUI thread; its answers (how
many models, or what went wrong) appear under the list. Names, addresses and the servers' own
error texts are plain text, never markup.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QFormLayout,
    QHBoxLayout,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from app.remote.servers import Server, ServerFormError
from app.services.protocols import RemoteLike
from app.ui.common import ask, plain_label, set_text_color, text_color

_ERROR_HUE = "#d0342c"
_ID_ROLE = Qt.ItemDataRole.UserRole

INTRO = ("Servers that speak the OpenAI API: another computer running Hearth, llama.cpp's server, "
         "LM Studio, Ollama, vLLM or an online service. Their models appear in the model picker, "
         "marked as remote. Hearth contacts a server only when you add it, refresh it, or chat "
         "with one of its models.")


class ServerForm(QWidget):
    """The form that adds or edits one server: name, address and API key, with the service's
    objection under them. It only collects the fields; the panel hands them to the service."""

    submitted = Signal()  # Save pressed, or Enter in a field
    cancelled = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.name_edit = QLineEdit()
        self.name_edit.setAccessibleName("Server name")
        self.name_edit.setPlaceholderText("Office PC")
        self.url_edit = QLineEdit()
        self.url_edit.setAccessibleName("Server address")
        self.url_edit.setPlaceholderText("http://192.168.1.20:8080/v1")
        self.key_edit = QLineEdit()
        self.key_edit.setAccessibleName("API key")
        self.key_edit.setEchoMode(QLineEdit.EchoMode.Password)
        self.form_error = plain_label(wrap=True)
        self.form_error.setObjectName("form_error")
        set_text_color(self.form_error, text_color(self.palette(), _ERROR_HUE))
        self.form_error.hide()
        self.save_btn = QPushButton("Add and connect")
        self.save_btn.setDefault(True)
        self.save_btn.clicked.connect(self.submitted)
        self.cancel_btn = QPushButton("Cancel")
        self.cancel_btn.setAutoDefault(False)
        self.cancel_btn.clicked.connect(self.cancelled)
        for edit in (self.name_edit, self.url_edit, self.key_edit):
            edit.returnPressed.connect(self.submitted)
        self.form_title = plain_label(selectable=False)
        font = self.form_title.font()
        font.setBold(True)
        self.form_title.setFont(font)
        form_buttons = QHBoxLayout()
        form_buttons.addStretch(1)
        form_buttons.addWidget(self.cancel_btn)
        form_buttons.addWidget(self.save_btn)
        form = QFormLayout(self)
        form.setContentsMargins(0, 8, 0, 0)
        form.addRow(self.form_title)
        form.addRow("Name:", self.name_edit)
        form.addRow("Address:", self.url_edit)
        form.addRow("API key:", self.key_edit)
        form.addRow(plain_label("Kept in the system keyring, or where there is none in a file "
                                "only your account can read. Leave it empty for a server that "
                                "needs none.", muted=True, selectable=False))
        form.addRow(self.form_error)
        form.addRow(form_buttons)

    def fields(self) -> tuple[str, str, str]:
        """Name, address and key as typed."""
        return self.name_edit.text(), self.url_edit.text(), self.key_edit.text()

    def open_for(self, server: Server | None) -> None:
        """Show the form filled for ``server`` (None: a new one); the key field stays empty."""
        self.name_edit.setText(server.name if server else "")
        self.url_edit.setText(server.base_url if server else "")
        self.key_edit.clear()
        self.key_edit.setPlaceholderText(
            "Unchanged (kept); type to replace" if server and server.has_key
            else "None")
        self.save_btn.setText("Save and connect" if server else "Add and connect")
        self.form_title.setText(f"Edit “{server.name}”" if server else "Add a server")
        self.form_error.hide()
        self.show()
        self.name_edit.setFocus()

    def refuse(self, sentence: str) -> None:
        """Say under the fields why the service did not take them."""
        self.form_error.setText(sentence)
        self.form_error.show()

    def dismiss(self) -> None:
        """Hide the form, the key cleared: a key is never left in a widget."""
        self.key_edit.clear()
        self.hide()
        self.form_error.hide()


class ServersPanel(QWidget):
    """The servers list and its form, on the remote service."""

    def __init__(self, remote: RemoteLike, parent: QWidget | None = None, *,
                 confirm: Callable[[QWidget, str, str], bool] | None = None) -> None:
        """``confirm(parent, title, question)`` asks before a server is removed (tests answer
        it)."""
        super().__init__(parent)
        self._remote = remote
        self._confirm = confirm or ask
        self._editing: str | None = None  # the server the form edits; None: a new one

        self.intro = plain_label(INTRO, wrap=True, muted=True, selectable=False)
        top = self._build_list()
        self.status = plain_label(wrap=True)
        self.status.setObjectName("server_status")
        self.form = ServerForm()
        self.form.submitted.connect(self.save_form)
        self.form.cancelled.connect(self.close_form)
        self.form.hide()
        # The form's fields, reachable from the panel too (tests, the screenshot script).
        self.name_edit, self.url_edit = self.form.name_edit, self.form.url_edit
        self.key_edit, self.form_error = self.form.key_edit, self.form.form_error
        self.save_btn, self.cancel_btn = self.form.save_btn, self.form.cancel_btn

        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.intro)
        layout.addLayout(top)
        layout.addWidget(self.status)
        layout.addWidget(self.form)

        # Bound methods: Qt disconnects them when the panel goes; the service stays.
        remote.changed.connect(self._fill)
        remote.checked.connect(self._on_checked)
        self._fill()

    def _build_list(self) -> QHBoxLayout:
        """The list of servers with its buttons at the right."""
        self.list = QListWidget()
        self.list.setAccessibleName("Servers")
        self.list.setMinimumHeight(110)
        self.list.setSpacing(2)
        self.list.setAlternatingRowColors(True)  # two lines per server: keep them together
        self.list.currentItemChanged.connect(lambda *_a: self._show_selected())
        self.list.itemDoubleClicked.connect(lambda _i: self.edit_selected())
        self.add_btn = QPushButton("Add…")
        self.add_btn.setAccessibleName("Add a server")
        self.add_btn.clicked.connect(self.start_add)
        self.edit_btn = QPushButton("Edit…")
        self.edit_btn.clicked.connect(self.edit_selected)
        self.remove_btn = QPushButton("Remove")
        self.remove_btn.clicked.connect(self.remove_selected)
        self.refresh_btn = QPushButton("Refresh")
        self.refresh_btn.setToolTip("Connect to the server again and fetch its list of models")
        self.refresh_btn.clicked.connect(self.refresh_selected)
        buttons = QVBoxLayout()
        for b in (self.add_btn, self.edit_btn, self.remove_btn, self.refresh_btn):
            b.setAutoDefault(False)  # Enter in the form saves it, nothing else
            buttons.addWidget(b)
        buttons.addStretch(1)
        top = QHBoxLayout()
        top.addWidget(self.list, 1)
        top.addLayout(buttons)
        return top

    # ---- actions ---------------------------------------------------------------------------

    def selected_id(self) -> str | None:
        item = self.list.currentItem()
        value = item.data(_ID_ROLE) if item is not None else None
        return value if isinstance(value, str) else None

    def start_add(self) -> None:
        self._open_form(None)

    def edit_selected(self) -> None:
        if self.selected_id() is not None:
            self._open_form(self.selected_id())

    def remove_selected(self) -> None:
        sid = self.selected_id()
        server = self._remote.server(sid) if sid else None
        if server is None:
            return
        if self._confirm(self, "Remove the server",
                         f"Remove “{server.name}” and forget its API key? Its models leave the "
                         "picker; conversations with them are kept."):
            if self._editing == server.id:
                self.close_form()
            self._remote.remove(server.id)

    def refresh_selected(self) -> None:
        sid = self.selected_id()
        if sid is not None:
            self._set_status("Connecting…", False)
            self._remote.refresh(sid)

    def save_form(self) -> None:
        name, url, key = self.form.fields()
        try:
            if self._editing is None:
                server = self._remote.add(name, url, key)
            else:  # an empty key field keeps the saved key
                server = self._remote.edit(self._editing, name, url, key or None)
        except ServerFormError as exc:
            self.form.refuse(str(exc))
            return
        except ValueError as exc:  # the server was removed meanwhile
            self.form.refuse(str(exc))
            return
        self.close_form()
        self._select(server.id)
        self._set_status(f"Connecting to {server.name}…", False)

    def close_form(self) -> None:
        self._editing = None
        self.form.dismiss()
        self.add_btn.setEnabled(True)

    # ---- showing ---------------------------------------------------------------------------

    def _open_form(self, server_id: str | None) -> None:
        server = self._remote.server(server_id) if server_id else None
        self._editing = server.id if server is not None else None
        self.form.open_for(server)
        self.add_btn.setEnabled(server is not None)

    def _fill(self) -> None:
        keep = self.selected_id()
        self.list.blockSignals(True)
        self.list.clear()
        for s in self._remote.servers():
            item = QListWidgetItem(_item_text(s))
            item.setData(_ID_ROLE, s.id)
            item.setToolTip(s.base_url)
            self.list.addItem(item)
        self.list.blockSignals(False)
        if keep is not None and self._select(keep):
            pass
        elif self.list.count():
            self.list.setCurrentRow(0)
        self._show_selected()

    def _select(self, server_id: str) -> bool:
        for i in range(self.list.count()):
            item = self.list.item(i)
            if item is not None and item.data(_ID_ROLE) == server_id:
                self.list.setCurrentRow(i)
                return True
        return False

    def _show_selected(self) -> None:
        sid = self.selected_id()
        has = sid is not None
        for b in (self.edit_btn, self.remove_btn, self.refresh_btn):
            b.setEnabled(has)
        if not self.list.count():
            self._set_status("No servers yet. Add one to chat with its models.", False)
            return
        text, error = self._remote.note(sid) if sid else ("", False)
        self._set_status(text, error)

    def _on_checked(self, server_id: str, text: str, error: bool) -> None:
        if server_id == self.selected_id():
            self._set_status(text, error)

    def _set_status(self, text: str, error: bool) -> None:
        self.status.setText(text)
        self.status.setVisible(bool(text))
        set_text_color(self.status, text_color(self.palette(), _ERROR_HUE) if error else None)


def _item_text(s: Server) -> str:
    n = len(s.models)
    if s.checked:
        when = time.strftime("%d %b %H:%M", time.localtime(s.checked))
        models = f"{n} model{'s' if n != 1 else ''}, checked {when}"
    else:
        models = "not connected yet"
    return f"{s.name}  —  {s.base_url}\n{models}{'' if s.has_key else ' · no key'}"
