"""Settings → Tools: built-in tools on and off, the folder, the loop's limits, forgetting the
standing decisions; MCP servers added, imported, exported, tested, turned off and removed."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel, QPushButton

from app.services.mcp_host import READY, ServerView, header_secret
from app.services.tools import ToolService
from app.settings import AppSettings
from app.storage import secrets
from app.tools import config as tools_config
from app.tools import mcp_json
from app.tools.config import McpServer, ToolsConfig
from app.tools.spec import ToolSpec
from app.ui.settings_dialog import SettingsDialog
from tests.gui import model_fakes as mf
from tests.gui.fakes import FakeRunner
from tests.gui.test_chat_tools import FakeMcp


class ViewingMcp(FakeMcp):
    def __init__(self) -> None:
        super().__init__([])
        self.views: dict[str, ServerView] = {}
        self.started: list[str] = []
        self.configured: list[Any] = []

    def view(self, name: str) -> ServerView:
        return self.views.get(name, ServerView())

    def start(self, name: str) -> None:
        self.started.append(name)
        self.views[name] = ServerView(READY, (ToolSpec(name, "echo"), ToolSpec(name, "fail")))
        self.changed.emit()

    def configure(self, servers: Any) -> None:
        self.configured.append(tuple(servers))


@pytest.fixture
def env(qtbot: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Any:
    kept: dict[str, str] = {}
    monkeypatch.setattr(secrets, "put", lambda name, value: kept.__setitem__(name, value))
    monkeypatch.setattr(secrets, "get", kept.get)
    monkeypatch.setattr(secrets, "delete", lambda name: kept.pop(name, None))
    path = tmp_path / "tools.json"
    mcp = ViewingMcp()
    tools = ToolService(path, mcp=mcp)
    files: dict[str, str] = {}

    def choose_file(_parent: Any, caption: str, _filter: str, save: bool) -> str:
        return files.get("save" if save else "open", "")

    dialog = SettingsDialog(AppSettings(), models=mf.FakeLocalModels(), hub=mf.FakeHub(),
                            runner=FakeRunner(), apply_theme=lambda _t: None,
                            save=lambda _s: None, open_url=lambda _u: None,
                            choose_folder=lambda *_a: str(tmp_path / "notes"),
                            copy_text=lambda _t: None, log_folder=tmp_path / "logs",
                            runtimes=lambda: [], tools=tools, choose_file=choose_file)
    qtbot.addWidget(dialog)
    dialog.show()
    dialog.show_page("tools")
    return dialog, tools, mcp, path, kept, files


def test_built_in_tools_folder_and_limits_are_kept_in_tools_json(env: Any, qtbot: Any) -> None:
    dialog, tools, _, path, _, _ = env
    box = dialog.tools_box
    assert not any(b.isChecked() for b in box.checks.values())  # all off by default
    box.checks["calculate"].setChecked(True)
    qtbot.mouseClick(box.folder_btn, Qt.MouseButton.LeftButton)
    box.rounds.setValue(3)
    box.timeout.setValue(20)
    saved = tools_config.load(path)
    assert saved.builtin == ("calculate",) and saved.folder.endswith("notes")
    assert saved.max_rounds == 3 and saved.timeout_s == 20
    assert [s.name for s in tools.offered([])] == ["calculate"]
    box.checks["read_file"].setChecked(True)
    assert "read_file" in [s.name for s in tools.offered([])]  # a folder is chosen
    tools.remember(tools.builtin_specs()[0], "allow")
    box._show()
    assert box.forget.isEnabled()
    qtbot.mouseClick(box.forget, Qt.MouseButton.LeftButton)
    assert tools_config.load(path).decisions == {}


def test_a_server_is_added_tested_turned_off_and_removed(env: Any, qtbot: Any) -> None:
    dialog, tools, mcp, path, kept, _ = env
    box = dialog.mcp_box
    box.name.setText("web")
    box.target.setText("https://tools.example/mcp")
    box.extra.setPlainText("Authorization=Bearer s3cret")
    qtbot.mouseClick(box.add_btn, Qt.MouseButton.LeftButton)
    saved = json.loads(path.read_text())
    assert saved["servers"][0]["url"] == "https://tools.example/mcp"
    assert "s3cret" not in path.read_text()  # the header's value is a secret
    assert kept[header_secret("web", "Authorization")] == "Bearer s3cret"
    box.name.setText("files")
    box.target.setText('npx -y "@modelcontextprotocol/server-filesystem" /tmp')
    box.extra.setPlainText("")
    qtbot.mouseClick(box.add_btn, Qt.MouseButton.LeftButton)
    files = tools.config.server("files")
    assert files is not None and files.command == "npx"
    assert files.args == ("-y", "@modelcontextprotocol/server-filesystem", "/tmp")
    test = dialog.findChild(QPushButton, "mcp-test:files")
    qtbot.mouseClick(test, Qt.MouseButton.LeftButton)
    assert mcp.started == ["files"]
    qtbot.waitUntil(lambda: (label := dialog.findChild(QLabel, "mcp-state:files")) is not None
                    and label.text() == "Ready with 2 tools.", timeout=5000)
    box._set_enabled("files", False)
    assert tools_config.load(path).server("files").enabled is False  # type: ignore[union-attr]
    box._remove("web")
    assert header_secret("web", "Authorization") not in kept
    assert [s.name for s in tools.config.servers] == ["files"]
    # A bad name is refused with a sentence, nothing saved.
    box.name.setText("../../etc")
    box.target.setText("cmd")
    qtbot.mouseClick(box.add_btn, Qt.MouseButton.LeftButton)
    assert "name of letters" in dialog.message.text() and len(tools.config.servers) == 1


def test_mcp_servers_json_is_imported_without_starting_and_exported(
        env: Any, qtbot: Any, tmp_path: Path) -> None:
    dialog, tools, mcp, _, kept, files = env
    source = tmp_path / "claude_desktop_config.json"
    source.write_text(json.dumps({"mcpServers": {
        "fs": {"command": "npx", "args": ["-y", "server-fs", "/tmp"], "env": {"A": "1"}},
        "remote": {"url": "https://x.example/mcp", "headers": {"Authorization": "Bearer t"}},
        "../bad": {"command": "x"}, "odd": "not an object"}}))
    files["open"] = str(source)
    qtbot.mouseClick(dialog.mcp_box.import_btn, Qt.MouseButton.LeftButton)
    assert [s.name for s in tools.config.servers] == ["fs", "remote"]
    assert mcp.started == [] and "none was started" in dialog.message.text()
    assert kept[header_secret("remote", "Authorization")] == "Bearer t"
    files["save"] = str(tmp_path / "out.json")
    qtbot.mouseClick(dialog.mcp_box.export_btn, Qt.MouseButton.LeftButton)
    out = json.loads((tmp_path / "out.json").read_text())["mcpServers"]
    assert out["fs"] == {"command": "npx", "args": ["-y", "server-fs", "/tmp"], "env": {"A": "1"}}
    assert out["remote"] == {"url": "https://x.example/mcp", "headers": {"Authorization": ""}}
    (tmp_path / "bad.json").write_text("{not json")
    files["open"] = str(tmp_path / "bad.json")
    qtbot.mouseClick(dialog.mcp_box.import_btn, Qt.MouseButton.LeftButton)
    assert "not JSON" in dialog.message.text()


def test_the_mcp_json_round_trip_and_its_refusals() -> None:
    servers = [McpServer("a", command="uvx", args=("srv",), env={"K": "v"}),
               McpServer("b", url="https://b/mcp", header_names=("X-Key",))]
    text = mcp_json.dump(servers, lambda s, h: "secret" if (s, h) == ("b", "X-Key") else None)
    back, headers = mcp_json.parse(text)
    assert back == servers and headers == {("b", "X-Key"): "secret"}
    with pytest.raises(mcp_json.McpJsonError, match="mcpServers"):
        mcp_json.parse('{"servers": {}}')
    with pytest.raises(mcp_json.McpJsonError, match="larger than 1 MiB"):
        mcp_json.parse(" " * (mcp_json.MAX_FILE + 1))
    assert ToolsConfig.from_json(ToolsConfig(servers=tuple(servers)).to_json()).servers == \
        tuple(servers)


def test_each_tool_offered_gets_its_own_standing_decision(env: Any, qtbot: Any) -> None:
    dialog, tools, _, path, _, _ = env
    box = dialog.tools_box
    assert box.modes == {}  # nothing on: nothing to decide
    box.checks["calculate"].setChecked(True)
    qtbot.waitUntil(lambda: "builtin/calculate" in box.modes, timeout=5000)
    mode = box.modes["builtin/calculate"]
    assert mode.currentData() == "ask"
    mode.setCurrentIndex(mode.findData("deny"))
    mode.activated.emit(mode.currentIndex())  # as the person's pick does
    spec = tools.builtin_specs()[0]
    assert tools.verdict(spec, []) == "deny"
    assert tools_config.load(path).decisions["builtin/calculate"]["mode"] == "deny"
