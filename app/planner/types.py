"""The planner's vocabulary: what the user wishes, what the plan sets, what each device holds."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from typing import Any, Literal

from app.i18n import TextError

GiB = 1 << 30
MiB = 1 << 20

ContextWish = int | Literal["fit", "max"]
Priority = Literal["speed", "context"]


class PlannerError(TextError):
    """A plan could not be made; ``str()`` says what to change.

    ``str()`` returns the message itself when it is an :class:`app.i18n.Text`, so the window
    can translate it (``Exception.__str__`` would copy it into a plain ``str``)."""


class PlanDoesNotFitError(PlannerError):
    """Raised by :meth:`LaunchPlan.ensure_fits` for a plan that exceeds a device's budget."""


@dataclass(frozen=True)
class Reason:
    """One thing a plan explains, as data: ``code`` names it, ``params`` hold its numbers and
    names (JSON values: bytes as ints, device names as strings).

    The search produces these and never words them: app/planner/wording.py turns each into the
    sentence the window and ``hearth plan`` show, and a settings panel can read the numbers
    without parsing a sentence.
    """

    code: str
    params: Mapping[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {"code": self.code, "params": dict(self.params)}


# A plan made from a remote header cannot be dry-run: llama.cpp needs the file. Here, below both
# the Hub's verdicts and the loader, because both add it.
NO_DRY_RUN = Reason("probe_unavailable", {
    "why": "it needs the file itself; this plan is made from the header alone and the dry run "
           "checks it when the model is loaded"})


@dataclass(frozen=True)
class Pins:
    """Knobs the user fixed. None: the planner chooses."""

    n_gpu_layers: int | None = None
    n_ctx: int | None = None
    n_batch: int | None = None
    n_ubatch: int | None = None
    n_threads: int | None = None
    n_threads_batch: int | None = None
    flash_attn: str | None = None  # "on" | "off" | "auto"
    cache_type_k: str | None = None
    cache_type_v: str | None = None
    n_cpu_moe: int | None = None
    tensor_split: tuple[float, ...] | None = None
    mmap: bool | None = None
    mlock: bool | None = None

    def pinned(self) -> dict[str, Any]:
        return {f.name: getattr(self, f.name) for f in fields(self)
                if getattr(self, f.name) is not None}


@dataclass(frozen=True)
class Wishes:
    """What the user wants from the plan.

    ``context``: a number of tokens (kept, layers move around it), "fit" (as much as fits, up to
    the training context, never below ``min_ctx``) or "max" (the training context).

    ``gpu_budget`` (bytes; None: each card as it is): plan every GPU of this computer as a card of
    ``min(total, gpu_budget)`` bytes on which other programs use what they use now, so its free
    memory is at most the budget less their share, and the margin is kept within it. It lets a
    big card test partial offload as if it were an 8 GB or 24 GB one. RPC workers' devices keep
    their real size.
    """

    context: ContextWish = "fit"
    priority: Priority = "speed"
    pins: Pins = field(default_factory=Pins)
    margin: int = GiB  # free memory left on every GPU (llama.cpp's fit uses 1 GiB)
    min_ctx: int = 4096  # context floor for "fit"
    allow_quantized_kv: bool = True
    cpu_only: bool = False
    gpu_budget: int | None = None
    # What this computer measured fastest for the model (app/planner/speed.py): where the
    # person pinned nothing, the plan starts from it instead of the defaults.
    tuned: Tuned | None = None


@dataclass(frozen=True)
class Tuned:
    """Speed settings a load measured fastest on this computer (runner/speed_trial.py)."""

    flash_attn: str
    cache_type: str
    n_ubatch: int
    n_batch: int
    gain: float  # a standard turn's time with the defaults over with these


@dataclass(frozen=True)
class Settings:
    """Load settings: exactly what the runner's ``serve``/``probe`` flags express."""

    n_gpu_layers: int
    n_ctx: int
    n_batch: int = 512
    n_ubatch: int = 512
    n_threads: int = 1
    n_threads_batch: int = 1
    flash_attn: str = "on"
    cache_type_k: str = "f16"
    cache_type_v: str = "f16"
    n_cpu_moe: int = 0  # the first N layers keep their expert tensors on the CPU
    tensor_split: tuple[float, ...] = ()  # layers per GPU, in device order (several GPUs)
    mmap: bool = True
    mlock: bool = False
    parallel: int = 1
    # >0: the runner measures which count up to this is fastest, starting at n_threads
    # (--adapt-threads); 0: n_threads is fixed (the user pinned it).
    max_threads: int = 0

    def to_json(self) -> dict[str, Any]:
        return {
            "n_gpu_layers": self.n_gpu_layers,
            "n_ctx": self.n_ctx,
            "n_batch": self.n_batch,
            "n_ubatch": self.n_ubatch,
            "n_threads": self.n_threads,
            "n_threads_batch": self.n_threads_batch,
            "flash_attn": self.flash_attn,
            "cache_type_k": self.cache_type_k,
            "cache_type_v": self.cache_type_v,
            "n_cpu_moe": self.n_cpu_moe,
            "tensor_split": list(self.tensor_split),
            "mmap": self.mmap,
            "mlock": self.mlock,
            "max_threads": self.max_threads,
        }


@dataclass(frozen=True)
class Device:
    """A memory pool the plan fills: one GPU, or the CPU's RAM (always last in a list)."""

    name: str
    kind: Literal["gpu", "cpu"]
    backend: str  # cuda, rocm, metal, vulkan, cpu
    index: int
    total: int
    free: int
    used_by_others: int
    reserve: int  # kept free: the GPU margin, or the RAM headroom
    unified: bool = False  # a GPU whose memory is system RAM (Apple Silicon, iGPU)
    llama_name: str = ""  # the ggml device name (CUDA0, Metal, CPU): matches probe output
    worker: str = ""  # HOST:PORT of the RPC worker that lends it; "" for this computer's own

    @property
    def budget(self) -> int:
        return max(0, self.free - self.reserve)


@dataclass(frozen=True)
class WorkerDevice:
    """A device another machine lends over llama.cpp's RPC (``hearth-runner rpc-check``)."""

    endpoint: str  # HOST:PORT
    index: int  # its number on that worker
    free: int
    total: int


@dataclass(frozen=True)
class Usage:
    """Predicted bytes on one device."""

    weights: int = 0
    kv: int = 0
    compute: int = 0
    layers: int = 0  # repeating layers (and the output layer) placed here
    # The GPU backend's own memory beyond llama.cpp's buffers (CUDA's context, cuBLAS, pools):
    # not in any buffer line, so never compared with the dry run.
    overhead: int = 0
    # A vision projector's weights and encoder buffer (app/gguf/projector.py): on the first GPU
    # when the layers use one, else in RAM.
    projector: int = 0
    # A draft model for speculative decoding (weights, its KV cache and compute): with the
    # projector's device.
    draft: int = 0

    @property
    def total(self) -> int:
        return self.weights + self.kv + self.compute + self.overhead + self.projector + \
            self.draft


@dataclass(frozen=True)
class DeviceBreakdown:
    """One device of a plan: capacity and predicted use."""

    device: Device
    usage: Usage

    @property
    def fits(self) -> bool:
        return self.usage.total <= self.device.budget

    def to_json(self) -> dict[str, Any]:
        d = self.device
        return {
            "name": d.name,
            "kind": d.kind,
            "backend": d.backend,
            "llama_name": d.llama_name,
            "worker": d.worker,
            "total": d.total,
            "free": d.free,
            "used_by_others": d.used_by_others,
            "reserve": d.reserve,
            "budget": d.budget,
            "layers": self.usage.layers,
            "predicted": {
                "weights": self.usage.weights,
                "kv": self.usage.kv,
                "compute": self.usage.compute,
                "overhead": self.usage.overhead,
                "projector": self.usage.projector,
                "draft": self.usage.draft,
                "total": self.usage.total,
            },
        }
