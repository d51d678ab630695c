"""The memory model against hand-computed figures and llama.cpp's placement rules."""

from __future__ import annotations

from dataclasses import replace

from app.gguf import ModelInfo
from app.planner.memory import (
    GPU_LAYER_PADDING,
    compute_bytes,
    gpu_layer_counts,
    kv_bytes,
    predict,
    predict_counts,
)
from app.planner.types import Device, GiB, Settings

CPU = Device("CPU", "cpu", "cpu", 0, 64 * GiB, 64 * GiB, 0, 0, llama_name="CPU")


def gpu(i: int, free: int = 24 * GiB) -> Device:
    return Device(f"GPU{i}", "gpu", "cuda", i, free, free, 0, GiB, llama_name=f"CUDA{i}")


def test_kv_llama_8b(real_models: dict[str, ModelInfo]) -> None:
    m = real_models["Llama-3.1-8B-Instruct"]
    s = Settings(n_gpu_layers=0, n_ctx=8192)
    # 32 layers × 8192 cells × 8 KV heads × 128 × (K + V) × 2 bytes
    assert kv_bytes(m, s) == 32 * 8192 * 8 * 128 * 2 * 2 == GiB
    # the cache is padded to 256 cells
    assert kv_bytes(m, replace(s, n_ctx=8000)) == kv_bytes(m, replace(s, n_ctx=8192))
    # q8_0 stores 32 values in 34 bytes
    q8 = kv_bytes(m, replace(s, cache_type_k="q8_0", cache_type_v="q8_0"))
    assert q8 == 32 * 8192 * (8 * 128 // 32 * 34) * 2


def test_kv_sliding_window_gemma3(real_models: dict[str, ModelInfo]) -> None:
    m = real_models["gemma-3-27b-it"]
    s = Settings(n_gpu_layers=0, n_ctx=32768, n_ubatch=512)
    n_global = sum(1 for layer in m.layers if not layer.swa)
    n_swa = m.n_layer - n_global
    per_cell = 16 * 128 * 2 * 2
    # global layers hold the whole context, window layers n_swa + n_ubatch cells (padded)
    assert kv_bytes(m, s) == per_cell * (n_global * 32768 + n_swa * 1536)


def test_compute_is_the_largest_phase(real_models: dict[str, ModelInfo]) -> None:
    m = real_models["Llama-3.1-8B-Instruct"]
    s = Settings(n_gpu_layers=0, n_ctx=4096, n_ubatch=512, flash_attn="on")
    # with flash attention the logits of one ubatch dominate (matched llama.cpp to the byte)
    assert compute_bytes(m, s) == 4 * 512 * (128256 + 2 * 4096)
    off = compute_bytes(m, replace(s, flash_attn="off", n_ctx=32768))
    assert off > compute_bytes(m, replace(s, n_ctx=32768))
    # a short context shrinks the ubatch it can fill
    assert compute_bytes(m, replace(s, n_ctx=256)) < compute_bytes(m, s)


def test_layer_assignment_follows_llama_cpp(real_models: dict[str, ModelInfo]) -> None:
    m = real_models["Llama-3.1-8B-Instruct"]
    s = Settings(n_gpu_layers=33, n_ctx=4096, tensor_split=(9.0, 24.0))
    assert gpu_layer_counts(m, s, 2) == [9, 24]
    assert gpu_layer_counts(m, replace(s, tensor_split=(1.0, 1.0)), 2) == [17, 16]
    assert gpu_layer_counts(m, replace(s, n_gpu_layers=-1, tensor_split=()), 1) == [33]
    assert gpu_layer_counts(m, replace(s, n_gpu_layers=0), 1) == [0]


def test_weights_move_with_layers(real_models: dict[str, ModelInfo]) -> None:
    m = real_models["Llama-3.1-8B-Instruct"]
    s = Settings(n_gpu_layers=0, n_ctx=4096)
    devices = [gpu(0), CPU]
    none = predict(m, s, devices)
    assert none[0].weights == 0 and none[1].weights == m.total_bytes
    all_ = predict(m, replace(s, n_gpu_layers=33), devices)
    # token_embd stays on the CPU; everything else goes to the GPU (each layer in a CUDA
    # buffer with its tensors' alignment and row padding)
    assert all_[1].weights == m.input_bytes
    assert all_[0].weights == m.total_bytes - m.input_bytes + 33 * GPU_LAYER_PADDING
    assert all_[0].kv == kv_bytes(m, s) and all_[1].kv == 0
    # 32 of 33: the output head goes first, so it is layer 0 that stays on the CPU
    part = predict(m, replace(s, n_gpu_layers=32), devices)
    assert part[1].weights == m.input_bytes + m.layers[0].weight_bytes
    assert part[0].layers == 32 and part[1].layers == 1


def test_tied_head_copies_embeddings_to_gpu(real_models: dict[str, ModelInfo]) -> None:
    m = real_models["gemma-3-27b-it"]
    assert m.tied_embd_bytes > 0
    devices = [gpu(0, 80 * GiB), CPU]
    s = Settings(n_gpu_layers=m.n_layer + 1, n_ctx=4096)
    u = predict(m, s, devices)
    assert u[0].weights + u[1].weights == m.total_bytes + m.tied_embd_bytes \
        + (m.n_layer + 1) * GPU_LAYER_PADDING


def test_experts_to_cpu(real_models: dict[str, ModelInfo]) -> None:
    m = real_models["Mixtral-8x7B-Instruct-v0.1"]
    devices = [gpu(0, 80 * GiB), CPU]
    s = Settings(n_gpu_layers=33, n_ctx=4096)
    base = predict_counts(m, s, devices, [33])
    moved = predict_counts(m, replace(s, n_cpu_moe=4), devices, [33])
    experts = sum(layer.expert_bytes for layer in m.layers[:4])
    assert base[0].weights - moved[0].weights == experts
    assert moved[1].weights - base[1].weights == experts
    assert moved[0].kv == base[0].kv
