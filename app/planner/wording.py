"""The one place where a plan's reasons become sentences.

The search, the fallback ladder, the dry run and the load preparation explain themselves with
:class:`~app.planner.types.Reason` records (a code and its numbers); this module words them. The
window, ``hearth plan`` and the ladder's status lines all show what :func:`text` returns, so a
change of wording is one edit here, and the numbers stay available as data for a settings panel.

Every sentence is an :class:`app.i18n.Text` built with ``T_`` (issue 27): its value is the
English sentence, and the window translates it (``app.ui.lang.ui_text``). A sentence made of
pieces (a list of devices, a size) takes the pieces as nested ``Text`` arguments, never as a
joined ``str``, so the translation reaches every piece.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from app.i18n import T_, FormatNumber, Text, Translate
from app.planner.types import GiB, MiB, Reason

log = logging.getLogger(__name__)

Params = Mapping[str, Any]


def text(reason: Reason) -> str:
    """The sentence for one reason (a :class:`~app.i18n.Text` for every known code)."""
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


# -- pieces of sentences ---------------------------------------------------------------------------


class _WithoutStop(Text):
    """A sentence without its final full stop, in English and in translation: a clause that
    another sentence ends (``"Worker X left out: {why}."``)."""

    def __new__(cls, sentence: Text) -> _WithoutStop:
        self = str.__new__(cls, str.__str__(sentence).rstrip("."))
        self.template, self.args, self.n = sentence.template, sentence.args, sentence.n
        return self

    def translated(self, translate: Translate, number: FormatNumber | None = None) -> str:
        return super().translated(translate, number).rstrip(".")


def clause(why: object) -> str:
    """``why`` (a sentence) without its final full stop; a :class:`Text` stays translatable."""
    if isinstance(why, Text):
        return _WithoutStop(why)
    return str(why).rstrip(".")


def joined(items: Sequence[str], how: str = ", ") -> str:
    """``items`` as one list; when any is a :class:`Text`, a ``Text`` whose separators are
    translatable too. ``how``: ", ", "; ", " " or a new line (the separators a translation may change)."""
    if not any(isinstance(item, Text) for item in items):
        return how.join(items)
    result: str = items[0] if items else ""
    for item in items[1:]:
        if how == "; ":
            result = T_("{first}; {then}", first=result, then=item)
        elif how == " ":
            result = T_("{first} {then}", first=result, then=item)
        elif how == "\n":
            result = T_("{first}\n{then}", first=result, then=item)
        else:
            result = T_("{first}, {then}", first=result, then=item)
    return result


def lines(items: Sequence[str]) -> str:
    """Lines one under another (``"\\n".join``), each still translatable."""
    return joined(items, "\n")


def sentences(items: Sequence[str]) -> str:
    """Sentences one after another (``" ".join``), each still translatable."""
    return joined(items, " ")


# -- small formatters -----------------------------------------------------------------------------


def gib(n: int) -> Text:
    return T_("{size:.1f} GiB", size=n / GiB)


def mib(n: int) -> Text:
    return T_("{size:.0f} MiB", size=n / MiB)


def size(n: int) -> Text:
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
    """``["A", "A"]`` -> "2× A"; ``["A", "B"]`` -> "A + B" (device names: data, not words)."""
    if len(set(names)) == 1 and len(names) > 1:
        return f"{len(names)}× {names[0]}"
    return " + ".join(names) if names else T_("GPU")


def _where(gpus: Sequence[str]) -> Text:
    if len(gpus) == 1:
        return T_("the {names}", names=join_names(gpus))
    # A worker's device is named "device N of HOST:PORT": it may be a CPU, so not "GPUs".
    if any(" of " in g for g in gpus):
        return T_("%n device(s)", None, len(gpus))
    return T_("%n GPU(s)", None, len(gpus))


def _backends(p: Params) -> str:
    names = [str(b).upper() for b in p.get("backends", ())]
    if not names:
        return T_("GPU")
    result: str = names[0]
    for name in names[1:]:
        result = T_("{first} or {then}", first=result, then=name)
    return result


def _pins(pins: Mapping[str, Any]) -> str:
    return ", ".join(f"{k}={show(v)}" for k, v in pins.items())  # setting names: data


def _corrections(p: Params, digits: int) -> str:
    parts: list[str] = [
        T_("{device}: KV ×{kv:.2f}, compute ×{compute:.2f}", device=dev, kv=c["kv"],
           compute=c["compute"]) if digits == 2 else
        T_("{device}: KV ×{kv:.3f}, compute ×{compute:.3f}", device=dev, kv=c["kv"],
           compute=c["compute"])
        for dev, c in p.get("corrections", {}).items()]
    return joined(parts, "; ") if parts else T_("no change")


# -- the search -----------------------------------------------------------------------------------


def _build_without_gpu(p: Params) -> Text:
    names = join_names(p["gpus"])
    if p["cause"] == "not_seen":
        return T_("The runner does not see the {names} (is the {backends} driver loaded?): "
                  "running on the CPU.", names=names, backends=_backends(p))
    return T_("This runner build has no {backends} support: running on the CPU. A {backends} "
              "build of the runner would use the {names}.", names=names, backends=_backends(p))


def _gpus_not_driven(p: Params) -> Text:
    names = join_names(p["gpus"])
    one = len(p["gpus"]) == 1
    if p["cause"] == "not_seen":
        if one:
            return T_("The {names} is not used: the runner does not see it (is the {backends} "
                      "driver loaded?).", names=names, backends=_backends(p))
        return T_("The {names} are not used: the runner does not see them (is the {backends} "
                  "driver loaded?).", names=names, backends=_backends(p))
    if one:
        return T_("The {names} is not used: this runner build has no {backends} support.",
                  names=names, backends=_backends(p))
    return T_("The {names} are not used: this runner build has no {backends} support.",
              names=names, backends=_backends(p))


def _all_layers_moe(p: Params) -> Text:
    return T_("All {layers} layers are on {where}, but the expert tensors of the first "
              "{n_cpu_moe} of {n_layer} layers stay in system RAM: that keeps attention and the "
              "other layers on the GPU, which is faster than moving whole layers to the CPU.",
              layers=p["layers"], where=_where(p["gpus"]), n_cpu_moe=p["n_cpu_moe"],
              n_layer=p["n_layer"])


def _partial(p: Params) -> Text:
    return T_("{n_gpu_layers} of {layers} layers on the {names}, {n_cpu_layers} on the CPU: the "
              "layers need {need} and the GPU memory available after the margin is {have}.",
              n_gpu_layers=p["n_gpu_layers"], layers=p["layers"],
              names=join_names(p["gpus"]), n_cpu_layers=p["n_cpu_layers"],
              need=gib(p["need"]), have=gib(p["have"]))


def _kv_quantized(p: Params) -> Text:
    if p["on_gpu"]:
        return T_("The KV cache is stored as {cache_type} (about half the memory of f16) because "
                  "f16 did not fit with every layer on the GPU.", cache_type=p["cache_type"])
    return T_("The KV cache is stored as {cache_type} (about half the memory of f16) because "
              "f16 did not fit.", cache_type=p["cache_type"])


def _projector(p: Params) -> Text:
    if p["where"]:
        return T_("The vision projector {file} loads with the model, so it can see images: "
                  "about {size} on the {gpu}, where its layers are.", file=p["file"],
                  size=size(p["bytes"]), gpu=p["where"])
    return T_("The vision projector {file} loads with the model, so it can see images: about "
              "{size} of system RAM.", file=p["file"], size=size(p["bytes"]))


def _draft(p: Params) -> Text:
    where = (T_("about {size} on the {gpu}", size=size(p["bytes"]), gpu=p["where"])
             if p["where"] else T_("about {size} of system RAM", size=size(p["bytes"])))
    if p["gain"] is None:
        return T_("{file} loads beside it as a draft model ({where}): it proposes a few words "
                  "at a time and the model checks them at once. This first load measures "
                  "whether that is faster on this computer; Hearth keeps it only if it is at "
                  "least 10% faster.", file=p["file"], where=where)
    return T_("{file} loads beside it as a draft model ({where}): it proposes a few words at "
              "a time and the model checks them at once. Measured on this computer: replies "
              "come {gain:.2f}× as fast.", file=p["file"], where=where, gain=p["gain"])


def _draft_left_out(p: Params) -> Text:
    return T_("{file} could draft for this model, but on this computer it made replies "
              "{gain:.2f}× as fast (measured), so it is left out.", file=p["file"],
              gain=p["gain"])


def _draft_refused(p: Params) -> Text:
    return T_("{file} looked like a draft for this model, but the runner found their tokens "
              "differ, so it is left out.", file=p["file"])


def _draft_no_room(p: Params) -> Text:
    if p["layers"]:
        return T_("{file} could draft for this model, but it would take the room of %n layer(s) "
                  "on the GPU, so it is left out.", None, p["layers"], file=p["file"])
    return T_("{file} could draft for this model, but it would take room the context needs, "
              "so it is left out.", file=p["file"])


def _speed(p: Params) -> Text:
    """A measured speed setting as words: "flash attention off, an f16 KV cache and
    micro-batches of 256 tokens"."""
    fa = T_("flash attention on") if p["flash_attn"] == "on" else T_("flash attention off")
    return T_("{fa}, the KV cache as {cache_type} and micro-batches of {n_ubatch} tokens", fa=fa,
              cache_type=p["cache_type"], n_ubatch=p["n_ubatch"])


