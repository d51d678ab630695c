"""The fit verdict for a model on this computer, before it is downloaded (no Qt).

One word and one number for a list row ("Fits on the GPU · 32k context"), the plan's reasons
for the tooltip. It is the planner's own plan for the header, so the browser never promises
what the loader would then refuse; only the dry run is missing (it needs the file), and the
reasons say so.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from typing import TYPE_CHECKING

from app.i18n import T_
from app.planner import wording
from app.planner.memory import offloaded
from app.planner.plan import LaunchPlan, plan
from app.planner.types import NO_DRY_RUN, Wishes

if TYPE_CHECKING:
    from app.gguf import ModelInfo
    from app.hardware import HardwareReport



class Fit(Enum):
    """How a model would run here, best first."""

    GPU = "gpu"  # every layer on the GPU(s)
    PARTIAL = "partial"  # some layers on the GPU, the rest on the CPU
    CPU = "cpu"  # on the CPU only (no usable GPU, or none of the layers fit on it)
    NO_FIT = "no_fit"  # not even on the CPU

    @property
    def rank(self) -> int:
        return list(Fit).index(self)


@dataclass(frozen=True)
class Verdict:
    """What the planner says about one model on this machine."""

    fit: Fit
    gpu_layers: int  # layers (the output layer counts as one) on the GPUs
    layers: int  # of how many
    n_ctx: int  # the context it would load with (0 when it does not fit)
    reasons: tuple[str, ...]
    plan: LaunchPlan

    @property
    def fits(self) -> bool:
        return self.fit is not Fit.NO_FIT

    def label(self) -> str:
        """A short phrase for a list row."""
        ctx = _tokens(self.n_ctx)
        if self.fit is Fit.GPU:
            return T_("Fits on the GPU · {context} context", context=ctx)
        if self.fit is Fit.PARTIAL:
            return T_("Partial offload: {gpu_layers} of {layers} layers on the GPU · {context} "
                      "context", gpu_layers=self.gpu_layers, layers=self.layers, context=ctx)
        if self.fit is Fit.CPU:
            return T_("CPU only · {context} context", context=ctx)
        return T_("Will not fit on this computer")

    def tooltip(self) -> str:
        return wording.lines([T_("• {reason}", reason=r) for r in self.reasons if r])


def verdict_for(model: ModelInfo, hardware: HardwareReport, wishes: Wishes | None = None,
                *, from_header: bool = True) -> Verdict:
    """Plan ``model`` for ``hardware`` and sum the plan up.

    ``hardware`` should be merged with what the runner build drives (the loader's report), so a
    GPU the runner cannot use is not counted. ``from_header``: the plan was made without the file
    (no dry run possible), which the reasons then say.
    """
    p = plan(model, hardware, wishes)
    if from_header:
        p = p.explained(NO_DRY_RUN)
    return summarize(p)


def summarize(p: LaunchPlan) -> Verdict:
    """The verdict a plan amounts to."""
    layers = p.model.n_layer + 1
    gpu_layers = offloaded(p.model, p.settings) if p.gpus else 0
    if not p.fits:
        fit = Fit.NO_FIT
    elif gpu_layers >= layers:
        fit = Fit.GPU
    elif gpu_layers > 0:
        fit = Fit.PARTIAL
    else:
        fit = Fit.CPU
    return Verdict(fit, gpu_layers, layers, p.settings.n_ctx if p.fits else 0,
                   tuple(p.reason_texts()), p)


def _tokens(n: int) -> str:
    if n >= 1024 and n % 1024 == 0:
        return T_("{thousands}k", thousands=n // 1024)
    return T_("{tokens:,}", tokens=n)
