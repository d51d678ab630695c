"""The Hardware panel fed with recorded machines; detection must run off the GUI thread."""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import threading
from typing import Any

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QGroupBox, QLabel

from app.hardware.report import HardwareReport
from app.services.hardware import HardwareService
from app.services.tasks import TaskRunner
from app.ui.hardware_panel import HardwarePanel, MemoryBar
from tests.fixtures.hardware.make_reports import load_report
from tests.unit.hardware.fakes import fixture_json


@pytest.fixture
def tasks() -> Any:
    runner = TaskRunner()
    yield runner
    runner.wait(5000)


def make_panel(qtbot: Any, tasks: TaskRunner, detect: Any,
               runner_devices: Any = None) -> HardwarePanel:
    panel = HardwarePanel(HardwareService(tasks, detect, runner_devices=runner_devices))
    qtbot.addWidget(panel)
    panel.resize(720, 640)
    return panel


def texts(panel: HardwarePanel) -> str:
    return "\n".join(lbl.text() for lbl in panel.findChildren(QLabel))


def test_refresh_detects_off_the_gui_thread_and_shows_every_gpu(qtbot: Any, tasks: TaskRunner) -> None:
    threads: list[threading.Thread] = []
    release = threading.Event()  # a slow driver: it answers when the test says so
    answered = threading.Event()

    def detect() -> HardwareReport:
        threads.append(threading.current_thread())
        release.wait(60)  # (a hang guard only)
        answered.set()
        return load_report("2x3090")

    panel = make_panel(qtbot, tasks, detect)
    with qtbot.waitSignal(panel.report_ready, timeout=60_000):
        qtbot.mouseClick(panel.refresh_button, Qt.MouseButton.LeftButton)
        # The click returned while the driver had not answered: the window did not wait for it.
        assert not answered.is_set()
        assert panel.busy and not panel.refresh_button.isEnabled()
        release.set()
    assert threads and threads[0] is not threading.main_thread()
    assert not panel.busy and panel.refresh_button.isEnabled()

    titles = [b.title() for b in panel.findChildren(QGroupBox)]
    assert titles == ["System", "Memory", "GPU 0 · NVIDIA GeForce RTX 3090",
                      "GPU 1 · NVIDIA GeForce RTX 3090"]
    bars = {b.parent().objectName(): b for b in panel.findChildren(MemoryBar, "gpu_bar")}
    gpu0 = bars["gpu_nvidia_0"]
    assert (gpu0.total, gpu0.used) == (25769803776, 608174080)
    assert "580 MiB used by other apps · 23.4 GiB free of 24.0 GiB" == gpu0.text()
    assert "Xorg (402 MiB), firefox (160 MiB)" in texts(panel)
    assert "10 cores, 20 threads" in texts(panel)
    [ram] = panel.findChildren(MemoryBar, "ram_bar")
    report = load_report("2x3090")
    assert (ram.total, ram.used) == (report.memory.total,
                                     report.memory.total - report.memory.available)


def test_unified_and_estimated_memory_is_labelled(qtbot: Any, tasks: TaskRunner) -> None:
    report = load_report("m2pro_16gb")
    report.gpus[0].estimate = True
    panel = make_panel(qtbot, tasks, lambda: report)
    panel.set_report(report)
    all_text = texts(panel)
    assert "shares system RAM" in all_text and "memory estimated" in all_text
    assert "6 performance cores" in all_text


def test_cpu_only_machine_says_so(qtbot: Any, tasks: TaskRunner) -> None:
    panel = make_panel(qtbot, tasks, lambda: load_report("cpu_only_16gb"))
    with qtbot.waitSignal(panel.report_ready, timeout=5000):
        panel.refresh()
    all_text = texts(panel)
    assert "No GPU found" in all_text
    assert "nvidia: NVML library not found" in all_text


