"""The offload settings panel's logic, without Qt: the user's pins as JSON, the key they are saved
under, the plan for a set of pins, and what the panel draws and says about it.

The panel recomputes a plan on every move of a control, so :func:`recompute` is the planner
*without* the dry run (a few milliseconds on a real model's header); the dry run confirms the
plan when the user applies it, as every load does (app/loading/prepare.py). Everything the panel
shows is derived here from the plan as plain data: one :class:`DeviceBar` per device, one
:class:`FieldState` per setting (the planner's choice or the user's pin), and the reasons worded
by app/planner/wording.py, so the widgets only lay things out.
"""

from __future__ import annotations

import hashlib
import logging
import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from app.gguf import ModelInfo
from app.i18n import T_, Text
from app.planner import wording
from app.planner.devices import choose_gpus, devices_for
from app.planner.memory import KV_TYPES, Correction, predict
from app.planner.plan import (
    DEFAULT_CACHE_TYPE,
    DEFAULT_FLASH_ATTN,
    DEFAULT_UBATCH,
    LaunchPlan,
    plan,
)
from app.planner.types import Device, DeviceBreakdown, MiB, Pins, Reason, Usage, Wishes

if TYPE_CHECKING:
    from app.hardware import HardwareReport

log = logging.getLogger(__name__)

SCHEMA = 1
FIELDS: tuple[str, ...] = tuple(f.name for f in fields(Pins))
FLASH_ATTN = ("on", "off", "auto")
# Most useful first: f16 is llama.cpp's default, q8_0 halves it at a small cost in quality.
CACHE_TYPES = ("f16", "q8_0", "bf16", "q5_1", "q5_0", "q4_1", "q4_0", "f32")
# The reasons prepare_load adds after the search (they are about the machine and the measured
# corrections, not the pins) and a recomputed plan keeps.
NOTE_CODES = frozenset({"runner_unknown", "stored_corrections", "speed_tuned", "speed_left_out",
                        "speed_defaults", "speed_unmeasured"})
# The reasons the search ends with when a plan does not fit.
_NOT_FIT_CODES = ("does_not_fit", "quantized_v_needs_fa")

_INT_FIELDS = {"n_gpu_layers": 0, "n_ctx": 1, "n_batch": 1, "n_ubatch": 1, "n_threads": 1,
               "n_threads_batch": 1, "n_cpu_moe": 0}  # name -> smallest valid value


# -- pins as JSON ---------------------------------------------------------------------------------


def pins_to_json(pins: Pins) -> dict[str, Any]:
    """What the store keeps for a model on a machine: only the pinned fields, and a schema."""
    values = {k: list(v) if isinstance(v, tuple) else v for k, v in pins.pinned().items()}
    return {"schema": SCHEMA, "pins": values}


def pins_from_json(data: Mapping[str, Any] | None) -> Pins:
    """The pins of a stored object; a field that is not valid is dropped (and logged), never an
    error: a damaged or newer entry must not lock the user out of the model."""
    if not data:
        return Pins()
    raw = data.get("pins")
    if not isinstance(raw, Mapping):
        log.warning("ignoring stored pins: not an object")
        return Pins()
    out: dict[str, Any] = {}
    for name, value in raw.items():
        ok = _valid(name, value)
        if ok is None:
            log.warning("ignoring stored pin %s=%r", name, value)
            continue
        out[name] = ok
    return Pins(**out)


def _valid(name: str, value: Any) -> Any:
    """``value`` as the Pins field ``name`` takes it, or None when it is not one."""
    if name in _INT_FIELDS:
        if isinstance(value, bool) or not isinstance(value, int) or value < _INT_FIELDS[name]:
            return None
        return value
    if name == "flash_attn":
        return value if value in FLASH_ATTN else None
    if name in ("cache_type_k", "cache_type_v"):
        return value if value in KV_TYPES else None
    if name in ("mmap", "mlock"):
        return value if isinstance(value, bool) else None
    if name == "tensor_split":
        if not isinstance(value, list | tuple) or not value:
            return None
        if any(isinstance(x, bool) or not isinstance(x, int | float) or x < 0 for x in value):
            return None
        return tuple(float(x) for x in value) if sum(value) > 0 else None
    return None  # a field this version does not know


def merge_pins(base: Pins, over: Pins) -> Pins:
    """``over``'s pinned fields on top of ``base``'s (the saved pins over the app's wishes)."""
    return replace(base, **over.pinned())


def with_pin(pins: Pins, name: str, value: Any) -> Pins:
    """``pins`` with ``name`` pinned to ``value`` (None: back to automatic)."""
    return replace(pins, **{name: value})


# -- where the pins are saved ---------------------------------------------------------------------


