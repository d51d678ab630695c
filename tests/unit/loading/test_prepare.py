"""Planning a load for the window: a real (tiny) GGUF file, a recorded machine, the runner build,
stored measurements, and the dry run as a fake."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from app.gguf import GGUFError, ModelInfo
from app.jobs import CancelledError, CancelToken
from app.loading import text
from app.loading.flags import plan_args
from app.loading.prepare import combine, prepare_load
from app.planner import Correction, Wishes
from app.planner.corrections import CorrectionStore, Measurement, model_key
from app.runner_client.build import RunnerBuild, runner_build_from_json
from tests.fixtures.models import TINY, model_path
from tests.unit.loading.conftest import load_report
from tests.unit.loading.stand_in import recorded_devices

PROGRAM = ["/opt/hearth/hearth-runner"]
CPU_BUILD = runner_build_from_json(PROGRAM, recorded_devices("cpu_only_build"))
CUDA_BUILD = runner_build_from_json(PROGRAM, recorded_devices("cuda_2x3090"))


def test_combine_multiplies_per_device() -> None:
    base = {"CUDA0": Correction(kv=1.1, compute=2.0), "CPU": Correction(compute=0.9)}
    out = combine(base, {"CUDA0": Correction(kv=2.0, compute=0.5, compute_extra=7)})
    assert out["CUDA0"] == Correction(kv=2.2, compute=1.0, compute_extra=7)
    assert out["CPU"] == base["CPU"]
    assert combine({}, {}) == {}


def _file(model: ModelInfo) -> str:
    assert model.path is not None
    return model.path


def _never() -> Any:
    raise AssertionError("a cached report was given: detection must not run")


def test_prepare_uses_stored_measurements_of_this_build(tmp_path: Path) -> None:
    path = str(model_path(TINY))
    cached = load_report("cpu_only_16gb")
    store = CorrectionStore(tmp_path / "c.json")

    first = prepare_load(path, cached=cached, detect=_never, wishes=Wishes(), store=store,
                         build=CPU_BUILD, probe=None)
    assert first.plan.fits and first.stored == {} and not first.detected
    assert first.build is CPU_BUILD
    assert first.hardware.memory.total > 0  # RAM measured now, not the recording's

    usage = first.plan.cpu.usage
    assert CPU_BUILD.key is not None
    store.record(model_key(path), CPU_BUILD.key, first.plan.settings.to_json(),
                 [Measurement("CPU", usage.kv, usage.compute, usage.kv * 2, usage.compute * 3)])
    again = prepare_load(path, cached=cached, detect=_never, wishes=Wishes(), store=store,
                         build=CPU_BUILD, probe=None)
    assert again.stored == {"CPU": Correction(kv=2.0, compute=3.0)}
    assert again.plan.cpu.usage.kv == 2 * usage.kv
    note = next(r for r in again.plan.reasons if r.code == "stored_corrections")
    assert note.params == {"corrections": {"CPU": {"kv": 2.0, "compute": 3.0}}}
    assert any("earlier load" in r for r in again.plan.reason_texts())
    # Another runner build measured nothing yet, and an unknown one reads nothing.
    for other in (CUDA_BUILD, RunnerBuild.unknown(PROGRAM, "no answer")):
        assert prepare_load(path, cached=cached, detect=_never, wishes=Wishes(), store=store,
                            build=other, probe=None).stored == {}


def test_prepare_plans_for_the_devices_the_build_drives(llama8b: ModelInfo) -> None:
    """Defect 5, where the window plans: a CPU-only build on a machine with two RTX 3090s."""

    def detect() -> Any:
        return load_report("2x3090")

    cpu = prepare_load(_file(llama8b), cached=None, detect=detect, wishes=Wishes(), store=None,
                       build=CPU_BUILD, probe=None)
    assert cpu.plan.gpus == [] and cpu.plan.settings.n_gpu_layers == 0
    assert cpu.hardware.runner is not None
    assert cpu.plan.reason_texts()[0].startswith(
        "This runner build has no CUDA support: running on the CPU.")
    assert text.summary(cpu.plan).startswith("on the CPU, context ")  # not "33/33 … 2 GPUs"
    cuda = prepare_load(_file(llama8b), cached=None, detect=detect, wishes=Wishes(), store=None,
                        build=CUDA_BUILD, probe=None)
    assert [b.device.llama_name for b in cuda.plan.gpus] == ["CUDA0", "CUDA1"]
    assert cuda.plan.settings.n_gpu_layers == llama8b.n_layer + 1
    assert text.layers_text(cuda.plan) == "33/33 layers on 2 GPUs"


def test_an_unknown_build_plans_for_the_machine_and_says_why(llama8b: ModelInfo) -> None:
    unknown = RunnerBuild.unknown(PROGRAM, "The runner could not be started: no such file.")
    out = prepare_load(_file(llama8b), cached=None, detect=lambda: load_report("2x3090"),
                       wishes=Wishes(), store=None, build=unknown, probe=None)
    assert len(out.plan.gpus) == 2
    assert out.plan.reasons[-1].code == "runner_unknown"
    assert "could not be started: no such file" in out.plan.reason_texts()[-1]


def test_prepare_detects_without_a_cached_report_and_confirms(tmp_path: Path) -> None:
    path = str(model_path(TINY))
    detected: list[int] = []

    def detect() -> Any:
        detected.append(1)
        return load_report("cpu_only_16gb")

    probed: list[tuple[list[str], Sequence[str] | None]] = []

    def probe(args: list[str], program: Sequence[str] | None = None, *,
              token: CancelToken | None = None) -> dict[str, Any]:
        assert token is not None and not token.cancelled
        probed.append((args, program))
        return {"devices": []}  # nothing to disagree with

    out = prepare_load(path, cached=None, detect=detect, wishes=Wishes(),
                       store=CorrectionStore(tmp_path / "c.json"), build=CPU_BUILD, probe=probe)
    assert detected == [1] and out.detected
    # The dry run gets the plan's own flags and runs the build's program.
    assert probed == [(plan_args(out.plan), CPU_BUILD.program)]
    assert out.plan.reasons[-1].code == "probe_matches"
    assert "dry run" in out.plan.reason_texts()[-1]


def test_prepare_stops_when_cancelled(tmp_path: Path) -> None:
    path = str(model_path(TINY))
    token = CancelToken()

    def detect_then_cancel() -> Any:
        token.cancel()  # the user unloads while the hardware is detected
        return load_report("cpu_only_16gb")

    def probe(args: list[str], program: Sequence[str] | None = None, *,
              token: CancelToken | None = None) -> dict[str, Any]:
        raise AssertionError("no dry run after cancel")

    with pytest.raises(CancelledError):
        prepare_load(path, cached=None, detect=detect_then_cancel, wishes=Wishes(), store=None,
                     build=CPU_BUILD, probe=probe, token=token)
    with pytest.raises(CancelledError):
        prepare_load(path, cached=None, detect=_never, wishes=Wishes(), store=None,
                     build=CPU_BUILD, probe=probe, token=token)


def test_prepare_refuses_a_file_that_is_not_a_model(tmp_path: Path) -> None:
    bad = tmp_path / "notes.gguf"
    bad.write_text("not a model\n" * 20)
    with pytest.raises(GGUFError, match="not a GGUF"):
        prepare_load(str(bad), cached=load_report("cpu_only_16gb"), detect=_never,
                     wishes=Wishes(), store=None, build=CPU_BUILD, probe=None)
