"""The conversations sidebar over the real conversation service and SQLite (a temp database).

Dialogs are injected (ask_text, ask_path, confirm): each test answers them and then looks at what
the list shows and what the database holds.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import QModelIndex, Qt
from PySide6.QtWidgets import QWidget

from app.library.conversations import ConversationStore, ConversationSummary
from app.services.storage import ConversationService, StoreService
from app.storage.db import StoreThread, open_database
from app.storage.legacy import LegacySources
from app.ui.conversations_sidebar import SEARCH_DELAY_MS, ConversationsSidebar

WAIT_MS = 5000  # generous: the store thread answers through the event loop on a busy machine


@dataclass
class Dialogs:
    """Answers the sidebar's questions and records what it asked."""

    text: str | None = None
    path: str | None = None
    yes: bool = False
    asked_text: list[tuple[str, str]] = field(default_factory=list)
    asked_path: list[tuple[str, str]] = field(default_factory=list)
    asked_confirm: list[tuple[str, str]] = field(default_factory=list)
    confirm_actions: list[str] = field(default_factory=list)

    def ask_text(self, _parent: QWidget, label: str, current: str) -> str | None:
        self.asked_text.append((label, current))
        return self.text

    def ask_path(self, _parent: QWidget, suggested: str, filter_: str) -> str | None:
        self.asked_path.append((suggested, filter_))
        return self.path

    def confirm(self, _parent: QWidget, title: str, question: str, action: str = "",
                keep: str = "") -> bool:
        self.asked_confirm.append((title, question))
        self.confirm_actions.append(action)
        return self.yes


@dataclass
class Setup:
    store: StoreService
    service: ConversationService
    sidebar: ConversationsSidebar
    dialogs: Dialogs
    ids: dict[str, int]


def _seed(store: StoreService, title: str, *messages: tuple[str, str],
          pinned: bool = False) -> int:
    def make(db: Any) -> int:
        conversations = ConversationStore(db)
        conv = conversations.create(title, "/m/model.gguf")
        for role, text in messages:
            conversations.append_message(conv, role, text)
        if pinned:
            conversations.set_pinned(conv, True)
        return conv

    return store.call(make).result(5)


def _stored(store: StoreService) -> list[ConversationSummary]:
    return store.call(lambda db: ConversationStore(db).summaries()).result(5)


def _line(sidebar: ConversationsSidebar, row: int) -> QModelIndex:
    """The view's row ``row`` (a heading, a conversation or the empty line)."""
    model = sidebar.list.model()
    assert 0 <= row < model.rowCount()
    return model.index(row, 0)


def _shown(sidebar: ConversationsSidebar) -> list[str]:
    model = sidebar.list.model()
    return [model.index(i, 0).data() for i in range(model.rowCount())]


def _find(sidebar: ConversationsSidebar, title: str) -> QModelIndex:
    model = sidebar.list.model()
    found = model.match(model.index(0, 0), Qt.ItemDataRole.DisplayRole, title, -1,
                        Qt.MatchFlag.MatchExactly)
    assert len(found) == 1, _shown(sidebar)
    return found[0]


def _select(sidebar: ConversationsSidebar, title: str) -> None:
    sidebar.list.setCurrentIndex(_find(sidebar, title))


@pytest.fixture
def setup(qtbot: Any, tmp_path: Path) -> Iterator[Setup]:
    store = StoreService(StoreThread(lambda: open_database(tmp_path / "h.sqlite3",
                                                           legacy=LegacySources())))
    service = ConversationService(store)
    ids = {
        "Alpha": _seed(store, "Alpha", ("user", "how do I bake sourdough bread"),
                       ("assistant", "Start with a levain.")),
        "Beta": _seed(store, "Beta", ("user", "cheap flights to Lisbon"),
                      ("assistant", "Try midweek."), ("user", "thanks")),
        "Gamma": _seed(store, "Gamma", ("user", "a poem about the sea"), pinned=True),
    }
    dialogs = Dialogs()
    sidebar = ConversationsSidebar(service, ask_text=dialogs.ask_text, ask_path=dialogs.ask_path,
                                   confirm=dialogs.confirm)
    qtbot.addWidget(sidebar)
    sidebar.resize(300, 500)
    sidebar.show()
    qtbot.waitUntil(lambda: len(sidebar.rows()) == 3, timeout=WAIT_MS)
    try:
        yield Setup(store, service, sidebar, dialogs, ids)
    finally:
        sidebar.close()
        store.close()


