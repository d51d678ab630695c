"""Accuracy on this machine: the planner's prediction against real llama.cpp loads.

Each case loads a generated model for real (in a child process, without mmap so the weights are
resident), decodes one full ubatch so the compute buffer is touched, and reports llama.cpp's
buffer lines and the process's resident memory growth. The prediction for weights + KV + compute
must land within 3 % of what llama.cpp allocated, and of the resident growth.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("llama_cpp")

from app.gguf import read_model
from app.planner.memory import predict
from app.planner.types import Device, Settings
from runner.memory import parse_buffer_lines
from tests.fixtures.models import ModelSpec, model_path
from tests.fixtures.moe_models import ShapeSpec, shape_path

ROOT = Path(__file__).resolve().parents[2]
CPU = Device("CPU", "cpu", "cpu", 0, 1 << 40, 1 << 40, 0, 0, llama_name="CPU")

# Shapes big enough that llama.cpp's fixed overhead (vocabulary tables, thread pool) is small
# next to the buffers, small enough to build and load in seconds on two cores.
SHAPES = {
    "dense-gqa": lambda: model_path(ModelSpec(n_layer=8, n_embd=1024, n_head=16, n_head_kv=4,
                                              n_ff=2816, n_vocab=32000, n_ctx_train=16384,
                                              quant="Q4_K_M", name="acc-bench")),
    "multi-head": lambda: model_path(ModelSpec(n_layer=6, n_embd=1024, n_head=16, n_head_kv=16,
                                               n_ff=2048, n_vocab=8000, n_ctx_train=16384,
                                               quant="Q8_0", name="acc-mha-big")),
    "big-vocab": lambda: model_path(ModelSpec(n_layer=2, n_embd=512, n_head=8, n_head_kv=8,
                                              n_ff=1024, n_vocab=128000, n_ctx_train=8192,
                                              quant="Q8_0", name="acc-vocab-big")),
    "moe": lambda: shape_path(ShapeSpec(n_layer=4, n_embd=512, n_head=8, n_head_kv=2,
                                        n_ff=1024, n_vocab=8000, n_ctx_train=16384, n_expert=8,
                                        n_expert_used=2, quant="Q8_0", name="acc-moe-big")),
    "sliding-window": lambda: shape_path(ShapeSpec(arch="gemma3", n_layer=12, n_embd=512,
                                                   n_head=8, n_head_kv=4, n_ff=1536,
                                                   n_vocab=8000, n_ctx_train=16384, n_swa=1024,
                                                   head_dim=64, quant="Q8_0",
                                                   name="acc-swa-big")),
}

_CHILD = r"""
import ctypes, json, sys, psutil, llama_cpp
from runner import llamalog
path, n_ctx = sys.argv[1], int(sys.argv[2])
proc = psutil.Process()
llamalog.install()
llama_cpp.llama_backend_init()
before = proc.memory_info().rss
mp = llama_cpp.llama_model_default_params()
mp.n_gpu_layers = 0
mp.load_mode = llama_cpp.LLAMA_LOAD_MODE_NONE  # no mmap: the weights become resident
with llamalog.capture() as lines:
    model = llama_cpp.llama_model_load_from_file(path.encode(), mp)
    cp = llama_cpp.llama_context_default_params()
    cp.n_ctx, cp.n_batch, cp.n_ubatch = n_ctx, 512, 512
    cp.flash_attn_type = 1
    cp.swa_full = False
    cp.n_threads = cp.n_threads_batch = 2
    ctx = llama_cpp.llama_init_from_model(model, cp)
    # One full ubatch with logits for every token, so the whole compute graph runs.
    n = min(n_ctx, 512)
    batch = llama_cpp.llama_batch_init(n, 0, 1)
    for i in range(n):
        batch.token[i] = (7 * i) % 200 + 300
        batch.pos[i] = i
        batch.n_seq_id[i] = 1
        batch.seq_id[i][0] = 0
        batch.logits[i] = True
    batch.n_tokens = n
    rc = llama_cpp.llama_decode(ctx, batch)
after = proc.memory_info().rss
print(json.dumps({"rc": rc, "rss_growth": after - before, "lines": list(lines)}))
sys.stdout.flush()
"""


def real_load(path: Path, n_ctx: int) -> dict[str, Any]:
    done = subprocess.run([sys.executable, "-c", _CHILD, str(path), str(n_ctx)],
                          capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    out: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    assert out["rc"] == 0
    return out


FIXED_OVERHEAD = 12 << 20
# llama.cpp's vocabulary tables (token text, piece cache, maps): measured ~220 bytes per token.
VOCAB_BYTES_PER_TOKEN = 256

CASES = [(shape, ctx) for shape in SHAPES for ctx in (2048, 8192)]


@pytest.mark.slow
@pytest.mark.parametrize(("shape", "ctx"), CASES, ids=[f"{s}-{c}" for s, c in CASES])
def test_prediction_matches_a_real_load(shape: str, ctx: int) -> None:
    path = SHAPES[shape]()
    m = read_model(path)
    s = Settings(n_gpu_layers=0, n_ctx=ctx, n_batch=512, n_ubatch=512, flash_attn="on")
    p = predict(m, s, [CPU])[0]
    out = real_load(path, ctx)
    mem = {d["device"]: d for d in parse_buffer_lines(out["lines"])}
    cpu = mem["CPU"]
    measured = cpu["weights"] + cpu["kv"] + cpu["compute"]
    assert cpu["weights"] == pytest.approx(p.weights, rel=0.005)
    assert cpu["kv"] == pytest.approx(p.kv, rel=0.001, abs=16 << 10)
    assert p.total == pytest.approx(measured, rel=0.03)
    # Resident growth also holds the logits of every token of this batch (a serving runner
    # asks for one row per sequence, so the planner leaves them out) and llama.cpp's own
    # tables (vocabulary, thread pool: a few MiB whatever the model).
    logits = 4 * min(ctx, 512) * m.n_vocab
    expected = p.total + logits
    overhead = FIXED_OVERHEAD + VOCAB_BYTES_PER_TOKEN * m.n_vocab
    assert abs(out["rss_growth"] - expected) <= max(0.03 * expected, overhead), (
        f"resident growth {out['rss_growth']:,} vs predicted {expected:,}")
