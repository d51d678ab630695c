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
# Small host-side graph inputs (positions, ids, output indices) beside the masks and embeddings.
_HOST_COMPUTE_FLOOR = 2 * MiB
# What the CUDA backend holds on each GPU beyond llama.cpp's buffers: the context with its
# loaded kernels, cuBLAS's handle and workspace, ggml's memory pool after a first prompt.
# Measured with NVML on an H100 80GB (driver 580.159, CUDA 13.5 runtime, docs/gpu.md): 587–590
# MiB after every load of four models, 12–18 MiB more for the pool once a 700-token prompt ran
# on a dense model. Smaller cards need less (fewer SMs, a smaller context): this stays on the
# safe side.
CUDA_OVERHEAD = 608 * MiB
# A GPU buffer aligns each tensor and pads a quantized tensor's last row (ggml-cuda's
# MATRIX_ROW_PADDING): up to about 0.5 KiB per tensor, under 4 KiB per layer. The H100's buffers
# were 20–67 KiB above the tensors' own bytes on 25–49 layers.
GPU_LAYER_PADDING = 4 << 10
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
    attention mask still alive, and without flash attention the attention scores. On an H100
    the same held within 3.1 % over (CUDA's output phase kept one activation for three of the
    four shapes, two for gpt-oss).
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


def _mask_cells(model: ModelInfo, s: Settings) -> int:
    """Cells of the attention masks a ubatch needs: the full cache's, plus the window's."""
    cells = pad(s.n_ctx)
    if not model.n_swa:
        return cells
    return cells + min(cells, pad(model.n_swa * max(1, s.parallel) + s.n_ubatch))


def host_compute_bytes(model: ModelInfo, s: Settings) -> int:
    """The CPU-side compute buffer when a GPU runs every layer, or a CUDA GPU runs some.

    It holds the graph's inputs before they are copied to the GPU: the attention masks (f16 with
    flash attention, f32 without; one row per cell for each of the ubatch's tokens) and the
    ubatch's embeddings. With part of the layers on the CPU, ggml still sends their large
    matrix products to the GPU, so the same holds. Matched to the MiB on an H100 over 11 loads
    (docs/gpu.md).
    """
    t = min(s.n_ctx, s.n_ubatch)
    masks = _mask_cells(model, s)
    if flash_attn_on(s):
        return 2 * t * masks + 8 * t * model.n_embd + _HOST_COMPUTE_FLOOR
    return 4 * t * masks + 10 * t * model.n_embd + _HOST_COMPUTE_FLOOR


def cuda_compute_bytes(model: ModelInfo, s: Settings) -> int:
    """A CUDA GPU's compute buffer: the CPU's figure, or more with a quantized KV cache.

    CUDA's flash attention kernels for a ubatch read K and V as f16: with a quantized cache the
    graph holds an f16 copy of one layer's K and V (the largest layer's), the masks and a few
    activations at once. Measured on an H100: Llama 3.1 8B, 131,072 cells of q8_0: 672 MiB
    where the f16 cache needs 258 (docs/gpu.md); the CPU backend reads quantized K/V in place.
    """
    base = compute_bytes(model, s)
    if not flash_attn_on(s) or not ({s.cache_type_k, s.cache_type_v} & QUANTIZED_KV):
        return base
    t = min(s.n_ctx, s.n_ubatch)
    kv16 = max((kv_cells(model, layer, s) * layer.n_head_kv
                * (layer.key_length + layer.value_length) * 2 for layer in model.layers),
               default=0)
    # Below that peak the graph still keeps a little more than with an f16 cache (0.8 MiB on
    # gpt-oss-20b at 14,336 cells of q8_0).
    return max(base + MiB, kv16 + 2 * t * _mask_cells(model, s) + 16 * t * model.n_embd
               + 8 * _GRAPH_SLACK)


def gpu_compute_bytes(model: ModelInfo, s: Settings, device: Device) -> int:
    """The compute buffer of a GPU that holds layers."""
    return cuda_compute_bytes(model, s) if device.backend == "cuda" else compute_bytes(model, s)