def test_failed_detection_is_shown_and_refresh_works_again(qtbot: Any, tasks: TaskRunner) -> None:
    calls = {"n": 0}

    def detect() -> HardwareReport:
        calls["n"] += 1
        if calls["n"] == 1:
            raise RuntimeError("the driver went away")
        return load_report("rx7900xtx")

    panel = make_panel(qtbot, tasks, detect)
    with qtbot.waitSignal(panel.failed, timeout=5000) as blocker:
        panel.refresh()
    assert "the driver went away" in blocker.args[0]
    assert panel.refresh_button.isEnabled() and panel.status.text() == "Detection failed"
    with qtbot.waitSignal(panel.report_ready, timeout=5000):
        panel.refresh()
    assert "GPU 0 · Radeon RX 7900 XTX" in [b.title() for b in panel.findChildren(QGroupBox)]


def test_first_show_detects_once(qtbot: Any, tasks: TaskRunner) -> None:
    calls: list[int] = []

    def detect() -> HardwareReport:
        calls.append(1)
        return load_report("rtx4090_24gb")

    panel = make_panel(qtbot, tasks, detect)
    with qtbot.waitSignal(panel.report_ready, timeout=5000):
        panel.show()
    panel.hide()
    panel.show()
    tasks.wait(2000)
    qtbot.wait(50)
    assert len(calls) == 1
    assert panel.report is not None and panel.report.gpus[0].name == "NVIDIA GeForce RTX 4090"


def test_screenshot_of_two_3090s_renders(qtbot: Any, tasks: TaskRunner, tmp_path: Any) -> None:
    panel = make_panel(qtbot, tasks, lambda: load_report("2x3090"))
    panel.set_report(load_report("2x3090"))
    panel.show()
    qtbot.waitExposed(panel)
    image = panel.grab().toImage()
    assert image.width() == 720 and not image.isNull()
    # the first GPU bar's used segment is drawn in the "used" colour
    bar = panel.findChildren(MemoryBar, "gpu_bar")[0]
    pos = bar.mapTo(panel, bar.rect().topLeft())
    assert image.pixelColor(pos.x() + 3, pos.y() + bar.height() // 2) == MemoryBar.USED


def test_runner_devices_are_merged_after_the_machine_is_shown(
    qtbot: Any, tasks: TaskRunner
) -> None:
    threads: list[threading.Thread] = []

    def runner_devices() -> dict[str, Any]:
        threads.append(threading.current_thread())
        return fixture_json("runner/cpu_only_build.json")

    panel = make_panel(qtbot, tasks, lambda: load_report("rtx4090_24gb"), runner_devices)
    with qtbot.waitSignals([panel.report_ready, panel.report_ready], timeout=5000):
        panel.refresh()
    qtbot.waitUntil(lambda: not panel.busy, timeout=5000)
    assert threads and threads[0] is not threading.main_thread()
    assert panel.report is not None and panel.report.runner is not None
    all_text = texts(panel)
    assert "Not used by this runner build: NVIDIA GeForce RTX 4090: this runner build has no " \
           "CUDA support" in all_text
    # the build lacks AVX-512: only what it can use is listed
    assert "Instruction sets: SSE3 SSSE3 AVX AVX2 F16C FMA BMI2" in all_text
    assert "asking the runner" not in panel.status.text()


def test_a_runner_that_cannot_answer_leaves_the_machine_report(
    qtbot: Any, tasks: TaskRunner
) -> None:
    def runner_devices() -> dict[str, Any]:
        raise RuntimeError("llama-cpp-python could not be loaded")

    panel = make_panel(qtbot, tasks, lambda: load_report("2x3090"), runner_devices)
    with qtbot.waitSignal(panel.report_ready, timeout=5000):
        panel.refresh()
    qtbot.waitUntil(lambda: not panel.busy, timeout=5000)
    assert panel.refresh_button.isEnabled()
    assert len(panel.findChildren(MemoryBar, "gpu_bar")) == 2
    assert "runner: llama-cpp-python could not be loaded" in texts(panel)
