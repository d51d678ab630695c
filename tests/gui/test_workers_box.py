"""Settings → Other computers, for real: the box lends this computer through a real
``hearth-runner rpc-worker`` it starts, adds that worker by its address, checks it in a child
process and shows its memory; bad addresses and dead workers get sentences, and nothing is
kept that the user did not add."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

from app.services.tasks import TaskRunner
from app.services.workers import WorkersService
from app.ui.workers_box import WorkersBox
from tests.integration.test_runtimes import portable

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture
def service(qtbot: Any, tmp_path: Path) -> Any:
    rt = portable()
    saved: list[list[str]] = []
    svc = WorkersService(TaskRunner(name="workers-test"),
                         program=lambda: [sys.executable, "-m", "runner", "--runtime", str(rt)],
                         load=lambda: [], save=lambda eps: saved.append(list(eps)))
    svc.saved = saved  # type: ignore[attr-defined]
    yield svc
    svc.stop_lending()


def test_lend_this_computer_then_use_it_as_a_worker(qtbot: Any, service: Any) -> None:
    box = WorkersBox(service)
    qtbot.addWidget(box)
    assert "No worker added" in box.list.item(0).text()
    assert not box.warning.isVisible()  # loopback: no warning

    with qtbot.waitSignal(service.lending_changed, timeout=30_000) as lent:
        service.lend(True, host="127.0.0.1", port=0)
        box.lend.setChecked(True)
    endpoint = lent.args[0]
    assert endpoint.startswith("127.0.0.1:")
    assert endpoint in box.lend_note.text()

    box.address.setText(f"  {endpoint} ")
    with qtbot.waitSignal(service.checked, timeout=30_000):
        box.add_btn.click()
    text = box.list.item(0).text()
    assert text.startswith(endpoint) and "GiB free" in text, text
    qtbot.waitUntil(lambda: service.saved == [[endpoint]])

    # A second address that nothing answers: the check says so, in the list.
    box.address.setText("127.0.0.1:9")
    with qtbot.waitSignal(service.checked, timeout=30_000):
        box.add_btn.click()
    assert "not usable" in box.list.item(1).text() and "cannot be reached" in \
        box.list.item(1).text()

    box.list.setCurrentRow(1)
    box.remove_btn.click()
    assert service.endpoints() == [endpoint]

    service.stop_lending()
    assert service.lent == "" and not box.lend.isChecked()


def test_bad_addresses_are_refused_with_a_sentence(qtbot: Any, service: Any) -> None:
    box = WorkersBox(service)
    qtbot.addWidget(box)
    box.show()
    box.address.setText("http://host/path")
    box.add_btn.click()
    assert "is not an address" in box.message.text() and box.message.isVisible()
    assert service.endpoints() == [] and service.saved == []


def test_lending_beyond_this_computer_shows_the_warning(qtbot: Any, service: Any) -> None:
    box = WorkersBox(service)
    qtbot.addWidget(box)
    box.show()
    box.interface.setCurrentIndex(1)
    assert box.warning.isVisible() and "run code on this computer" in box.warning.text()


def test_settings_has_an_other_computers_tab_wired_to_the_loader(qtbot: Any,
                                                                  make_window: Any) -> None:
    from app.ui.settings_dialog import SettingsDialog

    window = make_window()
    window.settings_requested.emit()
    dialog = window.findChild(SettingsDialog)
    assert dialog is not None and dialog.workers_box is not None
    tabs = [dialog.tabs.tabText(i) for i in range(dialog.tabs.count())]
    assert "Other computers" in tabs
    # The loader plans over the very list the box edits.
    assert window.loader._workers() == window.gui.workers.endpoints()
    dialog.close()
