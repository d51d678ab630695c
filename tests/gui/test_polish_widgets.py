"""Small widgets shared by several screens (issue 27's polish): the rail's focus, the named
confirmation box, the keyboard shortcuts dialog's opening size."""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from typing import Any

from PySide6.QtCore import QSize, Qt
from PySide6.QtWidgets import QApplication, QLabel, QMessageBox, QWidget

from app.ui.common import question_box
from app.ui.rail import NavPages
from app.ui.shortcuts_dialog import ShortcutsDialog
from app.ui.welcome_recommended import MainActionButton


def test_rail_buttons_take_focus_by_tab_only_and_the_ring_follows_the_page(qtbot: Any) -> None:
    pages = NavPages()
    qtbot.addWidget(pages)
    for title in ("Chat", "Discover", "Models"):
        pages.addTab(QLabel(title), title)
    pages.show()
    qtbot.waitExposed(pages)
    chat, models = pages.button(0), pages.button(2)
    # By Tab only, never by a click (Qt leaves only the checked one of an exclusive group in
    # the tab chain: the arrow keys move within it).
    assert not any(b.focusPolicy().value & Qt.FocusPolicy.ClickFocus.value for b in pages.rail.buttons)
    # A click checks the page without taking the focus from where it is.
    qtbot.mouseClick(pages.button(1), Qt.MouseButton.LeftButton)
    assert pages.currentIndex() == 1 and not pages.button(1).hasFocus()
    # A rail button holding the focus (the window gave it to the first one) hands it on.
    chat.setFocus()
    qtbot.waitUntil(chat.hasFocus, timeout=1000)
    qtbot.mouseClick(models, Qt.MouseButton.LeftButton)
    assert pages.currentIndex() == 2 and models.hasFocus() and not chat.hasFocus()
    pages.setCurrentIndex(0)  # Ctrl+1, say
    assert chat.hasFocus() and chat.isChecked()


def test_a_question_names_its_action_and_cancel_is_the_safe_answer(qtbot: Any) -> None:
    parent = QWidget()
    qtbot.addWidget(parent)
    box, act = question_box(parent, "Delete conversation", "Delete “Beta”?", "Delete")
    texts = sorted(b.text() for b in box.buttons())
    assert texts == ["Cancel", "Delete"] and act.text() == "Delete"
    assert box.standardButtons() == QMessageBox.StandardButton.NoButton  # no stock Yes / No
    cancel = box.defaultButton()
    assert cancel is not None and cancel.text() == "Cancel" and box.escapeButton() is cancel
    assert act.accessibleName() == "Delete"
    box.show()
    qtbot.waitExposed(box)
    qtbot.keyClick(box, Qt.Key.Key_Escape)
    assert box.clickedButton() is cancel
    _box, keep = question_box(parent, "t", "q", "Cancel download", "Keep downloading")
    assert keep.text() == "Cancel download"
    assert _box.defaultButton().text() == "Keep downloading"


def test_the_shortcuts_dialog_opens_big_enough_for_every_row(qtbot: Any) -> None:
    rows = [(f"Action number {i}", f"Ctrl+{i}") for i in range(12)]
    dialog = ShortcutsDialog(rows)
    qtbot.addWidget(dialog)
    dialog.show()
    qtbot.waitExposed(dialog)
    table = dialog.table
    free = (dialog.screen() or QApplication.primaryScreen()).availableGeometry().size()
    assert dialog.width() <= free.width() and dialog.height() <= free.height()
    wanted = dialog.opening_size()
    if wanted.height() < int(free.height() * 0.9):  # the screen has room: no scrolling
        assert not table.verticalScrollBar().isVisible()
        last = table.visualRect(table.model().index(len(rows) - 1, 0))
        assert last.bottom() <= table.viewport().height()
    assert dialog.size().expandedTo(QSize(460, 0)) == dialog.size()


def test_a_list_too_long_for_the_screen_is_shown_in_two_tables(qtbot: Any) -> None:
    rows = [(f"Action number {i}", f"Ctrl+{i}") for i in range(60)]
    dialog = ShortcutsDialog(rows)
    qtbot.addWidget(dialog)
    dialog.show()
    qtbot.waitExposed(dialog)
    assert [t.rowCount() for t in dialog.tables] == [30, 30] and dialog.table is dialog.tables[0]
    assert dialog.tables[1].item(0, 0).text() == "Action number 30"
    free = (dialog.screen() or QApplication.primaryScreen()).availableGeometry().size()
    assert dialog.width() <= free.width() and dialog.height() <= free.height()


def test_a_cards_main_action_is_drawn_plain_while_disabled(qtbot: Any) -> None:
    button = MainActionButton("Download", "get")
    qtbot.addWidget(button)
    assert button.property("primary") is True and button.accessibleName() == "Download"
    button.setEnabled(False)
    assert not button.property("primary")
    button.setEnabled(True)
    assert button.property("primary") is True
