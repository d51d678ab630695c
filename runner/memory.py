"""``hearth-runner probe``: llama.cpp's dry run, and parsing of its buffer lines.

The dry run (model params ``no_alloc = True`` and ``load_mode = LLAMA_LOAD_MODE_NONE``) builds
the model and the context without allocating anything, and llama.cpp logs what it would allocate:
``llama_kv_cache: size = ... MiB`` and ``sched_reserve: <dev> compute buffer size = ... MiB`` are
exact; the model and KV *buffer* lines read 0.00 MiB, so the weights per device come from the
GGUF tensor sizes and llama.cpp's own "layer N assigned to device X" lines.

After a real load, :func:`parse_buffer_lines` reads the same log for what was really allocated;
the engine reports it in ``/runner/status`` as ``"memory"``.

The app plans with its own memory model and uses this as the oracle; the two share only the JSON
printed here (app and runner share nothing but the wire protocol).
"""

from __future__ import annotations

import argparse
import json
import logging
import mmap
import os
import re
import struct
import sys
import time
from collections.abc import Iterable
from dataclasses import dataclass, replace
from typing import Any

from runner.settings import LoadSettings, add_load_flags, settings_from_args
from runner.wire.splits import part_names, split_part

log = logging.getLogger(__name__)

MiB = 1 << 20

_MIB_RE = r"(?P<mib>\d+(?:\.\d+)?) MiB"
_MODEL_BUF = re.compile(r"^\S+:\s+(?P<buf>\S+) model buffer size =\s+" + _MIB_RE)
_KV_BUF = re.compile(r"^\S+:\s+(?P<buf>\S+) KV buffer size =\s+" + _MIB_RE)
_RS_BUF = re.compile(r"^\S+:\s+(?P<buf>\S+) RS buffer size =\s+" + _MIB_RE)
_COMPUTE_BUF = re.compile(r"^\S+:\s+(?P<buf>\S+) compute buffer size =\s+" + _MIB_RE)
_OUTPUT_BUF = re.compile(r"^\S+:\s+(?P<buf>\S+)\s+output buffer size =\s+" + _MIB_RE)
_KV_SIZE = re.compile(r"^llama_kv_cache: size =\s+" + _MIB_RE)
_RS_SIZE = re.compile(r"^llama_memory_recurrent: size =\s+" + _MIB_RE)
_LAYER_DEV = re.compile(r"^load_tensors: layer\s+(?P<il>\d+) assigned to device (?P<dev>[^,\s]+)")
_KV_LAYER_DEV = re.compile(r"^llama_kv_cache: layer\s+(?P<il>\d+): dev = (?P<dev>\S+)")
_OVERRIDE = re.compile(r"tensor (?P<name>\S+) \(.*\) buffer type overridden to (?P<buf>\S+)")


class ProbeError(Exception):
    """The dry run failed; ``str()`` says why and what to try."""


# Buffer names that are not device names: an RPC worker's buffers are named by the device's
# number on that worker and its address ("RPC0[192.168.1.20:50052]"), its device by a number
# across all workers ("RPC1"). runner/rpc.py fills this when it adds workers.
BUFFER_ALIASES: dict[str, str] = {}


def device_of_buffer(buf: str) -> str:
    """The device a llama.cpp buffer lives on: host buffers (CPU, CPU_Mapped, CPU_REPACK,
    CUDA_Host, ...) are system RAM, ``Metal_Mapped`` is the Metal device."""
    if buf in BUFFER_ALIASES:
        return BUFFER_ALIASES[buf]
    if buf.startswith("CPU") or buf.endswith("_Host"):
        return "CPU"
    if buf.endswith("_Mapped"):
        return buf[: -len("_Mapped")]
    return buf


def _mib(text: str) -> int:
    return round(float(text) * MiB)


