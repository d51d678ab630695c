"""The one place where a plan's reasons become sentences.

The search, the fallback ladder, the dry run and the load preparation explain themselves with
:class:`~app.planner.types.Reason` records (a code and its numbers); this module words them. The
window, ``hearth plan`` and the ladder's status lines all show what :func:`text` returns, so a
change of wording is one edit here, and the numbers stay available as data for a settings panel.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from app.planner.types import GiB, MiB, Reason

log = logging.getLogger(__name__)

Params = Mapping[str, Any]


def text(reason: Reason) -> str:
    """The sentence for one reason."""
    word = _WORDING.get(reason.code)
    if word is None:  # a code without wording is a bug, but the user still gets the gist
        log.error("no wording for plan reason %r", reason.code)
        return f"{reason.code}: {dict(reason.params)}"
    return word(reason.params)


def texts(reasons: Iterable[Reason]) -> list[str]:
    """The sentences for ``reasons``, in order."""
    return [text(r) for r in reasons]


def known_codes() -> frozenset[str]:
    return frozenset(_WORDING)


# -- small formatters -----------------------------------------------------------------------------


def gib(n: int) -> str:
    return f"{n / GiB:.1f} GiB"


def mib(n: int) -> str:
    return f"{n / MiB:.0f} MiB"


def size(n: int) -> str:
    """GiB, or MiB below one GiB: a tiny model's buffers of a few MiB would read "0.0 GiB"."""
    return gib(n) if n >= GiB else mib(n)


def differs_as_shown(a: int, b: int) -> bool:
    """Whether ``a`` and ``b`` read differently in MiB: two figures a sentence sets against
    each other must not read the same."""
    return mib(a) != mib(b)


def num(x: float) -> str:
    return str(int(x)) if float(x).is_integer() else f"{x:g}"


def show(v: object) -> str:
    """A pinned value as the user typed it (a split as ``1,2``)."""
    if isinstance(v, list | tuple):
        return ",".join(num(x) for x in v)
    return str(v)


def join_names(names: Sequence[str]) -> str:
    """``["A", "A"]`` -> "2× A"; ``["A", "B"]`` -> "A + B"."""
    if len(set(names)) == 1 and len(names) > 1:
        return f"{len(names)}× {names[0]}"
    return " + ".join(names) if names else "GPU"


def _where(gpus: Sequence[str]) -> str:
    if len(gpus) == 1:
        return f"the {join_names(gpus)}"
    # A worker's device is named "device N of HOST:PORT": it may be a CPU, so not "GPUs".
    return f"{len(gpus)} " + ("devices" if any(" of " in g for g in gpus) else "GPUs")


def _backends(p: Params) -> str:
    return " or ".join(str(b).upper() for b in p.get("backends", ())) or "GPU"


def _pins(pins: Mapping[str, Any]) -> str:
    return ", ".join(f"{k}={show(v)}" for k, v in pins.items())


def _corrections(p: Params, digits: int) -> str:
    parts = [f"{dev}: KV ×{c['kv']:.{digits}f}, compute ×{c['compute']:.{digits}f}"
             for dev, c in p.get("corrections", {}).items()]
    return "; ".join(parts) or "no change"


# -- the search -----------------------------------------------------------------------------------


def _build_without_gpu(p: Params) -> str:
    names = join_names(p["gpus"])
    if p["cause"] == "not_seen":
        return (f"The runner does not see the {names} (is the {_backends(p)} driver loaded?): "
                "running on the CPU.")
    return (f"This runner build has no {_backends(p)} support: running on the CPU. A "
            f"{_backends(p)} build of the runner would use the {names}.")


def _gpus_not_driven(p: Params) -> str:
    names = join_names(p["gpus"])
    verb = "is" if len(p["gpus"]) == 1 else "are"
    if p["cause"] == "not_seen":
        return (f"The {names} {verb} not used: the runner does not see "
                f"{'it' if verb == 'is' else 'them'} (is the {_backends(p)} driver loaded?).")
    return f"The {names} {verb} not used: this runner build has no {_backends(p)} support."


def _all_layers_moe(p: Params) -> str:
    return (f"All {p['layers']} layers are on {_where(p['gpus'])}, but the expert tensors of the "
            f"first {p['n_cpu_moe']} of {p['n_layer']} layers stay in system RAM: that keeps "
            "attention and the other layers on the GPU, which is faster than moving whole "
            "layers to the CPU.")


