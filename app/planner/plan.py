"""``plan(model, hardware, wishes) -> LaunchPlan``: the search, modelled on llama.cpp's fit.

Order of concessions when the model does not fit (speed first): shrink the context towards the
floor, then store the KV cache as q8_0 (needs flash attention), then keep MoE expert tensors on
the CPU layer by layer, then move whole layers to the CPU back to front. Context first keeps the
context and gives up layers instead, shrinking the context only when even the CPU cannot hold the
rest. Pinned knobs never move; the plan says so when they cannot fit.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from app.gguf import ModelInfo
from app.planner.devices import devices_for, thread_count
from app.planner.memory import (
    QUANTIZED_KV,
    Correction,
    compute_bytes,
    layer_kv_bytes,
    offloaded,
    predict_counts,
)
from app.planner.types import (
    Device,
    DeviceBreakdown,
    GiB,
    MiB,
    PlanDoesNotFitError,
    PlannerError,
    Settings,
    Usage,
    Wishes,
)

if TYPE_CHECKING:
    from app.hardware import HardwareReport

log = logging.getLogger(__name__)

CTX_STEP = 256  # llama.cpp pads the context to 256 cells; finer steps buy nothing


@dataclass(frozen=True)
class LaunchPlan:
    """The settings to load with, what each device will hold, and why."""

    settings: Settings
    devices: tuple[DeviceBreakdown, ...]
    reasons: list[str]
    fits: bool
    model: ModelInfo = field(repr=False, compare=False)
    wishes: Wishes = field(default_factory=Wishes, repr=False, compare=False)
    fallback_steps: tuple[str, ...] = ()

    @property
    def gpus(self) -> list[DeviceBreakdown]:
        return [d for d in self.devices if d.device.kind == "gpu"]

    @property
    def cpu(self) -> DeviceBreakdown:
        return self.devices[-1]

    def ensure_fits(self) -> LaunchPlan:
        if not self.fits:
            raise PlanDoesNotFitError(" ".join(r for r in self.reasons if r))
        return self

    def runner_args(self, model_path: str | None = None) -> list[str]:
        """The ``hearth-runner serve``/``probe`` flags for this plan."""
        path = model_path or self.model.path
        if not path:
            raise PlannerError("This plan was made from a partial download; download the model "
                               "before starting it.")
        s = self.settings
        args = [
            "--model", path,
            "--ctx-size", str(s.n_ctx),
            "--n-gpu-layers", str(s.n_gpu_layers),
            "--batch-size", str(s.n_batch),
            "--ubatch-size", str(s.n_ubatch),
            "--threads", str(s.n_threads),
            "--threads-batch", str(s.n_threads_batch),
            "--flash-attn", s.flash_attn,
            "--cache-type-k", s.cache_type_k,
            "--cache-type-v", s.cache_type_v,
        ]
        if not s.mmap:
            args.append("--no-mmap")
        if s.mlock:
            args.append("--mlock")
        if s.parallel != 1:
            args += ["--parallel", str(s.parallel)]
        # Flags beyond runner/settings.py's shared set, only when the plan needs them.
        if s.n_cpu_moe:
            args += ["--n-cpu-moe", str(s.n_cpu_moe)]
        if len(s.tensor_split) > 1:
            args += ["--tensor-split", ",".join(_num(x) for x in s.tensor_split)]
        return args

    def to_json(self) -> dict[str, Any]:
        return {
            "model": {
                "name": self.model.name,
                "path": self.model.path,
                "architecture": self.model.architecture,
                "n_layer": self.model.n_layer,
                "n_ctx_train": self.model.n_ctx_train,
                "quantization": self.model.quantization,
                "weights": self.model.total_bytes,
            },
            "fits": self.fits,
            "settings": self.settings.to_json(),
            "devices": [d.to_json() for d in self.devices],
            "reasons": list(self.reasons),
            "fallback_steps": list(self.fallback_steps),
        }


def plan(model: ModelInfo, hardware: HardwareReport, wishes: Wishes | None = None,
         corrections: Mapping[str, Correction] | None = None) -> LaunchPlan:
    """Plan a load of ``model`` on ``hardware``; never raises for "does not fit" (see ``fits``)."""
    wishes = wishes or Wishes()
    cpu_only = wishes.cpu_only or wishes.pins.n_gpu_layers == 0
    devices = devices_for(hardware, wishes.margin, cpu_only=cpu_only)
    return plan_for_devices(model, devices, thread_count(hardware), wishes, corrections)


def plan_for_devices(model: ModelInfo, devices: Sequence[Device], threads: int,
                     wishes: Wishes, corrections: Mapping[str, Correction] | None = None,
                     ) -> LaunchPlan:
    """The search itself, on explicit memory pools (GPUs in device order, then the CPU)."""
    return _Search(model, list(devices), threads, wishes, corrections or {}).run()


# -- the search -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Layout:
    counts: tuple[int, ...]  # layers per GPU (the output head counts as a layer)
    n_cpu_moe: int

    @property
    def ngl(self) -> int:
        return sum(self.counts)


class _Search:
    def __init__(self, model: ModelInfo, devices: list[Device], threads: int, wishes: Wishes,
                 corrections: Mapping[str, Correction]) -> None:
        self.m = model
        self.devices = devices
        self.gpus = [d for d in devices if d.kind == "gpu"]
        self.cpu = devices[-1]
        if self.cpu.kind != "cpu":
            raise PlannerError("The device list must end with the CPU.")
        self.w = wishes
        self.p = wishes.pins
        self.corr = corrections
        self.top = model.n_layer + 1
        self.reasons: list[str] = []
        self.notes: list[str] = []
        self.threads = threads

    # -- settings helpers ------------------------------------------------------------------------

    def base_settings(self) -> Settings:
        p = self.p
        n_batch = p.n_batch or (2048 if self.gpus else 512)
        n_ubatch = min(p.n_ubatch or 512, n_batch)
        threads = p.n_threads or self.threads
        return Settings(
            n_gpu_layers=0,
            n_ctx=4096,
            n_batch=n_batch,
            n_ubatch=n_ubatch,
            n_threads=threads,
            n_threads_batch=p.n_threads_batch or threads,
            flash_attn=p.flash_attn or "on",
            cache_type_k=p.cache_type_k or "f16",
            cache_type_v=p.cache_type_v or "f16",
            n_cpu_moe=p.n_cpu_moe or 0,
            mmap=True if p.mmap is None else p.mmap,
            mlock=bool(p.mlock),
        )

    def kv_options(self, s: Settings) -> list[tuple[str, str]]:
        if self.p.cache_type_k or self.p.cache_type_v:
            return [(s.cache_type_k, s.cache_type_v)]
        opts = [("f16", "f16")]
        if self.w.allow_quantized_kv and s.flash_attn == "on":
            opts.append(("q8_0", "q8_0"))
        return opts

    def ctx_grid(self) -> list[int]:
        train = self.m.n_ctx_train or 4096
        if self.p.n_ctx:
            return [self.p.n_ctx]
        if isinstance(self.w.context, int):
            return [self.w.context]
        if self.w.context == "max":
            return [train]
        lo = min(self.w.min_ctx, train)
        grid = [lo]
        x = (lo // CTX_STEP + 1) * CTX_STEP
        while x < train:
            grid.append(x)
            x += CTX_STEP
        if train > lo:
            grid.append(train)
        return grid

    # -- evaluation -------------------------------------------------------------------------------

    def usages(self, s: Settings, lay: _Layout) -> list[Usage]:
        s = replace(s, n_cpu_moe=lay.n_cpu_moe)
        return predict_counts(self.m, s, self.devices, lay.counts, self.corr)

    def fits(self, usages: Sequence[Usage]) -> bool:
        return within_budget(self.devices, usages)

    def cpu_fits(self, s: Settings, lay: _Layout) -> bool:
        return self.fits(self.usages(s, lay))

    def layer_gpu_cost(self, s: Settings, il: int, n_cpu_moe: int, dev: Device) -> int:
        """Bytes one offloadable layer puts on a GPU (il == n_layer: the output head)."""
        corr = self.corr.get(dev.llama_name or dev.name)
        if il == self.m.n_layer:
            return self.m.output_bytes + self.m.tied_embd_bytes
        layer = self.m.layers[il]
        w = layer.weight_bytes - (layer.expert_bytes if il < n_cpu_moe else 0)
        kv = layer_kv_bytes(self.m, layer, s)
        if corr is not None:
            kv = int(kv * corr.kv)
        return w + kv

    def gpu_fixed_cost(self, s: Settings, g: int) -> int:
        dev = self.gpus[g]
        c = compute_bytes(self.m, s)
        corr = self.corr.get(dev.llama_name or dev.name)
        if corr is not None:
            c = int(c * corr.compute) + corr.compute_extra
        return c

    def fill(self, s: Settings, cap: int, n_cpu_moe: int) -> tuple[int, ...]:
        """Most layers (≤ cap) the GPUs hold: the last GPU takes the top layers, and so on."""
        if not self.gpus:
            return ()
        if self.p.tensor_split:
            return self.fill_split(s, cap, n_cpu_moe)
        counts = [0] * len(self.gpus)
        il = self.top - 1
        remaining = cap
        for g in reversed(range(len(self.gpus))):
            dev = self.gpus[g]
            used = self.gpu_fixed_cost(s, g)
            budget = dev.budget
            if used > budget:
                continue
            while remaining > 0 and il >= 0:
                cost = self.layer_gpu_cost(s, il, n_cpu_moe, dev)
                if used + cost > budget:
                    break
                used += cost
                counts[g] += 1
                il -= 1
                remaining -= 1
        return tuple(counts)

    def fill_split(self, s: Settings, cap: int, n_cpu_moe: int) -> tuple[int, ...]:
        from app.planner.memory import gpu_layer_counts

        best: tuple[int, ...] = (0,) * len(self.gpus)
        split = tuple(self.p.tensor_split or ())
        for ngl in range(cap, -1, -1):
            counts = tuple(gpu_layer_counts(
                self.m, replace(s, n_gpu_layers=ngl, tensor_split=split), len(self.gpus)))
            us = self.usages(s, _Layout(counts, n_cpu_moe))
            if all(u.total <= d.budget for d, u in zip(self.gpus, us, strict=False)):
                return counts
        return best

    def cap(self) -> int:
        if self.p.n_gpu_layers is not None:
            return min(offloaded(self.m, Settings(self.p.n_gpu_layers, 0)), self.top)
        return self.top if self.gpus else 0

    def full_layout(self, s: Settings) -> _Layout | None:
        """Every wanted layer on the GPUs with no expert moved, if that fits (CPU included)."""
        moe = self.p.n_cpu_moe or 0
        counts = self.fill(s, self.cap(), moe)
        lay = _Layout(counts, moe)
        if lay.ngl == self.cap() and self.cpu_fits(s, lay):
            return lay
        return None

    def best_layout(self, s: Settings) -> _Layout | None:
        """The fastest layout at these settings, or None if even the CPU cannot hold the rest."""
        cap = self.cap()
        full = self.full_layout(s)
        if full is not None:
            return full
        if not self.gpus:
            return None
        if self.m.is_moe and self.p.n_cpu_moe is None:
            # Fewest layers with experts on the CPU that lets every layer's rest on the GPUs.
            lo, hi = 1, self.m.n_layer
            if len(self.fill(s, cap, hi)) and sum(self.fill(s, cap, hi)) == cap:
                while lo < hi:
                    mid = (lo + hi) // 2
                    if sum(self.fill(s, cap, mid)) == cap:
                        hi = mid
                    else:
                        lo = mid + 1
                lay = _Layout(self.fill(s, cap, lo), lo)
                if self.cpu_fits(s, lay):
                    return lay
            moe = self.m.n_layer
        else:
            moe = self.p.n_cpu_moe or 0
        if self.p.n_gpu_layers is not None:
            lay = _Layout(self.fill(s, cap, moe), moe)
            return lay if lay.ngl == cap and self.cpu_fits(s, lay) else None
        lay = _Layout(self.fill(s, cap, moe), moe)
        return lay if self.cpu_fits(s, lay) else None

    # -- the search -------------------------------------------------------------------------------

    def run(self) -> LaunchPlan:
        base = self.base_settings()
        grid = self.ctx_grid()
        if base.cache_type_v in QUANTIZED_KV and base.flash_attn != "on":
            return self.infeasible(
                replace(base, n_ctx=grid[0]),
                f"A {base.cache_type_v} V cache needs flash attention, which is pinned "
                f"'{base.flash_attn}'. Turn flash attention on or use an f16 V cache.",
            )
        kv_opts = self.kv_options(base)
        if self.w.priority == "context":
            found = self.context_first(base, grid, kv_opts)
        else:
            found = self.speed_first(base, grid, kv_opts)
        if found is None:
            s = replace(base, n_ctx=grid[0], cache_type_k=kv_opts[-1][0],
                        cache_type_v=kv_opts[-1][1])
            return self.infeasible(s, None)
        s, lay = found
        return self.finish(s, lay, grid, kv_opts)

    def speed_first(self, base: Settings, grid: list[int],
                    kv_opts: list[tuple[str, str]]) -> tuple[Settings, _Layout] | None:
        for k, v in kv_opts:
            kv_s = replace(base, cache_type_k=k, cache_type_v=v)
            if self.full_layout(replace(kv_s, n_ctx=grid[0])) is None:
                continue
            ctx = _last_true(grid, self._full_at(kv_s))
            s = replace(kv_s, n_ctx=ctx)
            lay = self.full_layout(s)
            assert lay is not None
            return s, lay
        k, v = kv_opts[-1]
        s = replace(base, cache_type_k=k, cache_type_v=v, n_ctx=grid[0])
        lay = self.best_layout(s)
        if lay is None:
            return None
        # Keep these layers; give what is left to the context.
        ctx = _last_true(grid, lambda c: self.keeps(replace(s, n_ctx=c), lay))
        return replace(s, n_ctx=ctx), lay

    def _full_at(self, s: Settings) -> Callable[[int], bool]:
        def full(ctx: int) -> bool:
            return self.full_layout(replace(s, n_ctx=ctx)) is not None

        return full

    def keeps(self, s: Settings, lay: _Layout) -> bool:
        return self.fits(self.usages(s, lay))

    def context_first(self, base: Settings, grid: list[int],
                      kv_opts: list[tuple[str, str]]) -> tuple[Settings, _Layout] | None:
        for k, v in kv_opts:
            s = replace(base, cache_type_k=k, cache_type_v=v, n_ctx=grid[-1])
            lay = self.best_layout(s)
            if lay is not None:
                return s, lay
        k, v = kv_opts[-1]
        s = replace(base, cache_type_k=k, cache_type_v=v)
        if self.best_layout(replace(s, n_ctx=grid[0])) is None:
            return None
        ctx = _last_true(grid, lambda c: self.best_layout(replace(s, n_ctx=c)) is not None)
        s = replace(s, n_ctx=ctx)
        lay = self.best_layout(s)
        assert lay is not None
        return s, lay

    # -- results ----------------------------------------------------------------------------------

    def settings_for(self, s: Settings, lay: _Layout) -> Settings:
        split: tuple[float, ...] = ()
        if len(self.gpus) > 1:
            split = tuple(float(c) for c in lay.counts) if lay.ngl else ()
        return replace(s, n_gpu_layers=lay.ngl, n_cpu_moe=lay.n_cpu_moe if lay.ngl else 0,
                       tensor_split=split)

    def breakdown(self, s: Settings, lay: _Layout) -> tuple[DeviceBreakdown, ...]:
        us = self.usages(s, lay)
        out = [DeviceBreakdown(d, u) for d, u in zip(self.gpus, us, strict=False)]
        cpu_usage = us[-1]
        out.append(DeviceBreakdown(self.cpu, cpu_usage))
        return tuple(out)

    def finish(self, s: Settings, lay: _Layout, grid: list[int],
               kv_opts: list[tuple[str, str]]) -> LaunchPlan:
        s = self.settings_for(s, lay)
        devs = self.breakdown(s, lay)
        self.explain(s, lay, grid, kv_opts, devs)
        return LaunchPlan(settings=s, devices=devs, reasons=self.reasons, fits=True,
                          model=self.m, wishes=self.w)

    def infeasible(self, s: Settings, why: str | None) -> LaunchPlan:
        moe = self.p.n_cpu_moe if self.p.n_cpu_moe is not None else (
            self.m.n_layer if self.m.is_moe else 0)
        counts = self.fill(s, self.cap(), moe) if self.gpus else ()
        if self.p.n_gpu_layers is not None and self.gpus and sum(counts) < self.cap():
            counts = tuple(_even_counts(self.cap(), len(self.gpus)))
        lay = _Layout(counts, moe)
        s = self.settings_for(s, lay)
        devs = self.breakdown(s, lay)
        if why is None:
            pinned = self.p.pinned()
            need = sum(d.usage.total for d in devs)
            have = sum(d.device.budget for d in devs
                       if d.device.kind == "cpu" or not d.device.unified)
            what = ""
            if pinned:
                what = "With the pinned " + ", ".join(f"{k}={_show(v)}" for k, v in pinned.items())
                what += ", "
            else:
                what = "Even at the smallest settings, "
            why = (f"{what}{self.m.name} needs {_gib(need)} but this computer has "
                   f"{_gib(have)} to spare ({self.budget_text()}). ")
            if pinned:
                why += "Unpin some settings or choose a smaller quantization."
            else:
                why += "Choose a smaller model or quantization, or close other programs."
        self.reasons.append(why)
        return LaunchPlan(settings=s, devices=devs, reasons=self.reasons, fits=False,
                          model=self.m, wishes=self.w)

    def budget_text(self) -> str:
        parts = [f"{d.name}: {_gib(d.free)} free, {_gib(d.reserve)} kept back"
                 for d in [*self.gpus, self.cpu]]
        return "; ".join(parts)

    def explain(self, s: Settings, lay: _Layout, grid: list[int],
                kv_opts: list[tuple[str, str]], devs: tuple[DeviceBreakdown, ...]) -> None:
        r = self.reasons
        m = self.m
        gpu_names = _join_names([d.name for d in self.gpus])
        train = m.n_ctx_train or grid[-1]
        fixed_ctx = len(grid) == 1
        if not self.gpus:
            if self.w.cpu_only or self.p.n_gpu_layers == 0:
                r.append("Running on the CPU, as asked.")
            else:
                r.append("No GPU that llama.cpp can use was found, so the model runs on the CPU.")
        elif lay.ngl == self.top:
            where = f"the {gpu_names}" if len(self.gpus) == 1 else f"{len(self.gpus)} GPUs"
            if lay.n_cpu_moe:
                r.append(
                    f"All {self.top} layers are on {where}, but the expert tensors of the first "
                    f"{lay.n_cpu_moe} of {m.n_layer} layers stay in system RAM: that keeps "
                    "attention and the other layers on the GPU, which is faster than moving "
                    "whole layers to the CPU.")
            elif s.n_ctx < train and not fixed_ctx:
                r.append(f"Context capped at {s.n_ctx} (the model supports {train}) to keep all "
                         f"{self.top} layers on {where}.")
            else:
                r.append(f"All {self.top} layers fit on {where} with a context of {s.n_ctx}.")
        else:
            n_cpu = self.top - lay.ngl
            need = sum(self.layer_gpu_cost(s, il, lay.n_cpu_moe, self.gpus[-1])
                       for il in range(self.top))
            have = sum(d.budget for d in self.gpus)
            if lay.ngl == 0:
                r.append(f"The {gpu_names} cannot hold even one layer at these settings, so the "
                         "model runs on the CPU.")
            else:
                r.append(
                    f"{lay.ngl} of {self.top} layers on the {gpu_names}, {n_cpu} on the CPU: the "
                    f"layers need {_gib(need)} and the GPU memory available after the margin is "
                    f"{_gib(have)}.")
            if lay.n_cpu_moe and lay.ngl:
                r.append(f"Expert tensors of the first {lay.n_cpu_moe} layers stay in system RAM "
                         "before any whole layer leaves the GPU.")
        if s.cache_type_k in QUANTIZED_KV and not self.p.cache_type_k:
            half = "about half the memory of f16"
            r.append(f"The KV cache is stored as {s.cache_type_k} ({half}) because f16 did not "
                     "fit" + (" with every layer on the GPU." if self.gpus else "."))
        if not fixed_ctx and s.n_ctx < train and (lay.ngl < self.top or not self.gpus):
            r.append(f"Context set to {s.n_ctx} tokens (the model supports {train}): that is what "
                     "fits in the memory that is left.")
        if fixed_ctx and s.n_ctx > train > 0:
            r.append(f"Context {s.n_ctx} is beyond the {train} tokens the model was trained on; "
                     "quality may drop past that.")
        if self.w.context == "fit" and not self.p.n_ctx and s.n_ctx == grid[0] and \
                grid[0] < train:
            r.append(f"Context kept at the floor of {grid[0]} tokens: less would make the model "
                     "forget the conversation too soon.")
        if s.flash_attn == "on" and not self.p.flash_attn:
            off = compute_bytes(m, replace(s, flash_attn="off"))
            r.append(f"Flash attention on: it keeps the compute buffer at "
                     f"{_mib(compute_bytes(m, s))} instead of {_mib(off)}.")
        if not self.p.n_threads:
            r.append(f"{s.n_threads} threads: one per physical performance core (hyper-threads and "
                     "efficiency cores slow generation down).")
        reserve = []
        if self.gpus:
            reserve.append(f"{_gib(self.w.margin)} free on each GPU")
        reserve.append(f"{_gib(self.cpu.reserve)} of RAM for the system and other programs")
        r.append("Keeping " + " and ".join(reserve) + ".")
        if m.context_approximate:
            r.append(f"The {m.architecture} cache layout is estimated; the dry run checks it.")
        pinned = self.p.pinned()
        if pinned:
            r.append("Pinned by you: " + ", ".join(f"{k}={_show(v)}" for k, v in pinned.items())
                     + ".")


def within_budget(devices: Sequence[Device], usages: Sequence[Usage]) -> bool:
    """Every GPU within its budget, and the CPU's RAM too (a unified GPU's use is RAM as well)."""
    gpus = [d for d in devices if d.kind == "gpu"]
    cpu = devices[-1]
    cpu_used = usages[-1].total
    for d, u in zip(gpus, usages, strict=False):
        if u.total > d.budget:
            return False
        if d.unified:
            cpu_used += u.total  # the GPU's memory is RAM: it counts against both
    return cpu_used <= cpu.budget


def _last_true(grid: list[int], pred: Callable[[int], bool]) -> int:
    """The largest grid value for which ``pred`` holds (pred(grid[0]) is known to hold)."""
    lo, hi = 0, len(grid) - 1
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if pred(grid[mid]):
            lo = mid
        else:
            hi = mid - 1
    return grid[lo]


def _even_counts(n: int, parts: int) -> list[int]:
    return [n // parts + (1 if i < n % parts else 0) for i in range(parts)]


def _join_names(names: list[str]) -> str:
    if len(set(names)) == 1 and len(names) > 1:
        return f"{len(names)}× {names[0]}"
    return " + ".join(names) if names else "GPU"


def _gib(n: int) -> str:
    return f"{n / GiB:.1f} GiB"


def _mib(n: int) -> str:
    return f"{n / MiB:.0f} MiB"


def _num(x: float) -> str:
    return str(int(x)) if float(x).is_integer() else f"{x:g}"


def _show(v: object) -> str:
    if isinstance(v, tuple):
        return ",".join(_num(x) for x in v)
    return str(v)