def parse_buffer_lines(lines: Iterable[str]) -> list[dict[str, Any]]:
    """What a REAL load allocated, per device, from llama.cpp's log lines.

    Returns ``[{"device", "weights", "kv", "compute", "output"}]`` (bytes; llama.cpp prints
    MiB with two decimals, so each figure is exact to ~5 KiB), CPU last.
    """
    per: dict[str, dict[str, int]] = {}

    def add(buf: str, key: str, mib: str) -> None:
        dev = device_of_buffer(buf)
        entry = per.setdefault(dev, {"weights": 0, "kv": 0, "compute": 0, "output": 0})
        entry[key] += _mib(mib)

    for raw in lines:
        line = raw.strip()
        for rx, key in ((_MODEL_BUF, "weights"), (_KV_BUF, "kv"), (_RS_BUF, "kv"),
                        (_COMPUTE_BUF, "compute"), (_OUTPUT_BUF, "output")):
            m = rx.match(line)
            if m:
                add(m["buf"], key, m["mib"])
                break
    out = [{"device": dev, **vals} for dev, vals in per.items() if dev != "CPU"]
    if "CPU" in per:
        out.append({"device": "CPU", **per["CPU"]})
    return out


def with_draft(memory: list[dict[str, Any]], draft: list[dict[str, Any]]
               ) -> list[dict[str, Any]]:
    """``memory`` with each device's ``draft``: all a draft model allocated there (weights, its
    KV cache, compute, output), kept out of the model's own figures."""
    rows = {row["device"]: {**row, "draft": 0} for row in memory}
    for row in draft:
        total = sum(row.get(k, 0) for k in ("weights", "kv", "compute", "output"))
        rows.setdefault(row["device"], {"device": row["device"], "weights": 0, "kv": 0,
                                        "compute": 0, "output": 0, "draft": 0})["draft"] += total
    out = [r for d, r in rows.items() if d != "CPU"]
    return out + ([rows["CPU"]] if "CPU" in rows else [])


# -- a minimal tensor directory (the runner does not import the app's reader) ----------------------

# ggml type -> (elements per block, bytes per block)
_TYPE_SIZES = {
    0: (1, 4), 1: (1, 2), 2: (32, 18), 3: (32, 20), 6: (32, 22), 7: (32, 24), 8: (32, 34),
    9: (32, 40), 10: (256, 84), 11: (256, 110), 12: (256, 144), 13: (256, 176), 14: (256, 210),
    15: (256, 292), 16: (256, 66), 17: (256, 74), 18: (256, 98), 19: (256, 50), 20: (32, 18),
    21: (256, 110), 22: (256, 82), 23: (256, 136), 24: (1, 1), 25: (1, 2), 26: (1, 4),
    27: (1, 8), 28: (1, 8), 29: (256, 56), 30: (1, 2), 34: (256, 54), 35: (256, 66),
    39: (32, 17), 40: (64, 36), 41: (128, 18),
}
_SCALAR_SIZES = {0: 1, 1: 1, 2: 2, 3: 2, 4: 4, 5: 4, 6: 4, 7: 1, 10: 8, 11: 8, 12: 8}


def tensor_sizes(path: str) -> dict[str, int]:
    """Bytes per tensor name, from the GGUF header of ``path`` (bounds-checked)."""
    with open(path, "rb") as f, mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as mm:
        buf = memoryview(mm)
        try:
            return _tensor_sizes(buf)
        finally:
            buf.release()