def _partial(p: Params) -> str:
    return (f"{p['n_gpu_layers']} of {p['layers']} layers on the {join_names(p['gpus'])}, "
            f"{p['n_cpu_layers']} on the CPU: the layers need {gib(p['need'])} and the GPU memory "
            f"available after the margin is {gib(p['have'])}.")


def _kv_quantized(p: Params) -> str:
    where = " with every layer on the GPU." if p["on_gpu"] else "."
    return (f"The KV cache is stored as {p['cache_type']} (about half the memory of f16) because "
            f"f16 did not fit{where}")


def _cores(n: float) -> str:
    return f"{n:g} core{'' if n == 1 else 's'}"


def _threads(p: Mapping[str, Any]) -> str:
    n, most = p["n_threads"], p.get("max_threads") or p["n_threads"]
    threads = f"{n} thread{'s' if n != 1 else ''}"
    rem = p.get("remembered")
    if rem:
        speeds = ", ".join(f"{v:g} with {k}" for k, v in rem["tokens_per_second"].items())
        why = (f"{threads} to start: the last load of this model with about "
               f"{_cores(rem['busy'])} busy measured tokens/s {speeds}.")
    elif p.get("busy"):
        why = (f"{threads} of {most} to start: other programs keep about {_cores(p['busy'])} "
               "busy now, and llama.cpp waits for its slowest thread at every step, so a thread "
               "sharing a core with them holds all the others back.")
    else:
        why = (f"{threads}: one per physical performance core (hyper-threads and efficiency "
               "cores slow generation down).")
    if p.get("max_threads"):
        why += (f" Hearth measures at load which count up to {most} is fastest now, and "
                "measures again when another program starts or stops using the cores.")
    return why


def _flash_attn(p: Params) -> str:
    if not differs_as_shown(p["compute"], p["compute_off"]):
        # The planner gives this reason only where it saves memory; one recorded otherwise
        # must not read "at 514 MiB instead of 514 MiB".
        return "Flash attention on."
    return (f"Flash attention on: it keeps the compute buffer at {mib(p['compute'])} instead "
            f"of {mib(p['compute_off'])}.")


def _reserve(p: Params) -> str:
    parts = []
    if p.get("gpu_margin") is not None:
        parts.append(f"{gib(p['gpu_margin'])} free on each GPU")
    parts.append(f"{gib(p['ram_reserve'])} of RAM for the system and other programs")
    return "Keeping " + " and ".join(parts) + "."


def _does_not_fit(p: Params) -> str:
    pinned = p.get("pinned") or {}
    what = f"With the pinned {_pins(pinned)}, " if pinned else "Even at the smallest settings, "
    budgets = "; ".join(f"{d['name']}: {gib(d['free'])} free, {gib(d['reserve'])} kept back"
                        for d in p.get("devices", ()))
    advice = ("Unpin some settings or choose a smaller quantization." if pinned else
              "Choose a smaller model or quantization, or close other programs.")
    return (f"{what}{p['model']} needs {gib(p['need'])} but this computer has {gib(p['have'])} "
            f"to spare ({budgets}). {advice}")


# -- the fallback ladder --------------------------------------------------------------------------


def _fallback_cpu(p: Params) -> str:
    if p.get("cause") == "device":
        return "The GPU reported an error; retrying on the CPU only."
    return "Out of memory on the GPU: retrying on the CPU only."


def _split_machines(p: Params) -> str:
    parts = []
    for part in p["parts"]:
        first, last = part["first"], part["last"]
        span = f"layer {first}" if first == last else f"layers {first}–{last}"
        if last < first:  # only the output head
            span = "the output layer"
        elif part.get("output"):
            span += " and the output layer"
        where = (f"{part['machine']} ({part['device']})" if part["machine"]
                 else f"this computer's {part['device']}")
        parts.append(f"{span} on {where}")
    return "Split over several machines: " + "; ".join(parts) + "."


def _fallback_local(p: Params) -> str:
    return ("A worker stopped answering: loading again on this computer alone, without "
            f"{', '.join(p['workers'])}.")


