"""Measure, then remember: predicted vs measured per device, keyed by the runner build."""

from __future__ import annotations

from pathlib import Path

from app.gguf import ModelInfo
from app.loading.measure import (
    build_key,
    measurements,
    record_load,
    settings_match,
)
from app.planner import Correction, Wishes, plan
from app.planner.corrections import CorrectionStore, model_key
from app.runner_client.build import RunnerBuild, runner_build_from_json
from tests.unit.loading.conftest import load_report
from tests.unit.loading.stand_in import recorded_devices

BUILD = {"llama_cpp_python": "0.3.36", "gpu_offload": True, "system_info": "CUDA : ARCHS = 890"}


def _reported(s: object) -> dict[str, object]:
    from app.planner.types import Settings

    assert isinstance(s, Settings)
    return {"ctx_size": s.n_ctx, "n_gpu_layers": s.n_gpu_layers, "ubatch_size": s.n_ubatch,
            "flash_attn": s.flash_attn, "cache_type_k": s.cache_type_k,
            "cache_type_v": s.cache_type_v, "n_cpu_moe": s.n_cpu_moe, "threads": 8}


def test_build_key_is_stable_and_tells_builds_apart() -> None:
    k = build_key(BUILD)
    assert k == build_key(dict(BUILD)) and k.startswith("llama-cpp-python-0.3.36-gpu-")
    assert build_key({**BUILD, "system_info": "CPU : AVX2 = 1"}) != k
    assert build_key({**BUILD, "gpu_offload": False}) != k
    assert build_key({}).startswith("llama-cpp-python-unknown-cpu-")


def test_the_key_known_before_a_load_names_the_build_the_status_reports() -> None:
    devices = recorded_devices("cpu_only_build")
    before = runner_build_from_json(["prog"], devices)
    after = build_key({"llama_cpp_python": devices["llama_cpp_version"], "gpu_offload": False,
                       "system_info": devices["system_info"]})
    assert before.key == after
    cuda = runner_build_from_json(["prog"], recorded_devices("cuda_2x3090"))
    assert cuda.key is not None and "-gpu-" in cuda.key and cuda.key != before.key


def test_settings_match(llama8b: ModelInfo) -> None:
    p = plan(llama8b, load_report("rtx4090_24gb"), Wishes())
    reported = _reported(p.settings)
    assert settings_match(p.settings, reported)
    assert not settings_match(p.settings, {**reported, "ctx_size": 1024})
    assert not settings_match(p.settings, {})


def test_measurements_compare_with_the_uncorrected_prediction(llama8b: ModelInfo) -> None:
    hw = load_report("rtx4090_24gb")
    raw = plan(llama8b, hw, Wishes())
    corrected = plan(llama8b, hw, Wishes(), {"CUDA0": Correction(kv=1.2, compute=1.5)})
    gpu = corrected.gpus[0]
    memory = [{"device": "CUDA0", "weights": 1, "kv": 111, "compute": 222},
              {"device": "Vulkan0", "kv": 5, "compute": 5},  # not in the plan: skipped
              {"device": "CPU", "kv": 0, "compute": 333}]
    found = measurements(corrected, memory)
    assert [m.device for m in found] == ["CUDA0", "CPU"]
    m = found[0]
    assert (m.measured_kv, m.measured_compute) == (111, 222)
    # The plan's own figure includes the correction; the stored prediction must not.
    assert m.predicted_kv < gpu.usage.kv and m.predicted_compute < gpu.usage.compute
    if corrected.settings == raw.settings:
        assert m.predicted_kv == raw.gpus[0].usage.kv


def test_record_load_stores_what_the_next_plan_reads(tmp_path: Path, llama8b: ModelInfo) -> None:
    model_file = tmp_path / "m.gguf"
    model_file.write_bytes(b"GGUF")
    p = plan(llama8b, load_report("rtx4090_24gb"), Wishes())
    gpu = p.gpus[0].usage
    store = CorrectionStore(tmp_path / "c.json")
    build = RunnerBuild(program=("prog",), key="the-build-key")
    status = {"build": BUILD, "settings": _reported(p.settings),
              "memory": [{"device": "CUDA0", "kv": int(gpu.kv * 1.1),
                          "compute": int(gpu.compute * 1.5)}]}
    found = record_load(store, build, str(model_file), p, status)
    assert len(found) == 1
    # Keyed by the build the plan was made for, which the next plan reads before any load.
    corr = store.corrections(model_key(model_file), "the-build-key")
    assert abs(corr["CUDA0"].kv - 1.1) < 0.01 and abs(corr["CUDA0"].compute - 1.5) < 0.01
    assert store.corrections(model_key(model_file), build_key(BUILD)) == {}

    # A build nobody could ask before the load is named by what the runner reports.
    unknown = CorrectionStore(tmp_path / "u.json")
    record_load(unknown, RunnerBuild.unknown(("prog",), "no answer"), str(model_file), p,
                status)
    assert "CUDA0" in unknown.corrections(model_key(model_file), build_key(BUILD))

    # The user's flags overrode the plan: the measurement is not recorded.
    other = CorrectionStore(tmp_path / "c2.json")
    status["settings"] = {**status["settings"], "ctx_size": 512}
    assert record_load(other, build, str(model_file), p, status) == []
    assert not other.path.exists()