def _tensor_sizes(buf: memoryview) -> dict[str, int]:
    end = len(buf)
    pos = 0

    def take(n: int) -> int:
        nonlocal pos
        if n < 0 or pos + n > end:
            raise ProbeError("the model file's header is damaged or truncated.")
        p = pos
        pos += n
        return p

    def u32() -> int:
        return int(struct.unpack_from("<I", buf, take(4))[0])

    def u64() -> int:
        return int(struct.unpack_from("<Q", buf, take(8))[0])

    def string() -> str:
        n = u64()
        p = take(n)
        return bytes(buf[p : p + n]).decode("utf-8", "replace")

    def skip(vtype: int, depth: int = 0) -> None:
        if vtype in _SCALAR_SIZES:
            take(_SCALAR_SIZES[vtype])
        elif vtype == 8:
            take(u64())
        elif vtype == 9 and depth < 2:
            itype, count = u32(), u64()
            if itype in _SCALAR_SIZES:
                take(_SCALAR_SIZES[itype] * count)
            else:
                for _ in range(count):
                    skip(itype, depth + 1)
        else:
            raise ProbeError("the model file's header has an unknown value type.")

    if bytes(buf[take(4) : 4]) != b"GGUF":
        raise ProbeError("the file is not a GGUF model.")
    u32()
    n_tensors, n_kv = u64(), u64()
    if n_tensors > 1 << 20 or n_kv > 1 << 16:
        raise ProbeError("the model file's header is damaged.")
    for _ in range(n_kv):
        string()
        skip(u32())
    sizes: dict[str, int] = {}
    for _ in range(n_tensors):
        name = string()
        n_dims = u32()
        if not 1 <= n_dims <= 4:
            raise ProbeError(f"tensor {name!r} has {n_dims} dimensions.")
        shape = [u64() for _ in range(n_dims)]
        ttype = u32()
        u64()
        block, size = _TYPE_SIZES.get(ttype, (0, 0))
        if not block:
            raise ProbeError(f"tensor {name!r} has a type ({ttype}) this runner does not know.")
        n = shape[0] // block * size
        for d in shape[1:]:
            n *= d
        sizes[name] = n
    return sizes


def model_tensor_sizes(path: str) -> dict[str, int]:
    """Tensor sizes over every part of a split model (the parts llama.cpp opens:
    runner/wire/splits.py)."""
    part = split_part(os.path.basename(path))
    if part is None:
        return tensor_sizes(path)
    sizes: dict[str, int] = {}
    folder = os.path.dirname(path)
    prefix, _, count = part
    for name in part_names(prefix, count):
        sizes.update(tensor_sizes(os.path.join(folder, name)))
    return sizes


_EXPERTS = re.compile(r"^blk\.(\d+)\.ffn_(up|down|gate_up|gate)_(ch|)exps")
_BLK = re.compile(r"^blk\.(\d+)\.")


def weights_per_device(sizes: dict[str, int], layer_dev: dict[int, str], n_layer: int,
                       n_cpu_moe: int) -> dict[str, int]:
    """Place tensor bytes as llama.cpp does: token_embd on the CPU, blk.N with layer N, the rest
    (output head, final norm) with the output layer ``n_layer``; tied output copies token_embd."""
    out: dict[str, int] = {}
    out_dev = layer_dev.get(n_layer, "CPU")
    for name, n in sizes.items():
        m = _BLK.match(name)
        if name.startswith(("token_embd", "token_types", "position_embd")):
            dev = "CPU"
        elif m:
            il = int(m.group(1))
            if il >= n_layer:
                continue
            dev = layer_dev.get(il, "CPU")
            if il < n_cpu_moe and _EXPERTS.match(name):
                dev = "CPU"
        else:
            dev = out_dev
        out[dev] = out.get(dev, 0) + n
    if "output.weight" not in sizes and out_dev != "CPU":
        out[out_dev] = out.get(out_dev, 0) + sizes.get("token_embd.weight", 0)
    return out


# -- the dry run --------------------------------------------------------------------------------


@dataclass(frozen=True)
class ProbeOptions:
    """Flags beyond the shared load flags (until runner/settings.py carries them)."""

    n_cpu_moe: int = 0
    tensor_split: tuple[float, ...] = ()


