"""The memory model: bytes per device for a model and a set of load settings.

It mirrors what llama.cpp allocates (verified against its dry run on the CPU backend):

- weights: ``token_embd`` stays on the CPU; of the ``n_layer + 1`` offloadable layers (the last
  one is the output head) the *last* ``n_gpu_layers`` go to the GPUs, split in device order;
  ``--n-cpu-moe N`` keeps the routed-expert tensors of layers ``0..N-1`` on the CPU.
- KV cache per layer, on the layer's device: ``cells × n_head_kv × (k_len·b(K) + v_len·b(V))``
  with cells = n_ctx rounded up to 256 (sliding-window layers: ``min(n_ctx, n_swa + n_ubatch)``).
- compute buffer, T = min(n_ctx, n_ubatch): with flash attention ``4·T·(n_vocab + 2·n_embd)``,
  without it at least ``4·T·(cells·(n_head + 1) + 2·n_ff)``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from app.gguf import LayerInfo, ModelInfo
from app.planner.types import Device, MiB, Settings, Usage

# KV cache element types: (elements per block, bytes per block)
KV_TYPES: dict[str, tuple[int, int]] = {
    "f32": (1, 4),
    "f16": (1, 2),
    "bf16": (1, 2),
    "q8_0": (32, 34),
    "q4_0": (32, 18),
    "q4_1": (32, 20),
    "q5_0": (32, 22),
    "q5_1": (32, 24),
}
QUANTIZED_KV = {"q8_0", "q4_0", "q4_1", "q5_0", "q5_1"}
KV_PAD = 256
# What a GPU backend's host-side buffer holds when every layer is offloaded (inputs, the
# embeddings of one ubatch): an estimate; measured corrections refine it per device.
_HOST_COMPUTE_FLOOR = 1 * MiB
# Small graph tensors (norm weights views, positions, ids) the phase formulas leave out.
_GRAPH_SLACK = 16 * 1024


@dataclass(frozen=True)
class Correction:
    """Measured ÷ predicted for one device, applied to the next prediction."""

    kv: float = 1.0
    compute: float = 1.0
    compute_extra: int = 0  # bytes the backend adds on top (CUDA workspace, graph copies)

    def is_identity(self) -> bool:
        return self.kv == 1.0 and self.compute == 1.0 and self.compute_extra == 0


def pad(n: int, to: int = KV_PAD) -> int:
    return -(-n // to) * to


def kv_row_bytes(cache_type: str, n: int) -> int:
    block, size = KV_TYPES[cache_type]
    return -(-n // block) * size


def kv_cells(model: ModelInfo, layer: LayerInfo, s: Settings) -> int:
    cells = pad(s.n_ctx)
    if layer.swa and model.n_swa > 0:
        # llama_kv_cache_iswa: the window plus one ubatch, padded, never above the full cache.
        cells = min(cells, pad(model.n_swa * max(1, s.parallel) + s.n_ubatch))
    return cells


def layer_kv_bytes(model: ModelInfo, layer: LayerInfo, s: Settings) -> int:
    cells = kv_cells(model, layer, s)
    k = kv_row_bytes(s.cache_type_k, layer.key_length * layer.n_head_kv)
    v = kv_row_bytes(s.cache_type_v, layer.value_length * layer.n_head_kv)
    return cells * (k + v)


def kv_bytes(model: ModelInfo, s: Settings) -> int:
    return sum(layer_kv_bytes(model, layer, s) for layer in model.layers)


def flash_attn_on(s: Settings) -> bool:
    # "auto" may resolve either way; plan for the larger (non-flash) compute buffer.
    return s.flash_attn == "on"


def compute_bytes(model: ModelInfo, s: Settings) -> int:
    """The compute buffer of a device that runs the whole graph (the CPU backend's figure).

    ggml's allocator reuses memory, so the buffer is the largest of the graph's phases:
    the output (logits for a ubatch plus two activations), a feed-forward block with the
    attention mask still alive, and without flash attention the attention scores.
    """
    t = min(s.n_ctx, s.n_ubatch)
    cells = pad(s.n_ctx)
    output = 4 * t * (model.n_vocab + 2 * model.n_embd)
    if model.is_moe:
        ffn = 3 * max(1, model.n_expert_used) * model.n_ff_exp + 4 * model.n_embd
    else:
        ffn = 3 * model.n_ff + 4 * model.n_embd
    masks = cells + (min(cells, pad(model.n_swa + s.n_ubatch)) if model.n_swa else 0)
    layer = 2 * t * masks + 4 * t * ffn + _GRAPH_SLACK
    if flash_attn_on(s):
        return max(output, layer)
    scores = 4 * t * (cells * (model.n_head + 1) + 2 * model.n_ff)
    return max(output, layer, scores)


def host_compute_bytes(model: ModelInfo, s: Settings) -> int:
    """The CPU-side compute buffer when every layer runs on GPUs (an estimate)."""
    t = min(s.n_ctx, s.n_ubatch)
    return 4 * t * 2 * model.n_embd + _HOST_COMPUTE_FLOOR


def gpu_layer_counts(model: ModelInfo, s: Settings, n_gpus: int) -> list[int]:
    """Layers per GPU as llama.cpp assigns them from n_gpu_layers and tensor_split."""
    if n_gpus == 0:
        return []
    ngl = offloaded(model, s)
    if ngl == 0:
        return [0] * n_gpus
    split = list(s.tensor_split) if any(s.tensor_split) else []
    if len(split) != n_gpus:
        split = [1.0] * n_gpus if n_gpus > 1 else [1.0]
    # llama_model::load_tensors: cumulative split points, upper_bound of (il - start) / ngl.
    total = sum(split)
    points: list[float] = []
    acc = 0.0
    for x in split:
        acc += x
        points.append(acc / total)
    counts = [0] * n_gpus
    for j in range(ngl):
        frac = j / ngl
        dev = next((d for d, p in enumerate(points) if p > frac), n_gpus - 1)
        counts[dev] += 1
    return counts


def offloaded(model: ModelInfo, s: Settings) -> int:
    """n_gpu_layers resolved: -1 and anything above n_layer + 1 mean every layer."""
    top = model.n_layer + 1
    if s.n_gpu_layers < 0 or s.n_gpu_layers > top:
        return top
    return s.n_gpu_layers


def predict(model: ModelInfo, s: Settings, devices: Sequence[Device],
            corrections: Mapping[str, Correction] | None = None) -> list[Usage]:
    """Bytes per device, in the order of ``devices`` (GPUs first, the CPU last)."""
    gpus = [d for d in devices if d.kind == "gpu"]
    counts = gpu_layer_counts(model, s, len(gpus))
    return predict_counts(model, s, devices, counts, corrections)


def predict_counts(model: ModelInfo, s: Settings, devices: Sequence[Device],
                   counts: Sequence[int],
                   corrections: Mapping[str, Correction] | None = None) -> list[Usage]:
    """Like :func:`predict` with explicit layers per GPU (device order, output layer last)."""
    n_gpus = len(counts)
    n_off = sum(counts)
    start = model.n_layer + 1 - n_off
    owner: list[int] = [-1] * (model.n_layer + 1)  # -1: CPU
    il = start
    for g, c in enumerate(counts):
        for _ in range(c):
            owner[il] = g
            il += 1

    w = [0] * (n_gpus + 1)
    kv = [0] * (n_gpus + 1)
    layers = [0] * (n_gpus + 1)
    w[n_gpus] += model.input_bytes
    for layer in model.layers:
        dev = owner[layer.index]
        slot = n_gpus if dev < 0 else dev
        layers[slot] += 1
        moved = layer.expert_bytes if dev >= 0 and layer.index < s.n_cpu_moe else 0
        w[slot] += layer.weight_bytes - moved
        w[n_gpus] += moved
        kv[slot] += layer_kv_bytes(model, layer, s)
    out = owner[model.n_layer]
    if out < 0:
        # A tied head on the CPU reads token_embd in place; only a GPU needs its own copy.
        w[n_gpus] += model.output_bytes
        layers[n_gpus] += 1
    else:
        w[out] += model.output_bytes + model.tied_embd_bytes
        layers[out] += 1

    full = compute_bytes(model, s)
    comp = [0] * (n_gpus + 1)
    for g in range(n_gpus):
        # A GPU with layers runs their part of the graph. (With none, llama.cpp's op offload may
        # still borrow it for large batches; that buffer is not counted against the plan.)
        if counts[g] > 0:
            comp[g] = full
    comp[n_gpus] = host_compute_bytes(model, s) if (n_gpus and n_off == model.n_layer + 1) \
        else full

    usages: list[Usage] = []
    gpu_devices = [d for d in devices if d.kind == "gpu"]
    cpu_device = next((d for d in devices if d.kind == "cpu"), None)
    ordered: list[Device | None] = [*gpu_devices[:n_gpus], cpu_device]
    for slot, device in enumerate(ordered):
        k, c = kv[slot], comp[slot]
        corr = None
        if corrections and device is not None:
            corr = corrections.get(device.llama_name or device.name)
        if corr is not None:
            k = int(k * corr.kv)
            c = int(c * corr.compute) + corr.compute_extra
        usages.append(Usage(weights=w[slot], kv=k, compute=c, layers=layers[slot]))
    return usages
