"""`hearth-runner [--runtime FOLDER] selftest [--json]`: prove a runtime works on each device.

For every device the runtime sees, load a tiny generated model with all of it on that device
(layers offloaded where the device is a GPU), generate a few tokens, and report per device:
success, load time, tokens/s, how many layers really went to the device, and the error if any.
A runtime that loads but cannot compute on a device (a driver too old, a missing kernel for
this GPU) fails here in seconds, before a real model is planned on it. A CUDA runtime is first
checked against the NVIDIA driver (runner/nvidia.py): a missing or too old driver fails with one
sentence naming it, as the JSON's ``error``, which the app shows unchanged.

Exit status: 0 when every device passed, 1 when any failed, 2 when the runtime cannot load.
"""

from __future__ import annotations

import argparse
import json
import logging
import re
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

log = logging.getLogger(__name__)

N_TOKENS = 16
_GPU_TYPES = ("gpu", "igpu")


def write_tiny_model(path: Path) -> Path:
    """A 2-layer llama-architecture GGUF of a few hundred kB (random weights, byte vocabulary)."""
    import gguf
    import numpy as np

    rng = np.random.default_rng(0)
    n_embd, n_head, n_ff, n_layer = 64, 4, 128, 2
    tokens = ["<unk>", "<s>", "</s>", *(f"<0x{i:02X}>" for i in range(256)),
              "▁", *"abcdefghijklmnopqrstuvwxyz"]
    types = [2, 3, 3, *([6] * 256), *([1] * 27)]  # unknown, control, control, bytes, normal

    def mat(rows: int, cols: int) -> Any:
        return rng.standard_normal((rows, cols), dtype=np.float32) * 0.05

    w = gguf.GGUFWriter(str(path), "llama")
    w.add_name("hearth-selftest")
    w.add_context_length(256)
    w.add_embedding_length(n_embd)
    w.add_block_count(n_layer)
    w.add_feed_forward_length(n_ff)
    w.add_head_count(n_head)
    w.add_head_count_kv(n_head)
    w.add_rope_dimension_count(n_embd // n_head)
    w.add_layer_norm_rms_eps(1e-5)
    w.add_rope_freq_base(10000.0)
    w.add_file_type(0)  # F32
    w.add_tokenizer_model("llama")
    w.add_token_list(tokens)
    w.add_token_scores([0.0] * len(tokens))
    w.add_token_types(types)
    w.add_unk_token_id(0)
    w.add_bos_token_id(1)
    w.add_eos_token_id(2)
    w.add_tensor("token_embd.weight", mat(len(tokens), n_embd))
    for i in range(n_layer):
        p = f"blk.{i}."
        w.add_tensor(p + "attn_norm.weight", np.ones(n_embd, dtype=np.float32))
        for name in ("attn_q", "attn_k", "attn_v", "attn_output"):
            w.add_tensor(p + name + ".weight", mat(n_embd, n_embd))
        w.add_tensor(p + "ffn_norm.weight", np.ones(n_embd, dtype=np.float32))
        w.add_tensor(p + "ffn_gate.weight", mat(n_ff, n_embd))
        w.add_tensor(p + "ffn_up.weight", mat(n_ff, n_embd))
        w.add_tensor(p + "ffn_down.weight", mat(n_embd, n_ff))
    w.add_tensor("output_norm.weight", np.ones(n_embd, dtype=np.float32))
    w.add_tensor("output.weight", mat(len(tokens), n_embd))
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    return path


def test_device(model_path: Path, device: dict[str, Any], gpu_index: int | None,
                n_gpus: int) -> dict[str, Any]:
    """Load on one device (all layers there when it is a GPU) and generate; never raises."""
    import llama_cpp

    from runner.engine import Model
    from runner.settings import LoadSettings

    result: dict[str, Any] = {"device": device["name"], "description": device["description"],
                              "type": device["type"], "ok": False}
    if gpu_index is None:
        settings = LoadSettings(model=str(model_path), ctx_size=128, n_gpu_layers=0,
                                batch_size=32, ubatch_size=32, threads=1)
    else:
        # One GPU: all of the split on it, so a second GPU cannot hide a broken first one.
        split = tuple(1.0 if i == gpu_index else 0.0 for i in range(n_gpus))
        settings = LoadSettings(model=str(model_path), ctx_size=128, n_gpu_layers=-1,
                                batch_size=32, ubatch_size=32, threads=1,
                                tensor_split=split if n_gpus > 1 else ())
    started = time.perf_counter()
    try:
        model = Model.load(settings)
    except Exception as exc:
        result["error"] = str(exc)
        return result
    result["load_s"] = round(time.perf_counter() - started, 3)
    result["layers_on_device"] = _offloaded(model.load_log)
    try:
        result["tokens_per_s"] = round(_generate(llama_cpp, model), 1)
        result["ok"] = gpu_index is None or result["layers_on_device"] > 0
        if not result["ok"]:
            result["error"] = "no layer went to the device"
    except Exception as exc:  # a failed compute is this device's result, not a crash
        result["error"] = str(exc)
    finally:
        model.close()
    return result


def _offloaded(lines: list[str]) -> int:
    for line in lines:
        m = re.search(r"offloaded (\d+)/(\d+) layers to GPU", line)
        if m:
            return int(m.group(1))
    return 0


def _generate(llama_cpp: Any, model: Any) -> float:
    """Greedy tokens from a short prompt; returns decode tokens/s."""
    tokens = model.tokenize("hello world", add_bos=True, special=False)
    arr = (llama_cpp.llama_token * len(tokens))(*tokens)
    if llama_cpp.llama_decode(model.ctx, llama_cpp.llama_batch_get_one(arr, len(tokens))) != 0:
        raise RuntimeError("the prompt could not be decoded on this device")
    sampler = llama_cpp.llama_sampler_init_greedy()
    one = (llama_cpp.llama_token * 1)()
    try:
        started = time.perf_counter()
        for _ in range(N_TOKENS):
            one[0] = llama_cpp.llama_sampler_sample(sampler, model.ctx, -1)
            if llama_cpp.llama_decode(model.ctx, llama_cpp.llama_batch_get_one(one, 1)) != 0:
                raise RuntimeError("a token could not be decoded on this device")
        elapsed = time.perf_counter() - started
    finally:
        llama_cpp.llama_sampler_free(sampler)
    return N_TOKENS / elapsed if elapsed > 0 else 0.0


def run() -> dict[str, Any]:
    """The whole self-test as JSON; raises DevicesError when the runtime cannot load."""
    from runner import nvidia, runtime
    from runner.devices import DevicesError, list_devices

    # Before llama.cpp loads the CUDA backend: without a driver new enough it would drop the
    # GPU without a word, and the user would only see "no layer went to the device".
    problem = nvidia.check_runtime(runtime.chosen())
    if problem:
        raise DevicesError(problem)
    found = list_devices()
    gpus = [d for d in found["devices"] if d["type"] in _GPU_TYPES]
    results = []
    with tempfile.TemporaryDirectory(prefix="hearth-selftest-") as tmp:
        model = write_tiny_model(Path(tmp) / "selftest.gguf")
        for device in found["devices"]:
            gpu_index = gpus.index(device) if device in gpus else None
            if device["type"] not in _GPU_TYPES and device["type"] != "cpu":
                continue  # accelerators (BLAS, AMX) work beside the CPU, not alone
            results.append(test_device(model, device, gpu_index, len(gpus)))
    return {
        "runtime": runtime.chosen(),
        "llama_cpp_version": found["llama_cpp_version"],
        "cpu_variant": found.get("cpu_variant", ""),
        "backends": found["backends"],
        "devices": results,
        "ok": bool(results) and all(r["ok"] for r in results),
    }


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="hearth-runner selftest", description=__doc__.split(
        "\n")[0])
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    args = parser.parse_args(argv)
    from runner.devices import DevicesError

    try:
        report = run()
    except DevicesError as exc:
        if args.json:
            print(json.dumps({"ok": False, "error": str(exc), "devices": []}))
        print(f"hearth-runner selftest: {exc}", file=sys.stderr)
        return 2
    if args.json:
        print(json.dumps(report))
    else:
        rt = report["runtime"]
        print(f"Runtime {rt.get('name')} (llama-cpp-python {report['llama_cpp_version']}"
              + (f", CPU variant {report['cpu_variant']}" if report["cpu_variant"] else "") + ")")
        for r in report["devices"]:
            if r["ok"]:
                print(f"  ok    {r['device']} ({r['description']}): loaded in {r['load_s']} s, "
                      f"{r['tokens_per_s']} tokens/s, {r['layers_on_device']} layers on it")
            else:
                print(f"  FAIL  {r['device']} ({r['description']}): {r.get('error')}")
    return 0 if report["ok"] else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
