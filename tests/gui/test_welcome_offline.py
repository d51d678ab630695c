"""The first-run page offline (issue 25, defect 1): the real Hub service and client facing a real
closed port, the real library scan of another app's folder, the page used through its buttons.

Offline is faked at the lowest boundary: a TCP socket bound to a port but never listening, so a
connection to it is refused at once (and no other program can take the port meanwhile). The
network "comes back" by handing the service a client for the local fake Hub.
"""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import shutil
from collections.abc import Callable, Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from PySide6.QtCore import QObject, Qt, Signal
from PySide6.QtWidgets import QLabel, QPushButton, QWidget

from app.hardware.report import HardwareReport
from app.hub.client import HubClient
from app.hub.recommended import Recommendation
from app.hub.remote_header import HeaderCache
from app.hub.verdict import Verdict
from app.library.catalog import HeaderInfoCache
from app.library.folders import LibraryFolders
from app.library.scan import default_sources
from app.services.hub import HubService
from app.services.local_models import LocalModelsService
from app.services.tasks import TaskRunner
from app.ui.welcome import WelcomePage
from tests.fixtures.fake_hub import FakeHub
from tests.fixtures.hardware.make_reports import load_report
from tests.fixtures.header_only import LLAMA31_8B, write_header_only
from tests.fixtures.models import TINY, model_path
from tests.gui.model_fakes import FakeDownloads

RECS = [Recommendation("acme/small-GGUF", "Q4_K_M", "Small", "fits anywhere"),
        Recommendation("acme/other-GGUF", "Q4_K_M", "Other", "fits too")]
# What the real client says about a refused connection, cut to its first sentence for a card.
WHY = "Hugging Face cannot be reached (the connection was refused)."
# Generous: a refused connection fails at once; the client's own time-out is 10 s.
OFFLINE_MS = 20_000


class FakeHardware(QObject):
    """A machine already detected (the hardware is not what these tests are about)."""

    report_changed = Signal(object)
    failed = Signal(str)

    def __init__(self, report: HardwareReport) -> None:
        super().__init__()
        self.report = report

    def refresh(self) -> None:
        pass


def button_named(page: QWidget, name: str) -> QPushButton:
    """The page's button a screen reader announces as ``name`` (how a person finds it)."""
    found = [b for b in page.findChildren(QPushButton) if b.accessibleName() == name]
    names = sorted(b.accessibleName() or b.text() for b in page.findChildren(QPushButton))
    assert len(found) == 1, f"no single button named {name!r}; the page has {names}"
    return found[0]


def has_button(page: QWidget, name: str) -> bool:
    return any(b.accessibleName() == name and b.isVisible()
               for b in page.findChildren(QPushButton))


def visible_texts(page: QWidget) -> list[str]:
    return [label.text() for label in page.findChildren(QLabel) if label.isVisible()]


def could_not_check(page: WelcomePage) -> bool:
    cards = page.cards()
    return bool(cards) and all(c.verdict_label.text().startswith("Could not check")
                               for c in cards)


@pytest.fixture
def env(tmp_path: Path, qtbot: Any, closed_url: str) -> Iterator[Any]:
    parent = QObject()
    tasks = TaskRunner(parent)
    report = load_report("cpu_only_16gb")
    clients = [HubClient(endpoint=closed_url)]  # the last one is the one in use
    hub = HubService(tasks, lambda: clients[-1], lambda: report,
                     HeaderCache(tmp_path / "headers"), parent, recommended=lambda: list(RECS))
    e = SimpleNamespace(parent=parent, tasks=tasks, report=report, clients=clients, hub=hub,
                        chats=[], done=[], local=None)

    def make(**extra: Any) -> WelcomePage:
        page = WelcomePage(hub, FakeDownloads(), FakeHardware(report), **extra)
        page.chat_requested.connect(e.chats.append)
        page.done.connect(lambda: e.done.append(True))
        qtbot.addWidget(page)
        page.resize(900, 760)
        page.show()  # the first show asks the hub for the recommended list
        return page

    e.make = make
    yield e
    if e.local is not None:
        e.local.shutdown()
    tasks.wait(10_000)  # answers still on their way arrive before their client closes
    qtbot.wait(20)
    for c in clients:
        c.close()


def lmstudio_model(home: Path) -> Path:
    """A real (tiny) model where LM Studio keeps its downloads."""
    path = home / ".lmstudio" / "models" / "acme" / "tiny-GGUF" / "tiny-F32.gguf"
    path.parent.mkdir(parents=True)
    shutil.copyfile(model_path(TINY), path)
    return path


