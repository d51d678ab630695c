"""The Settings dialog: where models live, the Hugging Face token, sharing the loaded model with
other apps and devices, the theme, the log folder; and, on its own tab, the servers whose models
the picker offers (app/ui/servers_panel.py).

Every change applies at once and is saved at once (no OK button to forget): the folders go to
the local-models service (which keeps ``library.json``), the rest is an :class:`AppSettings`
handed to ``save`` and announced with :attr:`SettingsDialog.changed`, which the window connects
to whatever must follow (the runner's port, interface and key, from the next load). A sharing
change can also apply at once: "Apply now" loads the model again (``reload``). The shared key
is kept (app/remote/share.py) until the person presses "Rotate key", and a notice says where
Hearth keeps its keys. Paths, the URL and the key are shown as plain text.
Dialogs, the clipboard and opening folders are constructor arguments so tests can answer them.

Each page scrolls, and the dialog opens as tall as its content at most 90 % of the screen's
free area: wrapped text needs more height than a window's minimum counts (Qt leaves
height-for-width out of a top-level window's minimum size), so without the scrolling the rows
were squeezed to slivers, and on a small screen Close fell off the bottom.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import Path
from urllib.parse import urlsplit

from PySide6.QtCore import QSize, Qt, QUrl, Signal
from PySide6.QtGui import QDesktopServices, QFontDatabase, QShowEvent
from PySide6.QtWidgets import (
    QAbstractSpinBox,
    QApplication,
    QCheckBox,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFileDialog,
    QFormLayout,
    QFrame,
    QGroupBox,
    QHBoxLayout,
    QLineEdit,
    QPushButton,
    QScrollArea,
    QSpinBox,
    QStyle,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from app import paths
from app.library.folders import LibraryFolders, load_folders
from app.remote.share import (
    ALL_INTERFACES,
    LOOPBACK,
    SHARED_KEY,
    Interface,
    SharedKey,
    is_loopback,
    network_interfaces,
    shared_url,
)
from app.runtimes.catalog import Runtime, list_runtimes
from app.runtimes.select import current_choice
from app.services.protocols import HubLike, LocalModelsLike, RemoteLike, RunnerLike
from app.services.runner_process import RunnerState
from app.services.workers import WorkersService
from app.settings import MAX_PORT, MIN_FIXED_PORT, AppSettings, save_settings, valid_port
from app.storage.secrets import SecretStoreError
from app.ui.common import plain_label, set_text_color, text_color, wheel_only_when_focused
from app.ui.servers_panel import ServersPanel
from app.ui.workers_box import WorkersBox

log = logging.getLogger(__name__)

THEME_CHOICES = (("Follow the system", "system"), ("Light", "light"), ("Dark", "dark"))
_ERROR_HUE = "#d0342c"
_WARNING_HUE = "#b86e00"
SHARE_WARNING = ("Anyone on your network who has the key can use this model, and what they send "
                 "is not encrypted (http): share only on networks you trust, such as your home, "
                 "not a café's. Your firewall may ask whether Hearth's runner may accept "
                 "connections.")
_SERVING = (RunnerState.LOADING, RunnerState.READY)
APPLY_NOW = "Apply now (reloads the model)"
# The width the pages are laid out for when the screen has room: the notes wrap to a few lines.
PAGE_WIDTH = 600
# The most of the screen's free area the dialog takes when it opens; the pages scroll inside.
SCREEN_SHARE = 0.9


def _choose_folder(parent: QWidget, caption: str, start: str) -> str:
    return QFileDialog.getExistingDirectory(parent, caption, start)


def _copy(text: str) -> None:
    QApplication.clipboard().setText(text)


def openai_base_url(runner_url: str) -> str:
    """The base URL an OpenAI client wants: the runner's address with ``/v1``."""
    return runner_url.rstrip("/") + "/v1" if runner_url else ""


