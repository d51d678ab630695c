"""The Discover tab offline (found on a walk under X): every recommended card said "Checking…"
and the line above them "Still checking some of them…" long after the banner said Hugging Face
cannot be reached. The real Hub service and client face a real closed port (connections are
refused at once), as in tests/gui/test_welcome_offline.py; the network "comes back" by handing
the service a client for the local fake Hub.
"""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from PySide6.QtCore import QObject, Qt

from app.hub.client import HubClient
from app.hub.recommended import Recommendation
from app.hub.remote_header import HeaderCache
from app.hub.verdict import Verdict
from app.services.hub import HubService
from app.services.tasks import TaskRunner
from app.ui.discover import DiscoverTab
from tests.fixtures.fake_hub import FakeHub
from tests.fixtures.hardware.make_reports import load_report
from tests.fixtures.header_only import LLAMA31_8B, write_header_only
from tests.gui.model_fakes import FakeDownloads

RECS = [Recommendation("acme/small-GGUF", "Q4_K_M", "Small", "fits anywhere"),
        Recommendation("acme/other-GGUF", "Q4_K_M", "Other", "fits too")]
WHY = "Hugging Face cannot be reached (the connection was refused)."
OFFLINE_MS = 20_000  # generous: a refused connection fails at once


@pytest.fixture
def env(tmp_path: Path, qtbot: Any, closed_url: str) -> Iterator[Any]:
    parent = QObject()
    tasks = TaskRunner(parent)
    report = load_report("cpu_only_16gb")
    clients = [HubClient(endpoint=closed_url)]  # the last one is the one in use
    hub = HubService(tasks, lambda: clients[-1], lambda: report,
                     HeaderCache(tmp_path / "headers"), parent, recommended=lambda: list(RECS))
    tab = DiscoverTab(hub, FakeDownloads())
    qtbot.addWidget(tab)
    tab.resize(1100, 720)
    yield SimpleNamespace(tasks=tasks, clients=clients, hub=hub, tab=tab)
    tasks.wait(10_000)  # answers still on their way arrive before their client closes
    qtbot.wait(20)
    for c in clients:
        c.close()


def open_offline(env: Any, qtbot: Any) -> DiscoverTab:
    """Show the tab (its first show asks for the recommended list) and wait for the hub's word
    that Hugging Face cannot be reached; the tab's own slot has run by then."""
    with qtbot.waitSignal(env.hub.unreachable, timeout=OFFLINE_MS):
        env.tab.show()
    return env.tab


def test_offline_the_cards_say_they_could_not_be_checked(env: Any, qtbot: Any) -> None:
    tab = open_offline(env, qtbot)
    qtbot.waitUntil(tab.banner.isVisible)
    cards = list(tab.recommended.cards.values())
    assert len(cards) == len(RECS)
    for card in cards:
        assert card.isVisible()
        # A short warning chip (words and a tone); the reason, the banner's sentence, is in
        # its tooltip rather than repeated on every card.
        assert card.verdict_label.text() == "Could not check"
        assert card.verdict_label.property("chip") == "warning"
        assert card.verdict_label.toolTip() == f"Could not check: {WHY}"
    status = tab.recommended_status.text()
    assert "Still checking" not in status and "Checking" not in status


def test_retry_checks_the_cards_again_when_the_network_is_back(env: Any, qtbot: Any,
                                                               tmp_path: Path) -> None:
    tab = open_offline(env, qtbot)
    qtbot.waitUntil(lambda: tab.retry_btn.isVisible() and tab.retry_btn.isEnabled())
    with FakeHub() as fake:  # the network is back
        header = write_header_only(tmp_path / "s.gguf", LLAMA31_8B)
        for rec in RECS:
            fake.add_repo(rec.repo_id, {f"{rec.repo_id.split('/')[1]}-Q4_K_M.gguf": header},
                          sha256s={f"{rec.repo_id.split('/')[1]}-Q4_K_M.gguf": "ab" * 32})
        env.clients.append(HubClient(endpoint=fake.url))
        qtbot.mouseClick(tab.retry_btn, Qt.MouseButton.LeftButton)

        def checked() -> bool:
            cards = list(tab.recommended.cards.values())
            return len(cards) == len(RECS) and all(isinstance(c.verdict, Verdict)
                                                   for c in cards)

        qtbot.waitUntil(checked, timeout=OFFLINE_MS)
        assert not tab.banner.isVisible()
        env.tasks.wait(10_000)
    assert not any("Could not check" in c.verdict_label.text() for c in tab.recommended.cards.values())
    assert "Still checking" not in tab.recommended_status.text()
