"""The offload settings panel on the real tuning service: a real model header (Mixtral 8x7B,
sparse file) on a recorded machine with two RTX 3090s, a real SQLite store; and the loader using
the pins the panel saved."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import Qt

from app.planner.corrections import CorrectionStore
from app.planner.types import Pins
from app.services.loader import ModelLoader
from app.services.runner_process import RunnerState
from app.services.tasks import TaskRunner
from tests.gui.fakes import FakeRunner
from tests.gui.screenshot_offload import (
    Rig,
    header_model,
    make_rig,
    open_and_wait,
    recorded_machine,
)


@pytest.fixture(scope="module")
def mixtral(tmp_path_factory: pytest.TempPathFactory) -> str:
    return header_model(tmp_path_factory.mktemp("headers"))


@pytest.fixture
def rigs(qtbot: Any, tmp_path: Path) -> Iterator[Any]:
    made: list[Rig] = []

    def make(**kw: Any) -> Rig:
        rig = make_rig(tmp_path, **kw)
        qtbot.addWidget(rig.panel)
        rig.panel.resize(1100, 700)
        rig.panel.show()
        made.append(rig)
        return rig

    yield make
    for rig in made:
        rig.close()


def test_opening_reads_off_the_gui_thread_and_starts_automatic(rigs: Any, qtbot: Any,
                                                              mixtral: str) -> None:
    threads: list[int] = []

    def detect(hw: Any) -> Any:
        threads.append(threading.get_ident())
        return hw

    rig = rigs(detect=detect)
    panel = rig.panel
    panel.open_model(mixtral)
    assert panel.ctx is None and not panel.settings_box.isEnabled()  # not read yet
    with qtbot.waitSignal(rig.service.opened, timeout=30_000):
        pass
    assert threads and threading.get_ident() not in threads
    assert panel.settings_box.isEnabled() and panel.plan is not None and panel.plan.fits
    s = panel.plan.settings
    slider = panel.field("n_gpu_layers")
    assert slider is not None and slider.slider.value() == s.n_gpu_layers == 33
    ctx_field = panel.field("n_ctx")
    assert ctx_field is not None and ctx_field.spin.value() == s.n_ctx
    for name in ("n_gpu_layers", "n_ctx", "flash_attn", "tensor_split", "n_cpu_moe", "mlock"):
        f = panel.field(name)
        assert f is not None and f.state.text() == "automatic" and not f.reset.isEnabled()
    assert len(panel.bars) == 3 and all(b.bar is not None and b.bar.fits for b in panel.bars)
    assert not panel.not_fit.isVisible() and not panel.not_fit_banner.isVisible()
    # It fits, in words on a chip (the colour is only a second sign).
    assert panel.verdict.isVisible() and panel.verdict.text() == "Fits"
    assert panel.verdict.property("chip") == "success"
    assert not any(b.verdict.isVisible() for b in panel.bars)
    # The planner's reasons, shown at first behind a toggle that hides and shows them.
    assert panel.plan.reason_texts()[0] in panel.reasons.text() and panel.reasons.isVisible()
    panel.why_toggle.click()
    assert not panel.reasons.isVisible()
    panel.why_toggle.click()
    assert panel.reasons.isVisible()
    # The legend names the model's parts in plain words.
    legend = {k: label.text() for k, (_s, label) in panel.legend.items.items()
              if label.isVisible()}
    assert legend["weights"] == "This model (weights)" and legend["others"] == "Other programs"
    assert legend["reserve"] == "Kept free" and "measured" not in legend


def test_moving_the_slider_pins_it_and_redraws_the_bars(rigs: Any, mixtral: str) -> None:
    rig = rigs()
    open_and_wait(rig, mixtral)
    panel = rig.panel
    f = panel.field("n_gpu_layers")
    assert f is not None
    before = [b.bar.need for b in panel.bars if b.bar is not None]
    f.slider.setValue(10)
    assert panel.pins.n_gpu_layers == 10 and panel.plan is not None
    assert panel.plan.settings.n_gpu_layers == 10
    assert f.state.text() == "pinned" and f.reset.isEnabled()
    assert f.state.property("tone") == "info"
    after = [b.bar.need for b in panel.bars if b.bar is not None]
    assert after[0] + after[1] < before[0] + before[1] and after[2] > before[2]
    assert panel.reset_all_btn.isEnabled()
    f.reset.click()
    assert panel.pins == Pins() and f.state.text() == "automatic"
    assert f.slider.value() == 33


def test_a_setting_that_does_not_fit_is_red_with_the_reason(rigs: Any, qtbot: Any,
                                                           mixtral: str) -> None:
    rig = rigs()
    open_and_wait(rig, mixtral)
    panel = rig.panel
    # Every layer and expert on the first GPU: 26 GB of weights for a 24 GB card.
    panel.set_pin("n_gpu_layers", 33)
    panel.set_pin("n_cpu_moe", 0)
    panel.set_pin("tensor_split", (1.0, 0.0))
    assert panel.plan is not None and not panel.plan.fits
    assert panel.not_fit.isVisible() and "n_cpu_moe=0" in panel.not_fit.text()
    assert panel.not_fit_banner.isVisible() and panel.not_fit_banner.tone == "danger"
    assert panel.verdict.text() == "Does not fit" and panel.verdict.property("chip") == "danger"
    assert panel.summary.property("tone") == "danger"
    assert not panel.apply_btn.isEnabled()
    first = panel.bars[0]
    assert first.bar is not None and not first.bar.fits
    assert first.detail.text().startswith("Does not fit")
    assert first.verdict.isVisible() and first.detail.property("tone") == "danger"
    assert not panel.bars[1].verdict.isVisible()
    moe = panel.field("n_cpu_moe")
    assert moe is not None and moe.state.text() == "pinned: does not fit"
    assert moe.state.property("tone") == "danger" and moe.label.property("tone") == "danger"
    untouched = panel.field("n_ctx")
    assert untouched is not None and untouched.state.text() == "automatic"
    with qtbot.assertNotEmitted(panel.apply_requested):
        panel.apply()
    qtbot.mouseClick(panel.reset_all_btn, Qt.MouseButton.LeftButton)
    assert panel.plan.fits and panel.pins == Pins() and panel.apply_btn.isEnabled()
    assert not panel.not_fit.isVisible() and panel.verdict.text() == "Fits"
    assert moe.label.property("tone") in (None, "")


def test_a_choice_pins_llama_cpps_value_not_its_words(rigs: Any, mixtral: str) -> None:
    rig = rigs()
    open_and_wait(rig, mixtral)
    panel = rig.panel
    fa = panel.field("flash_attn")
    assert fa is not None and panel.plan is not None
    assert fa.combo.currentData() == panel.plan.settings.flash_attn
    fa.combo.setCurrentIndex(fa.combo.findData("off"))
    assert panel.pins.flash_attn == "off" and fa.state.text() == "pinned"
    assert fa.combo.currentText() == "off" and fa.combo.currentData() == "off"
    kv = panel.field("cache_type_k")
    assert kv is not None
    kv.combo.setCurrentIndex(kv.combo.findData("q8_0"))
    assert panel.pins.cache_type_k == "q8_0" and kv.combo.currentText() == "q8_0"


def test_each_slider_move_is_planned_at_once(rigs: Any, mixtral: str) -> None:
    """A move of a control recomputes the plan before it returns: the planner alone, on the
    header already read, with no dry run and no thread to wait for. (What that costs per move is
    tests/bench/ui.py's recompute figures, this panel among them.)"""
    rig = rigs()
    open_and_wait(rig, mixtral)
    panel = rig.panel
    f = panel.field("n_gpu_layers")
    assert f is not None
    for v in range(33, -1, -1):
        f.slider.setValue(v)
        assert panel.plan is not None and panel.plan.settings.n_gpu_layers == v
    assert panel.pins.n_gpu_layers == 0


def test_apply_saves_per_model_and_machine_and_asks_for_a_reload(rigs: Any, qtbot: Any,
                                                                  mixtral: str) -> None:
    rig = rigs()
    open_and_wait(rig, mixtral)
    panel = rig.panel
    panel.set_pin("n_ctx", 8192)
    panel.set_pin("mlock", True)
    with qtbot.waitSignal(rig.service.saved, timeout=5000), \
            qtbot.waitSignal(panel.apply_requested) as applied:
        qtbot.mouseClick(panel.apply_btn, Qt.MouseButton.LeftButton)
    assert applied.args == [mixtral, Pins(n_ctx=8192, mlock=True)]

    # A new panel on the same store: the pins come back, shown as pinned.
    again = rigs()
    open_and_wait(again, mixtral)
    assert again.panel.pins == Pins(n_ctx=8192, mlock=True)
    f = again.panel.field("n_ctx")
    assert f is not None and f.state.text() == "pinned" and f.spin.value() == 8192

    # The loader reads them from its planning thread, for this machine only.
    hw, _ = recorded_machine()
    other, _ = recorded_machine("rtx4090_24gb", None)
    with pytest.raises(RuntimeError):
        rig.service.saved_pins(mixtral, hw)  # never on the GUI thread
    found: dict[str, Any] = {}

    def read() -> None:
        found["here"] = rig.service.saved_pins(mixtral, hw)
        found["elsewhere"] = rig.service.saved_pins(mixtral, other)

    t = threading.Thread(target=read)
    t.start()
    t.join(10)
    assert found == {"here": Pins(n_ctx=8192, mlock=True), "elsewhere": None}

    # Resetting everything and applying forgets them.
    again.panel.reset_all()
    with qtbot.waitSignal(again.service.saved, timeout=5000):
        again.panel.apply()
    t = threading.Thread(target=read)
    t.start()
    t.join(10)
    assert found["here"] is None


def test_the_measured_memory_is_shown_beside_the_prediction(rigs: Any, mixtral: str) -> None:
    rig = rigs()
    open_and_wait(rig, mixtral)
    panel = rig.panel
    bar = panel.bars[1]
    assert bar.bar is not None and not bar.measured_label.isVisible()
    kv = {s.kind: s.bytes for s in bar.bar.segments}["kv"]
    panel.show_measured([{"device": "CUDA1", "weights": 10 << 30, "kv": kv, "compute": 1 << 28}],
                        path="/some/other/model.gguf")
    assert not bar.measured_label.isVisible()  # of another model
    panel.show_measured([{"device": "CUDA1", "weights": 10 << 30, "kv": kv, "compute": 1 << 28}],
                        path=mixtral)
    assert bar.measured_label.isVisible()
    assert "Weights 10.0 GiB" in bar.measured_label.text()
    _swatch, mark = panel.legend.items["measured"]
    assert mark.isVisible() and mark.text() == "Measured after load"
    assert bar.strip.measured is not None and bar.strip.measured.kv == kv
    assert not panel.bars[0].measured_label.isVisible()  # nothing measured on CUDA0
    panel.set_pin("n_ctx", 4096)  # still shown after a recompute
    assert bar.measured_label.isVisible()


def test_a_cpu_only_machine_has_no_gpu_settings(rigs: Any, mixtral: str) -> None:
    rig = rigs(report="cpu_only_16gb", runner="cpu_only_build")
    open_and_wait(rig, mixtral)
    panel = rig.panel
    assert panel.field("n_gpu_layers") is None and panel.field("tensor_split") is None
    assert panel.field("n_cpu_moe") is None and panel.field("n_ctx") is not None
    assert len(panel.bars) == 1
    # Mixtral does not fit in 16 GB: red before anything is loaded.
    assert panel.plan is not None and not panel.plan.fits and panel.not_fit.isVisible()


def test_a_model_that_cannot_be_read_says_why(rigs: Any, qtbot: Any, tmp_path: Path) -> None:
    rig = rigs()
    bad = tmp_path / "not-a-model.gguf"
    bad.write_bytes(b"nope")
    with qtbot.waitSignal(rig.service.failed, timeout=10_000):
        rig.panel.open_model(str(bad))
    assert rig.panel.status.text().startswith("Could not open the model for tuning")
    assert rig.panel.ctx is None


# -- the loader uses the saved pins ----------------------------------------------------------------


class StartingRunner(FakeRunner):
    """Records the flags a load starts with; never really starts."""

    def __init__(self) -> None:
        super().__init__()
        self.started: list[list[str]] = []
        self.last_exit = None

    def start(self, model: str, flags: list[str] | None = None,
              program: Any = None) -> None:
        self.started.append(list(flags or []))
        self.become(RunnerState.STARTING)


def _flag(flags: list[str], name: str) -> str:
    return flags[flags.index(name) + 1]


@pytest.mark.parametrize("cached", [True, False])
def test_the_next_load_uses_the_saved_pins(qtbot: Any, tmp_path: Path, mixtral: str,
                                           cached: bool) -> None:
    hw, find_build = recorded_machine()
    asked: list[tuple[str, Any]] = []
    detected: list[Any] = []

    def pins_for(path: str, report: Any) -> Pins | None:
        asked.append((path, report))
        return Pins(n_ctx=6144, n_gpu_layers=20)

    def detect() -> Any:
        detected.append(1)
        return hw

    runner = StartingRunner()
    loader = ModelLoader(runner, TaskRunner(), cached_hardware=(lambda: hw) if cached else None,
                         detect=detect, store=CorrectionStore(tmp_path / "c.json"),
                         find_build=find_build, probe=None, pins_for=pins_for)
    with qtbot.waitSignal(loader.planned, timeout=30_000) as planned:
        assert loader.load(mixtral)
    plan = planned.args[0]
    assert plan.settings.n_ctx == 6144 and plan.settings.n_gpu_layers == 20
    assert asked and asked[0][0] == mixtral
    assert _flag(runner.started[0], "--ctx-size") == "6144"
    assert len(detected) == (0 if cached else 1)  # detected once, not twice

    # Pins given to load() (the panel's Apply) win over the saved ones.
    runner.become(RunnerState.STOPPED)
    loader.cancel()
    with qtbot.waitSignal(loader.planned, timeout=30_000) as planned:
        assert loader.load(mixtral, pins=Pins(n_ctx=2048))
    assert planned.args[0].settings.n_ctx == 2048 and len(asked) == 1


def test_a_failing_lookup_loads_automatically(qtbot: Any, tmp_path: Path, mixtral: str) -> None:
    hw, find_build = recorded_machine()

    def broken(path: str, report: Any) -> Pins | None:
        raise RuntimeError("store gone")

    loader = ModelLoader(StartingRunner(), TaskRunner(), cached_hardware=lambda: hw,
                         store=CorrectionStore(tmp_path / "c.json"), find_build=find_build,
                         probe=None, pins_for=broken)
    with qtbot.waitSignal(loader.planned, timeout=30_000) as planned:
        assert loader.load(mixtral)
    assert planned.args[0].wishes.pins == Pins()