def probe(settings: LoadSettings, options: ProbeOptions | None = None) -> dict[str, Any]:
    """Dry-run ``settings``; return per-device weights, KV and compute bytes."""
    import llama_cpp

    from runner import llamalog, runtime

    options = options or ProbeOptions()
    if not os.path.isfile(settings.model):
        raise ProbeError(f"{settings.model}: no such file.")
    started = time.monotonic()
    sizes = model_tensor_sizes(settings.model)
    if settings.mmproj:
        _projector_bytes(settings.mmproj)  # a file that is no projector: said before any load
    projector: dict[str, Any] | None = None
    llamalog.install()
    runtime.llama()  # the runtime's backends first: a GGML_BACKEND_DL build has none yet
    llama_cpp.llama_backend_init()
    if settings.rpc:
        from runner.rpc import RpcError, add_workers

        try:
            add_workers(list(settings.rpc))
        except RpcError as exc:
            raise ProbeError(str(exc)) from None
    from runner.params import ParamsError, context_params, model_params

    keep: list[Any] = []  # ctypes objects referenced until the load returns
    try:
        mp = model_params(replace(settings, n_cpu_moe=options.n_cpu_moe,
                                  tensor_split=options.tensor_split), keep)
    except ParamsError as exc:
        raise ProbeError(str(exc)) from exc
    mp.no_alloc = True
    mp.load_mode = llama_cpp.LLAMA_LOAD_MODE_NONE  # with mmap the dry run aborts
    with llamalog.capture() as lines:
        model = llama_cpp.llama_model_load_from_file(settings.model.encode(), mp)
        if not model:
            raise ProbeError(f"{settings.model}: llama.cpp could not read the model: "
                             f"{llamalog.last_error(lines) or 'no reason given'}")
        try:
            n_layer = llama_cpp.llama_model_n_layer(model)
            cp = context_params(settings, settings.ctx_size or llama_cpp.llama_model_n_ctx_train(model),
                                model)
            ctx = llama_cpp.llama_init_from_model(model, cp)
            if not ctx:
                raise ProbeError(f"{settings.model}: llama.cpp could not create a context of "
                                 f"{cp.n_ctx} tokens: {llamalog.last_error(lines) or 'no reason given'}")
            n_ctx = llama_cpp.llama_n_ctx(ctx)
            llama_cpp.llama_free(ctx)
            if settings.mmproj:
                projector = _measure_projector(settings, model)
        finally:
            llama_cpp.llama_model_free(model)
    result = summarize([ln for ln in lines if not ln.startswith(_CLIP_LINES)], sizes, n_layer,
                       options.n_cpu_moe)
    result.update({
        "model": settings.model,
        "n_ctx": n_ctx,
        "n_layer": n_layer,
        "settings": settings.to_json(),
        "n_cpu_moe": options.n_cpu_moe,
        "tensor_split": list(options.tensor_split),
        "elapsed_s": round(time.monotonic() - started, 3),
    })
    if projector is not None:
        result["projector"] = projector
    return result


# What libmtmd's loader logs (its own lines: not the model's buffers).
_CLIP_LINES = ("clip_", "load_hparams", "alloc_compute_meta", "reserve_compute_meta",
               "warmup", "mtmd_")
_CLIP_MODEL = re.compile(r"model size:\s+" + _MIB_RE)
_CLIP_COMPUTE = re.compile(r"^\S+:\s+(?P<buf>\S+) compute buffer size =\s+" + _MIB_RE)


