"""Settings → Servers: the OpenAI-compatible servers whose models the picker offers.

A list of the servers the user added, with Add, Edit, Remove and Refresh; the form to add or edit
one sits under the list (name, address, API key: :class:`ServerForm`, which only collects the
fields). Every change goes to the remote service (app/services/remote.py), which saves the list,
keeps the key (app/storage/secrets.py) and checks the server off the GUI thread; its answers (how
many models, or what went wrong) appear under the list. Names, addresses and the servers' own
error texts are plain text, never markup.
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QDateTime, QLocale, Qt, QTimer, Signal
from PySide6.QtWidgets import (
    QFormLayout,
    QHBoxLayout,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QMessageBox,
    QPushButton,
    QScrollArea,
    QVBoxLayout,
    QWidget,
)

from app.remote.servers import Server, ServerFormError
from app.services.protocols import RemoteLike
from app.ui.lang import said, tr, ui_text
from app.ui.settings_tabs.layout import note
from app.ui.style.components import Banner, Card, EmptyState, heading, primary_button, set_shown
from app.ui.style.icons import icon
from app.ui.style.tokens import SPACING

_ID_ROLE = Qt.ItemDataRole.UserRole


def intro_text() -> str:
    """What the Servers page is for, in the window's language."""
    return tr("Servers that speak the OpenAI API: another computer running Hearth, llama.cpp's "
              "server, LM Studio, Ollama, vLLM or an online service. Their models appear in the "
              "model picker, marked as remote. Hearth contacts a server only when you add it, "
              "refresh it, or chat with one of its models.")


def confirm_removal(parent: QWidget, title: str, question: str) -> bool:
    """Remove or Cancel, Cancel the default: the question guards forgetting a key."""
    box = QMessageBox(QMessageBox.Icon.Question, title, question,
                      QMessageBox.StandardButton.NoButton, parent)
    remove = box.addButton(tr("Remove"), QMessageBox.ButtonRole.DestructiveRole)
    cancel = box.addButton(tr("Cancel"), QMessageBox.ButtonRole.RejectRole)
    box.setDefaultButton(cancel)
    box.setEscapeButton(cancel)
    box.exec()
    return box.clickedButton() is remove


