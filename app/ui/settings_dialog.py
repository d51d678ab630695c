"""The Settings dialog: pages listed in a rail at the left (General, Models, Sharing, Servers,
Other computers, Runtime, Appearance, Language), each a column of sections: a small header
over a card of rows.

Every change applies at once and is saved at once (no OK button to forget): the folders go to
the local-models service (which keeps ``library.json``), the rest is an :class:`AppSettings`
edited through one :class:`~app.ui.settings_tabs.edit.SettingsEdit`, which saves it and which
the dialog relays as :attr:`SettingsDialog.changed`; the window connects that to whatever must
follow (the runner's port, interface and key, from the next load). The sections are in
app/ui/settings_tabs/ (and the servers panel and the workers box): each builds its own controls
and reacts to its own service, and the dialog puts them on pages, shows their messages in one
banner and sizes itself. Paths, the URL and the key are shown as plain text. Dialogs, the
clipboard and opening folders are constructor arguments so tests can answer them.

Each page scrolls, and the dialog opens as big as its largest page at most 90 % of the screen's
free area: wrapped text needs more height than a window's minimum counts (Qt leaves
height-for-width out of a top-level window's minimum size), so without the scrolling the rows
were squeezed to slivers, and on a small screen Close fell off the bottom.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from PySide6.QtCore import QSize, Qt, QUrl, Signal
from PySide6.QtGui import QDesktopServices, QShowEvent
from PySide6.QtWidgets import (
    QAbstractSpinBox,
    QApplication,
    QButtonGroup,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFileDialog,
    QHBoxLayout,
    QSizePolicy,
    QStackedWidget,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from app import paths
from app.library.folders import LibraryFolders, load_folders
from app.remote.share import SHARED_KEY, Interface, SharedKey, network_interfaces
from app.runtimes.catalog import Runtime, list_runtimes
from app.runtimes.choose import RuntimeChoice
from app.services.protocols import HubLike, LocalModelsLike, RemoteLike, RunnerLike
from app.services.tools import ToolService
from app.services.workers import WorkersService
from app.settings import AppSettings, save_settings
from app.ui.common import wheel_only_when_focused
from app.ui.lang import tr, ui_text
from app.ui.servers_panel import ServersPanel
from app.ui.settings_tabs.edit import SettingsEdit
from app.ui.settings_tabs.general import (
    AppearanceBox,
    HubBox,
    LanguageBox,
    LogsBox,
    ModelsBox,
    RuntimeBox,
)
from app.ui.settings_tabs.layout import ScrollingPage, Section, note, page
from app.ui.settings_tabs.mcp_servers import ChooseFile, McpServersBox
from app.ui.settings_tabs.server import Autostart, ServerBox
from app.ui.settings_tabs.sharing import APPLY_NOW, SharingBox
from app.ui.settings_tabs.tools import ToolsBox
from app.ui.style.components import Banner
from app.ui.style.icons import icon
from app.ui.style.tokens import SPACING
from app.ui.workers_box import WorkersBox

# APPLY_NOW is the sharing box's, named here too for the tests that read the dialog's button.
__all__ = ["APPLY_NOW", "PAGES", "SCREEN_SHARE", "SettingsDialog", "openai_base_url"]

# The most of the screen's free area the dialog takes when it opens; the pages scroll inside.
SCREEN_SHARE = 0.9
# The size it opens at where the screen has room (a settings window, not a note): the pages'
# cards and the Servers form fit without scrolling at 1400x900, and a 720-pixel screen gets as
# much as its free area allows.
OPENING_MIN = QSize(1000, 700)
# Every page in the rail's order: (key, icon). Servers and Other computers only with their
# service.
PAGES = (("general", "settings"), ("models", "models"), ("sharing", "sharing"),
         ("servers", "server"), ("tools", "tools"), ("others", "monitor"),
         ("runtime", "hardware"),
         ("appearance", "appearance"), ("language", "language"))


def page_title(key: str) -> str:
    """A page's name in the rail and over the page, in the window's language."""
    return {"general": tr("General"), "models": tr("Models"), "sharing": tr("Sharing"),
            "servers": tr("Servers"), "tools": tr("Tools"), "others": tr("Other computers"),
            "runtime": tr("Runtime"), "appearance": tr("Appearance"),
            "language": tr("Language")}[key]


def _choose_folder(parent: QWidget, caption: str, start: str) -> str:
    return QFileDialog.getExistingDirectory(parent, caption, start)


def _choose_file(parent: QWidget, caption: str, filter: str, save: bool) -> str:
    ask = QFileDialog.getSaveFileName if save else QFileDialog.getOpenFileName
    return ask(parent, caption, "", filter)[0]


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
                 autostart: Autostart | None = None,
                 tools: ToolService | None = None,
                 choose_file: ChooseFile | None = None,
                 parent: QWidget | None = None) -> None:
        """``apply_theme(theme)`` switches the theme (ThemeController.apply); ``save(settings)``
        writes them (raises OSError); ``folders()`` is the library's folders now (the
        local-models service's ``folders``). ``choose_folder(parent, caption, start)`` returns a
        folder or "" (QFileDialog), ``copy_text`` puts text on the clipboard, ``open_url`` opens
        the log folder (QDesktopServices). ``in_use``: the runtime this process chose (the
        app's RuntimeSelection's ``choice``; None before the first load). ``remote``: the
        servers service (None: no Servers page); ``workers``: the other computers (None: no
        page for them); ``interfaces()`` this computer's network addresses (the sharing
        choice). ``shared_key``: the key other apps use (default: the process's one, which the
        runner uses too); ``reload()`` loads the running model again so a sharing change
        applies now (app/services/sharing.py; None: no "Apply now", changes wait for the next
        load). ``autostart``: the model server's start-at-login entry (app/autostart.py; None:
        no model server section, as in tests, which must not write the person's login
        entries). ``tools``, ``choose_file``: Settings → Tools' service and file dialog."""
        super().__init__(parent)
        self.setWindowTitle(tr("Settings"))
        # The rail first (the tab chain starts there), and the message banner before the
        # sections: they may have something to say as they are built.
        absent = {k for k, service in (("servers", remote), ("others", workers),
                                       ("tools", tools)) if service is None}
        rail = self._build_rail(keys := [k for k, _i in PAGES if k not in absent])
        self.banner = Banner()
        self.message = self.banner.text
        self.message.setObjectName("message")
        self._edit = SettingsEdit(settings, save, self)
        self._edit.message.connect(self._set_message)
        self._edit.changed.connect(self.changed)
        self._shared_key = shared_key if shared_key is not None else SHARED_KEY
        self.models_box = ModelsBox(models, folders, choose_folder or _choose_folder, self._edit)
        self.hub_box = HubBox(hub)
        self.sharing_box = SharingBox(self._edit, runner, interfaces(), self._shared_key,
                                      reload, copy_text or _copy)
        self.server_box: ServerBox | None = None
        if autostart is not None:
            self.server_box = ServerBox(self._edit, self._shared_key, autostart,
                                        copy_text or _copy)
        self.runtime_box = RuntimeBox(self._edit, runtimes, in_use)
        self.appearance_box = AppearanceBox(self._edit, apply_theme)
        self.language_box = LanguageBox(self._edit)
        self.logs_box = LogsBox(log_folder or paths.log_dir(),
                                open_url or QDesktopServices.openUrl)
        self._expose_controls()
        self.servers_panel = ServersPanel(remote) if remote is not None else None
        if remote is not None:
            remote.failed.connect(self._on_failed)
        self.tools_box, self.mcp_box = self._tool_boxes(tools, choose_folder, choose_file)
        self.workers_box = WorkersBox(workers) if workers is not None else None
        self.pages = QStackedWidget()
        for key in keys:
            self.pages.addWidget(ScrollingPage(self._page_content(key)))
        # Scrolling a page must not change the values that pass under the pointer.
        wheel_only_when_focused(*self.pages.findChildren(QComboBox),
                                *self.pages.findChildren(QAbstractSpinBox))
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        buttons.rejected.connect(self.reject)
        self._lay_out(rail, buttons)
        models.failed.connect(self._on_failed)  # bound: disconnected when the dialog goes
        self.show_page(keys[0])
        self.resize(self._opening_size())
        self._sized = False  # sized again as it is first shown (see showEvent)

    def _tool_boxes(self, tools: ToolService | None,
                    choose_folder: Callable[[QWidget, str, str], str] | None,
                    choose_file: ChooseFile | None
                    ) -> tuple[ToolsBox | None, McpServersBox | None]:
        """Settings → Tools: the built-in tools and the MCP servers (none without a service)."""
        if tools is None:
            return None, None
        return (ToolsBox(tools, choose_folder or _choose_folder),
                McpServersBox(tools, choose_file or _choose_file,
                              lambda text: self._set_message(text, False)))

    def showEvent(self, event: QShowEvent) -> None:
        # Sized again here, the first time: before it is shown, wrapped rows are counted a few
        # pixels short. QDialog centres itself in its own showEvent, so with this size.
        if not self._sized and not event.spontaneous():
            self._sized = True
            self.resize(self._opening_size())
            if self.focusWidget() is None:
                # Else Qt gives it to the first page button, whichever page is shown: its ring
                # would mark a second page beside the checked one.
                self.nav_buttons[self.current_page()].setFocus(Qt.FocusReason.OtherFocusReason)
        super().showEvent(event)

    # ---- pages -------------------------------------------------------------------------------------

    @property
    def page_keys(self) -> list[str]:
        """The pages in the rail's order ("general", "models", …)."""
        return list(self._keys)

    def page_titles(self) -> list[str]:
        """The pages' names, as the rail shows them."""
        return [page_title(k) for k in self._keys]

    def current_page(self) -> str:
        """The key of the page shown."""
        return self._keys[self.pages.currentIndex()]

    def show_page(self, key: str) -> None:
        """Show the page ``key`` ("sharing", …) and check its button in the rail."""
        index = self._keys.index(key)
        self.pages.setCurrentIndex(index)
        button = self.nav_buttons[key]
        button.setChecked(True)
        # One focus ring in the rail: a page button that holds the focus (the dialog gave it to
        # the first one as it opened) hands it to the page's button.
        focused = QApplication.focusWidget()
        if focused is not button and focused in self.nav_buttons.values():
            button.setFocus(Qt.FocusReason.OtherFocusReason)

    def page_widget(self, key: str) -> ScrollingPage:
        """The page ``key``'s scroll area."""
        widget = self.pages.widget(self._keys.index(key))
        assert isinstance(widget, ScrollingPage)
        return widget

    @property
    def settings(self) -> AppSettings:
        """The settings as they are now (saved)."""
        return self._edit.settings

    # ---- building --------------------------------------------------------------------------------

    def _build_rail(self, keys: list[str]) -> QWidget:
        """The pages' buttons, one under the other, each with its icon and name."""
        self._keys = keys
        rail = QWidget()
        rail.setObjectName("rail")
        column = QVBoxLayout(rail)
        column.setContentsMargins(SPACING.md, SPACING.lg, SPACING.md, SPACING.lg)
        column.setSpacing(SPACING.xxs)
        self._nav_group = QButtonGroup(self)
        self._nav_group.setExclusive(True)
        self.nav_buttons: dict[str, QToolButton] = {}
        icons = dict(PAGES)
        for key in keys:
            button = QToolButton()
            button.setText(page_title(key))
            button.setIcon(icon(icons[key]))
            button.setProperty("nav", True)
            button.setCheckable(True)
            button.setAccessibleName(page_title(key))
            button.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextBesideIcon)
            button.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)
            # Tab only: a clicked page button keeping its focus ring looked like a second
            # selected page.
            button.setFocusPolicy(Qt.FocusPolicy.TabFocus)
            button.clicked.connect(lambda _c=False, k=key: self.show_page(k))
            # The checked button sits on the accent: its icon in the accent's text colour.
            button.toggled.connect(lambda on, b=button, n=icons[key]: b.setIcon(
                icon(n, "on_accent" if on else "text")))
            self._nav_group.addButton(button)
            self.nav_buttons[key] = button
            column.addWidget(button)
        column.addStretch(1)
        return rail

    def _page_content(self, key: str) -> QWidget:
        """The sections of the page ``key``, under its title."""
        title = page_title(key)
        if key == "general":
            return page(title, self.hub_box, self.logs_box)
        if key == "models":
            return page(title, self.models_box)
        if key == "sharing":
            return page(title, self.sharing_box,
                        *([self.server_box] if self.server_box is not None else []))
        if key == "servers":
            assert self.servers_panel is not None
            servers = Section(tr("OpenAI-compatible servers"))
            servers.body.addWidget(self.servers_panel)
            # The servers' keys follow the rule of the shared one: say where they are kept.
            kept = note(ui_text(self._shared_key.notice()))
            kept.setObjectName("servers_note")
            servers.body.addWidget(kept)
            return page(title, servers)
        if key == "tools":
            assert self.tools_box is not None and self.mcp_box is not None
            return page(title, self.tools_box, self.mcp_box)
        if key == "others":
            assert self.workers_box is not None
            return page(title, self.workers_box)
        if key == "runtime":
            return page(title, self.runtime_box)
        if key == "appearance":
            return page(title, self.appearance_box)
        return page(title, self.language_box)

    def _lay_out(self, rail: QWidget, buttons: QDialogButtonBox) -> None:
        right = QVBoxLayout()
        right.setContentsMargins(0, 0, 0, 0)
        right.setSpacing(SPACING.md)
        right.addWidget(self.pages, 1)
        banner_row = QHBoxLayout()
        banner_row.setContentsMargins(SPACING.xxl, 0, SPACING.xxl, 0)
        banner_row.addWidget(self.banner)
        right.addLayout(banner_row)
        button_row = QHBoxLayout()
        button_row.setContentsMargins(SPACING.xxl, 0, SPACING.xxl, SPACING.lg)
        button_row.addWidget(buttons)
        right.addLayout(button_row)
        body = QHBoxLayout(self)
        body.setContentsMargins(0, 0, 0, 0)
        body.setSpacing(0)
        body.addWidget(rail)
        body.addLayout(right, 1)

    def _expose_controls(self) -> None:
        """The sections' controls, reachable from the dialog too: the window's code, the tests
        and the screenshot scripts find them here, wherever a section keeps them."""
        models, hub, sharing = self.models_box, self.hub_box, self.sharing_box
        self.models_dir_label, self.models_dir_btn = models.models_dir_label, models.models_dir_btn
        self.extra_label, self.add_btn = models.extra_label, models.add_btn
        self.token_note, self.token_btn = hub.token_note, hub.token_btn
        self.share_check, self.port_spin = sharing.share_check, sharing.port_spin
        self.host_combo, self.share_warning = sharing.host_combo, sharing.share_warning
        self.image_links_check = sharing.image_links_check
        self.url_edit, self.url_copy = sharing.url_edit, sharing.url_copy
        self.key_edit, self.key_copy = sharing.key_edit, sharing.key_copy
        self.connection, self.connection_note = sharing.connection, sharing.connection_note
        self.key_store, self.key_store_note = sharing.key_store, sharing.key_store_note
        self.rotate_btn = sharing.rotate_btn
        self.apply_btn, self.apply_row = sharing.apply_btn, sharing.apply_row
        self.runtime_combo = self.runtime_box.runtime_combo
        self.runtime_note = self.runtime_box.runtime_note
        self.theme_combo = self.appearance_box.theme_combo
        self.language_combo = self.language_box.language_combo
        self.log_label, self.log_btn = self.logs_box.log_label, self.logs_box.log_btn

    def _opening_size(self) -> QSize:
        """As big as the pages want at their width (at least :data:`OPENING_MIN`), at most
        :data:`SCREEN_SHARE` of the free area of the screen the dialog opens on (its
        parent's): the pages scroll in a smaller one, and the Close button stays on the
        screen."""
        self.ensurePolished()
        parent = self.parentWidget()
        area = (parent.screen() if parent is not None else self.screen()).availableGeometry()
        want = self.sizeHint().expandedTo(self.minimumSizeHint()).expandedTo(OPENING_MIN)
        return QSize(min(want.width(), int(area.width() * SCREEN_SHARE)),
                     min(want.height(), int(area.height() * SCREEN_SHARE)))

    # ---- messages ------------------------------------------------------------------------------

    def _set_message(self, text: str, error: bool = False) -> None:
        if text:
            self.banner.show_message(text, "danger" if error else "info")
        else:
            self.banner.hide()

    def _on_failed(self, sentence: str) -> None:
        self._set_message(ui_text(sentence), error=True)
