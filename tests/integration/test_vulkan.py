"""GPU offload for real without a GPU: the Vulkan runtime on Mesa's software Vulkan (lavapipe).

Lavapipe is a real second ggml device: layers go to it, it reports its memory, the planner plans
for it and its dry run confirms, a model loads on it and answers. It is a CPU-type Vulkan device,
which ggml-vulkan uses only when ``GGML_VK_VISIBLE_DEVICES`` names it (llama.cpp's own CI runs it
the same way). Skipped unless the Vulkan runtime is built (``python3 installers/build_runtime.py
vulkan``; needs glslc, spirv-headers, libvulkan-dev) and mesa-vulkan-drivers is installed.
Lavapipe is slow (a few tokens/s on an 8 × 1024 model): these tests use small models.
"""

from __future__ import annotations

import glob
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from app.gguf import read_model
from app.planner.memory import predict
from app.planner.types import Device, Settings
from app.runtimes.catalog import list_runtimes
from app.runtimes.select import RuntimeSelection
from tests.fixtures.models import ModelSpec, model_path
from tests.integration.conftest import openai_client, running

REPO = Path(__file__).resolve().parents[2]
LAVAPIPE = {"GGML_VK_VISIBLE_DEVICES": "0", "GGML_VK_DISABLE_F16": "1",
            "GGML_VK_DISABLE_COOPMAT": "1"}
# Small enough for lavapipe, big enough that weights, KV and compute are all megabytes.
SHAPE = ModelSpec(n_layer=4, n_embd=256, n_head=4, n_head_kv=2, n_ff=512, n_vocab=2048,
                  quant="Q8_0", name="hearth-vulkan-test")


@pytest.fixture(scope="module")
def vulkan(monkeypatch_module: pytest.MonkeyPatch) -> Path:
    if not glob.glob("/usr/share/vulkan/icd.d/lvp_icd*.json"):
        pytest.skip("Mesa's lavapipe is not installed (apt-get install mesa-vulkan-drivers)")
    for rt in list_runtimes():
        if rt.name == "vulkan" and rt.path is not None and not rt.problem:
            for key, value in LAVAPIPE.items():
                monkeypatch_module.setenv(key, value)
            return rt.path
    pytest.skip("the Vulkan runtime is not built: python3 installers/build_runtime.py vulkan")


@pytest.fixture(scope="module")
def monkeypatch_module() -> Any:
    mp = pytest.MonkeyPatch()
    yield mp
    mp.undo()


def runner_json(*argv: str) -> dict[str, Any]:
    done = subprocess.run([sys.executable, "-m", "runner", *argv], cwd=REPO, capture_output=True,
                          text=True, timeout=300)
    lines = [ln for ln in done.stdout.splitlines() if ln.startswith("{")]
    assert lines, done.stderr[-2000:]
    data: dict[str, Any] = json.loads(lines[-1])
    return data


def test_lavapipe_is_a_second_device_with_its_memory(vulkan: Path) -> None:
    data = runner_json("--runtime", str(vulkan), "devices")
    (vk,) = [d for d in data["devices"] if d["name"] == "Vulkan0"]
    assert vk["type"] in ("gpu", "igpu") and "llvmpipe" in vk["description"]
    assert vk["total"] > 0 and 0 < vk["free"] <= vk["total"]
    assert "Vulkan" in data["backends"]


def test_selftest_offloads_every_layer_to_lavapipe(vulkan: Path) -> None:
    data = runner_json("--runtime", str(vulkan), "selftest", "--json")
    assert data["ok"], data
    (vk,) = [d for d in data["devices"] if d["device"] == "Vulkan0"]
    assert vk["ok"] and vk["layers_on_device"] == 3  # 2 layers and the output layer
    assert vk["tokens_per_s"] > 0


def test_prediction_for_lavapipe_matches_what_llama_cpp_allocated_and_it_answers(
    vulkan: Path,
) -> None:
    path = model_path(SHAPE)
    n_ctx = 2048
    with running("--ctx-size", str(n_ctx), "--n-gpu-layers", "-1", "--flash-attn", "off",
                 "--parallel", "1", model=path, runtime=vulkan) as r:
        with r.client() as http:
            status = http.get("/runner/status").json()
        memory = {m["device"]: m for m in status["memory"]}
        vk = memory["Vulkan0"]
        measured = vk["weights"] + vk["kv"] + vk["compute"]
        with openai_client(r) as client:
            reply = client.chat.completions.create(
                model="m", messages=[{"role": "user", "content": "hello"}], max_tokens=4)
        assert reply.choices[0].message.content
    m = read_model(path)
    gpu = Device("Vulkan0", "gpu", "vulkan", 0, 2 << 30, 2 << 30, 0, 0, llama_name="Vulkan0")
    cpu = Device("CPU", "cpu", "cpu", 0, 1 << 40, 1 << 40, 0, 0, llama_name="CPU")
    s = Settings(n_gpu_layers=m.n_layer + 1, n_ctx=n_ctx, n_batch=512, n_ubatch=512,
                 flash_attn="off")
    predicted = predict(m, s, [gpu, cpu])[0]
    assert vk["weights"] == pytest.approx(predicted.weights, rel=0.01)
    assert vk["kv"] == pytest.approx(predicted.kv, rel=0.01)
    ratio = predicted.total / measured
    print(f"lavapipe: predicted {predicted.total:,} B, measured {measured:,} B ({ratio:.3f}x)")
    assert ratio == pytest.approx(1.0, abs=0.03)


def test_the_app_plans_layers_on_lavapipe_and_its_dry_run_confirms(vulkan: Path) -> None:
    from app.hardware import detect_hardware
    from app.loading.confirm import run_probe
    from app.loading.prepare import prepare_load
    from app.planner.types import Wishes

    path = str(model_path(SHAPE))
    report = detect_hardware()
    build = RuntimeSelection("vulkan").chosen_build(None, lambda: report)
    assert build.program[-2:] == ("--runtime", str(vulkan))
    assert [d.name for d in build.gpu_devices] == ["Vulkan0"]
    prepared = prepare_load(path, cached=report, detect=lambda: report, wishes=Wishes(),
                            store=None, build=build, probe=run_probe)
    plan = prepared.plan
    texts = " ".join(plan.reason_texts())
    assert plan.fits and plan.settings.n_gpu_layers > 0, texts
    assert "Runtime: vulkan" in texts and "your choice" in texts
    assert "dry run" in texts
    names = [d.device.llama_name for d in plan.devices]
    assert "Vulkan0" in names