class ServerForm(Card):
    """The form that adds or edits one server: name, address and API key, with the service's
    objection under them. It only collects the fields; the panel hands them to the service."""

    submitted = Signal()  # Save pressed, or Enter in a field
    cancelled = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent, spacing=SPACING.md)
        self.name_edit = QLineEdit()
        self.name_edit.setAccessibleName(tr("Server name"))
        self.name_edit.setPlaceholderText(tr("Office PC"))
        self.url_edit = QLineEdit()
        self.url_edit.setAccessibleName(tr("Server address"))
        self.url_edit.setPlaceholderText("http://192.168.1.20:8080/v1")
        self.key_edit = QLineEdit()
        self.key_edit.setAccessibleName(tr("API key"))
        self.key_edit.setEchoMode(QLineEdit.EchoMode.Password)
        # The service's objection: an error banner over the buttons, kept until the next try.
        self.error_banner = Banner(closable=False)
        self.form_error = self.error_banner.text
        self.form_error.setObjectName("form_error")
        self.save_btn = primary_button(tr("Add and connect"))
        self.save_btn.setDefault(True)
        self.save_btn.clicked.connect(self.submitted)
        self.cancel_btn = QPushButton(tr("Cancel"))
        self.cancel_btn.setAutoDefault(False)
        self.cancel_btn.clicked.connect(self.cancelled)
        for edit in (self.name_edit, self.url_edit, self.key_edit):
            edit.returnPressed.connect(self.submitted)
        self.form_title = heading("", "subheading")
        form_buttons = QHBoxLayout()
        form_buttons.addStretch(1)
        form_buttons.addWidget(self.cancel_btn)
        form_buttons.addWidget(self.save_btn)
        form = QFormLayout()
        form.setContentsMargins(0, 0, 0, 0)
        form.setVerticalSpacing(SPACING.sm)
        form.addRow(tr("Name"), self.name_edit)
        form.addRow(tr("Address"), self.url_edit)
        form.addRow(tr("API key"), self.key_edit)
        form.addRow(note(tr("Kept in the system keyring, or where there is none in a file "
                             "only your account can read. Leave it empty for a server that "
                             "needs none.")))
        self.body.addWidget(self.form_title)
        self.body.addLayout(form)
        self.body.addWidget(self.error_banner)
        self.body.addLayout(form_buttons)

    def fields(self) -> tuple[str, str, str]:
        """Name, address and key as typed."""
        return self.name_edit.text(), self.url_edit.text(), self.key_edit.text()

    def open_for(self, server: Server | None) -> None:
        """Show the form filled for ``server`` (None: a new one); the key field stays empty."""
        self.name_edit.setText(server.name if server else "")
        self.url_edit.setText(server.base_url if server else "")
        self.key_edit.clear()
        self.key_edit.setPlaceholderText(
            tr("Unchanged (kept); type to replace") if server and server.has_key
            else tr("None"))
        self.save_btn.setText(tr("Save and connect") if server else tr("Add and connect"))
        self.save_btn.setAccessibleName(self.save_btn.text())
        self.form_title.setText(tr("Edit “{name}”").format(name=server.name) if server
                                else tr("Add a server"))
        self.error_banner.hide()
        self.show()
        self.name_edit.setFocus()

    def refuse(self, sentence: str) -> None:
        """Say under the fields why the service did not take them."""
        self.error_banner.show_message(sentence, "danger")

    def dismiss(self) -> None:
        """Hide the form, the key cleared: a key is never left in a widget."""
        self.key_edit.clear()
        self.hide()
        self.error_banner.hide()


