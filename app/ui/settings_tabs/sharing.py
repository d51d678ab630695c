"""The sharing section of the Settings dialog: whether other apps and devices may use the loaded
model, who (which interface), on which port, and the address and key to paste into them; and
whether the runners fetch images from links in requests (public addresses only: the runner's
``--image-links``).

The key is kept (app/remote/share.py) until the person presses "Rotate key", and a notice says
where Hearth keeps its keys. A change applies from the next load, or at once with "Apply now",
which loads the model again; the note under the address says which of the settings the model
running now does not have yet (:func:`waiting_sentences`). The URL and the key are plain text.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from urllib.parse import urlsplit

from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QFormLayout,
    QLineEdit,
    QPushButton,
    QSpinBox,
    QWidget,
)

from app.remote.share import (
    ALL_INTERFACES,
    LOOPBACK,
    Interface,
    SharedKey,
    is_loopback,
    shared_url,
)
from app.services.protocols import RunnerLike
from app.services.runner_process import RunnerState
from app.settings import MAX_PORT, MIN_FIXED_PORT, AppSettings, valid_port
from app.storage.secrets import SecretStoreError
from app.ui.lang import said, tr, ui_text
from app.ui.settings_tabs.edit import SettingsEdit
from app.ui.settings_tabs.layout import Section, at_left, beside, note, readonly_edit, setting_row
from app.ui.style.components import Banner, icon_button, primary_button
from app.ui.style.icons import icon
from app.ui.style.tokens import SPACING

log = logging.getLogger(__name__)

# The English words of the warning and of the button, named for the tests; the widgets show
# them in the window's language.
SHARE_WARNING = ("Anyone on your network who has the key can use this model, and what they send "
                 "is not encrypted (http): share only on networks you trust, such as your home, "
                 "not a café's. Your firewall may ask whether Hearth's runner may accept "
                 "connections.")
_SERVING = (RunnerState.LOADING, RunnerState.READY)
APPLY_NOW = "Apply now (reloads the model)"


def waiting_sentences(s: AppSettings, listen: str, key: str | None, kept: str,
                      rotated: bool) -> list[str]:
    """What the running model (listening on ``listen`` with ``key``) does not have yet of the
    settings ``s``, one sentence each: they apply from the next load, or at once with Apply
    now. ``kept``: the shared key; ``rotated``: it was made new in this dialog."""
    parts = urlsplit(listen)
    host = parts.hostname or LOOPBACK
    if not s.share_runner:
        # Started while sharing: on a wider interface, or on the sharing port with the key.
        if not is_loopback(host):
            return [tr("Other apps and devices can use the model running now until it loads "
                       "again.")]
        if s.runner_port and parts.port == s.runner_port:
            return [tr("Other apps can use the model running now until it loads again.")]
        return []
    if key and kept and key != kept and not rotated:
        # Loaded before sharing was on: its port and key are its own, known to no app.
        return [tr("The model running now was loaded with a private address and key: what "
                   "is shown here applies from the next load.")]
    out = []
    if host != s.launch_host:
        out.append(tr("The choice of who can connect applies from the next load."))
    if s.launch_port and parts.port != s.launch_port:
        out.append(tr("The port chosen above applies from the next load."))
    if key and kept and key != kept:
        out.append(tr("The new key applies from the next load."))
    return out


def connection_note(s: AppSettings, interfaces: list[Interface], running: bool,
                    waiting: list[str], can_apply: bool) -> str:
    """The note under the address: where it works, what changes at a load, and ``waiting``
    (:func:`waiting_sentences`). ``running``: a model is loading or loaded; ``can_apply``:
    "Apply now" is offered. Whole sentences, each translated on its own, joined by spaces."""
    sentences: list[str] = []
    if not s.share_runner:
        sentences.append(tr("Only Hearth talks to the model. Turn this on to use it from "
                            "another app (an editor, a script that speaks the OpenAI API) or "
                            "another device."))
    else:
        if not running:
            sentences.append(tr("Load a model in the chat to use it this way."))
        if is_loopback(s.share_host):
            sentences.append(tr("Paste these into any OpenAI client on this computer. Only this "
                                "computer can connect (127.0.0.1)."))
        else:
            sentences.append(tr("Paste these into any OpenAI client on this computer or on "
                                "another device on your network."))
            others = [i.address for i in interfaces[1:]]
            if s.share_host == ALL_INTERFACES and others:
                sentences.append(tr("This computer's other addresses work too: "
                                    "{addresses}.").format(addresses=", ".join(others)))
        sentences.append(tr("The key stays the same at every load until you rotate it."))
        if not s.runner_port:
            sentences.append(tr("The port changes at each load: choose a fixed port to keep "
                                "the address."))
    sentences.extend(waiting)
    if can_apply:
        sentences.append(tr("Or press “Apply now” to load it again at once."))
    return " ".join(sentences)


class SharingBox(Section):
    """Sharing the loaded model with other apps and devices, and how to reach it."""

    def __init__(self, edit: SettingsEdit, runner: RunnerLike, interfaces: list[Interface],
                 shared_key: SharedKey, reload: Callable[[], bool] | None,
                 copy_text: Callable[[str], None]) -> None:
        """``interfaces``: this computer's network addresses; ``shared_key`` the key other
        apps use; ``reload()`` loads the running model again (None: no "Apply now");
        ``copy_text`` puts text on the clipboard."""
        super().__init__(tr("Other apps and devices"))
        self._edit = edit
        self._runner = runner
        self._interfaces = interfaces
        self._shared_key = shared_key
        self._reload = reload
        self._copy = copy_text
        self._rotated = False  # a key was rotated here: the note can call it the new one
        self._build_choices()
        self._build_connection()
        self._build_key_and_apply()
        self.body.addWidget(self.share_check)
        self.body.addWidget(setting_row(tr("Who can connect"), None, self.host_combo))
        self.body.addWidget(setting_row(
            tr("Port"), note(tr("A fixed port keeps the address the same from one load to the "
                                "next.")), self.port_spin))
        self.body.addWidget(self._warning_banner)
        self.body.addWidget(self.image_links_check)
        self.body.addWidget(self.image_links_note)
        self.add_divider()
        self.body.addWidget(self.connection)
        self.body.addWidget(self.connection_note)
        self.body.addWidget(self.apply_row)
        self.body.addWidget(self.key_store)
        # Bound: Qt disconnects it when the box goes; the runner stays.
        runner.state_changed.connect(self._on_runner_state)
        self.show_connection()

    # ---- building --------------------------------------------------------------------------------

    def _build_choices(self) -> None:
        """Sharing on or off, who may connect, the port, and the warning for a network."""
        s = self._edit.settings
        self.share_check = QCheckBox(tr("Let other apps and devices use this model"))
        self.share_check.setToolTip(tr("Any app that speaks the OpenAI API (editors, scripts, "
                                       "chat front ends, another Hearth) can then send it "
                                       "requests with the key below."))
        self.share_check.setChecked(s.share_runner)
        self.share_check.toggled.connect(self._on_share_toggled)
        self.port_spin = QSpinBox()
        self.port_spin.setRange(0, MAX_PORT)
        self.port_spin.setSpecialValueText(tr("Any free port"))
        self.port_spin.setKeyboardTracking(False)  # one change per edit, not per keystroke
        self.port_spin.setAccessibleName(tr("Port"))
        self.port_spin.setToolTip(tr("A fixed port ({low}–{high}) keeps the address the same "
                                     "from one load to the next.").format(low=MIN_FIXED_PORT,
                                                                          high=MAX_PORT))
        self.port_spin.setValue(s.runner_port)
        self.port_spin.valueChanged.connect(self._on_port_changed)
        self.host_combo = QComboBox()
        self.host_combo.setAccessibleName(tr("Who can connect"))
        self.host_combo.addItem(tr("Only this computer (127.0.0.1)"), LOOPBACK)
        self.host_combo.addItem(tr("Devices on every network this computer is on"),
                                ALL_INTERFACES)
        for iface in self._interfaces:
            self.host_combo.addItem(tr("Devices on the network of {interface}").format(
                interface=iface.label()), iface.address)
        if self.host_combo.findData(s.share_host) < 0:  # saved, then the address went away
            self.host_combo.addItem(tr("{address} (not on this computer now)").format(
                address=s.share_host), s.share_host)
        self.host_combo.setCurrentIndex(max(0, self.host_combo.findData(s.share_host)))
        self.host_combo.activated.connect(self._on_host_chosen)
        # A warning banner that stays (no close button): it holds while sharing on a network.
        self._warning_banner = Banner(closable=False)
        self._warning_banner.show_message(
            tr("Anyone on your network who has the key can use this model, and what they send "
               "is not encrypted (http): share only on networks you trust, such as your home, "
               "not a café's. Your firewall may ask whether Hearth's runner may accept "
               "connections."), "warning")
        self.share_warning = self._warning_banner.text
        self.share_warning.setObjectName("share_warning")
        # Off by default: a link makes the runner a client of whatever it names.
        self.image_links_check = QCheckBox(tr("Let models fetch images from links in "
                                              "requests"))
        self.image_links_check.setToolTip(tr("Programs using the model (here or through the "
                                             "model server) may link to an image instead of "
                                             "sending it. At most 20 MiB and 10 seconds an "
                                             "image."))
        self.image_links_check.setChecked(s.image_links)
        self.image_links_check.toggled.connect(self._on_image_links_toggled)
        self.image_links_note = note(tr("For other programs' requests: images come from the "
                                        "internet only, never from addresses on your network. "
                                        "Applies from the next load."))
        self.image_links_note.setObjectName("image_links_note")

    def _build_connection(self) -> None:
        """The address and key to paste into another app, each with Copy, and the note."""
        self.url_edit = readonly_edit(tr("Address (base URL)"))
        self.url_copy = icon_button("copy", tr("Copy the address"))
        self.url_copy.clicked.connect(lambda: self._copy_field(self.url_edit, "address"))
        self.key_edit = readonly_edit(tr("API key"))
        self.key_copy = icon_button("copy", tr("Copy the API key"))
        self.key_copy.clicked.connect(lambda: self._copy_field(self.key_edit, "key"))
        self.connection = QWidget()
        conn = QFormLayout(self.connection)
        conn.setContentsMargins(0, 0, 0, 0)
        conn.setVerticalSpacing(SPACING.sm)
        conn.addRow(tr("Base URL"), beside(self.url_edit, self.url_copy))
        conn.addRow(tr("API key"), beside(self.key_edit, self.key_copy))
        self.connection_note = note()
        self.connection_note.setObjectName("connection_note")

    def _build_key_and_apply(self) -> None:
        """Where the key is kept with "Rotate key", and "Apply now"."""
        # Where the key is kept, and the way to a new one: the key stays the same at every
        # load, because other apps are set up with it.
        self.key_store_note = note(ui_text(self._shared_key.notice()))
        self.key_store_note.setObjectName("key_store_note")
        self.rotate_btn = QPushButton(icon("regenerate"), tr("Rotate key"))
        self.rotate_btn.setAccessibleName(tr("Make a new API key"))
        self.rotate_btn.setToolTip(tr("Make a new key and keep it instead of the old one. Apps "
                                      "set up with the old key stop working once the model "
                                      "loads again."))
        self.rotate_btn.clicked.connect(self.rotate_key)
        self.key_store = beside(self.key_store_note, self.rotate_btn)
        self.apply_btn = primary_button(
            tr("Apply now (reloads the model)"),
            tr("Load the model again now, so that the sharing settings above apply at once "
               "instead of from the next load."), "regenerate")
        self.apply_btn.clicked.connect(self.apply_now)
        self.apply_row = at_left(self.apply_btn)

    # ---- showing ---------------------------------------------------------------------------------

    def show_connection(self) -> None:
        """The rows, address, key and note for the settings and the running model now."""
        s = self._edit.settings
        sharing = s.share_runner
        self.port_spin.setEnabled(sharing)
        self.host_combo.setEnabled(sharing)
        self.key_store.setVisible(sharing)
        self._warning_banner.setVisible(sharing and not is_loopback(s.share_host))
        url = self._runner.url if self._runner.state in _SERVING else ""
        key = self._runner.key if url else None
        # The interface the running model really listens on (the choice above may be newer).
        listen = getattr(self._runner, "listen_url", "") or url
        kept = self._kept_key() if sharing else ""
        # What sharing uses at every load, never the private port and key of a model loaded
        # without sharing: the fixed port (with "any free port", the running model's).
        port = s.runner_port or (urlsplit(listen).port if url else None)
        shown = shared_url(f"http://{LOOPBACK}:{port}", s.share_host,
                           self._interfaces) if port else ""
        self.connection.setVisible(sharing and bool(kept))
        self.url_edit.setText(shown if sharing else "")
        self.key_edit.setText(kept)
        waiting = waiting_sentences(s, listen, key, kept, self._rotated) if url else []
        can_apply = bool(waiting) and self._reload is not None and \
            self._runner.state == RunnerState.READY
        self.apply_row.setVisible(can_apply)
        self.connection_note.setText(connection_note(s, self._interfaces, bool(url), waiting,
                                                     can_apply))

    def _kept_key(self) -> str:
        """The key sharing uses (app/remote/share.py); "" when it cannot be read (said)."""
        try:
            return self._shared_key.get()
        except SecretStoreError as exc:
            log.warning("the shared key cannot be read: %s", exc)
            self._edit.say(said(exc), error=True)
            return ""

    # ---- changes ---------------------------------------------------------------------------------

    def rotate_key(self) -> None:
        """Make a new shared key and keep it in place of the old one."""
        try:
            self._shared_key.rotate()
        except SecretStoreError as exc:
            self._edit.say(said(exc), error=True)
            return
        self._rotated = True
        serving = self._runner.state in _SERVING
        self._edit.say(tr("A new key is kept. The model running now still uses the old one "
                          "until it loads again.") if serving else
                       tr("A new key is kept. Models load with it from now on."))
        self.show_connection()

    def apply_now(self) -> None:
        """Load the model again, so the sharing settings apply at once."""
        if self._reload is not None and self._reload():
            self._edit.say(tr("Loading the model again with the new sharing settings…"))
        self.show_connection()

    def _on_share_toggled(self, on: bool) -> None:
        self._edit.update(share_runner=on)
        self.show_connection()

    def _on_image_links_toggled(self, on: bool) -> None:
        self._edit.update(image_links=on)

    def _on_port_changed(self, port: int) -> None:
        if not valid_port(port):
            self._edit.say(tr("Ports below {low} need administrator rights: choose "
                              "{low}–{high}, or “Any free port”.").format(
                                  low=MIN_FIXED_PORT, high=MAX_PORT), error=True)
            self.port_spin.blockSignals(True)
            self.port_spin.setValue(self._edit.settings.runner_port)
            self.port_spin.blockSignals(False)
            return
        self._edit.update(runner_port=port)
        self.show_connection()

    def _on_host_chosen(self, index: int) -> None:
        self._edit.update(share_host=str(self.host_combo.itemData(index) or LOOPBACK))
        self.show_connection()

    def _copy_field(self, edit: QLineEdit, what: str) -> None:
        if edit.text():
            self._copy(edit.text())
            self._edit.say(tr("The address is on the clipboard.") if what == "address"
                           else tr("The key is on the clipboard."))

    def _on_runner_state(self, _state: object) -> None:
        self.show_connection()