def machine_key(report: HardwareReport) -> str:
    """Which machine pins belong to: its GPUs (name and memory), CPU and RAM, as a short hash.

    Pins that fit a 24 GiB GPU do not fit an 8 GiB one, so they are kept per machine. GPUs only
    the runner reported (``source == "runner"``) are left out: whether the runner was asked yet
    must not change the key. Totals are rounded so a driver reporting a few bytes more keeps it.
    """
    gpus = sorted(f"{g.name}:{g.total // MiB}" for g in report.gpus if g.source != "runner")
    ram = round(report.memory.total / (1 << 30))
    text = "|".join([report.cpu.model, f"ram={ram}", *gpus])
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def model_settings_key(path: str | os.PathLike[str]) -> str:
    """The model part of the key: file name and size (not the modification time the planner's
    measurements use: a model copied or downloaded again keeps the user's pins). Reads the disk."""
    p = Path(path)
    try:
        return f"{p.name}:{p.stat().st_size}"
    except OSError:
        return p.name


def settings_key(model_key: str, machine: str) -> str:
    """The ModelSettingsStore key of a model's pins on one machine."""
    return f"offload|{model_key}|{machine}"


# -- the plan for a set of pins -------------------------------------------------------------------


def recompute(model: ModelInfo, hardware: HardwareReport, pins: Pins,
              corrections: Mapping[str, Correction] | None = None, *,
              wishes: Wishes | None = None, notes: Sequence[Reason] = ()) -> LaunchPlan:
    """The plan for ``pins`` (on top of ``wishes``' own pins), without the dry run.

    ``hardware``: the report merged with the runner build's devices, as the loader plans with;
    ``corrections``: what earlier loads measured; ``notes``: reasons to keep at the end.
    """
    base = wishes or Wishes()
    return plan(model, hardware, replace(base, pins=merge_pins(base.pins, pins)),
                corrections).explained(*notes)


@dataclass(frozen=True)
class TuningContext:
    """One model opened for tuning: everything a recompute needs, read once off the GUI thread."""

    path: str
    model: ModelInfo = field(repr=False)
    hardware: HardwareReport = field(repr=False)
    corrections: Mapping[str, Correction] = field(default_factory=dict)
    notes: tuple[Reason, ...] = ()
    wishes: Wishes = field(default_factory=Wishes)
    key: str = ""  # the store key of its pins (settings_key)
    saved: Pins = field(default_factory=Pins)  # the pins saved for it on this machine

    def plan(self, pins: Pins) -> LaunchPlan:
        return recompute(self.model, self.hardware, pins, self.corrections, wishes=self.wishes,
                         notes=self.notes)

    def bars(self, plan: LaunchPlan, pins: Pins) -> list[DeviceBar]:
        """The memory bars of ``plan``, made for ``pins`` on this machine."""
        return device_bars(plan, self.devices, pins, self.corrections)

    @property
    def gpu_names(self) -> list[str]:
        return gpu_names(self.hardware)

    @property
    def devices(self) -> list[Device]:
        """Every device a plan may use here: a plan for the CPU alone still shows the GPUs."""
        return devices_for(self.hardware, self.wishes.margin, gpu_budget=self.wishes.gpu_budget)

    @property
    def fields(self) -> tuple[str, ...]:
        return shown_fields(self.model, self.hardware)


def notes_of(plan: LaunchPlan) -> tuple[Reason, ...]:
    """The reasons prepare_load added to a plan that a recomputed plan should keep."""
    return tuple(r for r in plan.reasons if r.code in NOTE_CODES)


def gpu_names(hardware: HardwareReport) -> list[str]:
    """The GPUs the plans use, in device order (what the runner build drives)."""
    return [g.name for g in choose_gpus(hardware)]


def shown_fields(model: ModelInfo, hardware: HardwareReport) -> tuple[str, ...]:
    """The settings that mean something for this model here: GPU layers only with a GPU, the
    split only with several, experts on the CPU only for a mixture-of-experts model."""
    n_gpus = len(choose_gpus(hardware))
    out = []
    for name in FIELDS:
        if name == "n_gpu_layers" and n_gpus == 0:
            continue
        if name == "tensor_split" and n_gpus < 2:
            continue
        if name == "n_cpu_moe" and (n_gpus == 0 or not model.is_moe):
            continue
        out.append(name)
    return tuple(out)


# -- what each field shows ------------------------------------------------------------------------


@dataclass(frozen=True)
class FieldState:
    """One setting as the panel shows it: its value in the plan, and who chose it."""

    name: str
    value: Any
    pinned: bool
    measured: bool = False  # automatic, from what this computer measured fastest


def field_state(plan: LaunchPlan, pins: Pins, name: str) -> FieldState:
    """``name``'s value: the pin when pinned, else what the plan chose."""
    pinned = getattr(pins, name)
    if pinned is not None:
        return FieldState(name, pinned, True)
    value = getattr(plan.settings, name)
    if name == "tensor_split" and not value:
        # One GPU, or none on the GPUs: llama.cpp's default is an even split.
        value = tuple(1.0 for _ in plan.gpus)
    return FieldState(name, value, False, _measured(plan, name, value))


