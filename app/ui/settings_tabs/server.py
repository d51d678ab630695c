"""Settings → Sharing → Model server: start it at login, and what to give other tools.

The model server (`hearth serve`, server/) serves every model of the library on the sharing
address with the same key. This section writes or removes its start-at-login entry
(app/autostart.py: off the GUI thread, since it may wait on systemctl) and shows the lines that
point each kind of tool at it (app/remote/tool_env.py, the same as `hearth env`), with Copy.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Protocol

from PySide6.QtCore import QObject, Signal
from PySide6.QtGui import QFontDatabase
from PySide6.QtWidgets import QCheckBox, QComboBox, QPlainTextEdit

from app.remote.share import SharedKey
from app.remote.tool_env import Kind, default_shell, env_lines, server_url
from app.storage.secrets import SecretStoreError
from app.ui.lang import tr, ui_text
from app.ui.settings_tabs.edit import SettingsEdit
from app.ui.settings_tabs.layout import Section, beside, note, setting_row
from app.ui.style.components import icon_button

log = logging.getLogger(__name__)


class Autostart(Protocol):
    """app/autostart.py as this section uses it (tests pass a stand-in)."""

    def is_enabled(self) -> bool: ...
    def enable(self) -> Path: ...
    def disable(self) -> Path: ...


class _Relay(QObject):
    done = Signal(object)  # None, or the sentence of what failed


class ServerBox(Section):
    """Start at login, and the environment lines for OpenAI, Anthropic and Ollama tools."""

    def __init__(self, edit: SettingsEdit, shared_key: SharedKey, autostart: Autostart,
                 copy_text: Callable[[str], None]) -> None:
        super().__init__(tr("Model server"))
        self._edit = edit
        self._key = shared_key
        self._autostart = autostart
        self._copy = copy_text
        self._relay = _Relay(self)
        self._relay.done.connect(self._on_done)
        self.body.addWidget(note(tr(
            "Other programs (coding agents such as Claude Code and Codex, editors, Open WebUI) "
            "can use every model of your library through Hearth's model server: each model "
            "loads when a program asks for it and unloads when idle. Run 'hearth serve', or "
            "let it start when you log in. It listens at the port above, with the same key.")))
        self.window_check = QCheckBox(tr("Run the model server while Hearth is open"))
        self.window_check.setToolTip(tr("Hearth starts it when none runs yet, and stops the one "
                                        "it started when it closes. The model you load in the "
                                        "chat is served through it too."))
        self.window_check.setChecked(edit.settings.serve_models)
        self.window_check.toggled.connect(lambda on: edit.update(serve_models=on))
        self.body.addWidget(self.window_check)
        self.login_check = QCheckBox(tr("Start the model server when I log in"))
        self.login_check.setChecked(self._enabled_now())
        self.login_check.toggled.connect(self._on_login_toggled)
        self.body.addWidget(self.login_check)
        self.login_note = note()
        self.login_note.setObjectName("login_note")
        self.login_note.hide()
        self.body.addWidget(self.login_note)
        self._build_lines()
        edit.changed.connect(self.show_lines)  # a new port or address: new lines
        self.show_lines()

    def _build_lines(self) -> None:
        self.kind_combo = QComboBox()
        self.kind_combo.setAccessibleName(tr("Kind of tool"))
        for kind, label in (("openai", tr("OpenAI-compatible tools (Codex, scripts)")),
                            ("anthropic", tr("Anthropic tools (Claude Code)")),
                            ("ollama", tr("Ollama clients"))):
            self.kind_combo.addItem(label, kind)
        self.kind_combo.currentIndexChanged.connect(self.show_lines)
        self.lines = QPlainTextEdit()
        self.lines.setReadOnly(True)
        self.lines.setAccessibleName(tr("Lines for a terminal"))
        self.lines.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        self.lines.setMaximumHeight(self.lines.fontMetrics().lineSpacing() * 6)
        self.copy_btn = icon_button("copy", tr("Copy the lines"))
        self.copy_btn.clicked.connect(lambda: self._copy(self.lines.toPlainText()))
        self.body.addWidget(setting_row(tr("Point a tool at it"), note(tr(
            "Paste these lines into the terminal the tool starts from.")), self.kind_combo))
        self.body.addWidget(beside(self.lines, self.copy_btn))

    # ---- the lines -------------------------------------------------------------------------

    def show_lines(self) -> None:
        s = self._edit.settings
        kind: Kind = self.kind_combo.currentData()
        try:
            url = server_url(s.runner_port, s.launch_host)
            text = "\n".join(env_lines(kind, url, self._key.get(), default_shell()))
        except ValueError as exc:  # the port changes at every start
            text = f"# {ui_text(str(exc))}"
        except SecretStoreError as exc:
            text = f"# {ui_text(str(exc))}"
        self.lines.setPlainText(text)
        self.copy_btn.setEnabled(not text.startswith("#"))

    # ---- start at login --------------------------------------------------------------------

    def _enabled_now(self) -> bool:
        try:
            return self._autostart.is_enabled()
        except OSError:
            return False

    def _on_login_toggled(self, on: bool) -> None:
        self.login_check.setEnabled(False)  # until the entry is written or removed
        relay = self._relay

        def work() -> None:
            try:
                if on:
                    self._autostart.enable()
                else:
                    self._autostart.disable()
            except Exception as exc:  # a sentence for the person; the box stays usable
                log.warning("start at login: %s", exc)
                relay.done.emit(str(exc))  # a Text from AutostartError: translated below
                return
            relay.done.emit(None)

        threading.Thread(target=work, name="autostart", daemon=True).start()

    def _on_done(self, problem: object) -> None:
        self.login_check.setEnabled(True)
        if problem is None:
            self.login_note.hide()
            return
        self.login_check.blockSignals(True)
        self.login_check.setChecked(self._enabled_now())  # what is on disk now
        self.login_check.blockSignals(False)
        self.login_note.setText(ui_text(str(problem)))
        self.login_note.show()
