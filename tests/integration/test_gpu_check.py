"""The GPU check's rehearsal: tests/gpu/check.py --rehearse runs every step on the CPU here, so
the script that runs once on a lent GPU machine cannot rot between such machines."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def test_the_gpu_check_rehearses_every_step_and_writes_its_report(tmp_path: Path) -> None:
    out = tmp_path / "out"
    done = subprocess.run(
        [sys.executable, str(REPO / "tests" / "gpu" / "check.py"), "--rehearse", str(out),
         "--work", str(tmp_path / "work"), "--budget-s", "900"],
        capture_output=True, text=True, timeout=900, cwd=REPO)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    report = json.loads((out / "gpu-check.json").read_text())
    steps = report["steps"]
    for name in ("prepare", "environment", "self-test", "fixtures", "models", "cases", "speed"):
        assert name in steps, name
        result = steps[name]["result"]
        assert not (isinstance(result, dict) and "error" in result), (name, result)
    assert steps["self-test"]["result"]["ok"] is True
    # The runner's device listing, recorded as a fixture in the format the hardware tests read.
    devices = json.loads((out / "runner-devices.json").read_text())
    assert any(d["name"] == "CPU" for d in devices["devices"])

    cases = steps["cases"]["result"]
    assert len(cases) == 12  # 6 dense, 3 MoE, 2 sliding window, 1 wide vocabulary
    for case in cases:
        assert case["loaded"], case
        cpu_pred, cpu_dry = case["predicted"]["CPU"], case["dry_run"]["CPU"]
        alloc = case["allocated"]["CPU"]
        # The three sources of each figure are there, and agree where llama.cpp is exact (it
        # logs MiB with two decimals: ~5 KiB of rounding).
        assert alloc["kv"] > 0
        assert abs(cpu_dry["kv"] - alloc["kv"]) < 16 << 10, case
        assert abs(cpu_pred["kv"] - alloc["kv"]) < 16 << 10, case
        assert abs(cpu_pred["weights"] - alloc["weights"]) < 0.2 * alloc["weights"], case
    pinned = {c["case"]: c["plan"] for c in cases if c["model"] == "llama-rehearsal"}
    assert pinned["flash attention off"]["flash_attn"] == "off"
    assert pinned["KV cache q8_0"]["cache_type_k"] == "q8_0"
    # (Experts on the CPU mean nothing on a CPU-only plan: the GPU run shows that pin.)

    speed = steps["speed"]["result"]
    for server in ("runner", "llama-server"):
        best = speed["best"][server]
        assert best["pp_tps"] > 0 and best["tg1_tps"] > 0 and best["tg4_tps"] > 0
    assert set(speed["ratio_runner_to_native"]) == {"pp_tps", "tg1_tps", "tg4_tps"}

    md = (out / "gpu-check.md").read_text()
    assert "## Memory per load" in md and "runner ÷ native" in md
