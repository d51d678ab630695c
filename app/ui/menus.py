"""The main window's menu bar: every action of the window in words, each with its shortcut shown
beside it, so a person who never touches the mouse can find them.

This module holds only the words, the keys and the order; what each action does is the window's
(a callback each), and the window enables each action as it enables the matching button.

The new keys edit no text and move no cursor in any text box (Return with or without Ctrl
already sends a message): Ctrl+L goes to the model list as it goes to the address bar in a
browser; F5 and Shift+F5 load and unload as they start and stop a program in a debugger; Ctrl+N,
Ctrl+K and Esc keep the meaning they had as the window's shortcuts; F1 (or Ctrl+/) lists them
all (Help → Keyboard shortcuts).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QMenu, QMenuBar, QWidget

from app.ui.lang import tr

Callback = Callable[[], None]


@dataclass(frozen=True)
class MenuCallbacks:
    """What each action does (the window's methods)."""

    open_file: Callback
    settings: Callback
    quit: Callback
    choose_model: Callback
    load: Callback
    unload: Callback
    offload: Callback
    new_chat: Callback
    search: Callback
    stop: Callback
    about: Callback
    shortcuts: Callback = lambda: None  # Help → Keyboard shortcuts
    projector: Callback = lambda: None  # Model → Vision projector…


@dataclass(frozen=True)
class MenuActions:
    """The actions, for the window to enable and rename as its state changes."""

    open_file: QAction
    settings: QAction
    quit: QAction
    choose_model: QAction
    load: QAction
    unload: QAction
    offload: QAction
    new_chat: QAction
    search: QAction
    stop: QAction
    about: QAction
    shortcuts: QAction
    projector: QAction


def keys(first: str, standard: QKeySequence.StandardKey | None = None) -> list[QKeySequence]:
    """``first`` (the one the menu shows, the same on every system), then what the platform
    binds ``standard`` to, if that is more (e.g. KDE's Ctrl+Shift+, for Preferences).

    Windows binds nothing to Quit and Linux nothing to Preferences: ``first`` gives every system
    the same key, as the menu says."""
    found = [QKeySequence(first)]
    if standard is not None:
        found += [k for k in QKeySequence.keyBindings(standard) if k not in found]
    return found


def build_menus(bar: QMenuBar, parent: QWidget, on: MenuCallbacks) -> MenuActions:
    """Fill ``bar`` with File, Model, Chat and Help; ``parent`` owns the actions (its window's
    shortcuts are live while it is the active window)."""

    def action(menu: QMenu, text: str, slot: Callback, shortcut: list[QKeySequence] | None = None,
               tip: str = "", role: QAction.MenuRole | None = None) -> QAction:
        made = QAction(text, parent)
        if shortcut:
            made.setShortcuts(shortcut)
        if tip:
            made.setStatusTip(tip)
            made.setToolTip(tip)
        if role is not None:
            made.setMenuRole(role)  # macOS moves Settings and Quit to the application menu
        made.triggered.connect(lambda _checked=False: slot())
        menu.addAction(made)
        return made

    Role = QAction.MenuRole
    file = bar.addMenu(tr("&File"))
    open_file = action(file, tr("Open GGUF file…"), on.open_file,
                       keys("Ctrl+O", QKeySequence.StandardKey.Open),
                       tr("Choose a model file anywhere on this computer"))
    file.addSeparator()
    settings = action(file, tr("Settings…"), on.settings,
                      keys("Ctrl+,", QKeySequence.StandardKey.Preferences),
                      tr("Models folders, Hugging Face token, sharing, theme"),
                      Role.PreferencesRole)
    file.addSeparator()
    quit_ = action(file, tr("Quit"), on.quit, keys("Ctrl+Q", QKeySequence.StandardKey.Quit),
                   tr("Unload the model and close Hearth"), Role.QuitRole)

    model = bar.addMenu(tr("&Model"))
    choose = action(model, tr("Choose model…"), on.choose_model, keys("Ctrl+L"),
                    tr("Open the list of models; arrows pick, Enter chooses"))
    load = action(model, tr("Load"), on.load, keys("F5"),
                  tr("Load the model chosen in the list"))
    unload = action(model, tr("Unload"), on.unload, keys("Shift+F5"),
                    tr("Stop the model and free its memory"))
    model.addSeparator()
    offload = action(model, tr("Offload settings…"), on.offload, keys("Ctrl+Shift+O"),
                     tr("GPU layers, context, batch, threads and KV cache for the chosen model"))
    projector = action(model, tr("Vision projector…"), on.projector, None,
                       tr("Choose the mmproj file the chosen model loads with, to see images "
                          "(one beside the model loads by itself)"))

    chat = bar.addMenu(tr("&Chat"))
    new_chat = action(chat, tr("New chat"), on.new_chat,
                      keys("Ctrl+N", QKeySequence.StandardKey.New),
                      tr("Start an empty conversation with the model in use"))
    search = action(chat, tr("Search conversations"), on.search, keys("Ctrl+K"),
                    tr("Find a conversation by its words"))
    stop = action(chat, tr("Stop reply"), on.stop, keys("Esc"),
                  tr("Stop the reply (what it wrote is kept), or stop editing a message"))

    help_ = bar.addMenu(tr("&Help"))
    # F1 is help everywhere; Ctrl+/ is where chat apps list their keys.
    shortcuts = action(help_, tr("Keyboard shortcuts"), on.shortcuts,
                       [QKeySequence("F1"), QKeySequence("Ctrl+/")],
                       tr("Every key this window answers"))
    help_.addSeparator()
    about = action(help_, tr("About Hearth"), on.about, None, "", Role.AboutRole)
    return MenuActions(open_file, settings, quit_, choose, load, unload, offload, new_chat,
                       search, stop, about, shortcuts, projector)