def backend_overhead(model: ModelInfo, s: Settings, device: Device) -> int:
    """Memory the GPU backend takes beyond llama.cpp's buffers (0 where not measured)."""
    if device.kind != "gpu" or device.backend != "cuda":
        return 0
    extra = 0
    t = min(s.n_ctx, s.n_ubatch)
    if model.is_moe:
        # The pool's expert-sorted copies of a ubatch's activations: gpt-oss-20b's first
        # prompt grew it by 110–113 MiB where a dense model's grew by 12–18.
        extra += 9 * t * max(1, model.n_expert_used) * (model.n_embd + model.n_ff_exp)
    if not flash_attn_on(s):
        # Without flash attention cuBLAS multiplies the scores by V from an f16 copy of one
        # head's scores in the pool: 120 MiB more at 131,072 cells.
        extra += 2 * t * pad(s.n_ctx)
    return CUDA_OVERHEAD + extra


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
    gpu_devices = [d for d in devices if d.kind == "gpu"]
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
    for g in range(n_gpus):
        if g < len(gpu_devices) and gpu_devices[g].backend == "cuda":
            w[g] += GPU_LAYER_PADDING * layers[g]

    full = compute_bytes(model, s)
    comp = [0] * (n_gpus + 1)
    extra = [0] * (n_gpus + 1)
    for g in range(n_gpus):
        # A GPU with layers runs their part of the graph. (With none, llama.cpp's op offload may
        # still borrow it for large batches; that buffer is not counted against the plan.)
        if counts[g] > 0:
            comp[g] = gpu_compute_bytes(model, s, gpu_devices[g])
        if g < len(gpu_devices):
            extra[g] = backend_overhead(model, s, gpu_devices[g]) if counts[g] > 0 else 0
    cuda_runs_layers = any(c > 0 and g < len(gpu_devices) and gpu_devices[g].backend == "cuda"
                           for g, c in enumerate(counts))
    if n_gpus and (n_off == model.n_layer + 1 or cuda_runs_layers):
        comp[n_gpus] = host_compute_bytes(model, s)
    else:
        comp[n_gpus] = full

    proj = [0] * (n_gpus + 1)
    if model.projector is not None:
        proj[projector_slot(counts)] = projector_bytes(model, s)
    drafts = [0] * (n_gpus + 1)
    if model.draft is not None:  # the runner puts it where the projector goes
        slot = projector_slot(counts)
        if slot < n_gpus:
            drafts[slot] = draft_gpu_bytes(model, s)
            drafts[n_gpus] = model.draft.model.input_bytes
        else:
            drafts[slot] = draft_bytes(model, s)

    usages: list[Usage] = []
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
        usages.append(Usage(weights=w[slot], kv=k, compute=c, layers=layers[slot],
                            overhead=extra[slot], projector=proj[slot], draft=drafts[slot]))
    return usages


def projector_slot(counts: Sequence[int]) -> int:
    """Where a vision projector goes among ``counts``' GPUs and the CPU (last): libmtmd takes
    the first GPU whenever the model's layers use a GPU (``use_gpu`` follows
    ``--n-gpu-layers``), else the CPU."""
    return 0 if counts and sum(counts) > 0 else len(counts)


def draft_bytes(model: ModelInfo, s: Settings) -> int:
    """A draft model's weights, its own KV cache (the same context and cache types) and its
    compute buffer: all on the first GPU when the model's layers use one (the runner's
    --spec-draft-ngl default), else in RAM. 0 without a draft."""
    if model.draft is None:
        return 0
    d = model.draft.model
    return (d.total_bytes + sum(layer_kv_bytes(d, layer, s) for layer in d.layers)
            + compute_bytes(d, s))


def draft_gpu_bytes(model: ModelInfo, s: Settings) -> int:
    """What of :func:`draft_bytes` a GPU holds: all but the token embeddings, which stay in RAM
    as the model's own do (measured on an H200: a 1.9 GB pair's draft put its 131 MB of
    embeddings on the CPU and the rest on CUDA0; docs/gpu.md)."""
    return draft_bytes(model, s) - (model.draft.model.input_bytes if model.draft else 0)


def projector_bytes(model: ModelInfo, s: Settings) -> int:
    """The projector's weights and its encoder's compute buffer (0 without one)."""
    p = model.projector
    return 0 if p is None else p.weight_bytes + p.compute_bytes(flash_attn_on(s))
