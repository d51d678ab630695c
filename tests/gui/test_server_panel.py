"""The Models page's "Model server" section (app/ui/server_panel.py) over a fake service: what
it says in each state, one row per resident model, Pin / Unload / Start asking the service."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QObject, Qt, Signal

from app.remote.model_server import ResidentModel
from app.ui.server_panel import ServerPanel, resident_detail


class FakeServer(QObject):
    changed = Signal()
    failed = Signal(object)

    def __init__(self) -> None:
        super().__init__()
        self.running: bool | None = None
        self.url = "http://127.0.0.1:4327"
        self.models: list[ResidentModel] = []
        self.asked: list[tuple[str, ...]] = []

    def refresh(self) -> None:
        self.asked.append(("refresh",))

    def start(self) -> None:
        self.asked.append(("start",))

    def unload(self, model: str) -> None:
        self.asked.append(("unload", model))

    def pin(self, model: str, pinned: bool) -> None:
        self.asked.append(("pin", model, str(pinned)))

    def set(self, running: bool, *models: ResidentModel) -> None:
        self.running, self.models = running, list(models)
        self.changed.emit()


A = ResidentModel("alpha.gguf", "alpha.gguf", "loaded", 1_200_000_000, 0, 185.0, False)
B = ResidentModel("beta.gguf", "beta.gguf", "loaded", 5_000_000, 2, 0.0, True)


def test_the_states_rows_and_asks(qtbot: Any) -> None:
    server = FakeServer()
    panel = ServerPanel(server)  # type: ignore[arg-type]
    qtbot.addWidget(panel)
    panel.show()
    assert server.asked[0] == ("refresh",)  # asked again as it is shown
    assert "Asking" in panel.status.text() and not panel.start_btn.isVisible()
    server.set(False)
    assert "not running" in panel.status.text() and panel.start_btn.isVisible()
    qtbot.mouseClick(panel.start_btn, Qt.MouseButton.LeftButton)
    assert server.asked[-1] == ("start",)
    server.set(True, A, B)
    assert "2 models loaded" in panel.status.text() and "4327" in panel.status.text()
    assert not panel.start_btn.isVisible()
    rows = panel.rows()
    assert [r.model.id for r in rows] == ["alpha.gguf", "beta.gguf"]
    assert rows[0].detail.text() == "1.2 GB · idle 3 min"
    assert rows[1].detail.text() == "5.0 MB · answering 2 requests · pinned"
    qtbot.mouseClick(rows[0].pin_btn, Qt.MouseButton.LeftButton)
    qtbot.mouseClick(rows[1].pin_btn, Qt.MouseButton.LeftButton)
    qtbot.mouseClick(rows[1].unload_btn, Qt.MouseButton.LeftButton)
    assert server.asked[-3:] == [("pin", "alpha.gguf", "True"), ("pin", "beta.gguf", "False"),
                                 ("unload", "beta.gguf")]
    server.set(True)
    assert panel.rows() == [] and "no model loaded" in panel.status.text()
    server.failed.emit("The model server refused: no.")
    assert panel.message.isVisible() and "refused" in panel.message.text.text()


def test_the_detail_of_a_model_being_loaded_and_a_fresh_one() -> None:
    loading = ResidentModel("c.gguf", "c.gguf", "loading", 0, 1, 0.0, False)
    assert resident_detail(loading) == "loading"
    assert resident_detail(ResidentModel("d", "d", "loaded", 0, 0, 42.0, False)) == "idle 42 s"


def test_the_windows_own_model_is_shown_without_pin_or_unload(qtbot: Any) -> None:
    server = FakeServer()
    panel = ServerPanel(server)  # type: ignore[arg-type]
    qtbot.addWidget(panel)
    panel.show()
    mine = ResidentModel("alpha.gguf", "alpha.gguf", "loaded", 1_200_000_000, 0, 5.0, True,
                         window=True)
    server.set(True, mine, B)
    rows = panel.rows()
    assert rows[0].detail.text() == "1.2 GB · loaded in the chat here · idle 5 s"
    assert rows[0].pin_btn.isHidden() and rows[0].unload_btn.isHidden()
    assert not rows[1].pin_btn.isHidden() and not rows[1].unload_btn.isHidden()
