"""The Models page's "Model server" section: whether this computer's model server runs, what
it holds (memory, idle time, requests), and Pin / Unload for each model; Start when it does not
run. It asks the server again every few seconds while it is on screen."""

from __future__ import annotations

from PySide6.QtCore import QTimer
from PySide6.QtGui import QHideEvent, QShowEvent
from PySide6.QtWidgets import QHBoxLayout, QPushButton, QVBoxLayout, QWidget

from app.remote.model_server import ResidentModel
from app.services.model_server import ModelServerService
from app.ui.common import clear_layout, human_size, plain_label
from app.ui.lang import tr, ui_text
from app.ui.style.components import Banner, icon_button, section_header, set_shown
from app.ui.style.icons import icon
from app.ui.style.tokens import SPACING

REFRESH_MS = 3000


class _ModelRow(QWidget):
    """One resident model: its name, what it holds and does, Pin and Unload."""

    def __init__(self, panel: ServerPanel, model: ResidentModel) -> None:
        super().__init__()
        self.model = model
        self.name = plain_label(model.id)
        self.detail = plain_label(resident_detail(model), tone="muted", kind="small")
        self.pin_btn = icon_button("unpin" if model.pinned else "pin",
                                   tr("Let it unload when idle") if model.pinned
                                   else tr("Keep it loaded (pin)"))
        self.pin_btn.clicked.connect(lambda: panel.service.pin(model.model, not model.pinned))
        self.unload_btn = icon_button("unload", tr("Unload {model}").format(model=model.id))
        self.unload_btn.clicked.connect(lambda: panel.service.unload(model.model))
        text = QVBoxLayout()
        text.setSpacing(0)
        text.addWidget(self.name)
        text.addWidget(self.detail)
        row = QHBoxLayout(self)
        row.setContentsMargins(0, 0, 0, 0)
        row.addLayout(text, 1)
        row.addWidget(self.pin_btn)
        row.addWidget(self.unload_btn)
        # The window's own model: loaded and unloaded in the chat, held while it is loaded.
        set_shown(self.pin_btn, not model.window)
        set_shown(self.unload_btn, not model.window)


def resident_detail(model: ResidentModel) -> str:
    """"1.2 GB · idle 3 min · pinned", "loading", "answering 2 requests"."""
    parts = [human_size(model.memory)] if model.memory else []
    if model.window:
        parts.append(tr("loaded in the chat here"))
    if model.state != "loaded":
        parts.append(tr("loading") if model.state == "loading" else tr("unloading"))
    elif model.requests:
        parts.append(tr("answering %n request(s)", None, model.requests))
    else:
        parts.append(tr("idle %n min", None, int(model.idle_s // 60)) if model.idle_s >= 60
                     else tr("idle %n s", None, int(model.idle_s)))
    if model.pinned and not model.window:
        parts.append(tr("pinned"))
    return " · ".join(parts)


class ServerPanel(QWidget):
    def __init__(self, service: ModelServerService, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.service = service
        self.status = plain_label("", tone="muted")
        self.status.setWordWrap(True)
        self.start_btn = QPushButton(icon("load"), tr("Start the model server"))
        self.start_btn.setToolTip(tr("Serve every model of your library to other programs on "
                                     "this computer; it stops when Hearth closes."))
        self.start_btn.clicked.connect(service.start)
        self.message = Banner()
        self.message.setObjectName("server_message")
        self._rows = QVBoxLayout()
        self._rows.setSpacing(SPACING.sm)
        head = QHBoxLayout()
        head.addWidget(self.status, 1)
        head.addWidget(self.start_btn)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, SPACING.md, 0, 0)
        layout.setSpacing(SPACING.sm)
        layout.addWidget(section_header(tr("Model server")))
        layout.addLayout(head)
        layout.addWidget(self.message)
        layout.addLayout(self._rows)
        self._timer = QTimer(self)
        self._timer.setInterval(REFRESH_MS)
        self._timer.timeout.connect(service.refresh)
        service.changed.connect(self.show_state)
        service.failed.connect(lambda text: self.message.show_message(ui_text(text), "warning"))
        self.show_state()

    def show_state(self) -> None:
        s = self.service
        if s.running is None:
            self.status.setText(tr("Asking the model server…"))
        elif not s.running:
            self.status.setText(tr("The model server is not running. Other programs reach "
                                   "your models through it (Settings > Sharing)."))
        elif not s.models:
            self.status.setText(tr("Running at {url}: no model loaded. A program that asks "
                                   "for a model loads it.").format(url=s.url))
        else:
            self.status.setText(tr("Running at {url}: %n model(s) loaded.", None,
                                   len(s.models)).format(url=s.url))
        set_shown(self.start_btn, s.running is False)
        if s.running:
            self.message.hide()
        clear_layout(self._rows)
        for model in s.models:
            self._rows.addWidget(_ModelRow(self, model))

    def rows(self) -> list[_ModelRow]:
        items = (self._rows.itemAt(i) for i in range(self._rows.count()))
        return [w for item in items if item is not None
                and isinstance(w := item.widget(), _ModelRow)]

    def showEvent(self, event: QShowEvent) -> None:
        super().showEvent(event)
        self.service.refresh()
        self._timer.start()

    def hideEvent(self, event: QHideEvent) -> None:
        self._timer.stop()
        super().hideEvent(event)