def _speed_tuned(p: Params) -> Text:
    return T_("Speed settings measured fastest for this model on this computer: {settings}. "
              "A typical turn ran {gain:.2f}× as fast as with the defaults.",
              settings=_speed(p), gain=p["gain"])


def _speed_left_out(p: Params) -> Text:
    return T_("On this computer {settings} measured {gain:.2f}× as fast, but here they would "
              "cost context or layers on the GPU, so the plan keeps its own.",
              settings=_speed(p), gain=p["gain"])


def _cores(n: float) -> Text:
    if float(n).is_integer():
        return T_("%n core(s)", None, int(n))
    return T_("{cores:g} cores", cores=n)


def _threads(p: Mapping[str, Any]) -> Text:
    n, most = p["n_threads"], p.get("max_threads") or p["n_threads"]
    threads = T_("%n thread(s)", None, n)
    rem = p.get("remembered")
    why: Text
    if rem:
        speeds = joined([T_("{speed:g} with {threads}", speed=v, threads=k)
                         for k, v in rem["tokens_per_second"].items()])
        why = T_("{threads} to start: the last load of this model with about {cores} busy "
                 "measured tokens/s {speeds}.", threads=threads, cores=_cores(rem["busy"]),
                 speeds=speeds)
    elif p.get("busy"):
        why = T_("{threads} of {most} to start: other programs keep about {cores} busy now, and "
                 "llama.cpp waits for its slowest thread at every step, so a thread sharing a "
                 "core with them holds all the others back.", threads=threads, most=most,
                 cores=_cores(p["busy"]))
    else:
        why = T_("{threads}: one per physical performance core (hyper-threads and efficiency "
                 "cores slow generation down).", threads=threads)
    if p.get("max_threads"):
        why = T_("{why} Hearth measures at load which count up to {most} is fastest now, and "
                 "measures again when another program starts or stops using the cores.",
                 why=why, most=most)
    return why


