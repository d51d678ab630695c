"""Planner benchmark: predicted against measured bytes, plan latency, and a thread sweep.

Run: ``.venv/bin/python -m tests.bench.planner`` (about a minute on two cores).

1. Per generated shape and context: the planner's weights/KV/compute against llama.cpp's real
   allocation (buffer lines after a real load).
2. Plan latency for a local file, including the dry run (target ≤ 1 s), via ``hearth plan``'s
   own code path.
3. Thread sweep: decode tokens/s for 1..logical cores; the planner's choice must reach ≥ 95 % of
   the best. (No GPU here: NVIDIA validation is not possible on this machine.)
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

_SWEEP = r"""
import json, sys, time, llama_cpp
from runner import llamalog
path, threads, n_gen = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
llamalog.install()
llama_cpp.llama_backend_init()
mp = llama_cpp.llama_model_default_params()
mp.n_gpu_layers = 0
with llamalog.capture():
    model = llama_cpp.llama_model_load_from_file(path.encode(), mp)
    cp = llama_cpp.llama_context_default_params()
    cp.n_ctx, cp.n_batch, cp.n_ubatch = 1024, 512, 512
    cp.n_threads = cp.n_threads_batch = threads
    cp.flash_attn_type = 1
    ctx = llama_cpp.llama_init_from_model(model, cp)
tok = (llama_cpp.llama_token * 1)(300)
for i in range(4):  # warm up
    llama_cpp.llama_decode(ctx, llama_cpp.llama_batch_get_one(tok, 1))
start = time.perf_counter()
for i in range(n_gen):
    tok[0] = 300 + i % 100
    llama_cpp.llama_decode(ctx, llama_cpp.llama_batch_get_one(tok, 1))
print(json.dumps({"tps": n_gen / (time.perf_counter() - start)}))
"""


def accuracy_table() -> list[str]:
    from app.gguf import read_model
    from app.planner.memory import predict
    from app.planner.types import Device, Settings
    from runner.memory import parse_buffer_lines
    from tests.integration.test_planner_accuracy import SHAPES, real_load

    cpu = Device("CPU", "cpu", "cpu", 0, 1 << 40, 1 << 40, 0, 0, llama_name="CPU")
    rows = [f"{'shape':16} {'ctx':>6} {'pred W':>10} {'meas W':>10} {'pred KV':>10} "
            f"{'meas KV':>10} {'pred C':>10} {'meas C':>10} {'total err':>9}"]
    mib = 1 << 20
    for name, make in SHAPES.items():
        path = make()
        m = read_model(path)
        for ctx in (2048, 8192):
            s = Settings(n_gpu_layers=0, n_ctx=ctx, n_batch=512, n_ubatch=512, flash_attn="on")
            p = predict(m, s, [cpu])[0]
            meas = {d["device"]: d for d in parse_buffer_lines(real_load(path, ctx)["lines"])}
            c = meas["CPU"]
            total = c["weights"] + c["kv"] + c["compute"]
            rows.append(
                f"{name:16} {ctx:>6} {p.weights / mib:>10.2f} {c['weights'] / mib:>10.2f} "
                f"{p.kv / mib:>10.2f} {c['kv'] / mib:>10.2f} {p.compute / mib:>10.2f} "
                f"{c['compute'] / mib:>10.2f} {100 * (p.total - total) / total:>+8.2f}%")
    return rows


def plan_latency() -> list[str]:
    from tests.fixtures.models import BENCH, model_path

    path = model_path(BENCH)
    times = []
    for _ in range(3):
        start = time.perf_counter()
        done = subprocess.run([sys.executable, "-c",
                               "import sys; from app.cli.plan import main; "
                               "sys.exit(main(sys.argv[1:]))", str(path), "--json"],
                              capture_output=True, text=True, cwd=ROOT)
        times.append(time.perf_counter() - start)
        assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)  # the dry run's verdict is the plan's last reason
    probe = out.get("probe") or (out["reasons"][-1] if out["reasons"] else "")
    return [f"plan latency (hearth plan incl. hardware detection and dry run, new process): "
            f"best {min(times):.2f}s, median {sorted(times)[1]:.2f}s  [{probe}]"]


def thread_sweep() -> list[str]:
    from app.hardware import detect_hardware
    from app.planner.devices import thread_count
    from tests.fixtures.models import BENCH, model_path

    path = model_path(BENCH)
    chosen = thread_count(detect_hardware())
    results = {}
    for t in range(1, (os.cpu_count() or 1) + 1):
        done = subprocess.run([sys.executable, "-c", _SWEEP, str(path), str(t), "64"],
                              capture_output=True, text=True, cwd=ROOT)
        results[t] = json.loads(done.stdout.strip().splitlines()[-1])["tps"]
    best = max(results.values())
    rows = [f"threads {t}: {tps:7.1f} tok/s" + ("  <- planner" if t == chosen else "")
            for t, tps in results.items()]
    rows.append(f"planner's choice {chosen}: {100 * results.get(chosen, 0) / best:.1f}% of best")
    return rows


def main() -> int:
    for title, fn in (("predicted vs measured (MiB, CPU, flash attention on)", accuracy_table),
                      ("plan latency", plan_latency), ("thread sweep (decode)", thread_sweep)):
        print(f"== {title}")
        for row in fn():
            print(row)
        print()
    return 0


if __name__ == "__main__":
    sys.exit(main())
