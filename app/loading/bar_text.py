"""What a memory bar says in words, and where its measured mark stands: pure functions of a
:class:`~app.loading.tuning.DeviceBar`, so app/ui/memory_bar.py only lays them out.

The header is the model's share of the device, which depends on the settings alone: the same
settings on the same machine read the same at every open. What other programs use is read again
at each open (free RAM changes by gigabytes as programs run), so it is a line of its own that
says "now", never added into the header's figure.
"""

from __future__ import annotations

from app.i18n import T_
from app.loading.tuning import DeviceBar, Measured
from app.planner import wording


def header(bar: DeviceBar, *, gpus: bool) -> str:
    """"NVIDIA GeForce RTX 3090 · 17 layers · the model needs 11.9 GiB of 24.0 GiB".

    ``gpus``: whether the plan's devices include a GPU. Only then does a count of layers in RAM
    say anything (how the layers are split); on a machine without one every layer is in RAM,
    and "19 layers" there reads as 19 layers offloaded to a GPU it does not have.
    """
    where = T_("System RAM") if bar.kind == "cpu" else bar.name
    share = (T_("the model needs {need} of {capacity}", need=wording.size(bar.need),
                capacity=wording.gib(bar.capacity)) if bar.need else
             T_("none of the model; {capacity} in all", capacity=wording.gib(bar.capacity)))
    if bar.layers and (bar.kind == "gpu" or gpus):
        return T_("{device} · {layers} · {share}", device=where,
                  layers=T_("%n layer(s)", None, bar.layers), share=share)
    return T_("{device} · {share}", device=where, share=share)


def others_now(bar: DeviceBar) -> int:
    """What other programs used when the device was last read (the bar's leftmost part)."""
    return sum(s.bytes for s in bar.segments if s.kind == "others")


def free_now(bar: DeviceBar) -> str:
    """"Other programs use 4.3 GiB now; 11.1 GiB is free." As last read: RAM at each open of
    the panel, a GPU's memory when the hardware was detected."""
    others = others_now(bar)
    free = max(0, bar.capacity - others)
    return T_("Other programs use {others} now; {free} is free.", others=wording.size(others),
              free=wording.size(free))


def measured_bytes(bar: DeviceBar, measured: Measured) -> int:
    """The bytes a load measured on this device. The loader's record has no weights (they come
    from the file and are what the plan predicted): the bar's own weights stand in for them, so
    the mark is not drawn a whole model's weights to the left of where the load ended."""
    weights = measured.weights
    if weights is None:
        weights = sum(s.bytes for s in bar.segments if s.kind == "weights")
    return weights + measured.kv + measured.compute


def measured_mark(bar: DeviceBar, measured: Measured) -> int:
    """Where the measured mark stands, in bytes from the bar's left end (after what other
    programs use, as the plan's parts are drawn)."""
    return others_now(bar) + measured_bytes(bar, measured)
