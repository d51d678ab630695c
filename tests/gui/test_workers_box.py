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


def test_a_worker_dying_under_a_loaded_model_loads_it_again_here(
        qtbot: Any, make_window: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """The window's loader plans over two real workers, serves split, and when one is killed
    the runner says which (exit 6) and the model loads again on this computer alone."""
    import threading

    import httpx2

    from app.planner import Pins, Wishes
    from app.runtimes import select
    from tests.fixtures.models import model_path
    from tests.gui.conftest import load
    from tests.integration.test_rpc import SPLIT, start_worker

    rt = portable()
    select.want(str(rt))
    monkeypatch.setattr(select, "_wanted", str(rt))
    workers = [start_worker(), start_worker()]
    try:
        window = make_window()
        window.loader._workers = lambda: [w.endpoint for w in workers]
        window.loader.wishes = Wishes(context=512, pins=Pins(tensor_split=(1.0, 1.0)))
        model = str(model_path(SPLIT))
        load(qtbot, window, model, timeout=60_000)
        args = window.runner._launch.args
        assert args[args.index("--rpc") + 1] == ",".join(w.endpoint for w in workers)
        assert any(t.startswith("Split over several machines") for t in
                   window.loader.plan.reason_texts())

        steps: list[str] = []
        window.loader.retrying.connect(steps.append)
        workers[1].process.kill()
        url, headers = window.runner.url, {"Authorization": f"Bearer {window.runner.key}"}

        def ask() -> None:  # the runner finds the worker gone when it next uses it
            try:
                httpx2.post(url + "/v1/completions", headers=headers, timeout=30,
                            json={"prompt": "hello", "max_tokens": 8})
            except httpx2.HTTPError:
                pass

        threading.Thread(target=ask, daemon=True).start()
        with qtbot.waitSignal(window.runner.ready, timeout=60_000):
            pass
        assert steps == ["A worker stopped answering: loading again on this computer alone, "
                         f"without {workers[0].endpoint}, {workers[1].endpoint}."]
        assert "--rpc" not in window.runner._launch.args
        with window.runner.client() as client:
            assert client.chat([{"role": "user", "content": "hi"}], max_tokens=4)["choices"]
    finally:
        for w in workers:
            w.stop()
        select.forget()
