"""Settings → Tools → MCP servers: add one (a command, or a URL with headers), import or export
the ``mcpServers`` JSON other apps keep, and for each server its state, Test, On and Remove.

Header values (an HTTP server's token) are secrets: kept as every secret Hearth keeps
(app/storage/secrets.py: the OS keyring, else an owner-only file, and a sentence says which),
never in tools.json. A server's stderr tail and error are its own text: shown as plain text.
"""

from __future__ import annotations

import html
import shlex
from collections.abc import Callable
from dataclasses import replace

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QCheckBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from app.services.mcp_host import FAILED, READY, STARTING, ServerView, header_secret
from app.services.tools import ToolService
from app.storage import secrets
from app.tools import mcp_json
from app.tools.config import McpServer
from app.ui.common import clear_layout
from app.ui.lang import tr, ui_text
from app.ui.settings_tabs.layout import Section, note
from app.ui.style.tokens import SPACING

# Asks for a file to read or write: (parent, caption, filter, save) -> path or "".
ChooseFile = Callable[[QWidget, str, str, bool], str]


class McpServersBox(Section):
    """The MCP servers the person added."""

    def __init__(self, tools: ToolService, choose_file: ChooseFile,
                 say: Callable[[str], None]) -> None:
        super().__init__(tr("MCP servers"))
        self._tools = tools
        self._choose_file = choose_file
        self._say = say
        self.body.addWidget(note(tr(
            "Servers that give models more tools, started when a conversation uses them and "
            "stopped when Hearth closes. Each call is still asked about. A server's descriptions "
            "of its tools are its own words: read them before you allow anything.")))
        self.rows = QVBoxLayout()
        self.rows.setSpacing(SPACING.sm)
        self.body.addLayout(self.rows)
        self.name = QLineEdit()
        self.name.setPlaceholderText(tr("Name, such as files"))
        self.name.setAccessibleName(tr("Server name"))
        self.target = QLineEdit()
        self.target.setPlaceholderText(tr("A command (npx -y @modelcontextprotocol/server-"
                                          "filesystem ~/notes) or an https:// address"))
        self.target.setAccessibleName(tr("Command or address"))
        self.extra = QPlainTextEdit()
        self.extra.setPlaceholderText(tr("Environment variables (command) or headers "
                                         "(address), one NAME=value a line"))
        self.extra.setAccessibleName(tr("Environment or headers"))
        self.extra.setFixedHeight(64)
        self.add_btn = QPushButton(tr("Add server"))
        self.add_btn.setAccessibleName(self.add_btn.text())
        self.add_btn.clicked.connect(self._add)
        self.import_btn = QPushButton(tr("Import…"))
        self.import_btn.setToolTip(tr("Add the servers of an mcpServers JSON file (Claude "
                                      "Desktop, LM Studio, Cursor)"))
        self.import_btn.setAccessibleName(tr("Import MCP servers"))
        self.import_btn.clicked.connect(self._import)
        self.export_btn = QPushButton(tr("Export…"))
        self.export_btn.setToolTip(tr("Save the servers as an mcpServers JSON file (header "
                                      "values left empty)"))
        self.export_btn.setAccessibleName(tr("Export MCP servers"))
        self.export_btn.clicked.connect(self._export)
        self.add_divider()
        for widget in (self.name, self.target, self.extra):
            self.body.addWidget(widget)
        buttons = QHBoxLayout()
        buttons.addWidget(self.add_btn)
        buttons.addStretch(1)
        buttons.addWidget(self.import_btn)
        buttons.addWidget(self.export_btn)
        self.body.addLayout(buttons)
        self.kept = note(ui_text(secrets.notice()))
        self.body.addWidget(self.kept)
        tools.changed.connect(self._show)
        self._show()

    # ---- the list ------------------------------------------------------------------------------

    def _show(self) -> None:
        clear_layout(self.rows)
        servers = self._tools.config.servers
        if not servers:
            self.rows.addWidget(note(tr("No MCP servers yet.")))
        for server in servers:
            self.rows.addWidget(self._row(server))

    def _row(self, server: McpServer) -> QWidget:
        row = QWidget()
        row.setObjectName(f"mcp:{server.name}")
        line = QHBoxLayout(row)
        line.setContentsMargins(0, 0, 0, 0)
        text = QVBoxLayout()
        name = QLabel()
        name.setTextFormat(Qt.TextFormat.PlainText)
        name.setText(server.name)
        name.setProperty("type", "subheading")
        what = server.url if server.is_http else " ".join([server.command, *server.args])
        state = note(self._state_text(server))
        state.setObjectName(f"mcp-state:{server.name}")
        view = self._mcp_view(server.name)
        if view is not None and view.stderr:
            # The server's own output: escaped, so a tooltip cannot draw it as markup.
            state.setToolTip(f"<pre>{html.escape(view.stderr[-2000:])}</pre>")
        text.addWidget(name)
        text.addWidget(note(what[:200]))
        text.addWidget(state)
        line.addLayout(text, 1)
        on = QCheckBox(tr("On"))
        on.setAccessibleName(tr("{name} on").format(name=server.name))
        on.setChecked(server.enabled)
        on.toggled.connect(lambda checked, n=server.name: self._set_enabled(n, checked))
        test = QPushButton(tr("Test"))
        test.setAccessibleName(tr("Test {name}").format(name=server.name))
        test.setObjectName(f"mcp-test:{server.name}")
        test.clicked.connect(lambda _=False, n=server.name: self._test(n))
        remove = QPushButton(tr("Remove"))
        remove.setAccessibleName(tr("Remove {name}").format(name=server.name))
        remove.clicked.connect(lambda _=False, n=server.name: self._remove(n))
        for widget in (on, test, remove):
            line.addWidget(widget)
        return row

    def _mcp_view(self, name: str) -> ServerView | None:
        mcp = self._tools.mcp
        return mcp.view(name) if mcp is not None else None

    def _state_text(self, server: McpServer) -> str:
        if not server.enabled:
            return tr("Off.")
        mcp = self._tools.mcp
        if mcp is None:
            return ""
        view = mcp.view(server.name)
        if view.state == READY:
            return tr("Ready with %n tool(s).", "", len(view.tools))
        if view.state == STARTING:
            return tr("Starting…")
        if view.state == FAILED:
            return tr("Failed: {error}").format(error=view.error or tr("no reason given"))
        return tr("Not started (it starts when a conversation uses it, or with Test).")

    # ---- changes -------------------------------------------------------------------------------

    def _save(self, servers: tuple[McpServer, ...]) -> None:
        self._tools.set_config(replace(self._tools.config, servers=servers))

    def _add(self) -> None:
        name = self.name.text().strip()
        target = self.target.text().strip()
        if not mcp_json.valid_name(name):
            self._say(tr("Give the server a name of letters, digits, spaces, “_”, “.” or “-”, "
                         "at most 64 characters."))
            return
        if self._tools.config.server(name) is not None:
            self._say(tr("There is already a server named {name}.").format(name=name))
            return
        pairs = {}
        for raw in self.extra.toPlainText().splitlines():
            key, sep, value = raw.partition("=")
            if raw.strip() and (not sep or not key.strip()):
                self._say(tr("Write each variable or header as NAME=value, one a line."))
                return
            if sep:
                pairs[key.strip()] = value.strip()
        if target.startswith(("http://", "https://")):
            for header, value in pairs.items():
                secrets.put(header_secret(name, header), value)
            server = McpServer(name, url=target, header_names=tuple(pairs))
        else:
            try:
                words = shlex.split(target)
            except ValueError as exc:
                self._say(tr("The command cannot be read: {error}.").format(error=str(exc)))
                return
            if not words:
                self._say(tr("Give the command that starts the server, or its https:// "
                             "address."))
                return
            server = McpServer(name, command=words[0], args=tuple(words[1:]), env=pairs)
        self._save((*self._tools.config.servers, server))
        for field in (self.name, self.target):
            field.clear()
        self.extra.clear()

    def _set_enabled(self, name: str, enabled: bool) -> None:
        self._save(tuple(replace(s, enabled=enabled) if s.name == name else s
                         for s in self._tools.config.servers))

    def _remove(self, name: str) -> None:
        server = self._tools.config.server(name)
        if server is not None:
            for header in server.header_names:
                secrets.delete(header_secret(name, header))
        self._save(tuple(s for s in self._tools.config.servers if s.name != name))

    def _test(self, name: str) -> None:
        if self._tools.mcp is not None:
            self._tools.mcp.start(name)

    def _import(self) -> None:
        path = self._choose_file(self, tr("Import MCP servers"), "JSON (*.json)", False)
        if not path:
            return
        try:
            with open(path, encoding="utf-8") as f:
                text = f.read(mcp_json.MAX_FILE + 1)
            servers, headers = mcp_json.parse(text)
        except (OSError, UnicodeDecodeError) as exc:
            self._say(tr("The file could not be read: {error}").format(error=str(exc)))
            return
        except mcp_json.McpJsonError as exc:
            self._say(ui_text(str(exc)))
            return
        have = {s.name for s in self._tools.config.servers}
        new = [s for s in servers if s.name not in have]
        for (server, header), value in headers.items():
            if server not in have:
                secrets.put(header_secret(server, header), value)
        self._save((*self._tools.config.servers, *new))
        self._say(tr("Added %n server(s); none was started.", "", len(new)))

    def _export(self) -> None:
        path = self._choose_file(self, tr("Export MCP servers"), "JSON (*.json)", True)
        if not path:
            return
        try:
            with open(path, "w", encoding="utf-8") as f:
                f.write(mcp_json.dump(self._tools.config.servers))
        except OSError as exc:
            self._say(tr("The file could not be written: {error}").format(error=str(exc)))
