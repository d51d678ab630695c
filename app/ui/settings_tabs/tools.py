"""Settings → Tools: the built-in tools (each off until turned on), the folder the file tools
read, the limits of one reply's tool loop, and forgetting the standing decisions.

Every change is kept at once in tools.json through the tool service
(app/services/tools.py). The MCP servers are the section under these
(app/ui/settings_tabs/mcp_servers.py).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from PySide6.QtWidgets import QCheckBox, QComboBox, QPushButton, QSpinBox, QVBoxLayout, QWidget

from app.services.tools import ToolService
from app.tools.builtin import BUILTIN_TOOLS
from app.tools.spec import BUILTIN
from app.ui.common import clear_layout
from app.ui.lang import tr
from app.ui.settings_tabs.layout import Section, note, setting_row
from app.ui.style.tokens import SPACING


def _label(name: str) -> str:
    return {"list_files": tr("List files in the chosen folder"),
            "read_file": tr("Read text files in the chosen folder"),
            "calculate": tr("Calculator"),
            "current_datetime": tr("Current date and time")}.get(name, name)


class ToolsBox(Section):
    """The built-in tools and the loop's limits."""

    def __init__(self, tools: ToolService,
                 choose_folder: Callable[[QWidget, str, str], str]) -> None:
        super().__init__(tr("Built-in tools"))
        self._tools = tools
        self._choose_folder = choose_folder
        self._shown_modes: set[tuple[str, str, str]] = set()
        self.body.addWidget(note(tr(
            "Models that know tools may call these during a reply; each call is shown and, "
            "until you decide otherwise, asked about first. None of them reaches the network "
            "or runs a command.")))
        self.checks: dict[str, QCheckBox] = {}
        for name in BUILTIN_TOOLS:
            box = QCheckBox(_label(name))
            box.setAccessibleName(_label(name))
            box.setChecked(name in tools.config.builtin)
            box.toggled.connect(self._save_builtin)
            self.checks[name] = box
            self.body.addWidget(box)
        self.folder = note(selectable=True)
        self.folder.setObjectName("tools_folder")
        self.folder_btn = QPushButton(tr("Choose folder…"))
        self.folder_btn.setAccessibleName(tr("Choose the folder the file tools read"))
        self.folder_btn.clicked.connect(self._pick_folder)
        self.body.addWidget(setting_row(tr("Folder for the file tools"), self.folder,
                                        self.folder_btn))
        self.add_divider()
        self.rounds = QSpinBox()
        self.rounds.setRange(1, 100)
        self.rounds.setValue(tools.config.max_rounds)
        self.rounds.setAccessibleName(tr("Tool rounds in one reply, at most"))
        self.rounds.valueChanged.connect(self._save_limits)
        self.body.addWidget(setting_row(tr("Tool rounds in one reply, at most"), note(tr(
            "A model that keeps calling tools is stopped after this many rounds.")),
            self.rounds))
        self.timeout = QSpinBox()
        self.timeout.setRange(1, 3600)
        self.timeout.setSuffix(" s")
        self.timeout.setValue(int(tools.config.timeout_s))
        self.timeout.setAccessibleName(tr("Time limit of one call"))
        self.timeout.valueChanged.connect(self._save_limits)
        self.body.addWidget(setting_row(tr("Time limit of one call"), note(tr(
            "A call that takes longer is cancelled and the model is told.")), self.timeout))
        self.forget = QPushButton(tr("Ask again about every tool"))
        self.forget.setAccessibleName(self.forget.text())
        self.forget.clicked.connect(self._forget)
        self.decisions = note()
        self.body.addWidget(setting_row(tr("Standing decisions"), self.decisions, self.forget))
        # Each tool offered now (the built-in ones on, the servers' once started): ask, allow
        # or deny it without asking, for the tool as it is now.
        self.per_tool = QVBoxLayout()
        self.per_tool.setSpacing(SPACING.xs)
        self.body.addLayout(self.per_tool)
        self.modes: dict[str, QComboBox] = {}
        tools.changed.connect(self._show)
        self._show()

    def _show(self) -> None:
        config = self._tools.config
        self.folder.setText(config.folder or tr("None chosen: the file tools have nothing to "
                                                "read until you choose one."))
        n = len(config.decisions)
        self.decisions.setText(tr("%n tool(s) allowed or denied without asking.", "", n))
        self.forget.setEnabled(n > 0)
        self._show_modes()

    def _show_modes(self) -> None:
        specs = self._tools.offered([])
        wanted = {(s.key, s.fingerprint, str(self._tools.config.mode(s) or "ask")) for s in specs}
        if wanted == self._shown_modes:
            return  # unchanged: keep the rows (and the focus in them)
        self._shown_modes = wanted
        clear_layout(self.per_tool)
        self.modes = {}
        for spec in specs:
            box = QComboBox()
            for mode, label in (("ask", tr("Ask first")), ("allow", tr("Allow without asking")),
                                ("deny", tr("Deny without asking"))):
                box.addItem(label, mode)
            box.setCurrentIndex(max(0, box.findData(self._tools.config.mode(spec) or "ask")))
            box.setAccessibleName(tr("What to do when a model calls {tool}").format(
                tool=spec.name))
            box.activated.connect(lambda _i, s=spec, b=box: self._tools.remember(
                s, str(b.currentData())))
            self.modes[spec.key] = box
            where = tr("built into Hearth") if spec.source == BUILTIN else spec.source
            self.per_tool.addWidget(setting_row(spec.name, note(where), box))

    def _save_builtin(self) -> None:
        chosen = tuple(n for n, box in self.checks.items() if box.isChecked())
        self._tools.set_config(replace(self._tools.config, builtin=chosen))

    def _pick_folder(self) -> None:
        folder = self._choose_folder(self, tr("The folder the file tools may read"),
                                     self._tools.config.folder)
        if folder:
            self._tools.set_config(replace(self._tools.config, folder=folder))
            self._show()

    def _save_limits(self) -> None:
        self._tools.set_config(replace(self._tools.config, max_rounds=self.rounds.value(),
                                       timeout_s=float(self.timeout.value())))

    def _forget(self) -> None:
        self._tools.set_config(replace(self._tools.config, decisions={}))
        self._show()