def _measure_projector(settings: LoadSettings, model: Any) -> dict[str, Any]:
    """Load the projector for real, as the runner will (libmtmd has no dry run; its warm-up
    sizes the encoder's buffers), and read what it allocated from its log: the plan's
    projector line is checked against this. Out of memory fails the dry run, as it should."""
    from runner import llamalog
    from runner.settings import FLASH_ATTN
    from runner.vision import Vision

    with llamalog.capture() as lines:
        try:
            vision = Vision.load(settings.mmproj or "", model, settings.threads,
                                 settings.n_gpu_layers != 0, settings.ubatch_size,
                                 FLASH_ATTN[settings.flash_attn])
        except ValueError as exc:
            raise ProbeError(f"{exc} {llamalog.last_error(lines) or ''}".strip()) from None
        vision.close()
    weights = compute = 0
    devices: set[str] = set()
    for line in lines:
        if m := _CLIP_MODEL.search(line):
            weights += _mib(m["mib"])
        elif m := _CLIP_COMPUTE.match(line.strip()):
            compute += _mib(m["mib"])
            devices.add(device_of_buffer(m["buf"]))
    return {"path": settings.mmproj, "weights": weights, "compute": compute,
            "devices": sorted(devices)}


def _projector_bytes(path: str) -> int:
    """The tensor bytes of a vision projector, or ProbeError when the file is not one."""
    try:
        with open(path, "rb") as f:
            head = f.read(4)
        sizes = tensor_sizes(path) if head == b"GGUF" else {}
    except (OSError, ValueError) as exc:
        raise ProbeError(f"the vision projector {path} cannot be read: {exc}") from None
    if not any(name.startswith(("v.", "mm.")) for name in sizes):
        raise ProbeError(f"{path} is not a vision projector (no image encoder tensors).")
    return sum(sizes.values())


def summarize(lines: list[str], sizes: dict[str, int], n_layer: int,
              n_cpu_moe: int = 0) -> dict[str, Any]:
    """Per-device figures from a dry run's log lines and the GGUF tensor sizes."""
    layer_dev: dict[int, str] = {}
    kv_layer_dev: dict[int, str] = {}
    kv_total = 0
    compute: dict[str, int] = {}
    for raw in lines:
        line = raw.strip()
        if m := _LAYER_DEV.match(line):
            layer_dev[int(m["il"])] = device_of_buffer(m["dev"])
        elif m := _KV_LAYER_DEV.match(line):
            kv_layer_dev[int(m["il"])] = device_of_buffer(m["dev"])
        elif (m := _KV_SIZE.match(line)) or (m := _RS_SIZE.match(line)):
            kv_total += _mib(m["mib"])
        elif m := _COMPUTE_BUF.match(line):
            dev = device_of_buffer(m["buf"])
            compute[dev] = compute.get(dev, 0) + _mib(m["mib"])
    weights = weights_per_device(sizes, layer_dev, n_layer, n_cpu_moe)
    # The dry run prints the KV total only; split it by the layers each device holds.
    kv: dict[str, int] = {}
    if kv_layer_dev:
        per_layer = kv_total / len(kv_layer_dev)
        for dev in kv_layer_dev.values():
            kv[dev] = kv.get(dev, 0) + int(per_layer)
    elif kv_total:
        kv["CPU"] = kv_total
    devices = sorted(set(weights) | set(kv) | set(compute), key=lambda d: (d == "CPU", d))
    return {
        "devices": [
            {"device": d, "weights": weights.get(d, 0), "kv": kv.get(d, 0),
             "compute": compute.get(d, 0)}
            for d in devices
        ],
        "kv_total": kv_total,
    }


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="hearth-runner probe",
        description="Dry-run a load (nothing is allocated) and print the memory it would need "
                    "per device as one JSON object.")
    add_load_flags(parser)
    return parser


def main(argv: list[str]) -> int:
    """``hearth-runner probe <serve flags>``: print one JSON object; non-zero on failure."""
    parser = build_parser()
    args = parser.parse_args(argv)
    settings = settings_from_args(args)
    options = ProbeOptions(n_cpu_moe=settings.n_cpu_moe, tensor_split=settings.tensor_split)
    try:
        result = probe(settings, options)
    except (ProbeError, OSError) as exc:
        message = str(exc)
        print(json.dumps({"error": message}), flush=True)
        print(f"hearth-runner probe: {message}", file=sys.stderr)
        return 1
    print(json.dumps(result), flush=True)
    return 0