def scanning(tmp_path: Path, home: Path,
             report: HardwareReport) -> Callable[[TaskRunner], LocalModelsService]:
    def make(tasks: TaskRunner) -> LocalModelsService:
        return LocalModelsService(
            tasks, LibraryFolders(tmp_path / "hearth-models"), lambda: report,
            HeaderInfoCache(tmp_path / "library-headers.json"), save=lambda _f: None,
            sources=lambda f: default_sources(models_dir=f.models_dir, home=home, env={},
                                              platform="linux", system_root=tmp_path / "root"))
    return make


def test_offline_the_cards_say_they_could_not_be_checked_and_why(env: Any, qtbot: Any) -> None:
    page = env.make()
    qtbot.waitUntil(lambda: could_not_check(page), timeout=OFFLINE_MS)
    for card in page.cards():
        assert card.isVisible()
        # A short chip; the sentence is the banner's, and the chip's tooltip says it again.
        assert card.verdict_label.text() == "Could not check"
        assert card.verdict_label.property("chip") == "warning"
        assert card.verdict_label.toolTip() == f"Could not check: {WHY}"
        assert card.verdict_label.accessibleName() == f"Could not check: {WHY}"
        button = page.button(card.rec.repo_id)
        assert button is not None and not button.isEnabled()  # nothing to download offline
        assert not button.property("primary")  # drawn as a disabled button, not the accent
        assert "cannot be reached" in button.toolTip()
    # The page says so plainly, once, with what to do: a banner holding Retry.
    banner = page.recommended_section.banner
    assert banner.isVisible() and banner.tone == "warning" and not page.recommended_status.isVisible()
    status = banner.text.text()
    assert status.startswith(WHY) and "Retry" in status and "Checking" not in status
    assert page.retry_btn is banner.action and page.retry_btn.isVisible()
    assert sum("cannot be reached" in t for t in visible_texts(page)) == 1  # the banner's only


def test_retry_on_the_page_checks_again(env: Any, qtbot: Any, tmp_path: Path) -> None:
    page = env.make()
    retry = button_named(page, "Retry")
    qtbot.waitUntil(lambda: could_not_check(page) and retry.isVisible() and retry.isEnabled(),
                    timeout=OFFLINE_MS)
    with qtbot.waitSignal(env.hub.unreachable, timeout=OFFLINE_MS):  # still offline
        qtbot.mouseClick(retry, Qt.MouseButton.LeftButton)
    assert could_not_check(page) and retry.isVisible() and retry.isEnabled()
    assert page.recommended_section.banner.text.text().startswith(WHY)
    with FakeHub() as fake:  # the network is back
        header = write_header_only(tmp_path / "s.gguf", LLAMA31_8B)
        for rec in RECS:
            fake.add_repo(rec.repo_id, {f"{rec.repo_id.split('/')[1]}-Q4_K_M.gguf": header},
                          sha256s={f"{rec.repo_id.split('/')[1]}-Q4_K_M.gguf": "ab" * 32})
        env.clients.append(HubClient(endpoint=fake.url))
        qtbot.mouseClick(retry, Qt.MouseButton.LeftButton)

        def checked() -> bool:
            return all(isinstance(c.verdict, Verdict) for c in page.cards()) and \
                all(page.button(r.repo_id).isEnabled() for r in RECS)  # type: ignore[union-attr]

        qtbot.waitUntil(checked, timeout=OFFLINE_MS)
        assert [c.verdict.fits for c in page.cards()] == [True, True]  # type: ignore[union-attr]
        assert not retry.isVisible() and not page.recommended_section.banner.isVisible()
        assert page.recommended_status.isVisible()
        assert "Pick one" in page.recommended_status.text()
        assert not any("cannot be reached" in t for t in visible_texts(page))
        env.tasks.wait(10_000)


def test_open_gguf_file_uses_the_chosen_file(env: Any, qtbot: Any, tmp_path: Path) -> None:
    model = tmp_path / "somewhere" / "mine.gguf"
    model.parent.mkdir()
    shutil.copyfile(model_path(TINY), model)
    answers = [("", ""), (str(model), "GGUF models (*.gguf)")]  # cancelled, then chosen
    asked: list[tuple[Any, ...]] = []

    def ask_file(*args: Any) -> tuple[str, str]:
        asked.append(args)
        return answers.pop(0)

    page = env.make(ask_file=ask_file)
    button = button_named(page, "Open GGUF file…")
    qtbot.mouseClick(button, Qt.MouseButton.LeftButton)
    assert len(asked) == 1 and asked[0][0] is page and "*.gguf" in asked[0][3]
    assert env.chats == [] and env.done == []  # cancelled: still on the page
    qtbot.mouseClick(button, Qt.MouseButton.LeftButton)
    assert env.chats == [str(model)] and env.done == [True]