def _flash_attn(p: Params) -> Text:
    if not differs_as_shown(p["compute"], p["compute_off"]):
        # The planner gives this reason only where it saves memory; one recorded otherwise
        # must not read "at 514 MiB instead of 514 MiB".
        return T_("Flash attention on.")
    return T_("Flash attention on: it keeps the compute buffer at {on} instead of {off}.",
              on=mib(p["compute"]), off=mib(p["compute_off"]))


def _reserve(p: Params) -> Text:
    if p.get("gpu_margin") is not None:
        return T_("Keeping {gpu} free on each GPU and {ram} of RAM for the system and other "
                  "programs.", gpu=gib(p["gpu_margin"]), ram=gib(p["ram_reserve"]))
    return T_("Keeping {ram} of RAM for the system and other programs.",
              ram=gib(p["ram_reserve"]))


def _does_not_fit(p: Params) -> Text:
    pinned = p.get("pinned") or {}
    budgets = joined([T_("{name}: {free} free, {reserve} kept back", name=d["name"],
                         free=gib(d["free"]), reserve=gib(d["reserve"]))
                      for d in p.get("devices", ())], "; ")
    if pinned:
        return T_("With the pinned {pins}, {model} needs {need} but this computer has {have} to "
                  "spare ({budgets}). Unpin some settings or choose a smaller quantization.",
                  pins=_pins(pinned), model=p["model"], need=gib(p["need"]),
                  have=gib(p["have"]), budgets=budgets)
    return T_("Even at the smallest settings, {model} needs {need} but this computer has {have} "
              "to spare ({budgets}). Choose a smaller model or quantization, or close other "
              "programs.", model=p["model"], need=gib(p["need"]), have=gib(p["have"]),
              budgets=budgets)


