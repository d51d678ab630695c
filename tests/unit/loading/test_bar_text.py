"""The memory bar's words (app/loading/bar_text.py): a header that the settings alone decide,
what is free now on a line of its own, layers counted only where a GPU makes them mean something,
and the measured mark after the weights."""

from __future__ import annotations

from app.loading import bar_text
from app.loading.tuning import SEGMENT_LABELS, DeviceBar, Measured, Segment
from app.planner.types import GiB, MiB


def _bar(kind: str = "cpu", *, others: int = 4 * GiB, weights: int = 2 * GiB,
         kv: int = 256 * MiB, compute: int = 514 * MiB, layers: int = 19,
         capacity: int = 16 * GiB) -> DeviceBar:
    segs = tuple(Segment(k, SEGMENT_LABELS[k], n) for k, n in
                 (("others", others), ("weights", weights), ("kv", kv), ("compute", compute)))
    need = weights + kv + compute
    return DeviceBar(name="RTX 3090" if kind == "gpu" else "Intel Core i5", llama_name="CPU"
                     if kind == "cpu" else "CUDA0", kind=kind, capacity=capacity, segments=segs,
                     reserve=2 * GiB, need=need, budget=capacity - others - 2 * GiB,
                     layers=layers, fits=True)


def test_the_header_does_not_move_with_what_other_programs_use() -> None:
    quiet, busy = _bar(others=1 * GiB), _bar(others=12 * GiB)
    assert bar_text.header(quiet, gpus=False) == bar_text.header(busy, gpus=False)
    assert bar_text.header(quiet, gpus=False) == \
        "System RAM · the model needs 2.8 GiB of 16.0 GiB"
    assert bar_text.free_now(quiet) == "Other programs use 1.0 GiB now; 15.0 GiB is free."
    assert bar_text.free_now(busy) == "Other programs use 12.0 GiB now; 4.0 GiB is free."


def test_layers_are_counted_on_gpus_and_in_ram_only_beside_a_gpu() -> None:
    assert "layer" not in bar_text.header(_bar("cpu"), gpus=False)
    assert "· 10 layers ·" in bar_text.header(_bar("cpu", layers=10), gpus=True)
    assert bar_text.header(_bar("gpu", layers=1), gpus=True).startswith("RTX 3090 · 1 layer ·")
    empty = _bar("gpu", weights=0, kv=0, compute=0, layers=0)
    assert bar_text.header(empty, gpus=True) == "RTX 3090 · none of the model; 16.0 GiB in all"


def test_a_tiny_model_reads_in_mib() -> None:
    tiny = _bar(weights=MiB, kv=MiB, compute=3 * MiB)
    assert bar_text.header(tiny, gpus=False).endswith("needs 5 MiB of 16.0 GiB")


def test_the_measured_mark_stands_after_the_weights() -> None:
    bar = _bar()
    # The loader's record has no weights: the file's (predicted) ones stand in.
    recorded = Measured("CPU", kv=200 * MiB, compute=500 * MiB)
    assert bar_text.measured_bytes(bar, recorded) == 2 * GiB + 700 * MiB
    assert bar_text.measured_mark(bar, recorded) == 4 * GiB + 2 * GiB + 700 * MiB
    # The runner's status does say: its figure counts.
    reported = Measured("CPU", kv=200 * MiB, compute=500 * MiB, weights=GiB)
    assert bar_text.measured_bytes(bar, reported) == GiB + 700 * MiB