def test_models_already_on_this_computer_are_offered(env: Any, qtbot: Any,
                                                     tmp_path: Path) -> None:
    home = tmp_path / "home"
    found = lmstudio_model(home)
    env.local = scanning(tmp_path, home, env.report)(env.tasks)
    page = env.make(local=env.local)
    env.local.rescan()  # as the composition root does once the page exists
    use = "Use tiny-F32.gguf from LM Studio"
    qtbot.waitUntil(lambda: has_button(page, use), timeout=30_000)
    assert "Use a model already on this computer" in visible_texts(page)
    assert any("LM Studio" in t for t in visible_texts(page))
    qtbot.waitUntil(lambda: could_not_check(page), timeout=OFFLINE_MS)  # still offline
    qtbot.mouseClick(button_named(page, use), Qt.MouseButton.LeftButton)
    assert env.chats == [str(found)] and env.done == [True]


def test_offline_first_start_composed_offers_the_lmstudio_model(
        qtbot: Any, tmp_path: Path, closed_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """The app as it starts the first time: compose(show_welcome=True), the Hub unreachable,
    a model in LM Studio's folder; Use selects it in the window, as `hearth MODEL` would."""
    from app.__main__ import compose

    home = tmp_path / "home"
    found = lmstudio_model(home)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("HF_ENDPOINT", closed_url)
    monkeypatch.setenv("HEARTH_MODELS_DIR", str(tmp_path / "hearth-models"))
    parent = QObject()
    gui = compose(parent, store_path=tmp_path / "hearth.sqlite3", show_welcome=True)
    window = gui.window
    qtbot.addWidget(window)
    try:
        window.show()
        page = window.findChild(WelcomePage)
        assert page is not None and page.isVisible()
        qtbot.waitUntil(lambda: could_not_check(page), timeout=OFFLINE_MS)
        assert has_button(page, "Retry") and has_button(page, "Open GGUF file…")
        use = "Use tiny-F32.gguf from LM Studio"
        qtbot.waitUntil(lambda: has_button(page, use), timeout=30_000)
        qtbot.mouseClick(button_named(page, use), Qt.MouseButton.LeftButton)
        assert window.selected_model() == str(found)
        assert window.pages.currentWidget() is window.tabs  # the welcome is done
    finally:
        window.close()  # stops the runner the click started
        gui.close()


def test_the_local_list_is_short_fitting_models_first(env: Any, qtbot: Any) -> None:
    from app.hub.verdict import Fit
    from tests.gui import model_fakes as mf

    rows = [mf.local_row(f"/m/big{i}.gguf", f"big{i}.gguf", verdict=mf.verdict(Fit.NO_FIT))
            for i in range(3)]
    rows += [mf.local_row("/m/broken.gguf", "broken.gguf", error="The header is damaged.")]
    rows += [mf.local_row(f"/m/ok{i}.gguf", f"ok{i}.gguf", source="LM Studio",
                          verdict=mf.verdict(Fit.GPU)) for i in range(3)]
    local = mf.FakeLocalModels()
    page = env.make(local=local)
    local.busy_changed.emit(True)
    assert page.local_status.isVisible() and "Looking in" in page.local_status.text()
    local.set_rows(rows)

    def uses() -> list[str]:
        return [b.accessibleName() for b in page.findChildren(QPushButton)
                if b.accessibleName().startswith("Use ") and b.isVisible()]

    qtbot.waitUntil(lambda: len(uses()) == 5)  # the layout shows new rows on its next turn
    assert uses() == ["Use ok0.gguf from LM Studio", "Use ok1.gguf from LM Studio",
                    "Use ok2.gguf from LM Studio", "Use big0.gguf from Hearth",
                    "Use big1.gguf from Hearth"]  # no damaged file; 5 of 6
    assert page.local_status.text() == "The first 5 of 6; the Models tab lists them all."
    local.set_rows([])
    assert page.local_status.isVisible() and "No models were found" in page.local_status.text()