class ServersPanel(QWidget):
    """The servers list and its form, on the remote service."""

    def __init__(self, remote: RemoteLike, parent: QWidget | None = None, *,
                 confirm: Callable[[QWidget, str, str], bool] | None = None) -> None:
        """``confirm(parent, title, question)`` asks before a server is removed (tests answer
        it)."""
        super().__init__(parent)
        self._remote = remote
        self._confirm = confirm or confirm_removal
        self._editing: str | None = None  # the server the form edits; None: a new one

        self.intro = note(intro_text())
        top = self._build_list()
        self.status_banner = Banner(closable=False)
        self.status = self.status_banner.text
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
        layout.setSpacing(SPACING.md)
        layout.addWidget(self.intro)
        layout.addLayout(top)
        layout.addWidget(self.status_banner)
        layout.addWidget(self.form)

        # Bound methods: Qt disconnects them when the panel goes; the service stays.
        remote.changed.connect(self._fill)
        remote.checked.connect(self._on_checked)
        self._fill()

    def _build_list(self) -> QHBoxLayout:
        """The list of servers with its buttons at the right."""
        # No servers: one empty state in the list's place (not an empty box with a notice
        # under it); its action is the Add button's.
        self.empty = EmptyState("server", tr("No servers yet"),
                                tr("Add one to chat with its models."))
        self.empty.setAccessibleName(tr("No servers yet"))
        self.list = QListWidget()
        self.list.setAccessibleName(tr("Servers"))
        self.list.setMinimumHeight(110)
        self.list.setSpacing(SPACING.xxs)
        self.list.setAlternatingRowColors(True)  # two lines per server: keep them together
        self.list.currentItemChanged.connect(lambda *_a: self._show_selected())
        self.list.itemDoubleClicked.connect(lambda _i: self.edit_selected())
        self.add_btn = primary_button(tr("Add…"), icon_name="new")
        self.add_btn.setAccessibleName(tr("Add a server"))
        self.add_btn.clicked.connect(self.start_add)
        self.edit_btn = QPushButton(icon("edit"), tr("Edit…"))
        self.edit_btn.setAccessibleName(tr("Edit the server"))
        self.edit_btn.clicked.connect(self.edit_selected)
        self.remove_btn = QPushButton(icon("delete"), tr("Remove"))
        self.remove_btn.setAccessibleName(tr("Remove the server"))
        self.remove_btn.clicked.connect(self.remove_selected)
        self.refresh_btn = QPushButton(icon("retry"), tr("Refresh"))
        self.refresh_btn.setAccessibleName(tr("Refresh the server"))
        self.refresh_btn.setToolTip(tr("Connect to the server again and fetch its list of "
                                       "models"))
        self.refresh_btn.clicked.connect(self.refresh_selected)
        buttons = QVBoxLayout()
        buttons.setSpacing(SPACING.sm)
        for b in (self.add_btn, self.edit_btn, self.remove_btn, self.refresh_btn):
            b.setAutoDefault(False)  # Enter in the form saves it, nothing else
            buttons.addWidget(b)
        buttons.addStretch(1)
        top = QHBoxLayout()
        top.setSpacing(SPACING.md)
        places = QVBoxLayout()
        places.setSpacing(0)
        places.addWidget(self.list, 1)
        places.addWidget(self.empty, 1)
        top.addLayout(places, 1)
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
        if self._confirm(self, tr("Remove the server"),
                         tr("Remove “{name}” and forget its API key? Its models leave the "
                            "picker; conversations with them are kept.").format(
                                name=server.name)):
            if self._editing == server.id:
                self.close_form()
            self._remote.remove(server.id)

    def refresh_selected(self) -> None:
        sid = self.selected_id()
        if sid is not None:
            self._set_status(tr("Connecting…"), False)
            self._remote.refresh(sid)

    def save_form(self) -> None:
        name, url, key = self.form.fields()
        try:
            if self._editing is None:
                server = self._remote.add(name, url, key)
            else:  # an empty key field keeps the saved key
                server = self._remote.edit(self._editing, name, url, key or None)
        except ServerFormError as exc:
            self.form.refuse(said(exc))
            return
        except ValueError as exc:  # the server was removed meanwhile
            self.form.refuse(said(exc))
            return
        self.close_form()
        self._select(server.id)
        self._set_status(tr("Connecting to {name}…").format(name=server.name), False)

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
        # The form sits under the list: bring it into the page's view once it is laid out.
        QTimer.singleShot(0, self._show_form)

    def _show_form(self) -> None:
        parent = self.parentWidget()
        while parent is not None and not isinstance(parent, QScrollArea):
            parent = parent.parentWidget()
        if parent is not None and self.form.isVisible():
            parent.ensureWidgetVisible(self.form, 0, SPACING.lg)

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
        empty = not self.list.count()
        set_shown(self.list, not empty)
        set_shown(self.empty, empty)
        for b in (self.edit_btn, self.remove_btn, self.refresh_btn):
            b.setEnabled(has)
            set_shown(b, not empty)  # nothing to edit, remove or refresh
        if empty:
            self._set_status("", False)
            return
        text, error = self._remote.note(sid) if sid else ("", False)
        self._set_status(text, error)

    def _on_checked(self, server_id: str, text: str, error: bool) -> None:
        if server_id == self.selected_id():
            self._set_status(text, error)

    def _set_status(self, text: str, error: bool) -> None:
        if text:
            self.status_banner.show_message(ui_text(text), "danger" if error else "info")
        else:
            self.status_banner.hide()


def _item_text(s: Server) -> str:
    if s.checked:
        when = QLocale().toString(QDateTime.fromSecsSinceEpoch(int(s.checked)),
                                  QLocale.FormatType.ShortFormat)
        models = tr("%n model(s), checked {when}", None, len(s.models)).format(when=when)
    else:
        models = tr("not connected yet")
    state = models if s.has_key else tr("{state} · no key").format(state=models)
    return f"{s.name}  —  {s.base_url}\n{state}"
