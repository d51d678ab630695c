"""The Hub service with the real client against the fake Hub: recommended entries resolve,
vanish when the Hub lacks them, and are hidden in the tab when they would not fit."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import QObject

from app.hardware import HardwareReport
from app.hub.client import HubClient
from app.hub.recommended import Recommendation
from app.hub.remote_header import HeaderCache
from app.hub.verdict import Fit, Verdict
from app.services.hub import HubService
from app.services.tasks import TaskRunner
from app.ui.discover import DiscoverTab
from tests.fixtures.fake_hub import FakeHub
from tests.fixtures.header_only import GPT_OSS_120B, LLAMA31_8B, write_header_only
from tests.gui.model_fakes import FakeDownloads

REPORT = Path(__file__).resolve().parents[1] / "fixtures" / "hardware" / "reports" / \
    "cpu_only_16gb.json"
RECS = [Recommendation("acme/small-GGUF", "Q4_K_M", "Small", "fits"),
        Recommendation("acme/huge-GGUF", "MXFP4", "Huge", "does not fit"),
        Recommendation("acme/gone-GGUF", "Q4_K_M", "Gone", "not on the Hub")]


@pytest.fixture
def service(tmp_path: Path, qtbot: Any) -> Iterator[tuple[HubService, FakeHub]]:
    with FakeHub() as hub:
        small = write_header_only(tmp_path / "s.gguf", LLAMA31_8B)
        huge = write_header_only(tmp_path / "h.gguf", GPT_OSS_120B)
        hub.add_repo("acme/small-GGUF", {"small-Q4_K_M.gguf": small},
                     sha256s={"small-Q4_K_M.gguf": "ab" * 32})
        hub.add_repo("acme/huge-GGUF", {"huge-MXFP4.gguf": huge},
                     sha256s={"huge-MXFP4.gguf": "cd" * 32})
        report = HardwareReport.from_json(json.loads(REPORT.read_text()))
        client = HubClient(endpoint=hub.url)
        parent = QObject()
        tasks = TaskRunner(parent)
        svc = HubService(tasks, lambda: client, lambda: report,
                         HeaderCache(tmp_path / "headers"), parent, recommended=lambda: RECS)
        yield svc, hub
        tasks.wait(10_000)  # verdicts still being planned finish before their client closes
        qtbot.wait(50)
        client.close()


def test_recommended_resolve_and_the_missing_one_is_dropped(
        service: tuple[HubService, FakeHub], qtbot: Any) -> None:
    svc, _hub = service
    verdicts: dict[str, Verdict] = {}
    svc.verdict.connect(lambda repo, _g, v: verdicts.__setitem__(repo, v))
    lists: list[list[Any]] = []
    svc.recommended.connect(lists.append)
    svc.load_recommended()
    qtbot.waitUntil(lambda: len(verdicts) == 2, timeout=20_000)
    qtbot.waitUntil(lambda: [e[0].repo_id for e in lists[-1]] == ["acme/small-GGUF",
                                                                  "acme/huge-GGUF"])
    assert verdicts["acme/small-GGUF"].fit is Fit.CPU
    assert verdicts["acme/huge-GGUF"].fit is Fit.NO_FIT


def test_the_tab_hides_what_would_not_fit(service: tuple[HubService, FakeHub],
                                          qtbot: Any) -> None:
    svc, _hub = service
    tab = DiscoverTab(svc, FakeDownloads())
    qtbot.addWidget(tab)
    with qtbot.waitSignals([svc.verdict, svc.verdict], timeout=20_000):
        tab.show()  # the first show loads the list
    qtbot.waitUntil(lambda: "acme/huge-GGUF" in tab.recommended.cards
                    and not tab.recommended.cards["acme/huge-GGUF"].isVisible(), timeout=5_000)
    assert tab.recommended.cards["acme/small-GGUF"].isVisible()
    assert "acme/gone-GGUF" not in tab.recommended.cards


def test_a_late_answer_for_an_abandoned_repo_is_dropped(
        service: tuple[HubService, FakeHub], qtbot: Any) -> None:
    svc, _hub = service
    shown: list[str] = []
    svc.details.connect(lambda d: shown.append(d.repo_id))
    svc.open_repo("acme/huge-GGUF")  # its answer can only arrive after the next click
    with qtbot.waitSignal(svc.details, timeout=10_000):
        svc.open_repo("acme/small-GGUF")
    qtbot.wait(300)
    assert "acme/huge-GGUF" not in shown


def test_token_dialog_checks_saves_and_a_gated_repo_then_opens(
        tmp_path: Path, qtbot: Any) -> None:
    import keyring

    from app.hub import auth
    from app.ui.token_dialog import TokenDialog
    from tests.unit.hub.test_auth import MemoryKeyring

    previous = keyring.get_keyring()
    keyring.set_keyring(MemoryKeyring())
    try:
        with FakeHub() as hub:
            hub.token = "hf_right"
            small = write_header_only(tmp_path / "s.gguf", LLAMA31_8B)
            hub.add_repo("meta/gated-GGUF", {"m-Q4_K_M.gguf": small}, gated=True,
                         sha256s={"m-Q4_K_M.gguf": "ab" * 32})
            clients: list[HubClient] = []

            def client() -> HubClient:  # what compose's shared client does: token at creation
                if not clients:
                    clients.append(HubClient(endpoint=hub.url, token=auth.get_token()))
                return clients[0]

            parent = QObject()
            report = HardwareReport.from_json(json.loads(REPORT.read_text()))
            svc = HubService(TaskRunner(parent), client, lambda: report,
                             HeaderCache(tmp_path / "h"), parent, reset_client=clients.clear)
            with qtbot.waitSignal(svc.verdict, timeout=10_000) as first:
                svc.open_repo("meta/gated-GGUF")
            assert isinstance(first.args[2], str) and "gated" in first.args[2]

            dialog = TokenDialog(svc)
            qtbot.addWidget(dialog)
            dialog.edit.setText("hf_wrong")
            with qtbot.waitSignal(svc.account_failed, timeout=10_000):
                dialog.save_btn.click()
            assert "refused" in dialog.status.text() and auth.get_token() is None
            dialog.edit.setText("hf_right")
            with qtbot.waitSignal(svc.account, timeout=10_000):
                dialog.save_btn.click()
            assert auth.get_token() == "hf_right"  # in the keyring, not in a file
            assert "hearth-tester" in dialog.status.text()
            with qtbot.waitSignal(svc.verdict, timeout=10_000) as second:
                svc.open_repo("meta/gated-GGUF")
            assert isinstance(second.args[2], Verdict)
            dialog.forget_btn.click()
            assert auth.get_token() is None
            for c in clients:
                c.close()
    finally:
        keyring.set_keyring(previous)


def test_a_search_does_not_silence_the_repository_page_and_back(
        service: tuple[HubService, FakeHub], qtbot: Any) -> None:
    svc, _hub = service
    with qtbot.waitSignals([svc.details, svc.results], timeout=10_000):
        svc.open_repo("acme/small-GGUF")
        svc.search("acme")  # started after the page: both still answer


def test_verdicts_follow_the_report_and_say_why_when_detection_fails(
        tmp_path: Path, qtbot: Any) -> None:
    with FakeHub() as hub:
        small = write_header_only(tmp_path / "s.gguf", LLAMA31_8B)
        hub.add_repo("acme/small-GGUF", {"small-Q4_K_M.gguf": small},
                     sha256s={"small-Q4_K_M.gguf": "ab" * 32})
        client = HubClient(endpoint=hub.url)
        parent = QObject()
        report: list[HardwareReport] = []
        asked: list[int] = []
        svc = HubService(TaskRunner(parent), lambda: client, lambda: report[0] if report else None,
                         HeaderCache(tmp_path / "h"), parent,
                         detect_hardware=lambda: asked.append(1))
        verdicts: list[Any] = []
        svc.verdict.connect(lambda _r, _g, v: verdicts.append(v))
        with qtbot.waitSignal(svc.details, timeout=10_000):
            svc.open_repo("acme/small-GGUF")
        assert asked == [1] and verdicts == []  # waits for the report, asked for it once
        svc.hardware_failed("no /proc here.")
        assert len(verdicts) == 1 and "could not be detected" in verdicts[0]
        cpu = HardwareReport.from_json(json.loads(REPORT.read_text()))
        report.append(cpu)
        with qtbot.waitSignal(svc.verdict, timeout=10_000):
            svc.hardware_changed(cpu)  # the page on screen is planned again for the new report
        assert isinstance(verdicts[-1], Verdict) and verdicts[-1].fit is Fit.CPU
        big = HardwareReport.from_json(json.loads(
            (REPORT.parent / "rtx4090_24gb.json").read_text()))
        report[0] = big
        with qtbot.waitSignal(svc.verdict, timeout=10_000):
            svc.hardware_changed(big)
        assert verdicts[-1].fit is Fit.GPU
        client.close()
