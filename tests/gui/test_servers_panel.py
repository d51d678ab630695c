"""Settings → Servers (app/ui/servers_panel.py) on the in-memory servers service: adding with the
form and its checks, what a check says, editing without retyping the key, removing after a
question; the Settings dialog shows it as a tab only when the service is given."""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from typing import Any

from PySide6.QtCore import Qt

from app.settings import AppSettings
from app.ui.servers_panel import ServersPanel
from app.ui.settings_dialog import SettingsDialog
from tests.gui import model_fakes as mf
from tests.gui.fakes import FakeRemote, FakeRunner


def make(qtbot: Any, answer: bool = True) -> tuple[ServersPanel, FakeRemote, list[str]]:
    remote, asked = FakeRemote(), []

    def confirm(_parent: Any, _title: str, question: str, *_a: Any, **_k: Any) -> bool:
        asked.append(question)
        return answer

    panel = ServersPanel(remote, confirm=confirm)
    qtbot.addWidget(panel)
    panel.show()
    return panel, remote, asked


def test_adding_a_server_checks_the_form_then_hands_it_to_the_service(qtbot: Any) -> None:
    panel, remote, _ = make(qtbot)
    # One empty state in the list's place, no empty box with a notice under it.
    assert panel.list.count() == 0 and "No servers yet" in panel.empty.title.text()
    assert panel.empty.isVisible() and not panel.list.isVisible()
    assert not panel.status_banner.isVisible()
    assert not panel.form.isVisible() and not panel.edit_btn.isVisible()
    qtbot.mouseClick(panel.add_btn, Qt.MouseButton.LeftButton)
    assert panel.form.isVisible() and panel.save_btn.text() == "Add and connect"
    assert panel.key_edit.echoMode() == panel.key_edit.EchoMode.Password
    panel.name_edit.setText("Office PC")
    panel.url_edit.setText("ftp://10.0.0.2/v1")
    qtbot.mouseClick(panel.save_btn, Qt.MouseButton.LeftButton)
    assert panel.form_error.isVisible() and "http:// or https://" in panel.form_error.text()
    assert remote.calls == []
    panel.url_edit.setText("10.0.0.2:8080")
    panel.key_edit.setText("sk-secret")
    qtbot.mouseClick(panel.save_btn, Qt.MouseButton.LeftButton)
    assert remote.calls == [("add", remote.servers()[0].id, "Office PC",
                             "http://10.0.0.2:8080/v1", "sk-secret")]
    assert not panel.form.isVisible() and panel.key_edit.text() == ""  # the key is not kept
    assert panel.list.count() == 1 and "Office PC" in panel.list.item(0).text()
    assert panel.list.isVisible() and not panel.empty.isVisible() and panel.edit_btn.isEnabled()
    assert "not connected yet" in panel.list.item(0).text()
    assert panel.status.text() == "Connecting to Office PC…"
    sid = remote.servers()[0].id
    remote.answer_check(sid, "Connected: 2 models (a, b).", models=("a", "b"))
    assert panel.status.text() == "Connected: 2 models (a, b)."
    assert "2 models, checked" in panel.list.item(0).text()
    # A second server with the same name is refused in words.
    qtbot.mouseClick(panel.add_btn, Qt.MouseButton.LeftButton)
    panel.name_edit.setText("office pc")
    panel.url_edit.setText("http://10.0.0.3/v1")
    qtbot.mouseClick(panel.save_btn, Qt.MouseButton.LeftButton)
    assert "already called" in panel.form_error.text() and len(remote.servers()) == 1
    qtbot.mouseClick(panel.cancel_btn, Qt.MouseButton.LeftButton)
    assert not panel.form.isVisible()


def test_errors_are_shown_as_plain_text_for_the_selected_server(qtbot: Any) -> None:
    panel, remote, _ = make(qtbot)
    a = remote.put("A <b>box</b>", "http://10.0.0.2/v1")
    b = remote.put("B", "http://10.0.0.3/v1")
    panel.list.setCurrentRow(0)
    remote.answer_check(a.id, "A <b>box</b> refused the API key (HTTP 401).", error=True)
    assert panel.status.text() == "A <b>box</b> refused the API key (HTTP 401)."
    assert panel.status.textFormat() == Qt.TextFormat.PlainText
    remote.answer_check(b.id, "Connected: 1 model (m).")
    assert "401" in panel.status.text()  # another server's answer does not replace it
    panel.list.setCurrentRow(1)
    assert panel.status.text() == "Connected: 1 model (m)."
    qtbot.mouseClick(panel.refresh_btn, Qt.MouseButton.LeftButton)
    assert remote.calls[-1] == ("refresh", b.id)


def test_editing_keeps_the_key_unless_a_new_one_is_typed(qtbot: Any) -> None:
    panel, remote, _ = make(qtbot)
    s = remote.put("Box", "http://10.0.0.2:8080/v1", key="sk-old")
    panel.list.setCurrentRow(0)
    qtbot.mouseClick(panel.edit_btn, Qt.MouseButton.LeftButton)
    assert panel.name_edit.text() == "Box" and panel.url_edit.text() == "http://10.0.0.2:8080/v1"
    assert panel.key_edit.text() == "" and "Unchanged" in panel.key_edit.placeholderText()
    panel.name_edit.setText("Big box")
    qtbot.mouseClick(panel.save_btn, Qt.MouseButton.LeftButton)
    assert remote.calls[-1] == ("edit", s.id, "Big box", "http://10.0.0.2:8080/v1", None)
    qtbot.mouseClick(panel.edit_btn, Qt.MouseButton.LeftButton)
    panel.key_edit.setText("sk-new")
    qtbot.mouseClick(panel.save_btn, Qt.MouseButton.LeftButton)
    assert remote.calls[-1][-1] == "sk-new"


def test_removing_asks_first(qtbot: Any) -> None:
    panel, remote, asked = make(qtbot, answer=False)
    s = remote.put("Box", "http://10.0.0.2/v1")
    panel.list.setCurrentRow(0)
    qtbot.mouseClick(panel.remove_btn, Qt.MouseButton.LeftButton)
    assert "Remove “Box” and forget its API key?" in asked[0] and remote.servers() == [s]
    panel._confirm = lambda *_a: True
    qtbot.mouseClick(panel.remove_btn, Qt.MouseButton.LeftButton)
    assert remote.calls[-1] == ("remove", s.id) and panel.list.count() == 0


def test_the_settings_dialog_has_a_servers_tab_only_with_the_service(qtbot: Any) -> None:
    common = dict(models=mf.FakeLocalModels(), hub=mf.FakeHub(), runner=FakeRunner(),
                  apply_theme=lambda _t: None, save=lambda _s: None, runtimes=lambda: [],
                  interfaces=lambda: [])
    plain = SettingsDialog(AppSettings(), **common)  # type: ignore[arg-type]
    qtbot.addWidget(plain)
    assert "servers" not in plain.page_keys and plain.servers_panel is None
    remote = FakeRemote()
    d = SettingsDialog(AppSettings(), remote=remote, **common)  # type: ignore[arg-type]
    qtbot.addWidget(d)
    assert d.page_titles() == ["General", "Models", "Sharing", "Servers", "Runtime",
                               "Appearance", "Language"]
    assert d.servers_panel is not None
    remote.failed.emit("This computer has no working password store (keyring)…")
    assert "password store" in d.message.text()
