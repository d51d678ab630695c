"""The Hardware panel fed with recorded machines; detection must run off the GUI thread."""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import threading
from typing import Any

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QColor
from PySide6.QtWidgets import QLabel

from app.hardware.report import HardwareReport
from app.services.hardware import HardwareService
from app.services.tasks import TaskRunner
from app.ui.hardware_panel import DeviceCard, HardwarePanel, MemoryBar
from app.ui.style.palette import chart_colors
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


def texts_of(widget: Any) -> str:
    return "\n".join(lbl.text() for lbl in widget.findChildren(QLabel))


def titles(panel: HardwarePanel) -> list[str]:
    """The device cards' titles, in the order they are shown."""
    return [c.title.text() for c in panel.findChildren(DeviceCard) if c.isVisibleTo(panel)]


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

    assert titles(panel) == ["CPU", "Memory", "GPU 0 · NVIDIA GeForce RTX 3090",
                             "GPU 1 · NVIDIA GeForce RTX 3090", "Runtime"]
    cpu = panel.findChild(DeviceCard, "cpu")
    assert cpu is not None and cpu.subtitle.text() == "Intel(R) Core(TM) i9-10900K CPU @ 3.70GHz"
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
    assert "GPU 0 · Radeon RX 7900 XTX" in titles(panel)


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
    # the first GPU bar's used segment is drawn in the theme's "used" colour, the rest "free"
    bar = panel.findChildren(MemoryBar, "gpu_bar")[0]
    pos = bar.mapTo(panel, bar.rect().topLeft())
    mid = pos.y() + bar.height() // 2
    assert image.pixelColor(pos.x() + 3, mid) == QColor(chart_colors().used)
    assert image.pixelColor(pos.x() + bar.width() - 10, mid) == QColor(chart_colors().free)


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
    # The runtime's card says in words what the build means, and the GPU card that it is unused.
    runtime = panel.findChild(DeviceCard, "runtime")
    assert runtime is not None
    assert "This build runs models on the CPU only" in texts_of(runtime)
    assert "CPU only" in [c.text() for c in runtime.findChildren(QLabel) if c.property("chip")]
    gpu = panel.findChild(DeviceCard, "gpu_nvidia_0")
    assert gpu is not None and gpu.icon._name == "monitor"
    assert "Not used" in [c.text() for c in gpu.findChildren(QLabel) if c.property("chip")]
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


def test_sizes_are_written_in_the_locales_format() -> None:
    from PySide6.QtCore import QLocale

    from app.ui.hardware_panel import human_bytes
    from app.ui.welcome import hardware_summary

    assert human_bytes(int(23.5 * 1024**3)) == "23.5 GiB"
    QLocale.setDefault(QLocale("de_DE"))
    try:
        assert human_bytes(int(23.5 * 1024**3)) == "23,5 GiB"
        assert human_bytes(837 * 1024**2) == "837 MiB"
        assert "24,0 GiB each" in hardware_summary(load_report("2x3090"))
        from app.ui.memory_bar import _short_size  # what the offload bars write on a segment

        assert _short_size(int(26.3 * 1024**3)) == "26,3 GiB"
    finally:
        QLocale.setDefault(QLocale("en_US"))