def test_pinned_rows_come_first_then_today_under_headings(setup: Setup) -> None:
    sidebar = setup.sidebar
    assert _shown(sidebar) == ["Pinned", "Gamma", "Today", "Beta", "Alpha"]
    for heading in (_line(sidebar, 0), _line(sidebar, 2)):
        assert heading.flags() == Qt.ItemFlag.NoItemFlags  # not selectable, not a conversation
        assert heading.data(Qt.ItemDataRole.FontRole).bold()
        assert heading.data(Qt.ItemDataRole.UserRole) is None
    assert _line(sidebar, 4).data(Qt.ItemDataRole.ToolTipRole) == "2 messages"
    assert _line(sidebar, 3).data(Qt.ItemDataRole.ToolTipRole) == "3 messages"


def test_without_pinned_rows_only_the_day_heading(qtbot: Any, setup: Setup) -> None:
    setup.service.set_pinned(setup.ids["Gamma"], False)
    qtbot.waitUntil(lambda: _shown(setup.sidebar) == ["Today", "Gamma", "Beta", "Alpha"],
                    timeout=WAIT_MS)


def test_pin_and_unpin(qtbot: Any, setup: Setup) -> None:
    sidebar = setup.sidebar
    _select(sidebar, "Alpha")
    sidebar.toggle_pin_selected()
    qtbot.waitUntil(lambda: _shown(sidebar) == ["Pinned", "Gamma", "Alpha", "Today", "Beta"],
                    timeout=WAIT_MS)
    assert {s.title for s in _stored(setup.store) if s.pinned} == {"Alpha", "Gamma"}
    _select(sidebar, "Gamma")
    sidebar.toggle_pin_selected()
    qtbot.waitUntil(lambda: _shown(sidebar) == ["Pinned", "Alpha", "Today", "Gamma", "Beta"],
                    timeout=WAIT_MS)
    assert {s.title for s in _stored(setup.store) if s.pinned} == {"Alpha"}


