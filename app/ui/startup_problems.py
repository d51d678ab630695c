"""What the person is told when Hearth's own files are in trouble at start.

Two cases, both found before any conversation could be lost:

- the data folder cannot be written (app/storage/folder.py says why): asked before the window
  exists, with two ways on: **Quit** (the default: nothing happens behind the person's back), or
  **Continue without keeping conversations**, where this session's data goes to a temporary
  folder the dialog names (app/paths.py ``use_data_dir``) and the models already downloaded stay
  usable;
- the library was damaged and set aside (app/storage/db.py ``open_library``), or could not be
  opened at all: told over the window once the store thread has tried, without blocking it.

The dialogs are built here and shown through callables, so tests and ``--check-start`` (which has
nobody to click) answer them without a modal loop; the real app runs them for the person. Every
text shown is logged too: the log then says what the person was told.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Callable
from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QMessageBox, QWidget

from app import paths
from app.storage.db import SetAside
from app.storage.errors import StorageError
from app.storage.folder import FolderProblem, check_writable
from app.ui.lang import said, tr, ui_text

log = logging.getLogger(__name__)

# The buttons' English words (tests and --check-start's output name them); shown translated.
QUIT = "Quit"
CONTINUE = "Continue without keeping conversations"

Ask = Callable[[QMessageBox], bool]  # shows the question; True: continue, False: quit
Tell = Callable[[QMessageBox], None]  # shows a notice without waiting for it


def on_continue(temporary: Path) -> str:
    """What Continue means, naming the temporary folder (nothing in it is deleted by Hearth)."""
    return tr("If you continue, Hearth works as usual, but this session's conversations are "
              "kept only in a temporary folder, {folder}, not in your library; the system may "
              "delete that folder later. The models you already downloaded stay available."
              ).format(folder=temporary)


def folder_question(problem: FolderProblem, temporary: Path | None,
                    parent: QWidget | None = None) -> QMessageBox:
    """The question for a data folder Hearth cannot write to: Quit (default) or Continue with
    the folder ``temporary`` (None: no temporary folder could be made either: Quit only)."""
    box = QMessageBox(QMessageBox.Icon.Warning, tr("Hearth cannot save its data"),
                      ui_text(problem.what()), QMessageBox.StandardButton.NoButton, parent)
    then = on_continue(temporary) if temporary is not None else \
        tr("Hearth could not make a temporary folder to use instead either.")
    box.setInformativeText(f"{ui_text(problem.advice())}\n\n{then}")
    quit_button = box.addButton(tr("Quit"), QMessageBox.ButtonRole.RejectRole)
    if temporary is not None:
        box.addButton(tr("Continue without keeping conversations"),
                      QMessageBox.ButtonRole.AcceptRole)
    box.setDefaultButton(quit_button)
    box.setEscapeButton(quit_button)
    return box


def library_notice(outcome: object, parent: QWidget | None = None) -> QMessageBox | None:
    """The notice for the store's opening outcome (StoreService.opened), or None when all is well.

    A damaged library set aside says where it went; a library that could not be opened at all
    says why (its StorageError's sentence). A bug is not described here: it is in the log, and
    the sidebar says the conversations could not be read.
    """
    if isinstance(outcome, SetAside):
        box = QMessageBox(QMessageBox.Icon.Warning, tr("Hearth set a damaged library aside"),
                          ui_text(outcome.headline()), QMessageBox.StandardButton.Ok, parent)
        box.setInformativeText(ui_text(outcome.details()))
        return box
    if isinstance(outcome, StorageError):
        box = QMessageBox(QMessageBox.Icon.Warning, tr("Hearth cannot open its library"),
                          said(outcome), QMessageBox.StandardButton.Ok, parent)
        box.setInformativeText(tr("Conversations are not saved until this is fixed and Hearth "
                                  "is started again."))
        return box
    return None


def box_text(box: QMessageBox) -> str:
    """Everything a dialog says, as one line for the log (and ``--check-start``'s output)."""
    buttons = " ".join(f"[{b.text()}]" for b in box.buttons())
    parts = [box.windowTitle(), box.text(), box.informativeText(), buttons]
    return " | ".join(" ".join(p.split()) for p in parts if p)


def continue_button_clicked(box: QMessageBox) -> bool:
    clicked = box.clickedButton()
    return clicked is not None and box.buttonRole(clicked) == QMessageBox.ButtonRole.AcceptRole


def ask_person(box: QMessageBox) -> bool:
    """The real question: modal, before the window exists."""
    box.exec()
    return continue_button_clicked(box)


def tell_person(box: QMessageBox) -> None:
    """The real notice: over the window, without stopping it (the chat is usable meanwhile)."""
    box.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
    box.open()


def print_and_continue(box: QMessageBox) -> bool:
    """``--check-start``'s answer: say what the person would read, and go on where the dialog
    lets the person go on."""
    print(f"hearth: start-up problem: {box_text(box)}", flush=True)
    return any(box.buttonRole(b) == QMessageBox.ButtonRole.AcceptRole for b in box.buttons())


def print_and_show(box: QMessageBox) -> None:
    """``--check-start``'s notice: say what the person reads, and show it as the app would."""
    print(f"hearth: start-up problem: {box_text(box)}", flush=True)
    tell_person(box)


def prepare_data_folder(ask: Ask, *,
                        check: Callable[[Path], FolderProblem | None] = check_writable) -> bool:
    """Check the data folder before anything opens it; False when the person chose to quit.

    On Continue this process's data folder becomes a temporary one (and the log says which).
    """
    problem = check(paths.data_location())
    if problem is None:
        return True
    try:
        temporary: Path | None = paths.make_temporary_data_dir()
    except OSError as exc:
        log.warning("no temporary folder either: %s", exc)
        temporary = None
    box = folder_question(problem, temporary)
    log.warning("start-up problem shown: %s", box_text(box))
    if not ask(box) or temporary is None:
        log.warning("the person chose to quit")
        if temporary is not None:
            with contextlib.suppress(OSError):  # still empty: nothing of the person's in it
                temporary.rmdir()
        return False
    paths.use_data_dir(temporary)
    return True


def tell_about_library(outcome: object, parent: QWidget | None, tell: Tell) -> None:
    """Tell the person what opening the library found, if anything (StoreService.opened)."""
    box = library_notice(outcome, parent)
    if box is None:
        return
    log.warning("start-up problem shown: %s", box_text(box))
    tell(box)
