"""What the window says about a load: the plan's key numbers, its reasons, the ladder's steps.

Pure functions from plans to sentences, so the wording is unit-tested and the window only places
the text. The reasons themselves are worded in app/planner/wording.py; this module arranges them.
Every sentence is an :class:`app.i18n.Text` (``T_``) the window translates with ``ui_text``.
"""

from __future__ import annotations

from app.i18n import T_
from app.planner import wording
from app.planner.memory import QUANTIZED_KV
from app.planner.plan import LaunchPlan


def layers_text(plan: LaunchPlan) -> str:
    """Where the layers are: "33/33 layers on the GPU", "20/33 layers on 2 GPUs", "on the CPU"."""
    s = plan.settings
    gpus = plan.gpus
    if s.n_gpu_layers == 0 or not gpus:
        return T_("on the CPU")
    top = plan.model.n_layer + 1  # the output layer counts: that is how llama.cpp offloads
    ngl = top if s.n_gpu_layers < 0 or s.n_gpu_layers > top else s.n_gpu_layers
    if len(gpus) == 1:
        return T_("{layers}/{top} layers on the GPU", layers=ngl, top=top)
    return T_("{layers}/{top} layers on {gpus} GPUs", layers=ngl, top=top, gpus=len(gpus))


def summary(plan: LaunchPlan) -> str:
    """The settings a user cares about, in one phrase."""
    s = plan.settings
    text = T_("{layers}, context {n_ctx}", layers=layers_text(plan), n_ctx=s.n_ctx)
    if s.cache_type_k in QUANTIZED_KV or s.cache_type_v in QUANTIZED_KV:
        kv = s.cache_type_k if s.cache_type_k == s.cache_type_v else \
            f"{s.cache_type_k}/{s.cache_type_v}"
        text = T_("{settings}, KV cache {kv}", settings=text, kv=kv)
    if s.n_cpu_moe and s.n_gpu_layers:
        text = T_("{settings}, experts of {n_cpu_moe} layers in RAM", settings=text,
                  n_cpu_moe=s.n_cpu_moe)
    return text


def planning_text(name: str) -> str:
    return T_("Planning how to load {name}…", name=name)


def loading_text(name: str, plan: LaunchPlan | None) -> str:
    if plan is None:
        return T_("Loading {name}…", name=name)
    return T_("Loading {name} — {settings}…", name=name, settings=summary(plan))


def ready_text(name: str, plan: LaunchPlan | None) -> str:
    if plan is None:
        return T_("{name} is ready.", name=name)
    return T_("{name} is ready — {settings}.", name=name, settings=summary(plan))


def runner_state_text(state: str, name: str, plan: LaunchPlan | None) -> str | None:
    """The status line for a runner state (RunnerState.value); None: keep the current line.

    "failed" has no text of its own: the loader says why, or that it is retrying.
    """
    if state == "stopped":
        return T_("No model loaded.")
    if state == "starting" or state == "loading":
        return loading_text(name, plan)
    if state == "ready":
        return ready_text(name, plan)
    if state == "stopping":
        return T_("Unloading…")
    return None


def reasons_text(plan: LaunchPlan, steps: list[str] | None = None) -> str:
    """The plan's reasons as a bulleted list (the fallback steps are already among them)."""
    texts = plan.reason_texts()
    lines = [T_("• {reason}", reason=r) for r in texts if r]
    if steps:
        lines += [T_("• {reason}", reason=s) for s in steps if s not in texts]
    return wording.lines(lines)


# The reasons that say why a plan does not fit (the search ends with one of them).
_NOT_FIT_CODES = ("does_not_fit", "quantized_v_needs_fa")


def does_not_fit_text(plan: LaunchPlan) -> str:
    """Why the plan was not started: the planner's explanation, not a note added after it."""
    why = next((r for r in reversed(plan.reasons) if r.code in _NOT_FIT_CODES), None)
    if why is None and plan.reasons:
        why = plan.reasons[-1]
    text = wording.text(why) if why is not None else \
        T_("The model does not fit in this computer's memory.")
    return T_("Not loaded: {why}", why=text)


def gave_up_text(message: str, plan: LaunchPlan, retries: int, exhausted: bool) -> str:
    """The final failure after the ladder: the runner's words, then what Hearth tried."""
    message = _sentence(message, T_("The model could not be loaded."))
    if not exhausted:
        return message
    if retries:
        return T_("{message} Hearth retried %n time(s) with smaller settings, down to "
                  "{settings}. Choose a smaller model or quantization, or close other programs "
                  "and load it again.", None, retries, message=message, settings=summary(plan))
    return T_("{message} There were no smaller settings to try. Choose a smaller model or "
              "quantization, or close other programs and load it again.", message=message)


def _sentence(message: str, empty: str) -> str:
    """``message`` as a sentence: ``empty`` when blank, a full stop added when it has none.
    The runner's words (plain English) stay as they are; a :class:`Text` stays translatable."""
    if not message.strip():
        return empty
    if message.strip().endswith((".", "!", "?")):
        return message if message == message.strip() else message.strip()
    return T_("{message}.", message=message.strip())


def died_text(message: str) -> str:
    message = _sentence(message, T_("The model runner stopped."))
    return T_("{message} Restart the model to continue; the conversation is kept.",
              message=message)