class SettingsDialog(QDialog):
    """The app's settings; each change is applied and saved as it is made."""

    changed = Signal(object)  # AppSettings, after it was saved

    def __init__(self, settings: AppSettings, *, models: LocalModelsLike, hub: HubLike,
                 runner: RunnerLike, apply_theme: Callable[[str], None],
                 save: Callable[[AppSettings], None] = save_settings,
                 folders: Callable[[], LibraryFolders] = load_folders,
                 open_url: Callable[[QUrl], object] | None = None,
                 choose_folder: Callable[[QWidget, str, str], str] | None = None,
                 copy_text: Callable[[str], None] | None = None,
                 log_folder: Path | None = None,
                 runtimes: Callable[[], list[Runtime]] = list_runtimes,
                 remote: RemoteLike | None = None,
                 workers: WorkersService | None = None,
                 interfaces: Callable[[], list[Interface]] = network_interfaces,
                 shared_key: SharedKey | None = None,
                 reload: Callable[[], bool] | None = None,
                 parent: QWidget | None = None) -> None:
        """``apply_theme(theme)`` switches the theme (ThemeController.apply); ``save(settings)``
        writes them (raises OSError); ``folders()`` is the library's folders now (the
        local-models service's ``folders``). ``choose_folder(parent, caption, start)`` returns a
        folder or "" (QFileDialog), ``copy_text`` puts text on the clipboard, ``open_url`` opens
        the log folder (QDesktopServices). ``remote``: the servers service (None: no Servers
        tab); ``interfaces()`` this computer's network addresses (the sharing choice).
        ``shared_key``: the key other apps use (default: the process's one, which the runner
        uses too); ``reload()`` loads the running model again so a sharing change applies now
        (app/services/sharing.py; None: no "Apply now", changes wait for the next load)."""
        super().__init__(parent)
        self.setWindowTitle("Settings")
        self._settings = settings
        self._models = models
        self._hub = hub
        self._runner = runner
        self._apply_theme = apply_theme
        self._save = save
        self._folders = folders
        self._open_url = open_url or QDesktopServices.openUrl
        self._choose_folder = choose_folder or _choose_folder
        self._copy = copy_text or _copy
        self._log_folder = log_folder
        self._runtimes = runtimes
        self._interfaces = interfaces()  # read once: a few system calls, no network
        self._shared_key = shared_key if shared_key is not None else SHARED_KEY
        self._reload = reload
        self._rotated = False  # a key was rotated here: the note can call it the new one

        general = QWidget()
        column = QVBoxLayout(general)
        column.addWidget(self._models_box())
        column.addWidget(self._hub_box())
        self.sharing_box = self._sharing_box()
        column.addWidget(self.sharing_box)
        column.addWidget(self._runtime_box())
        column.addWidget(self._appearance_box())
        column.addWidget(self._logs_box())
        column.addStretch(1)  # a taller dialog grows here, not inside the boxes
        self.tabs = QTabWidget()
        self.tabs.addTab(_Page(general), "General")
        self.tabs.setTabBarAutoHide(True)  # one page: no tab bar
        self.servers_panel: ServersPanel | None = None
        if remote is not None:
            self.servers_panel = ServersPanel(remote)
            # The servers' keys follow the rule of the shared one: say where they are kept.
            self._add_page(self.servers_panel, "Servers", note=self._shared_key.notice())
            remote.failed.connect(self._on_failed)
        self.workers_box: WorkersBox | None = None
        if workers is not None:
            self.workers_box = WorkersBox(workers)
            self._add_page(self.workers_box, "Other computers")
        # Scrolling a page must not change the values that pass under the pointer.
        wheel_only_when_focused(*self.tabs.findChildren(QComboBox),
                                *self.tabs.findChildren(QAbstractSpinBox))
        layout = QVBoxLayout(self)
        layout.addWidget(self.tabs, 1)
        self.message = plain_label()
        self.message.setObjectName("message")
        self.message.hide()
        layout.addWidget(self.message)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        buttons.rejected.connect(self.reject)
        layout.addWidget(buttons)

        # Bound methods: Qt disconnects them when the dialog goes; the services stay.
        models.changed.connect(self._on_models_changed)
        models.failed.connect(self._on_failed)
        hub.account.connect(self._on_account)
        runner.state_changed.connect(self._on_runner_state)
        self._show_folders()
        self._show_connection()
        self.resize(self._opening_size())
        self._sized = False  # sized again as it is first shown (see showEvent)

    def showEvent(self, event: QShowEvent) -> None:
        # Sized again here, the first time: before it is shown, QFormLayout counts wrapped rows
        # a few pixels short. QDialog centres itself in its own showEvent, so with this size.
        if not self._sized and not event.spontaneous():
            self._sized = True
            self.resize(self._opening_size())
        super().showEvent(event)

    # ---- public ----------------------------------------------------------------------------------

    @property
    def settings(self) -> AppSettings:
        """The settings as they are now (saved)."""
        return self._settings

    def change_models_dir(self) -> None:
        folder = self._choose_folder(self, "Where Hearth downloads models",
                                     str(self._current_folders().models_dir))
        if folder:
            self._models.set_models_dir(folder)
            self._show_folders()

    def add_folder(self) -> None:
        folder = self._choose_folder(self, "Add a folder of GGUF models", "")
        if folder:
            self._models.add_folder(folder)
            self._show_folders()

    def edit_token(self) -> None:
        from app.ui.token_dialog import TokenDialog

        dialog = TokenDialog(self._hub, self)
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        dialog.open()

    def open_log_folder(self) -> None:
        self._open_url(QUrl.fromLocalFile(str(self._log_dir())))

    # ---- building --------------------------------------------------------------------------------

    def _add_page(self, content: QWidget, title: str, note: str = "") -> None:
        """A scrolling tab holding ``content`` at the top (a taller dialog grows below it),
        with ``note`` under it."""
        page = QWidget()
        page_layout = QVBoxLayout(page)
        page_layout.addWidget(content)
        if note:
            label = plain_label(note, wrap=True, muted=True, selectable=False)
            label.setObjectName(f"{title.lower().replace(' ', '_')}_note")
            page_layout.addWidget(label)
        page_layout.addStretch(1)
        self.tabs.addTab(_Page(page), title)

    def _opening_size(self) -> QSize:
        """As big as the pages want at :data:`PAGE_WIDTH`, at most :data:`SCREEN_SHARE` of the
        free area of the screen the dialog opens on (its parent's): the pages scroll in a
        smaller one, and the Close button stays on the screen."""
        self.ensurePolished()
        parent = self.parentWidget()
        area = (parent.screen() if parent is not None else self.screen()).availableGeometry()
        want = self.sizeHint().expandedTo(self.minimumSizeHint())
        return QSize(min(want.width(), int(area.width() * SCREEN_SHARE)),
                     min(want.height(), int(area.height() * SCREEN_SHARE)))

    def _models_box(self) -> QGroupBox:
        box = QGroupBox("Models")
        self.models_dir_label = plain_label(wrap=True)
        self.models_dir_label.setObjectName("models_dir")
        self.models_dir_btn = QPushButton("Change…")
        self.models_dir_btn.setAccessibleName("Change the download folder")
        self.models_dir_btn.setToolTip("Where Hearth downloads models to (the only folder Hearth "
                                       "ever deletes from)")
        self.models_dir_btn.clicked.connect(self.change_models_dir)
        self.extra_label = plain_label(wrap=True)
        self.extra_label.setObjectName("extra_folders")
        self.add_btn = QPushButton("Add folder…")
        self.add_btn.setAccessibleName("Add a folder of models")
        self.add_btn.setToolTip("Also list the GGUF models in a folder of your choice")
        self.add_btn.clicked.connect(self.add_folder)
        form = QFormLayout(box)
        form.addRow("Download folder:", _row(self.models_dir_label, self.models_dir_btn))
        form.addRow("Also listed:", _row(self.extra_label, self.add_btn))
        form.addRow(plain_label("Models that LM Studio, Ollama, Jan, GPT4All or the Hugging Face "
                                "cache already have are found without adding their folders.",
                                muted=True, selectable=False))
        return box

    def _hub_box(self) -> QGroupBox:
        box = QGroupBox("Hugging Face")
        self.token_note = plain_label(self._hub.token_note(), wrap=True)
        self.token_note.setObjectName("token_note")
        self.token_btn = QPushButton("Token…")
        self.token_btn.setAccessibleName("Hugging Face token")
        self.token_btn.setToolTip("A Hugging Face token for gated models, kept in the system "
                                  "keyring")
        self.token_btn.clicked.connect(self.edit_token)
        layout = QVBoxLayout(box)
        layout.addWidget(_row(self.token_note, self.token_btn))
        return box

    def _sharing_box(self) -> QGroupBox:
        box = QGroupBox("Other apps and devices")
        self.share_check = QCheckBox("Let other apps and devices use this model")
        self.share_check.setToolTip("Any app that speaks the OpenAI API (editors, scripts, chat "
                                    "front ends, another Hearth) can then send it requests with "
                                    "the key below.")
        self.share_check.setChecked(self._settings.share_runner)
        self.share_check.toggled.connect(self._on_share_toggled)
        self.port_spin = QSpinBox()
        self.port_spin.setRange(0, MAX_PORT)
        self.port_spin.setSpecialValueText("Any free port")
        self.port_spin.setKeyboardTracking(False)  # one change per edit, not per keystroke
        self.port_spin.setAccessibleName("Port")
        self.port_spin.setToolTip(f"A fixed port ({MIN_FIXED_PORT}–{MAX_PORT}) keeps the address "
                                  "the same from one load to the next.")
        self.port_spin.setValue(self._settings.runner_port)
        self.port_spin.valueChanged.connect(self._on_port_changed)
        self.host_combo = QComboBox()
        self.host_combo.setAccessibleName("Who can connect")
        self.host_combo.addItem("Only this computer (127.0.0.1)", LOOPBACK)
        self.host_combo.addItem("Devices on every network this computer is on", ALL_INTERFACES)
        for iface in self._interfaces:
            self.host_combo.addItem(f"Devices on the network of {iface.label()}", iface.address)
        host = self._settings.share_host
        if self.host_combo.findData(host) < 0:  # saved, then the address went away
            self.host_combo.addItem(f"{host} (not on this computer now)", host)
        self.host_combo.setCurrentIndex(max(0, self.host_combo.findData(host)))
        self.host_combo.activated.connect(self._on_host_chosen)
        self.share_warning = plain_label(SHARE_WARNING, wrap=True, selectable=False)
        self.share_warning.setObjectName("share_warning")
        set_text_color(self.share_warning, text_color(self.palette(), _WARNING_HUE))

        self.url_edit = _readonly_edit("Address (base URL)")
        self.url_copy = QPushButton("Copy")
        self.url_copy.setAccessibleName("Copy the address")
        self.url_copy.clicked.connect(lambda: self._copy_field(self.url_edit, "address"))
        self.key_edit = _readonly_edit("API key")
        self.key_copy = QPushButton("Copy")
        self.key_copy.setAccessibleName("Copy the API key")
        self.key_copy.clicked.connect(lambda: self._copy_field(self.key_edit, "key"))
        self.connection = QWidget()
        conn = QFormLayout(self.connection)
        conn.setContentsMargins(0, 0, 0, 0)
        conn.addRow("Base URL:", _row(self.url_edit, self.url_copy))
        conn.addRow("API key:", _row(self.key_edit, self.key_copy))
        self.connection_note = plain_label(wrap=True, muted=True, selectable=False)
        self.connection_note.setObjectName("connection_note")
        # Where the key is kept, and the way to a new one: the key stays the same at every
        # load, because other apps are set up with it.
        self.key_store_note = plain_label(self._shared_key.notice(), wrap=True, muted=True,
                                          selectable=False)
        self.key_store_note.setObjectName("key_store_note")
        self.rotate_btn = QPushButton("Rotate key")
        self.rotate_btn.setAccessibleName("Make a new API key")
        self.rotate_btn.setToolTip("Make a new key and keep it instead of the old one. Apps set "
                                   "up with the old key stop working once the model loads again.")
        self.rotate_btn.clicked.connect(self.rotate_key)
        self.key_store = _row(self.key_store_note, self.rotate_btn)
        self.apply_btn = QPushButton(APPLY_NOW)
        self.apply_btn.setToolTip("Load the model again now, so that the sharing settings above "
                                  "apply at once instead of from the next load.")
        self.apply_btn.clicked.connect(self.apply_now)
        self.apply_row = _left(self.apply_btn)

        form = QFormLayout(box)
        form.addRow(self.share_check)
        form.addRow("Who:", _left(self.host_combo))
        form.addRow("Port:", _left(self.port_spin))
        form.addRow(self.share_warning)
        form.addRow(self.connection)
        form.addRow(self.connection_note)
        form.addRow(self.apply_row)
        form.addRow(self.key_store)
        return box

    def _runtime_box(self) -> QGroupBox:
        box = QGroupBox("Runtime")
        self.runtime_combo = QComboBox()
        self.runtime_combo.setAccessibleName("Runtime")
        self.runtime_combo.addItem("Automatic (the best one for this computer)", "")
        found = self._runtimes()  # a few small manifest files
        for rt in found:
            text = rt.label() + (f": cannot be used ({rt.problem})" if rt.problem else "")
            self.runtime_combo.addItem(text, rt.name)
        if self._settings.runtime and self.runtime_combo.findData(self._settings.runtime) < 0:
            self.runtime_combo.addItem(f"{self._settings.runtime} (not installed)",
                                       self._settings.runtime)
        self.runtime_combo.setCurrentIndex(max(0, self.runtime_combo.findData(
            self._settings.runtime)))
        self.runtime_combo.activated.connect(self._on_runtime_chosen)
        in_use = current_choice()
        self.runtime_note = plain_label(
            ("In use: " + in_use.runtime.label() + ". " if in_use else "")
            + "The llama.cpp build the runner serves with: CUDA for NVIDIA, Metal on Apple "
              "Silicon, Vulkan for AMD and Intel, else the CPU. Each is self-tested before "
              "use; a change applies from the next load.", wrap=True)
        self.runtime_note.setObjectName("runtime_note")
        form = QFormLayout(box)
        form.addRow("Runtime:", _left(self.runtime_combo))
        form.addRow(self.runtime_note)
        return box

    def _appearance_box(self) -> QGroupBox:
        box = QGroupBox("Appearance")
        self.theme_combo = QComboBox()
        self.theme_combo.setAccessibleName("Theme")
        for text, key in THEME_CHOICES:
            self.theme_combo.addItem(text, key)
        self.theme_combo.setCurrentIndex(
            next((i for i, (_t, k) in enumerate(THEME_CHOICES) if k == self._settings.theme), 0))
        self.theme_combo.activated.connect(self._on_theme_chosen)
        form = QFormLayout(box)
        form.addRow("Theme:", _left(self.theme_combo))
        return box

    def _logs_box(self) -> QGroupBox:
        box = QGroupBox("Logs")
        self.log_label = plain_label(str(self._log_dir()), wrap=True)
        self.log_label.setObjectName("log_folder")
        self.log_btn = QPushButton("Open the log folder")
        self.log_btn.setToolTip("Hearth's and the model runner's logs: attach them to a bug "
                                "report")
        self.log_btn.clicked.connect(self.open_log_folder)
        layout = QVBoxLayout(box)
        layout.addWidget(_row(self.log_label, self.log_btn))
        return box

    # ---- showing ---------------------------------------------------------------------------------

    def _current_folders(self) -> LibraryFolders:
        return self._folders()

    def _log_dir(self) -> Path:
        return self._log_folder or paths.log_dir()

    def _show_folders(self) -> None:
        try:
            f = self._current_folders()
        except OSError as exc:  # the default reads library.json
            self._set_message(f"The library's folders cannot be read: {exc}", error=True)
            return
        self.models_dir_label.setText(str(f.models_dir))
        self.extra_label.setText("\n".join(str(e) for e in f.extra) if f.extra else "None")

    def _show_connection(self) -> None:
        sharing = self._settings.share_runner
        self.port_spin.setEnabled(sharing)
        self.host_combo.setEnabled(sharing)
        self.key_store.setVisible(sharing)
        wide = sharing and not is_loopback(self._settings.share_host)
        self.share_warning.setVisible(wide)
        url = self._runner.url if self._runner.state in _SERVING else ""
        key = self._runner.key if url else None
        # The interface the running model really listens on (the choice above may be newer).
        listen = getattr(self._runner, "listen_url", "") or url
        kept = self._kept_key() if sharing else ""
        # What sharing uses at every load, never the private port and key of a model loaded
        # without sharing: the fixed port (with "any free port", the running model's).
        port = self._settings.runner_port or (urlsplit(listen).port if url else None)
        host = self._settings.share_host
        shown = shared_url(f"http://{LOOPBACK}:{port}", host, self._interfaces) if port else ""
        self.connection.setVisible(sharing and bool(kept))
        self.url_edit.setText(shown if sharing else "")
        self.key_edit.setText(kept)
        waiting = self._waiting(listen, key, kept) if url else []
        if not sharing:
            note = ("Only Hearth talks to the model. Turn this on to use it from another app "
                    "(an editor, a script that speaks the OpenAI API) or another device.")
        else:
            if is_loopback(host):
                note = ("Paste these into any OpenAI client on this computer. Only this "
                        "computer can connect (127.0.0.1).")
            else:
                note = ("Paste these into any OpenAI client on this computer or on another "
                        "device on your network.")
                others = [i.address for i in self._interfaces[1:]]
                if host == ALL_INTERFACES and others:
                    note += f" This computer's other addresses work too: {', '.join(others)}."
            if not url:
                note = "Load a model in the chat to use it this way. " + note
            note += " The key stays the same at every load until you rotate it."
            if not self._settings.runner_port:
                note += " The port changes at each load: choose a fixed port to keep the address."
        note += "".join(" " + sentence for sentence in waiting)
        can_apply = bool(waiting) and self._reload is not None and \
            self._runner.state == RunnerState.READY
        if can_apply:
            note += " Or press “Apply now” to load it again at once."
        self.apply_row.setVisible(can_apply)
        self.connection_note.setText(note)

    def _kept_key(self) -> str:
        """The key sharing uses (app/remote/share.py); "" when it cannot be read (said)."""
        try:
            return self._shared_key.get()
        except SecretStoreError as exc:
            log.warning("the shared key cannot be read: %s", exc)
            self._set_message(str(exc), error=True)
            return ""

    def _waiting(self, listen: str, key: str | None, kept: str) -> list[str]:
        """What the running model does not have yet of the settings, one sentence each (they
        apply from the next load, or at once with Apply now)."""
        s = self._settings
        parts = urlsplit(listen)
        host = parts.hostname or LOOPBACK
        if not s.share_runner:
            # Started while sharing: on a wider interface, or on the sharing port with the key.
            if not is_loopback(host):
                return ["Other apps and devices can use the model running now until it loads "
                        "again."]
            if s.runner_port and parts.port == s.runner_port:
                return ["Other apps can use the model running now until it loads again."]
            return []
        if key and kept and key != kept and not self._rotated:
            # Loaded before sharing was on: its port and key are its own, known to no app.
            return ["The model running now was loaded with a private address and key: what "
                    "is shown here applies from the next load."]
        out = []
        if host != s.launch_host:
            out.append("The choice of who can connect applies from the next load.")
        if s.launch_port and parts.port != s.launch_port:
            out.append("The port chosen above applies from the next load.")
        if key and kept and key != kept:
            out.append("The new key applies from the next load.")
        return out

    def _set_message(self, text: str, error: bool = False) -> None:
        self.message.setText(text)
        self.message.setVisible(bool(text))
        set_text_color(self.message, text_color(self.palette(), _ERROR_HUE) if error else None)

    # ---- changes ---------------------------------------------------------------------------------

    def _update(self, **changes: object) -> bool:
        try:
            new = self._settings.with_changes(**changes)
        except ValueError as exc:
            self._set_message(str(exc), error=True)
            return False
        try:
            self._save(new)
        except OSError as exc:
            # Still applied for this run; only remembering it failed.
            log.warning("settings could not be saved: %s", exc)
            self._set_message(f"The settings could not be saved ({exc}); they apply until "
                              "Hearth closes.", error=True)
        else:
            self._set_message("")
        self._settings = new
        self.changed.emit(new)
        return True

    def _on_share_toggled(self, on: bool) -> None:
        self._update(share_runner=on)
        self._show_connection()

    def _on_port_changed(self, port: int) -> None:
        if not valid_port(port):
            self._set_message(f"Ports below {MIN_FIXED_PORT} need administrator rights: choose "
                              f"{MIN_FIXED_PORT}–{MAX_PORT}, or “Any free port”.", error=True)
            self.port_spin.blockSignals(True)
            self.port_spin.setValue(self._settings.runner_port)
            self.port_spin.blockSignals(False)
            return
        self._update(runner_port=port)
        self._show_connection()

    def _on_host_chosen(self, index: int) -> None:
        self._update(share_host=str(self.host_combo.itemData(index) or LOOPBACK))
        self._show_connection()

    def _on_runtime_chosen(self, index: int) -> None:
        self._update(runtime=str(self.runtime_combo.itemData(index) or ""))

    def _on_theme_chosen(self, index: int) -> None:
        theme = str(self.theme_combo.itemData(index))
        self._apply_theme(theme)
        self._update(theme=theme)

    def rotate_key(self) -> None:
        """Make a new shared key and keep it in place of the old one."""
        try:
            self._shared_key.rotate()
        except SecretStoreError as exc:
            self._set_message(str(exc), error=True)
            return
        self._rotated = True
        serving = self._runner.state in _SERVING
        self._set_message("A new key is kept." + (
            " The model running now still uses the old one until it loads again." if serving
            else " Models load with it from now on."))
        self._show_connection()

    def apply_now(self) -> None:
        """Load the model again, so the sharing settings apply at once."""
        if self._reload is not None and self._reload():
            self._set_message("Loading the model again with the new sharing settings…")
        self._show_connection()

    def _copy_field(self, edit: QLineEdit, what: str) -> None:
        if edit.text():
            self._copy(edit.text())
            self._set_message(f"The {what} is on the clipboard.")

    # ---- service signals -------------------------------------------------------------------------

    def _on_models_changed(self, _rows: object) -> None:
        self._show_folders()

    def _on_failed(self, sentence: str) -> None:
        self._set_message(sentence, error=True)

    def _on_account(self, _user: str) -> None:
        self.token_note.setText(self._hub.token_note())

    def _on_runner_state(self, _state: object) -> None:
        self._show_connection()