def test_search_filters_by_message_text_after_the_pause(qtbot: Any, setup: Setup,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    sidebar = setup.sidebar
    queries: list[str] = []
    real = setup.service.list_conversations

    def spy(query: str = "") -> None:
        queries.append(query)
        real(query)

    monkeypatch.setattr(setup.service, "list_conversations", spy)
    sidebar.search.setFocus()
    qtbot.keyClicks(sidebar.search, "SOURDOUGH")  # in a message only, not in a title; any case
    assert queries == []  # nothing is searched while the user types
    # The search waits for a pause: each key started the pause's timer again.
    pause = sidebar._search_timer
    assert pause.isActive() and pause.isSingleShot() and pause.interval() == SEARCH_DELAY_MS
    assert _shown(sidebar) == ["Pinned", "Gamma", "Today", "Beta", "Alpha"]
    qtbot.waitUntil(lambda: _shown(sidebar) == ["Today", "Alpha"], timeout=WAIT_MS)
    assert queries == ["SOURDOUGH"]  # one search for the whole word

    sidebar.search.setText("Lisbon")
    qtbot.waitUntil(lambda: _shown(sidebar) == ["Today", "Beta"], timeout=WAIT_MS)
    sidebar.search.setText("no such words anywhere")
    qtbot.waitUntil(lambda: _shown(sidebar) == ["No matches."], timeout=WAIT_MS)
    assert _line(sidebar, 0).flags() == Qt.ItemFlag.NoItemFlags
    sidebar.search.clear()
    qtbot.waitUntil(lambda: _shown(sidebar) == ["Pinned", "Gamma", "Today", "Beta", "Alpha"],
                    timeout=WAIT_MS)


def test_a_change_keeps_the_search(qtbot: Any, setup: Setup) -> None:
    """The list asked for again after a change (a rename) still has the search applied."""
    sidebar = setup.sidebar
    sidebar.search.setText("sourdough")
    qtbot.waitUntil(lambda: _shown(sidebar) == ["Today", "Alpha"], timeout=WAIT_MS)
    setup.dialogs.text = "Bread"
    _select(sidebar, "Alpha")
    sidebar.rename_selected()
    qtbot.waitUntil(lambda: _shown(sidebar) == ["Today", "Bread"], timeout=WAIT_MS)


def test_rename_through_the_dialog(qtbot: Any, setup: Setup) -> None:
    sidebar, dialogs = setup.sidebar, setup.dialogs
    _select(sidebar, "Beta")
    dialogs.text = None  # Cancel
    sidebar.rename_selected()
    dialogs.text = "   "  # blank: nothing to rename to
    sidebar.rename_selected()
    assert dialogs.asked_text == [("New name:", "Beta")] * 2
    dialogs.text = "  Trip \n to   Lisbon "
    sidebar.rename_selected()
    qtbot.waitUntil(lambda: "Trip to Lisbon" in _shown(sidebar), timeout=WAIT_MS)
    assert _shown(sidebar) == ["Pinned", "Gamma", "Today", "Trip to Lisbon", "Alpha"]
    titles = {s.id: s.title for s in _stored(setup.store)}
    assert titles[setup.ids["Beta"]] == "Trip to Lisbon"
    assert titles[setup.ids["Alpha"]] == "Alpha" and titles[setup.ids["Gamma"]] == "Gamma"


def test_delete_asks_and_no_deletes_nothing(qtbot: Any, setup: Setup) -> None:
    sidebar, dialogs = setup.sidebar, setup.dialogs
    deleted: list[int] = []
    sidebar.deleted.connect(deleted.append)
    _select(sidebar, "Beta")
    dialogs.yes = False
    sidebar.delete_selected()
    assert len(dialogs.asked_confirm) == 1
    title, question = dialogs.asked_confirm[0]
    assert title == "Delete conversation"
    assert dialogs.confirm_actions == ["Delete"]  # a named action, not Yes / No
    assert "Beta" in question and "3 messages" in question and "cannot be undone" in question
    qtbot.wait(300)
    assert setup.store.flush(5)
    assert deleted == []
    assert sorted(s.title for s in _stored(setup.store)) == ["Alpha", "Beta", "Gamma"]
    assert _shown(sidebar) == ["Pinned", "Gamma", "Today", "Beta", "Alpha"]

    dialogs.yes = True
    sidebar.delete_selected()
    assert deleted == [setup.ids["Beta"]]
    qtbot.waitUntil(lambda: _shown(sidebar) == ["Pinned", "Gamma", "Today", "Alpha"],
                    timeout=WAIT_MS)
    assert sorted(s.title for s in _stored(setup.store)) == ["Alpha", "Gamma"]
    messages = setup.store.call(
        lambda db: db.query("SELECT COUNT(*) AS n FROM messages WHERE conversation_id = ?",
                            (setup.ids["Beta"],), action="count")[0]["n"]).result(5)
    assert messages == 0  # its messages went with it


def test_export_writes_markdown_and_json(qtbot: Any, setup: Setup, tmp_path: Path) -> None:
    sidebar, dialogs = setup.sidebar, setup.dialogs
    written: list[str] = []
    sidebar.exported.connect(written.append)
    _select(sidebar, "Alpha")

    dialogs.path = None  # Cancel: nothing is written
    sidebar.export_selected("markdown")
    assert dialogs.asked_path == [("Alpha.md", "Markdown (*.md)")]

    target = tmp_path / "out" / "alpha.md"
    target.parent.mkdir()
    dialogs.path = str(target)
    sidebar.export_selected("markdown")
    qtbot.waitUntil(lambda: written == [str(target)], timeout=WAIT_MS)
    text = target.read_text(encoding="utf-8")
    assert text.startswith("# Alpha\n")
    assert "## You\n\nhow do I bake sourdough bread\n" in text
    assert "## Assistant\n\nStart with a levain.\n" in text

    target_json = tmp_path / "out" / "alpha.json"
    dialogs.path = str(target_json)
    sidebar.export_selected("json")
    assert dialogs.asked_path[-1] == ("Alpha.json", "JSON (*.json)")
    qtbot.waitUntil(lambda: len(written) == 2, timeout=WAIT_MS)
    data = json.loads(target_json.read_text(encoding="utf-8"))
    assert data["format"] == "hearth-conversation" and data["title"] == "Alpha"
    assert [(m["role"], m["content"]) for m in data["messages"]] == [
        ("user", "how do I bake sourdough bread"), ("assistant", "Start with a levain.")]
    assert sorted(p.name for p in target.parent.iterdir()) == ["alpha.json", "alpha.md"]


def test_selecting_a_row_emits_open_requested_once(qtbot: Any, setup: Setup) -> None:
    sidebar = setup.sidebar
    opened: list[int] = []
    sidebar.open_requested.connect(opened.append)
    activated: list[Any] = []
    sidebar.list.activated.connect(activated.append)
    qtbot.waitExposed(sidebar)

    def click(title: str, double: bool = False) -> None:
        point = sidebar.list.visualRect(_find(sidebar, title)).center()
        qtbot.mouseClick(sidebar.list.viewport(), Qt.MouseButton.LeftButton, pos=point)
        if double:  # a real double click: a click, then the double-click event
            qtbot.mouseDClick(sidebar.list.viewport(), Qt.MouseButton.LeftButton, pos=point)

    click("Beta")
    assert opened == [setup.ids["Beta"]]
    click("Beta")  # the conversation shown: clicking it again opens nothing
    click("Beta", double=True)
    assert opened == [setup.ids["Beta"]]
    click("Pinned")  # a heading opens nothing
    assert opened == [setup.ids["Beta"]]
    activated.clear()
    click("Gamma", double=True)  # a double click (click + activate) opens it once
    assert activated  # the list did report the activation too
    assert opened == [setup.ids["Beta"], setup.ids["Gamma"]]
    # The list asked for again (a change elsewhere) keeps the one shown selected, and does not
    # open it again.
    sidebar.set_current(setup.ids["Gamma"])
    sidebar.refresh()
    qtbot.wait(200)
    qtbot.waitUntil(lambda: sidebar.selected_id() == setup.ids["Gamma"], timeout=WAIT_MS)
    assert opened == [setup.ids["Beta"], setup.ids["Gamma"]]
    # The keyboard: Enter on another row opens it.
    sidebar.activateWindow()
    sidebar.list.setFocus()
    qtbot.waitUntil(sidebar.list.hasFocus, timeout=WAIT_MS)
    _select(sidebar, "Alpha")
    qtbot.keyClick(sidebar.list, Qt.Key.Key_Return)
    assert opened == [setup.ids["Beta"], setup.ids["Gamma"], setup.ids["Alpha"]]


def test_f2_renames_and_delete_deletes_the_selected_row(qtbot: Any, setup: Setup) -> None:
    sidebar, dialogs = setup.sidebar, setup.dialogs
    qtbot.waitExposed(sidebar)
    sidebar.activateWindow()
    sidebar.list.setFocus()
    qtbot.waitUntil(sidebar.list.hasFocus, timeout=WAIT_MS)
    _select(sidebar, "Alpha")
    dialogs.text = "Bread"
    qtbot.keyClick(sidebar.list, Qt.Key.Key_F2)
    assert dialogs.asked_text == [("New name:", "Alpha")]
    qtbot.waitUntil(lambda: "Bread" in _shown(sidebar), timeout=WAIT_MS)

    _select(sidebar, "Beta")
    dialogs.yes = True
    deleted: list[int] = []
    sidebar.deleted.connect(deleted.append)
    qtbot.keyClick(sidebar.list, Qt.Key.Key_Delete)
    assert len(dialogs.asked_confirm) == 1 and "Beta" in dialogs.asked_confirm[0][1]
    assert deleted == [setup.ids["Beta"]]
    qtbot.waitUntil(lambda: _shown(sidebar) == ["Pinned", "Gamma", "Today", "Bread"],
                    timeout=WAIT_MS)
    assert sorted(s.title for s in _stored(setup.store)) == ["Bread", "Gamma"]

    # Keys typed in the search box rename and delete nothing.
    sidebar.search.setFocus()
    qtbot.waitUntil(sidebar.search.hasFocus, timeout=WAIT_MS)
    qtbot.keyClick(sidebar.search, Qt.Key.Key_F2)
    qtbot.keyClick(sidebar.search, Qt.Key.Key_Delete)
    assert len(dialogs.asked_text) == 1 and len(dialogs.asked_confirm) == 1


def test_the_row_actions_show_on_the_row_under_the_mouse_and_act_on_it(
        qtbot: Any, setup: Setup, monkeypatch: pytest.MonkeyPatch) -> None:
    sidebar = setup.sidebar
    qtbot.waitExposed(sidebar)
    bar = sidebar.actions_bar
    assert not bar.isVisible()
    sidebar._on_hover(_find(sidebar, "Beta"))  # what the list's entered signal reports
    row = sidebar.list.visualRect(_find(sidebar, "Beta"))
    assert bar.isVisible() and row.contains(bar.geometry().center())
    assert bar.pin.accessibleName() == "Pin to top" and bar.more.accessibleName() == "More actions"
    qtbot.mouseClick(bar.pin, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: _shown(sidebar) == ["Pinned", "Gamma", "Beta", "Today", "Alpha"],
                    timeout=WAIT_MS)
    sidebar._on_hover(_find(sidebar, "Beta"))
    assert bar.pin.accessibleName() == "Unpin"
    # "More" opens the row's menu: rename, pin, export, delete.
    shown: list[list[str]] = []
    real_menu = sidebar.menu

    class Shown:  # the menu as built, recorded instead of opened (exec would wait for a person)
        def exec(self, *_args: Any) -> None:
            shown.append([a.text() for a in real_menu().actions() if not a.isSeparator()])

    monkeypatch.setattr(sidebar, "menu", Shown)
    sidebar._on_hover(_find(sidebar, "Alpha"))
    qtbot.mouseClick(bar.more, Qt.MouseButton.LeftButton)
    assert shown == [["Rename…", "Pin to top", "Export as Markdown…", "Export as JSON…",
                      "Delete…"]]
    assert sidebar.selected_id() == setup.ids["Alpha"]  # the menu acts on the row it was for
    # The keyboard: the actions follow the current row while the list has the focus.
    sidebar.activateWindow()
    sidebar.list.setFocus()
    qtbot.waitUntil(sidebar.list.hasFocus, timeout=WAIT_MS)
    qtbot.keyClick(sidebar.list, Qt.Key.Key_Up)
    assert bar.isVisible() and bar.conv_id == sidebar.selected_id()


def test_no_conversations_says_so_with_a_new_chat_button(qtbot: Any, tmp_path: Path) -> None:
    store = StoreService(StoreThread(lambda: open_database(tmp_path / "h.sqlite3",
                                                           legacy=LegacySources())))
    service = ConversationService(store)
    sidebar = ConversationsSidebar(service)
    qtbot.addWidget(sidebar)
    sidebar.show()
    try:
        qtbot.waitUntil(lambda: sidebar.empty.isVisible(), timeout=WAIT_MS)
        assert not sidebar.list.isVisible()
        assert sidebar.empty.title.text() == "No conversations yet"
        assert sidebar.empty.action.text() == "New chat"
        with qtbot.waitSignal(sidebar.new_requested):
            qtbot.mouseClick(sidebar.empty.action, Qt.MouseButton.LeftButton)
        # A search that finds nothing is a list saying so, not "no conversations".
        sidebar.search.setText("anything")
        qtbot.waitUntil(lambda: _shown(sidebar) == ["No matches."], timeout=WAIT_MS)
        assert sidebar.list.isVisible() and not sidebar.empty.isVisible()
        _seed(store, "First", ("user", "hello"))
        sidebar.clear_search()
        qtbot.waitUntil(lambda: _shown(sidebar) == ["Today", "First"], timeout=WAIT_MS)
        assert sidebar.list.isVisible() and not sidebar.empty.isVisible()
    finally:
        sidebar.close()
        store.close()
