"""``plan(model, hardware, wishes) -> LaunchPlan``: the search, modelled on llama.cpp's fit.

Order of concessions when the model does not fit (speed first): shrink the context towards the
floor, then store the KV cache as q8_0 (needs flash attention), then keep MoE expert tensors on
the CPU layer by layer, then move whole layers to the CPU back to front. Context first keeps the
context and gives up layers instead, shrinking the context only when even the CPU cannot hold the
rest. Pinned knobs never move; the plan says so when they cannot fit.

The search explains itself with :class:`~app.planner.types.Reason` records; the sentences are
app/planner/wording.py's. How the settings become runner flags is the loading layer's business
(app/loading/flags.py): the planner knows llama.cpp's memory, not the runner's command line.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from app.gguf import ModelInfo
from app.planner import wording
from app.planner.devices import devices_for, left_out_gpus, thread_count
from app.planner.memory import (
    QUANTIZED_KV,
    Correction,
    backend_overhead,
    compute_bytes,
    draft_bytes,
    draft_gpu_bytes,
    gpu_compute_bytes,
    layer_kv_bytes,
    offloaded,
    predict_counts,
    projector_bytes,
)
from app.planner.threads import CpuNow, starting_threads
from app.planner.types import (
    Device,
    DeviceBreakdown,
    PlanDoesNotFitError,
    PlannerError,
    Reason,
    Settings,
    Usage,
    Wishes,
    WorkerDevice,
)

if TYPE_CHECKING:
    from app.hardware import HardwareReport
    from app.hardware.merge import UnusedGpu

log = logging.getLogger(__name__)

CTX_STEP = 256  # llama.cpp pads the context to 256 cells; finer steps buy nothing
# What a plan starts from where the person pinned nothing and nothing was measured
# (app/planner/speed.py): the offload panel tells a measured value from these.
DEFAULT_FLASH_ATTN = "on"
DEFAULT_CACHE_TYPE = "f16"
DEFAULT_UBATCH = 512


@dataclass(frozen=True)
class LaunchPlan:
    """The settings to load with, what each device will hold, and why."""

    settings: Settings
    devices: tuple[DeviceBreakdown, ...]
    reasons: tuple[Reason, ...]
    fits: bool
    model: ModelInfo = field(repr=False, compare=False)
    wishes: Wishes = field(default_factory=Wishes, repr=False, compare=False)
    fallback_steps: tuple[str, ...] = ()
    # Speed settings for the runner to measure beside this load (app/planner/speed.py
    # tune_spec; --tune-speed), "" for none.
    tune: str = ""

    @property
    def gpus(self) -> list[DeviceBreakdown]:
        return [d for d in self.devices if d.device.kind == "gpu"]

    @property
    def cpu(self) -> DeviceBreakdown:
        return self.devices[-1]

    def reason_texts(self) -> list[str]:
        """The reasons as sentences (app/planner/wording.py words them)."""
        return wording.texts(self.reasons)

    def explained(self, *more: Reason) -> LaunchPlan:
        """This plan with ``more`` reasons at the end."""
        return replace(self, reasons=(*self.reasons, *more))

    def ensure_fits(self) -> LaunchPlan:
        if not self.fits:
            raise PlanDoesNotFitError(wording.sentences([t for t in self.reason_texts() if t]))
        return self

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
            "reasons": self.reason_texts(),
            "reason_records": [r.to_json() for r in self.reasons],
            "fallback_steps": list(self.fallback_steps),
            "tune": self.tune or None,
        }


def plan(model: ModelInfo, hardware: HardwareReport, wishes: Wishes | None = None,
         corrections: Mapping[str, Correction] | None = None,
         workers: Sequence[WorkerDevice] = (), cpu: CpuNow | None = None) -> LaunchPlan:
    """Plan a load of ``model`` on ``hardware``; never raises for "does not fit" (see ``fits``).

    A report merged with the runner build's devices (app/hardware/merge.py) plans only for the
    GPUs that build drives, and the reasons say which GPUs it leaves out and why. ``workers``:
    devices other machines lend over RPC, filled like GPUs (llama.cpp puts them first).
    """
    wishes = wishes or Wishes()
    cpu_only = wishes.cpu_only or wishes.pins.n_gpu_layers == 0
    devices = devices_for(hardware, wishes.margin, cpu_only=cpu_only, workers=workers,
                          gpu_budget=wishes.gpu_budget)
    left_out = () if cpu_only else tuple(left_out_gpus(hardware))
    result = plan_for_devices(model, devices, thread_count(hardware), wishes, corrections,
                              left_out=left_out, cpu=cpu)
    used = {b.device.worker for b in result.gpus if b.device.worker and b.usage.layers}
    if workers and {w.endpoint for w in workers} != used:
        # A worker given to llama.cpp is connected to (and held: it serves one client at a
        # time) even when it holds nothing; plan again without the idle ones, so the devices
        # keep the names (RPC0, …) the runner will give them.
        kept = [w for w in workers if w.endpoint in used]
        return plan(model, hardware, wishes, corrections, workers=kept, cpu=cpu)
    return result


def plan_for_devices(model: ModelInfo, devices: Sequence[Device], threads: int,
                     wishes: Wishes, corrections: Mapping[str, Correction] | None = None,
                     *, left_out: Sequence[UnusedGpu] = (), cpu: CpuNow | None = None
                     ) -> LaunchPlan:
    """The search itself, on explicit memory pools (GPUs in device order, then the CPU).

    ``left_out``: the machine's GPUs the runner build cannot drive, for the reasons only.
    """
    return _Search(model, list(devices), threads, wishes, corrections or {}, left_out, cpu).run()


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
                 corrections: Mapping[str, Correction],
                 left_out: Sequence[UnusedGpu] = (), cpu: CpuNow | None = None) -> None:
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
        self.reasons: list[Reason] = []
        self.threads = threads  # one per physical performance core: the most the runner tries
        self.start_threads, self.thread_params = starting_threads(threads, cpu)
        self.left_out = list(left_out)

    # -- settings helpers ------------------------------------------------------------------------

    def base_settings(self) -> Settings:
        p = self.p
        t = self.w.tuned
        n_batch = p.n_batch or max(2048 if self.gpus else 512,
                                   t.n_batch if t and not p.n_ubatch else 0)
        n_ubatch = min(p.n_ubatch or (t.n_ubatch if t else DEFAULT_UBATCH), n_batch)
        threads = p.n_threads or self.start_threads
        fa = p.flash_attn or (t.flash_attn if t else DEFAULT_FLASH_ATTN)
        # A measured KV type only where the person chose neither and it can be used.
        kv = t.cache_type if t and not (p.cache_type_k or p.cache_type_v) and \
            (fa == "on" or t.cache_type not in QUANTIZED_KV) else DEFAULT_CACHE_TYPE
        return Settings(
            n_gpu_layers=0,
            n_ctx=4096,
            n_batch=n_batch,
            n_ubatch=n_ubatch,
            n_threads=threads,
            n_threads_batch=p.n_threads_batch or threads,
            flash_attn=fa,
            cache_type_k=p.cache_type_k or kv,
            cache_type_v=p.cache_type_v or kv,
            n_cpu_moe=p.n_cpu_moe or 0,
            mmap=True if p.mmap is None else p.mmap,
            mlock=bool(p.mlock),
            # A count the user fixed stays; the plan's is where the runner's measurement starts.
            max_threads=0 if p.n_threads else self.threads,
        )

    def kv_options(self, s: Settings) -> list[tuple[str, str]]:
        if self.p.cache_type_k or self.p.cache_type_v:
            return [(s.cache_type_k, s.cache_type_v)]
        opts = [("f16", "f16")]
        if self.w.allow_quantized_kv and s.flash_attn == "on":
            opts.append(("q8_0", "q8_0"))
            if s.cache_type_k == "q8_0":  # measured faster here, and smaller: no f16 then
                opts = opts[1:]
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
        c = gpu_compute_bytes(self.m, s, dev)
        corr = self.corr.get(dev.llama_name or dev.name)
        if corr is not None:
            c = int(c * corr.compute) + corr.compute_extra
        # A projector and a draft model go to the first GPU with the layers (projector_slot):
        # room for them first, so the layers that fit are counted without their space.
        beside = projector_bytes(self.m, s) + draft_gpu_bytes(self.m, s) if g == 0 else 0
        return c + backend_overhead(self.m, s, dev) + beside

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
        if self.w.gpu_budget is not None and any(not d.worker for d in self.gpus):
            # First, so no one reads a plan for a shrunk card as one for the real card.
            self.reasons.append(Reason("gpu_budget", {"budget": self.w.gpu_budget}))
        base = self.base_settings()
        grid = self.ctx_grid()
        if base.cache_type_v in QUANTIZED_KV and base.flash_attn != "on":
            return self.infeasible(
                replace(base, n_ctx=grid[0]),
                Reason("quantized_v_needs_fa", {"cache_type_v": base.cache_type_v,
                                                "flash_attn": base.flash_attn}),
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
        return LaunchPlan(settings=s, devices=devs, reasons=tuple(self.reasons), fits=True,
                          model=self.m, wishes=self.w)

    def infeasible(self, s: Settings, why: Reason | None) -> LaunchPlan:
        moe = self.p.n_cpu_moe if self.p.n_cpu_moe is not None else (
            self.m.n_layer if self.m.is_moe else 0)
        counts = self.fill(s, self.cap(), moe) if self.gpus else ()
        if self.p.n_gpu_layers is not None and self.gpus and sum(counts) < self.cap():
            counts = tuple(_even_counts(self.cap(), len(self.gpus)))
        lay = _Layout(counts, moe)
        s = self.settings_for(s, lay)
        devs = self.breakdown(s, lay)
        if why is None:
            need = sum(d.usage.total for d in devs)
            have = sum(d.device.budget for d in devs
                       if d.device.kind == "cpu" or not d.device.unified)
            why = Reason("does_not_fit", {
                "model": self.m.name, "need": need, "have": have,
                "pinned": _json_pins(self.p.pinned()),
                "devices": [{"name": d.name, "free": d.free, "reserve": d.reserve}
                            for d in [*self.gpus, self.cpu]],
            })
        # A model that does not fit on the CPU might on the GPUs this build leaves out: say so.
        self.reasons += self.left_out_reasons()
        self.reasons.append(why)
        return LaunchPlan(settings=s, devices=devs, reasons=tuple(self.reasons), fits=False,
                          model=self.m, wishes=self.w)

    def left_out_reasons(self) -> list[Reason]:
        code = "gpus_not_driven" if self.gpus else "build_without_gpu"
        return [Reason(code, p) for p in _left_out_groups(self.left_out)]

    def explain(self, s: Settings, lay: _Layout, grid: list[int],
                kv_opts: list[tuple[str, str]], devs: tuple[DeviceBreakdown, ...]) -> None:
        r = self.reasons
        m = self.m
        gpus = [d.name for d in self.gpus]
        train = m.n_ctx_train or grid[-1]
        fixed_ctx = len(grid) == 1
        if not self.gpus:
            if self.w.cpu_only or self.p.n_gpu_layers == 0:
                r.append(Reason("cpu_as_asked"))
            elif self.left_out:
                r += self.left_out_reasons()
            else:
                r.append(Reason("no_usable_gpu"))
        else:
            r += self.left_out_reasons()
            if lay.ngl == self.top:
                if lay.n_cpu_moe:
                    r.append(Reason("all_layers_moe", {"layers": self.top, "gpus": gpus,
                                                       "n_cpu_moe": lay.n_cpu_moe,
                                                       "n_layer": m.n_layer}))
                elif s.n_ctx < train and not fixed_ctx:
                    r.append(Reason("ctx_capped", {"n_ctx": s.n_ctx, "n_ctx_train": train,
                                                   "layers": self.top, "gpus": gpus}))
                else:
                    r.append(Reason("all_layers_fit", {"layers": self.top, "gpus": gpus,
                                                       "n_ctx": s.n_ctx}))
            else:
                need = sum(self.layer_gpu_cost(s, il, lay.n_cpu_moe, self.gpus[-1])
                           for il in range(self.top))
                have = sum(d.budget for d in self.gpus)
                if lay.ngl == 0:
                    r.append(Reason("no_layer_fits", {"gpus": gpus}))
                else:
                    r.append(Reason("partial_offload", {
                        "n_gpu_layers": lay.ngl, "layers": self.top,
                        "n_cpu_layers": self.top - lay.ngl, "gpus": gpus, "need": need,
                        "have": have}))
                if lay.n_cpu_moe and lay.ngl:
                    r.append(Reason("experts_first", {"n_cpu_moe": lay.n_cpu_moe}))
        if lay.ngl and any(d.worker for d in self.gpus):
            r.append(Reason("split_machines", {"parts": split_parts(m.n_layer, lay.counts,
                                                                    self.gpus)}))
        if m.projector is not None:
            on_gpu = lay.ngl > 0 and bool(self.gpus)
            r.append(Reason("projector", {
                "bytes": projector_bytes(m, s), "file": os.path.basename(m.projector.path),
                "where": self.gpus[0].name if on_gpu else None}))
        if m.draft is not None:
            on_gpu = lay.ngl > 0 and bool(self.gpus)
            # On a GPU, what the bar shows there: its token embeddings stay in RAM.
            r.append(Reason("draft", {
                "bytes": draft_gpu_bytes(m, s) if on_gpu else draft_bytes(m, s),
                "file": os.path.basename(m.draft.path),
                "where": self.gpus[0].name if on_gpu else None, "gain": m.draft.gain}))
        tuned_kv = self.w.tuned is not None and self.w.tuned.cache_type == s.cache_type_k
        if s.cache_type_k in QUANTIZED_KV and not self.p.cache_type_k and not tuned_kv:
            r.append(Reason("kv_quantized", {"cache_type": s.cache_type_k,
                                             "on_gpu": bool(self.gpus)}))
        if not fixed_ctx and s.n_ctx < train and (lay.ngl < self.top or not self.gpus):
            r.append(Reason("ctx_fits_memory", {"n_ctx": s.n_ctx, "n_ctx_train": train}))
        if fixed_ctx and s.n_ctx > train > 0:
            r.append(Reason("ctx_beyond_training", {"n_ctx": s.n_ctx, "n_ctx_train": train}))
        if self.w.context == "fit" and not self.p.n_ctx and s.n_ctx == grid[0] and \
                grid[0] < train:
            r.append(Reason("ctx_floor", {"n_ctx": grid[0]}))
        if s.flash_attn == "on" and not self.p.flash_attn:
            on, off = compute_bytes(m, s), compute_bytes(m, replace(s, flash_attn="off"))
            # Only a reason where it saves memory the user can see: with a small context the
            # output phase is the largest either way, and "514 MiB instead of 514 MiB" says
            # nothing.
            if wording.differs_as_shown(on, off):
                r.append(Reason("flash_attn", {"compute": on, "compute_off": off}))
        if not self.p.n_threads:
            r.append(Reason("threads", self.thread_params))
        r.append(Reason("reserve", {"gpu_margin": self.w.margin if self.gpus else None,
                                    "ram_reserve": self.cpu.reserve}))
        if m.context_approximate:
            r.append(Reason("cache_estimated", {"architecture": m.architecture}))
        pinned = self.p.pinned()
        if pinned:
            r.append(Reason("pinned", {"pins": _json_pins(pinned)}))


def split_parts(n_layer: int, counts: Sequence[int],
                gpus: Sequence[Device]) -> list[dict[str, Any]]:
    """Which layers each machine holds, as llama.cpp places them: the first layers that are not
    offloaded stay in this computer's RAM, then each device in order takes its count (the last
    "layer" is the output head, index ``n_layer``)."""
    top = n_layer + 1
    first = top - sum(counts)
    parts: list[dict[str, Any]] = []
    if first > 0:
        parts.append({"machine": "", "device": "RAM", "first": 0, "last": first - 1,
                      "output": False})
    for dev, n in zip(gpus, counts, strict=False):
        if n:
            last = first + n - 1
            parts.append({"machine": dev.worker, "device": dev.name if not dev.worker
                          else dev.llama_name, "first": first, "last": min(last, n_layer - 1),
                          "output": last >= n_layer})
            first += n
    return parts


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


def _json_pins(pinned: Mapping[str, Any]) -> dict[str, Any]:
    return {k: list(v) if isinstance(v, tuple) else v for k, v in pinned.items()}


def _left_out_groups(left_out: Sequence[UnusedGpu]) -> list[dict[str, Any]]:
    """GPUs left out for the same cause and backends, as one reason's params (two RTX 3090s
    without CUDA support are one sentence, not two)."""
    groups: dict[tuple[str, tuple[str, ...]], list[str]] = {}
    for u in left_out:
        groups.setdefault((u.cause, u.backends), []).append(u.name)
    return [{"gpus": names, "backends": list(backends), "cause": cause}
            for (cause, backends), names in groups.items()]