def _measured(plan: LaunchPlan, name: str, value: Any) -> bool:
    """Whether the plan took ``name``'s value from the speed trial, where it is not the
    default it would otherwise have (app/planner/speed.py)."""
    t = plan.wishes.tuned
    if t is None:
        return False
    ours = {"flash_attn": (t.flash_attn, DEFAULT_FLASH_ATTN),
            "cache_type_k": (t.cache_type, DEFAULT_CACHE_TYPE),
            "cache_type_v": (t.cache_type, DEFAULT_CACHE_TYPE),
            "n_ubatch": (t.n_ubatch, DEFAULT_UBATCH)}.get(name)
    return ours is not None and value == ours[0] != ours[1]


def field_states(plan: LaunchPlan, pins: Pins) -> dict[str, FieldState]:
    return {name: field_state(plan, pins, name) for name in FIELDS}


def blamed_fields(plan: LaunchPlan) -> frozenset[str]:
    """The pinned settings a plan that does not fit names as the cause (shown in red)."""
    if plan.fits:
        return frozenset()
    why = _not_fit_reason(plan)
    if why is None:
        return frozenset()
    if why.code == "quantized_v_needs_fa":
        return frozenset({"flash_attn", "cache_type_v"})
    return frozenset(str(k) for k in (why.params.get("pinned") or {}))


def _not_fit_reason(plan: LaunchPlan) -> Reason | None:
    return next((r for r in reversed(plan.reasons) if r.code in _NOT_FIT_CODES), None)


def not_fit_text(plan: LaunchPlan) -> str | None:
    """Why the settings will not fit, in the planner's words; None when they fit."""
    if plan.fits:
        return None
    why = _not_fit_reason(plan)
    if why is None:
        return T_("These settings do not fit in this computer's memory.")
    return wording.text(why)


# -- the memory bars ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Segment:
    """One coloured part of a bar: ``kind`` picks the colour, ``label`` names it."""

    kind: str  # others | weights | kv | compute | overhead | projector | draft | shared
    label: str
    bytes: int


SEGMENT_LABELS: dict[str, str] = {
    "others": T_("Used by other apps"),
    "weights": T_("Weights"),
    "kv": T_("KV cache"),
    "compute": T_("Compute buffers"),
    "overhead": T_("CUDA's own (context, cuBLAS)"),
    "projector": T_("Vision projector"),
    "draft": T_("Draft model"),
    "shared": T_("GPU (shared memory)"),
    "reserve": T_("Kept free"),
}


@dataclass(frozen=True)
class DeviceBar:
    """One device's bar: what is in use before the load, the plan's parts, the part kept free
    (drawn at the right end of the capacity), and whether the plan's parts fit in between."""

    name: str
    llama_name: str  # CPU, CUDA0, Metal: how the runner's measurements name the device
    kind: str  # gpu | cpu
    capacity: int
    segments: tuple[Segment, ...]  # from the left: others, then the plan's parts
    reserve: int
    need: int  # the plan's parts
    budget: int  # free memory after the reserve
    layers: int
    fits: bool

    @property
    def over(self) -> int:
        return max(0, self.need - self.budget)

    @property
    def used(self) -> int:
        """Everything in use with the plan loaded (other apps included)."""
        return sum(s.bytes for s in self.segments)

    def detail(self) -> str:
        """The plan's parts in numbers; when they do not fit, by how much."""
        parts: list[str] = [T_("{part} {size}", part=s.label, size=_size(s.bytes))
                            for s in self.segments if s.kind != "others" and s.bytes]
        text = wording.joined(parts) if parts else T_("Nothing of the model")
        if not self.fits:
            return T_("Does not fit: needs {need}, {budget} available after keeping {reserve} "
                      "free ({parts}).", need=wording.gib(self.need),
                      budget=wording.gib(self.budget), reserve=wording.gib(self.reserve),
                      parts=text)
        return T_("{parts}; {reserve} kept free.", parts=text, reserve=wording.gib(self.reserve))


def pinned_breakdown(plan: LaunchPlan, pins: Pins,
                     corrections: Mapping[str, Correction] | None = None) -> list[DeviceBreakdown]:
    """What each device would hold with ``plan``'s settings and the user's layout pins.

    A plan that fits is shown as planned. One that does not fit has no layout the planner
    chose; its pinned GPU layers, split and experts are then placed the way llama.cpp places
    them from those flags, so the bar shows which device overflows (every layer pinned to one
    GPU shows that GPU in red, not an even split that would fit).
    """
    if plan.fits:
        return list(plan.devices)
    layout = {k: v for k, v in pins.pinned().items()
              if k in ("n_gpu_layers", "tensor_split", "n_cpu_moe")}
    if not layout:
        return list(plan.devices)
    s = replace(plan.settings, **layout)
    devices = [b.device for b in plan.devices]
    return [DeviceBreakdown(d, u)
            for d, u in zip(devices, predict(plan.model, s, devices, corrections), strict=True)]