# -- the fallback ladder --------------------------------------------------------------------------


def _fallback_cpu(p: Params) -> Text:
    if p.get("cause") == "device":
        return T_("The GPU reported an error; retrying on the CPU only.")
    return T_("Out of memory on the GPU: retrying on the CPU only.")


def _split_machines(p: Params) -> Text:
    parts: list[str] = []
    for part in p["parts"]:
        first, last = part["first"], part["last"]
        span = (T_("layer {first}", first=first) if first == last else
                T_("layers {first}–{last}", first=first, last=last))
        if last < first:  # only the output head
            span = T_("the output layer")
        elif part.get("output"):
            span = T_("{span} and the output layer", span=span)
        where = (f"{part['machine']} ({part['device']})" if part["machine"]
                 else T_("this computer's {device}", device=part["device"]))
        parts.append(T_("{span} on {where}", span=span, where=where))
    return T_("Split over several machines: {parts}.", parts=joined(parts, "; "))


def _fallback_local(p: Params) -> Text:
    return T_("A worker stopped answering: loading again on this computer alone, without "
              "{workers}.", workers=", ".join(p["workers"]))


def _runtime_chosen(p: Params) -> Text:
    if p.get("why"):
        return T_("Runtime: {runtime}, {why}.", runtime=p["runtime"], why=clause(p["why"]))
    return T_("Runtime: {runtime}.", runtime=p["runtime"])