class _Page(QScrollArea):
    """A tab's content, scrolling when the dialog is smaller than it (a small or scaled
    screen). Its size hint is the whole content laid out :data:`PAGE_WIDTH` wide, wrapped text
    included, so the dialog opens showing all of it where the screen has room."""

    def __init__(self, content: QWidget) -> None:
        super().__init__()
        self.setWidgetResizable(True)  # the content gets its width, and its height for it
        self.setFrameShape(QFrame.Shape.NoFrame)
        self.setWidget(content)
        # The tab's own background shows through, as it did before the pages scrolled.
        self.viewport().setAutoFillBackground(False)
        content.setAutoFillBackground(False)

    def sizeHint(self) -> QSize:
        content = self.widget()
        if content is None:
            return super().sizeHint()
        width = max(PAGE_WIDTH, content.minimumSizeHint().width())
        height = content.heightForWidth(width) if content.hasHeightForWidth() else -1
        if height < 0:
            height = content.sizeHint().height()
        # Room for a vertical scroll bar, so the content keeps its width when one appears.
        bar = self.style().pixelMetric(QStyle.PixelMetric.PM_ScrollBarExtent, None, self)
        return QSize(width + bar, height)


def _row(main: QWidget, button: QWidget) -> QWidget:
    """``main`` taking the room, ``button`` at its right."""
    row = QWidget()
    layout = QHBoxLayout(row)
    layout.setContentsMargins(0, 0, 0, 0)
    layout.addWidget(main, 1)
    layout.addWidget(button)
    return row


def _left(widget: QWidget) -> QWidget:
    """``widget`` at its natural width, at the left of the row."""
    row = QWidget()
    layout = QHBoxLayout(row)
    layout.setContentsMargins(0, 0, 0, 0)
    layout.addWidget(widget)
    layout.addStretch(1)
    return row


def _readonly_edit(name: str) -> QLineEdit:
    edit = QLineEdit()
    edit.setReadOnly(True)
    edit.setAccessibleName(name)
    edit.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
    return edit
