"""The Settings dialog: where models live, the Hugging Face token, sharing the loaded model with
other apps and devices, the theme, the log folder; and, on tabs of their own, the servers whose
models the picker offers (app/ui/servers_panel.py) and the other computers that lend their GPUs
(app/ui/workers_box.py).

Every change applies at once and is saved at once (no OK button to forget): the folders go to
the local-models service (which keeps ``library.json``), the rest is an :class:`AppSettings`
edited through one :class:`~app.ui.settings_tabs.edit.SettingsEdit`, which saves it and which
the dialog relays as :attr:`SettingsDialog.changed`; the window connects that to whatever must
follow (the runner's port, interface and key, from the next load). The boxes are in
app/ui/settings_tabs/: each builds its own controls and reacts to its own service, and the
dialog stacks them, shows their messages on one line and sizes itself. Paths, the URL and the
key are shown as plain text. Dialogs, the clipboard and opening folders are constructor
arguments so tests can answer them.

Each page scrolls, and the dialog opens as tall as its content at most 90 % of the screen's
free area: wrapped text needs more height than a window's minimum counts (Qt leaves
height-for-width out of a top-level window's minimum size), so without the scrolling the rows
were squeezed to slivers, and on a small screen Close fell off the bottom.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from PySide6.QtCore import QSize, QUrl, Signal
from PySide6.QtGui import QDesktopServices, QShowEvent
from PySide6.QtWidgets import (
    QAbstractSpinBox,
    QApplication,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFileDialog,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from app import paths
from app.library.folders import LibraryFolders, load_folders
from app.remote.share import SHARED_KEY, Interface, SharedKey, network_interfaces
from app.runtimes.catalog import Runtime, list_runtimes
from app.runtimes.choose import RuntimeChoice
from app.services.protocols import HubLike, LocalModelsLike, RemoteLike, RunnerLike
from app.services.workers import WorkersService
from app.settings import AppSettings, save_settings
from app.ui.common import plain_label, set_text_color, text_color, wheel_only_when_focused
from app.ui.servers_panel import ServersPanel
from app.ui.settings_tabs.edit import SettingsEdit
from app.ui.settings_tabs.general import AppearanceBox, HubBox, LogsBox, ModelsBox, RuntimeBox
from app.ui.settings_tabs.layout import ScrollingPage
from app.ui.settings_tabs.sharing import APPLY_NOW, SharingBox
from app.ui.workers_box import WorkersBox

# APPLY_NOW is the sharing box's, named here too for the tests that read the dialog's button.
__all__ = ["APPLY_NOW", "SCREEN_SHARE", "SettingsDialog", "openai_base_url"]

_ERROR_HUE = "#d0342c"
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
                 in_use: RuntimeChoice | None = None,
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
        the log folder (QDesktopServices). ``in_use``: the runtime this process chose (the
        app's RuntimeSelection's ``choice``; None before the first load). ``remote``: the
        servers service (None: no Servers tab); ``workers``: the other computers (None: no tab
        for them); ``interfaces()`` this computer's network addresses (the sharing choice).
        ``shared_key``: the key other apps use (default: the process's one, which the runner
        uses too); ``reload()`` loads the running model again so a sharing change applies now
        (app/services/sharing.py; None: no "Apply now", changes wait for the next load)."""
        super().__init__(parent)
        self.setWindowTitle("Settings")
        # The message line first: the boxes may have something to say as they are built.
        self.message = plain_label()
        self.message.setObjectName("message")
        self.message.hide()
        self._edit = SettingsEdit(settings, save, self)
        self._edit.message.connect(self._set_message)
        self._edit.changed.connect(self.changed)
        self._shared_key = shared_key if shared_key is not None else SHARED_KEY
        self.models_box = ModelsBox(models, folders, choose_folder or _choose_folder, self._edit)
        self.hub_box = HubBox(hub)
        self.sharing_box = SharingBox(self._edit, runner, interfaces(), self._shared_key,
                                      reload, copy_text or _copy)
        self.runtime_box = RuntimeBox(self._edit, runtimes, in_use)
        self.appearance_box = AppearanceBox(self._edit, apply_theme)
        self.logs_box = LogsBox(log_folder or paths.log_dir(),
                                open_url or QDesktopServices.openUrl)
        self._expose_controls()
        self.tabs = QTabWidget()
        self.tabs.addTab(ScrollingPage(self._general_page()), "General")
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
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(self.tabs, 1)
        layout.addWidget(self.message)
        layout.addWidget(buttons)
        models.failed.connect(self._on_failed)  # bound: disconnected when the dialog goes
        self.resize(self._opening_size())
        self._sized = False  # sized again as it is first shown (see showEvent)

    def showEvent(self, event: QShowEvent) -> None:
        # Sized again here, the first time: before it is shown, QFormLayout counts wrapped rows
        # a few pixels short. QDialog centres itself in its own showEvent, so with this size.
        if not self._sized and not event.spontaneous():
            self._sized = True
            self.resize(self._opening_size())
        super().showEvent(event)

    @property
    def settings(self) -> AppSettings:
        """The settings as they are now (saved)."""
        return self._edit.settings

    # ---- building --------------------------------------------------------------------------------

    def _expose_controls(self) -> None:
        """The boxes' controls, reachable from the dialog too: the window's code, the tests
        and the screenshot scripts find them here, wherever a box keeps them."""
        models, hub, sharing = self.models_box, self.hub_box, self.sharing_box
        self.models_dir_label, self.models_dir_btn = models.models_dir_label, models.models_dir_btn
        self.extra_label, self.add_btn = models.extra_label, models.add_btn
        self.token_note, self.token_btn = hub.token_note, hub.token_btn
        self.share_check, self.port_spin = sharing.share_check, sharing.port_spin
        self.host_combo, self.share_warning = sharing.host_combo, sharing.share_warning
        self.url_edit, self.url_copy = sharing.url_edit, sharing.url_copy
        self.key_edit, self.key_copy = sharing.key_edit, sharing.key_copy
        self.connection, self.connection_note = sharing.connection, sharing.connection_note
        self.key_store, self.key_store_note = sharing.key_store, sharing.key_store_note
        self.rotate_btn = sharing.rotate_btn
        self.apply_btn, self.apply_row = sharing.apply_btn, sharing.apply_row
        self.runtime_combo = self.runtime_box.runtime_combo
        self.runtime_note = self.runtime_box.runtime_note
        self.theme_combo = self.appearance_box.theme_combo
        self.log_label, self.log_btn = self.logs_box.log_label, self.logs_box.log_btn

    def _general_page(self) -> QWidget:
        general = QWidget()
        column = QVBoxLayout(general)
        for box in (self.models_box, self.hub_box, self.sharing_box, self.runtime_box,
                    self.appearance_box, self.logs_box):
            column.addWidget(box)
        column.addStretch(1)  # a taller dialog grows here, not inside the boxes
        return general

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
        self.tabs.addTab(ScrollingPage(page), title)

    def _opening_size(self) -> QSize:
        """As big as the pages want at their width, at most :data:`SCREEN_SHARE` of the free
        area of the screen the dialog opens on (its parent's): the pages scroll in a smaller
        one, and the Close button stays on the screen."""
        self.ensurePolished()
        parent = self.parentWidget()
        area = (parent.screen() if parent is not None else self.screen()).availableGeometry()
        want = self.sizeHint().expandedTo(self.minimumSizeHint())
        return QSize(min(want.width(), int(area.width() * SCREEN_SHARE)),
                     min(want.height(), int(area.height() * SCREEN_SHARE)))

    # ---- messages --------------------------------------------------------------------------------

    def _set_message(self, text: str, error: bool = False) -> None:
        self.message.setText(text)
        self.message.setVisible(bool(text))
        set_text_color(self.message, text_color(self.palette(), _ERROR_HUE) if error else None)

    def _on_failed(self, sentence: str) -> None:
        self._set_message(sentence, error=True)