def device_bars(plan: LaunchPlan, devices: Sequence[Device] = (), pins: Pins | None = None,
                corrections: Mapping[str, Correction] | None = None) -> list[DeviceBar]:
    """A bar per device of ``plan``, GPUs first, the CPU's RAM last.

    ``devices``: all the devices a plan may use (TuningContext.devices); those this plan leaves
    out (every layer pinned to the CPU) get a bar with nothing of the model on it. ``pins``: the
    user's, for a plan that does not fit (see :func:`pinned_breakdown`).
    """
    breakdown = pinned_breakdown(plan, pins or Pins(), corrections)
    shared = sum(b.usage.total for b in breakdown
                 if b.device.kind == "gpu" and b.device.unified)
    planned = {(b.device.kind, b.device.llama_name or b.device.name): (b.device, b.usage)
               for b in breakdown}
    order = [(d.kind, d.llama_name or d.name) for d in devices] or list(planned)
    order += [k for k in planned if k not in order]
    spare = {(d.kind, d.llama_name or d.name): (d, Usage()) for d in devices}
    out: list[DeviceBar] = []
    for key in order:
        d, u = planned.get(key) or spare[key]
        segs = [Segment("others", SEGMENT_LABELS["others"], max(0, d.total - d.free)),
                Segment("weights", SEGMENT_LABELS["weights"], u.weights),
                Segment("kv", SEGMENT_LABELS["kv"], u.kv),
                Segment("compute", SEGMENT_LABELS["compute"], u.compute)]
        if u.overhead:
            segs.append(Segment("overhead", SEGMENT_LABELS["overhead"], u.overhead))
        if u.projector:
            segs.append(Segment("projector", SEGMENT_LABELS["projector"], u.projector))
        if u.draft:
            segs.append(Segment("draft", SEGMENT_LABELS["draft"], u.draft))
        need = u.total
        if d.kind == "cpu" and shared:
            # A GPU whose memory is RAM (Apple Silicon, an iGPU) counts against both.
            segs.append(Segment("shared", SEGMENT_LABELS["shared"], shared))
            need += shared
        out.append(DeviceBar(
            name=d.name, llama_name=d.llama_name or d.name, kind=d.kind, capacity=d.total,
            segments=tuple(segs), reserve=min(d.reserve, d.free), need=need, budget=d.budget,
            layers=u.layers, fits=need <= d.budget))
    return out


# -- what a load measured -------------------------------------------------------------------------


@dataclass(frozen=True)
class Measured:
    """What llama.cpp allocated on one device (``weights`` None when the source did not say)."""

    device: str
    kv: int
    compute: int
    weights: int | None = None

    @property
    def total(self) -> int:
        return (self.weights or 0) + self.kv + self.compute


def measured_by_device(entries: Iterable[Any]) -> dict[str, Measured]:
    """The runner's ``/runner/status`` ``memory`` entries (dicts with device, weights, kv,
    compute) or the loader's recorded measurements (``Measurement``: device, measured_kv,
    measured_compute), by device name."""
    out: dict[str, Measured] = {}
    for e in entries:
        if isinstance(e, Mapping):
            name = str(e.get("device", ""))
            w = e.get("weights")
            m = Measured(name, int(e.get("kv", 0) or 0), int(e.get("compute", 0) or 0),
                         None if w is None else int(w))
        else:
            name = str(getattr(e, "device", ""))
            m = Measured(name, int(getattr(e, "measured_kv", 0)),
                         int(getattr(e, "measured_compute", 0)))
        if name:
            out[name] = m
    return out


def measured_text(bar: DeviceBar, measured: Measured) -> str:
    """"Measured after load: KV cache 0.5 GiB (predicted 0.5 GiB), ..." for one device."""
    predicted = {s.kind: s.bytes for s in bar.segments}
    pairs = [("weights", T_("Weights"), measured.weights), ("kv", T_("KV cache"), measured.kv),
             ("compute", T_("Compute buffers"), measured.compute)]
    parts: list[str] = [T_("{part} {size} (predicted {predicted})", part=label, size=_size(value),
                           predicted=_size(predicted.get(kind, 0)))
                        for kind, label, value in pairs if value is not None]
    return T_("Measured after load: {parts}.", parts=wording.joined(parts))


def _size(n: int) -> Text:
    # Tiny models have buffers of a few MiB: "0.0 GiB" would say nothing.
    return wording.gib(n) if n >= 1 << 30 else wording.mib(n)