_WORDING: dict[str, Callable[[Params], str]] = {
    # where the layers go
    "cpu_as_asked": lambda p: "Running on the CPU, as asked.",
    "no_usable_gpu": lambda p: "No GPU that llama.cpp can use was found, so the model runs on "
                               "the CPU.",
    "build_without_gpu": _build_without_gpu,
    "gpus_not_driven": _gpus_not_driven,
    "all_layers_moe": _all_layers_moe,
    "ctx_capped": lambda p: (f"Context capped at {p['n_ctx']} (the model supports "
                             f"{p['n_ctx_train']}) to keep all {p['layers']} layers on "
                             f"{_where(p['gpus'])}."),
    "all_layers_fit": lambda p: (f"All {p['layers']} layers fit on {_where(p['gpus'])} with a "
                                 f"context of {p['n_ctx']}."),
    "no_layer_fits": lambda p: (f"The {join_names(p['gpus'])} cannot hold even one layer at "
                                "these settings, so the model runs on the CPU."),
    "partial_offload": _partial,
    "experts_first": lambda p: (f"Expert tensors of the first {p['n_cpu_moe']} layers stay in "
                                "system RAM before any whole layer leaves the GPU."),
    # the other settings
    "kv_quantized": _kv_quantized,
    "ctx_fits_memory": lambda p: (f"Context set to {p['n_ctx']} tokens (the model supports "
                                  f"{p['n_ctx_train']}): that is what fits in the memory that "
                                  "is left."),
    "ctx_beyond_training": lambda p: (f"Context {p['n_ctx']} is beyond the {p['n_ctx_train']} "
                                      "tokens the model was trained on; quality may drop past "
                                      "that."),
    "ctx_floor": lambda p: (f"Context kept at the floor of {p['n_ctx']} tokens: less would make "
                            "the model forget the conversation too soon."),
    "flash_attn": _flash_attn,
    "threads": _threads,
    "reserve": _reserve,
    "gpu_budget": lambda p: (f"Planned as if each GPU had {p['budget'] // MiB:,} MiB "
                             "(--gpu-budget-mib): a test of partial offload, not the real size "
                             "of the card."),
    "cache_estimated": lambda p: (f"The {p['architecture']} cache layout is estimated; the dry "
                                  "run checks it."),
    "pinned": lambda p: f"Pinned by you: {_pins(p['pins'])}.",
    # plans that do not fit
    "quantized_v_needs_fa": lambda p: (f"A {p['cache_type_v']} V cache needs flash attention, "
                                       f"which is pinned '{p['flash_attn']}'. Turn flash "
                                       "attention on or use an f16 V cache."),
    "does_not_fit": _does_not_fit,
    # the fallback ladder
    "fallback_ctx": lambda p: (f"Out of memory: retrying with a context of {p['n_ctx']} instead "
                               f"of {p['was']}."),
    "fallback_kv": lambda p: (f"Out of memory: retrying with the KV cache stored as "
                              f"{p['cache_type']}."),
    "fallback_layers": lambda p: (f"Out of memory: retrying with {p['n_gpu_layers']} layers on "
                                  f"the GPU instead of {p['was']}."),
    "fallback_experts": lambda p: "Out of memory: retrying with every expert tensor in system "
                                  "RAM.",
    "fallback_cpu": _fallback_cpu,
    "fallback_local": _fallback_local,
    # several machines (llama.cpp RPC)
    "split_machines": _split_machines,
    "worker_unavailable": lambda p: (f"Worker {p['endpoint']} left out: "
                                     f"{str(p['why']).rstrip('.')}."),
    # measurements and the dry run (app/loading)
    "stored_corrections": lambda p: ("Memory figures corrected by what an earlier load of this "
                                     f"model measured ({_corrections(p, 2)})."),
    "runner_unknown": lambda p: (f"The runner could not say which devices its build can use "
                                 f"({str(p['why']).rstrip('.')}), so the plan is for the GPUs "
                                 "this computer has."),
    # the runtime (app/runtimes)
    "runtime_chosen": lambda p: (f"Runtime: {p['runtime']}"
                                 + (f", {str(p['why']).rstrip('.')}." if p.get("why") else ".")),
    "runtime_skipped": lambda p: (f"Runtime {p['runtime']} not used: "
                                  f"{str(p['why']).rstrip('.')}."),
    "probe_matches": lambda p: "Checked with llama.cpp's dry run: the prediction matches.",
    "probe_corrected": lambda p: ("Checked with llama.cpp's dry run, which corrected the first "
                                  f"estimate ({_corrections(p, 3)})."),
    "probe_disagrees": lambda p: ("llama.cpp's dry run still disagrees with the planner after "
                                  f"correcting it ({_corrections(p, 3)}); the plan keeps the "
                                  "corrected figures."),
    "probe_unavailable": lambda p: f"Not checked with llama.cpp's dry run: {p['why']}.",
    "recorded_machine": lambda p: "Not checked with the dry run: the plan is for a recorded "
                                  "machine.",
}
