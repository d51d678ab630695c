"""Hearth's main window: pick a model, load it with a plan, chat with it.

The window only lays out its views and forwards the person's intents. What is current (the model
chats go to, its load, the plan, the endpoint) is app/services/active_model.py's; the model bar
(app/ui/model_bar.py, with the picker) and the chat (app/ui/chat_panel.py) observe it and the
chat session. The services are created in app/__main__.py.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence
from typing import Any

from PySide6.QtCore import QByteArray, Qt, Signal
from PySide6.QtGui import QCloseEvent, QShowEvent
from PySide6.QtWidgets import (
    QFrame,
    QMainWindow,
    QMessageBox,
    QScrollArea,
    QSplitter,
    QStackedWidget,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from app.planner.types import Pins
from app.remote.servers import RemoteModel
from app.services.active_model import ActiveModel
from app.services.chat_session import ChatSession
from app.services.protocols import (
    ConversationsLike,
    LibraryLike,
    LoaderLike,
    LocalModelsLike,
    RemoteLike,
    RunnerLike,
)
from app.ui.chat_panel import ChatPanel
from app.ui.common import open_at
from app.ui.conversations_sidebar import ConversationsSidebar
from app.ui.lang import tr
from app.ui.menus import MenuActions, MenuCallbacks, build_menus
from app.ui.model_bar import ModelBar
from app.ui.rail import NavPages
from app.ui.shortcuts_dialog import ShortcutsDialog, window_shortcuts


def _focus_chain(container: QWidget) -> list[QWidget]:
    """The controls inside ``container`` that Tab stops at, in the order they were laid out: a
    panel another module builds keeps its own order inside the window's.

    (Found with findChildren, not by walking nextInFocusChain(): in PySide6 6.11 the wrappers
    that walk makes can delete widgets of other panels when they are collected.)"""
    found: list[QWidget] = []
    for widget in container.findChildren(QWidget):
        parent = widget.parentWidget()
        inner = parent is not None and parent.focusProxy() is widget  # a spin box's editor
        # A combo box's list lives in a popup window of its own: not a stop in this one.
        if not inner and widget.window() is container.window() and \
                widget.focusPolicy().value & Qt.FocusPolicy.TabFocus.value:
            found.append(widget)
    return found


class LazyPage(QWidget):
    """A page of the window made the first time it is shown or used, not with the window.

    Discover, Downloads and Hardware are out of sight at start: building them (and importing
    their modules) would only delay the window's first paint, and the application's style sheet
    polishes every widget each time the window's tree is put together. :meth:`page` makes the
    page (at most once); attributes the stand-in lacks are the page's, so code that holds the
    tab (``window.tabs.widget(i).search_edit``) reaches the page as before.
    """

    def __init__(self, make: Callable[[], QWidget], parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._make: Callable[[], QWidget] | None = make
        self._page: QWidget | None = None
        self._when_built: list[Callable[[QWidget], object]] = []
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)

    def page(self) -> QWidget:
        """The page, made now if it was not yet."""
        if self._page is None:
            assert self._make is not None
            make, self._make = self._make, None
            self._page = make()
            layout = self.layout()
            assert layout is not None
            layout.addWidget(self._page)
            self.setFocusProxy(self._page)
            for call in self._when_built:
                call(self._page)
            self._when_built.clear()
        return self._page

    @property
    def built(self) -> bool:
        return self._page is not None

    def when_built(self, call: Callable[[QWidget], object]) -> None:
        """``call(page)`` once the page is made (now, if it already is): for wiring that needs
        the page itself, such as its signals."""
        if self._page is not None:
            call(self._page)
        else:
            self._when_built.append(call)

    def showEvent(self, event: QShowEvent) -> None:
        self.page()
        super().showEvent(event)

    def __getattr__(self, name: str) -> Any:
        # Only for names the stand-in lacks; private ones are never forwarded (and must not
        # make the page while the stand-in is being built).
        if name.startswith("_"):
            raise AttributeError(name)
        return getattr(self.page(), name)


class MainWindow(QMainWindow):
    find_instruct = Signal(str)  # a search for the Discover tab (a base model's instruct version)
    settings_requested = Signal()  # the Settings button (the composition root opens the dialog)
    model_chosen = Signal(str)  # Ctrl+O chose a file (a first-run page showing then ends)

    def __init__(self, runner: RunnerLike, loader: LoaderLike, session: ChatSession,
                 library: LibraryLike, *, hardware_panel: QWidget | None = None,
                 runner_flags: list[str] | None = None,
                 local_models: LocalModelsLike | None = None,
                 conversations: ConversationsLike | None = None,
                 model_tabs: Sequence[tuple[QWidget, str]] = (),
                 remote: RemoteLike | None = None, active: ActiveModel | None = None) -> None:
        super().__init__()
        self.runner, self.loader, self.session, self.library = runner, loader, session, library
        self.conversations = conversations
        # compose() hands the window the model in use; a window made without one (a test's)
        # gets its own over the same services.
        self.active = active or ActiveModel(runner, loader, remote=remote,
                                            runner_flags=runner_flags, parent=self)
        self.setWindowTitle("Hearth")
        open_at(self, 1100, 720)  # smaller on a small screen
        self.bar = ModelBar(self.active, library, local_models=local_models, remote=remote)
        self.bar.find_instruct.connect(self.find_instruct)
        self.chat_panel = ChatPanel(session, self.active, conversations=conversations,
                                    select_model=self.bar.picker.select)
        self.chat_panel.notice.connect(lambda text, ms: self.statusBar().showMessage(text, ms))
        session.save_failed.connect(lambda text: self.bar.set_status(
            tr("Could not save the conversation: {error}").format(error=text), True))
        self._name_parts()
        self.sidebar = self._make_sidebar(conversations)
        self._lay_out(model_tabs, hardware_panel)
        self.menu: MenuActions = build_menus(self.menuBar(), self, MenuCallbacks(
            open_file=self.open_file, settings=self.settings_requested.emit, quit=self._quit,
            choose_model=self.focus_picker, load=self.load_selected, unload=self.unload,
            offload=self.bar.offload, new_chat=self.new_conversation, search=self._focus_search,
            stop=self.chat_panel.escape, about=self._about, shortcuts=self.show_shortcuts,
            projector=self.choose_projector))
        self.menu.search.setEnabled(self.sidebar is not None)
        self.bar.updated.connect(self._mirror_menu)
        self.chat_panel.updated.connect(
            lambda: self.menu.stop.setEnabled(self.chat_panel.can_stop))
        self._tab_order()
        self.input.setFocus(Qt.FocusReason.OtherFocusReason)  # the window opens ready to type
        self.bar.update_buttons()
        self.chat_panel.update_buttons()

    def _name_parts(self) -> None:
        """The views' controls, by the names the menu, the tab order and tests use."""
        bar, chat = self.bar, self.chat_panel
        self.picker, self.load_btn, self.unload_btn = bar.picker.combo, bar.load_btn, \
            bar.unload_btn
        self.progress, self.settings_btn, self.status = bar.progress, bar.settings_btn, \
            bar.status
        self.state_chip, self.banner = bar.state_chip, bar.banner
        self.restart_btn, self.why_btn, self.steps_label = bar.restart_btn, bar.why_btn, \
            bar.steps_label
        self.reasons_label, self.base_box = bar.reasons_label, bar.base_box
        self.base_label, self.base_btn = bar.base_label, bar.base_btn
        self.chat, self.chat_status, self.edit_label = chat.chat, chat.chat_status, \
            chat.edit_label
        self.input, self.send_btn, self.stop_btn = chat.input, chat.send_btn, chat.stop_btn
        self.continue_btn, self.chat_settings = chat.continue_btn, chat.chat_settings
        self.offload_btn: QToolButton | None = None

    def _make_sidebar(self, conversations: ConversationsLike | None
                      ) -> ConversationsSidebar | None:
        if conversations is None:
            return None
        sidebar = ConversationsSidebar(conversations)
        chat = self.chat_panel
        sidebar.open_requested.connect(conversations.open)
        sidebar.new_requested.connect(self.new_conversation)
        sidebar.deleted.connect(chat.conversation_deleted)
        sidebar.exported.connect(
            lambda path: self.statusBar().showMessage(
                tr("Exported to {path}.").format(path=path), 5000))
        conversations.opened.connect(chat.open_conversation)
        conversations.changed.connect(chat.conversations_changed)
        chat.follow_sidebar(sidebar.set_current)
        return sidebar

    def _lay_out(self, model_tabs: Sequence[tuple[QWidget, str]],
                 hardware_panel: QWidget | None) -> None:
        self.settings_btn.toggled.connect(self._toggle_chat_settings)
        # The containers first, in the window, and each page's tree added to its place once:
        # moving a built tree into a new parent walks all of it (fonts, palettes, the
        # stylesheet), and building it bottom-up moved the chat's tree three times more
        # (about 90 of start-up's milliseconds, tests/bench/ui.py's cold start).
        # The pages, or the first-run page in front of them until the user is done with it.
        self.pages = QStackedWidget()
        self.setCentralWidget(self.pages)
        # The pages behind a slim rail; the model strip over every page, so the model in use
        # and its state stay in sight wherever the person is. ``tabs`` keeps QTabWidget's
        # page-switching methods for the code that switched tabs.
        self.tabs = NavPages()
        self.pages.addWidget(self.tabs)
        self.tabs.set_header(self.bar)
        self.splitter = QSplitter(Qt.Orientation.Horizontal)
        self.splitter.setChildrenCollapsible(False)
        self.tabs.addTab(self.splitter, tr("Chat"), "chat")
        if self.sidebar is not None:
            self.splitter.addWidget(self.sidebar)
        self.splitter.addWidget(self.chat_panel)
        # The drawer scrolls: its fields need more height than a small laptop's window has
        # beside an open plan and a notice (1280x720).
        self.drawer = QScrollArea()
        self.drawer.setWidgetResizable(True)
        self.drawer.setFrameShape(QFrame.Shape.NoFrame)
        self.drawer.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.splitter.addWidget(self.drawer)
        self.drawer.setWidget(self.chat_settings)
        self.drawer.hide()  # until the chat settings button opens it (setWidget showed the panel)
        self.splitter.setStretchFactor(self.splitter.indexOf(self.chat_panel), 1)
        if self.sidebar is not None:
            self.splitter.setSizes([240, 860, 0])
        for widget, title in model_tabs:  # Discover, Models, Downloads
            self.tabs.addTab(widget, title)
        self.hardware_panel = hardware_panel
        if hardware_panel is not None:
            self.tabs.addTab(hardware_panel, tr("Hardware"), "hardware")
        self.prefs_btn = self.tabs.rail.settings_btn
        self.tabs.settings_requested.connect(self.settings_requested.emit)
        self.tabs.currentChanged.connect(self._on_page)

    def _on_page(self, index: int) -> None:
        """The chat's own controls in the strip show on the chat page only."""
        self.settings_btn.setVisible(index == 0)

    def splitter_state(self) -> bytes:
        """The chat page's column sizes (app/settings.py's ``splitter_state``)."""
        return bytes(self.splitter.saveState().data())

    def restore_splitter(self, state: bytes | None) -> None:
        """The column sizes :meth:`splitter_state` gave at the last quit (None: the defaults);
        a state from another layout is ignored by Qt."""
        if state:
            self.splitter.restoreState(QByteArray(state))

    def _mirror_menu(self) -> None:
        """The menu offers what the buttons offer, under the same names."""
        self.menu.load.setEnabled(self.load_btn.isEnabled())
        self.menu.load.setText(self.load_btn.text())
        self.menu.unload.setEnabled(self.unload_btn.isEnabled())
        idle = not self.active.state.busy
        self.menu.choose_model.setEnabled(idle)
        self.menu.open_file.setEnabled(idle)

    def show_welcome(self, page: QWidget) -> None:
        """The first-run page, in front of the tabs until :meth:`close_welcome`."""
        self.pages.addWidget(page)
        self.pages.setCurrentWidget(page)

    def close_welcome(self) -> None:
        page = self.pages.currentWidget()
        self.pages.setCurrentWidget(self.tabs)
        if page is not None and page is not self.tabs:
            self.pages.removeWidget(page)
            page.deleteLater()

    def _toggle_chat_settings(self, shown: bool) -> None:
        self.drawer.setVisible(shown)
        self.chat_settings.setVisible(shown)
        sizes = self.splitter.sizes()
        if shown and sizes[-1] < 200:  # a drawer closed to nothing: give it room from the chat
            room = min(340, max(0, sizes[-2] - 400))
            self.splitter.setSizes([*sizes[:-2], sizes[-2] - room, room])

    def set_offload_panel(self, open_panel: Callable[[str], None]) -> None:
        """Offer "Offload…" beside the picker: ``open_panel(path)`` shows the settings panel
        for the selected model (app/ui/offload_dialog.py)."""
        self.offload_btn = self.bar.add_offload(open_panel)
        self._tab_order()

    def _tab_order(self) -> None:
        """Tab goes round the window in reading order: the rail's pages and Settings on the
        left, the model strip, the conversations, the chat, the message box and its buttons,
        the conversation's settings; Shift+Tab goes the same way back. (Hidden and disabled
        controls are passed over by Qt as they come and go.)"""
        chain: list[QWidget] = [*self.tabs.rail.buttons, self.prefs_btn]
        chain += [self.picker, self.load_btn, self.unload_btn]
        if self.offload_btn is not None:
            chain.append(self.offload_btn)
        chain += [self.restart_btn, self.settings_btn, self.why_btn, self.banner.close_button,
                  self.base_btn, self.bar.base_box.close_button]
        if self.sidebar is not None:
            chain += _focus_chain(self.sidebar)
        chain += [self.chat, self.continue_btn, self.input, self.stop_btn, self.send_btn,
                  *_focus_chain(self.chat_settings)]
        for first, second in itertools.pairwise(chain):
            QWidget.setTabOrder(first, second)

    # ---- the person's intents, forwarded ------------------------------------------------------

    def focus_picker(self) -> None:
        """Ctrl+L: the model list, open; arrows pick, Enter chooses (and Load or F5 loads)."""
        if self.pages.currentWidget() is not self.tabs:
            return  # the first-run page is in front: its own choices first
        self.tabs.setCurrentIndex(0)
        if self.picker.isEnabled():
            self.picker.setFocus(Qt.FocusReason.ShortcutFocusReason)
            self.picker.showPopup()

    def open_file(self) -> None:
        """Ctrl+O: choose a model file anywhere; it is selected in the list (not loaded)."""
        path = self.bar.ask_for_file()
        if path:
            self.tabs.setCurrentIndex(0)
            self.choose_model(path)
            self.model_chosen.emit(path)

    def _quit(self) -> None:
        """Ctrl+Q: close the window, which unloads the model and ends the app (its last
        window; the dialogs are its children)."""
        self.close()

    def _about(self) -> None:
        from importlib.metadata import PackageNotFoundError, version

        try:
            release = f" {version('hearth')}"
        except PackageNotFoundError:  # run from a folder that was never installed
            release = ""
        box = QMessageBox(QMessageBox.Icon.Information, tr("About Hearth"),
                          f"Hearth{release}", QMessageBox.StandardButton.Ok, self)
        box.setInformativeText(tr("Runs open language models on this computer. It plans how "
                                  "each model fits your hardware and says why; your "
                                  "conversations stay here."))
        box.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        box.open()  # not exec(): the window goes on answering the runner meanwhile

    def choose_projector(self) -> None:
        """Model → Vision projector…: for the model chosen in the list."""
        path = self.bar.picker.selected_model()
        if not path:
            self.statusBar().showMessage(tr("Choose a model in the list first."), 5000)
            return
        from app.ui.projector_choice import choose_projector

        said = choose_projector(self, path)
        if said:
            self.statusBar().showMessage(said, 10000)

    def show_shortcuts(self) -> None:
        """Help → Keyboard shortcuts (F1): every key the window answers, read off its actions
        and buttons, and the message box's own."""
        extra = [(tr("Send the message"), tr("Enter")),
                 (tr("New line in the message"), tr("Shift+Enter")),
                 (tr("Leave the message box"), tr("Tab"))]
        dialog = ShortcutsDialog(window_shortcuts(self, extra), self)
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        dialog.open()

    def choose_model(self, path: str) -> None:
        """Put ``path`` at the top of the model list and select it."""
        self.bar.picker.choose(path)

    def use_model(self, path: str) -> None:
        """From the library or a finished download: select it and show the chat."""
        self.choose_model(path)
        self.tabs.setCurrentIndex(0)

    def forget_model(self, path: str) -> None:
        """``path`` is gone or not a model (the loader's ``unusable``): out of the list."""
        self.bar.picker.forget(path)

    def selected_model(self) -> str | None:
        """The local model file selected in the picker (None: a remote model, or nothing)."""
        return self.bar.picker.selected_model()

    def selected_remote(self) -> RemoteModel | None:
        return self.bar.picker.selected_remote()

    @property
    def remote_model(self) -> RemoteModel | None:
        """The remote model the chat goes to now (None: the local runner)."""
        return self.active.remote_model

    def use_remote(self, model: RemoteModel) -> None:
        self.active.use_remote(model)

    def load_selected(self) -> None:
        self.bar.load_selected()

    def load_with(self, path: str, pins: Pins | None) -> None:
        """Load ``path`` with settings the user fixed (the offload panel's Apply)."""
        self.bar.picker.choose(path)
        self.active.load_with(path, pins)

    def unload(self) -> None:
        self.active.unload()

    def restart_model(self) -> None:
        self.active.restart()

    def new_conversation(self) -> None:
        self.chat_panel.new_conversation()

    def _focus_search(self) -> None:
        if self.sidebar is not None:
            self.tabs.setCurrentIndex(0)
            self.sidebar.focus_search()

    def send(self) -> None:
        self.chat_panel.send()

    def continue_reply(self) -> None:
        self.chat_panel.continue_reply()

    def closeEvent(self, event: QCloseEvent) -> None:
        self.session.close()
        self.active.close()
        super().closeEvent(event)