_WORDING: dict[str, Callable[[Params], str]] = {
    # where the layers go
    "cpu_as_asked": lambda p: T_("Running on the CPU, as asked."),
    "no_usable_gpu": lambda p: T_("No GPU that llama.cpp can use was found, so the model runs "
                                  "on the CPU."),
    "build_without_gpu": _build_without_gpu,
    "gpus_not_driven": _gpus_not_driven,
    "all_layers_moe": _all_layers_moe,
    "ctx_capped": lambda p: T_("Context capped at {n_ctx} (the model supports {n_ctx_train}) to "
                               "keep all {layers} layers on {where}.", n_ctx=p["n_ctx"],
                               n_ctx_train=p["n_ctx_train"], layers=p["layers"],
                               where=_where(p["gpus"])),
    "all_layers_fit": lambda p: T_("All {layers} layers fit on {where} with a context of "
                                   "{n_ctx}.", layers=p["layers"], where=_where(p["gpus"]),
                                   n_ctx=p["n_ctx"]),
    "no_layer_fits": lambda p: T_("The {names} cannot hold even one layer at these settings, so "
                                  "the model runs on the CPU.", names=join_names(p["gpus"])),
    "partial_offload": _partial,
    "experts_first": lambda p: T_("Expert tensors of the first {n_cpu_moe} layers stay in "
                                  "system RAM before any whole layer leaves the GPU.",
                                  n_cpu_moe=p["n_cpu_moe"]),
    # the other settings
    "projector": _projector,
    "draft": _draft,
    "draft_left_out": _draft_left_out,
    "speed_measuring": lambda p: T_("This first load also measures which flash attention, KV "
                                    "cache type and micro-batch are fastest for this model on "
                                    "this computer: at most 5 seconds in the background once it "
                                    "is ready, set aside whenever you send a message. Later "
                                    "loads use the fastest."),
    "speed_tuned": _speed_tuned,
    "speed_left_out": _speed_left_out,
    "speed_defaults": lambda p: T_("Measured on this computer: no other flash attention, KV "
                                   "cache type or micro-batch is faster for this model than "
                                   "these."),
    "speed_unmeasured": lambda p: T_("The speed settings could not be measured for this model "
                                     "on this computer ({why}), so the plan uses its defaults.",
                                     why=p["why"]),
    "draft_no_room": _draft_no_room,
    "draft_refused": _draft_refused,
    "projector_measured": lambda p: T_("The dry run loaded the vision projector: its encoder "
                                       "takes {size} of working memory (estimated {estimate}), "
                                       "and the plan counts that.", size=size(p["compute"]),
                                       estimate=size(p["estimate"])),
    "projector_unreadable": lambda p: T_("{file} lies beside the model but is not loaded: "
                                         "{error}", file=p["file"], error=p["error"]),
    "projector_other_model": lambda p: T_("{file} lies beside the model but is made for a model "
                                          "{width} wide (this one is {n_embd}): it is not loaded, "
                                          "so the model cannot see images.", file=p["file"],
                                          width=p["width"], n_embd=p["n_embd"]),
    "kv_quantized": _kv_quantized,
    "ctx_fits_memory": lambda p: T_("Context set to {n_ctx} tokens (the model supports "
                                    "{n_ctx_train}): that is what fits in the memory that is "
                                    "left.", n_ctx=p["n_ctx"], n_ctx_train=p["n_ctx_train"]),
    "ctx_beyond_training": lambda p: T_("Context {n_ctx} is beyond the {n_ctx_train} tokens the "
                                        "model was trained on; quality may drop past that.",
                                        n_ctx=p["n_ctx"], n_ctx_train=p["n_ctx_train"]),
    "ctx_floor": lambda p: T_("Context kept at the floor of {n_ctx} tokens: less would make the "
                              "model forget the conversation too soon.", n_ctx=p["n_ctx"]),
    "flash_attn": _flash_attn,
    "threads": _threads,
    "reserve": _reserve,
    "gpu_budget": lambda p: T_("Planned as if each GPU had {budget:,} MiB (--gpu-budget-mib): a "
                               "test of partial offload, not the real size of the card.",
                               budget=p["budget"] // MiB),
    "cache_estimated": lambda p: T_("The {architecture} cache layout is estimated; the dry run "
                                    "checks it.", architecture=p["architecture"]),
    "pinned": lambda p: T_("Pinned by you: {pins}.", pins=_pins(p["pins"])),
    # plans that do not fit
    "quantized_v_needs_fa": lambda p: T_("A {cache_type_v} V cache needs flash attention, which "
                                         "is pinned '{flash_attn}'. Turn flash attention on or "
                                         "use an f16 V cache.", cache_type_v=p["cache_type_v"],
                                         flash_attn=p["flash_attn"]),
    "does_not_fit": _does_not_fit,
    # the fallback ladder
    "fallback_ctx": lambda p: T_("Out of memory: retrying with a context of {n_ctx} instead of "
                                 "{was}.", n_ctx=p["n_ctx"], was=p["was"]),
    "fallback_kv": lambda p: T_("Out of memory: retrying with the KV cache stored as "
                                "{cache_type}.", cache_type=p["cache_type"]),
    "fallback_layers": lambda p: T_("Out of memory: retrying with {n_gpu_layers} layers on the "
                                    "GPU instead of {was}.", n_gpu_layers=p["n_gpu_layers"],
                                    was=p["was"]),
    "fallback_experts": lambda p: T_("Out of memory: retrying with every expert tensor in "
                                     "system RAM."),
    "fallback_cpu": _fallback_cpu,
    "fallback_local": _fallback_local,
    # several machines (llama.cpp RPC)
    "split_machines": _split_machines,
    "worker_unavailable": lambda p: T_("Worker {endpoint} left out: {why}.",
                                       endpoint=p["endpoint"], why=clause(p["why"])),
    # measurements and the dry run (app/loading)
    "stored_corrections": lambda p: T_("Memory figures corrected by what an earlier load of "
                                       "this model measured ({corrections}).",
                                       corrections=_corrections(p, 2)),
    "runner_unknown": lambda p: T_("The runner could not say which devices its build can use "
                                   "({why}), so the plan is for the GPUs this computer has.",
                                   why=clause(p["why"])),
    # the runtime (app/runtimes)
    "runtime_chosen": _runtime_chosen,
    "runtime_skipped": lambda p: T_("Runtime {runtime} not used: {why}.", runtime=p["runtime"],
                                    why=clause(p["why"])),
    "probe_matches": lambda p: T_("Checked with llama.cpp's dry run: the prediction matches."),
    "probe_corrected": lambda p: T_("Checked with llama.cpp's dry run, which corrected the first "
                                    "estimate ({corrections}).", corrections=_corrections(p, 3)),
    "probe_disagrees": lambda p: T_("llama.cpp's dry run still disagrees with the planner after "
                                    "correcting it ({corrections}); the plan keeps the corrected "
                                    "figures.", corrections=_corrections(p, 3)),
    "probe_unavailable": lambda p: T_("Not checked with llama.cpp's dry run: {why}.",
                                      why=p["why"]),
    "recorded_machine": lambda p: T_("Not checked with the dry run: the plan is for a recorded "
                                     "machine."),
}
