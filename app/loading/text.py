"""What the window says about a load: the plan's key numbers, its reasons, the ladder's steps.

Pure functions from plans to sentences, so the wording is unit-tested and the window only places
the text. The reasons themselves are worded in app/planner/wording.py; this module arranges them.
"""

from __future__ import annotations

from app.planner import wording
from app.planner.memory import QUANTIZED_KV
from app.planner.plan import LaunchPlan


def layers_text(plan: LaunchPlan) -> str:
    """Where the layers are: "33/33 layers on the GPU", "20/33 layers on 2 GPUs", "on the CPU"."""
    s = plan.settings
    gpus = plan.gpus
    if s.n_gpu_layers == 0 or not gpus:
        return "on the CPU"
    top = plan.model.n_layer + 1  # the output layer counts: that is how llama.cpp offloads
    ngl = top if s.n_gpu_layers < 0 or s.n_gpu_layers > top else s.n_gpu_layers
    where = "the GPU" if len(gpus) == 1 else f"{len(gpus)} GPUs"
    return f"{ngl}/{top} layers on {where}"


def summary(plan: LaunchPlan) -> str:
    """The settings a user cares about, in one phrase."""
    s = plan.settings
    text = f"{layers_text(plan)}, context {s.n_ctx}"
    if s.cache_type_k in QUANTIZED_KV or s.cache_type_v in QUANTIZED_KV:
        kv = s.cache_type_k if s.cache_type_k == s.cache_type_v else \
            f"{s.cache_type_k}/{s.cache_type_v}"
        text += f", KV cache {kv}"
    if s.n_cpu_moe and s.n_gpu_layers:
        text += f", experts of {s.n_cpu_moe} layers in RAM"
    return text


def planning_text(name: str) -> str:
    return f"Planning how to load {name}…"


def loading_text(name: str, plan: LaunchPlan | None) -> str:
    if plan is None:
        return f"Loading {name}…"
    return f"Loading {name} — {summary(plan)}…"


def ready_text(name: str, plan: LaunchPlan | None) -> str:
    if plan is None:
        return f"{name} is ready."
    return f"{name} is ready — {summary(plan)}."


def runner_state_text(state: str, name: str, plan: LaunchPlan | None) -> str | None:
    """The status line for a runner state (RunnerState.value); None: keep the current line.

    "failed" has no text of its own: the loader says why, or that it is retrying.
    """
    if state == "stopped":
        return "No model loaded."
    if state == "starting" or state == "loading":
        return loading_text(name, plan)
    if state == "ready":
        return ready_text(name, plan)
    if state == "stopping":
        return "Unloading…"
    return None


def reasons_text(plan: LaunchPlan, steps: list[str] | None = None) -> str:
    """The plan's reasons as a bulleted list (the fallback steps are already among them)."""
    texts = plan.reason_texts()
    lines = [f"• {r}" for r in texts if r]
    if steps:
        lines += [f"• {s}" for s in steps if s not in texts]
    return "\n".join(lines)


# The reasons that say why a plan does not fit (the search ends with one of them).
_NOT_FIT_CODES = ("does_not_fit", "quantized_v_needs_fa")


def does_not_fit_text(plan: LaunchPlan) -> str:
    """Why the plan was not started: the planner's explanation, not a note added after it."""
    why = next((r for r in reversed(plan.reasons) if r.code in _NOT_FIT_CODES), None)
    if why is None and plan.reasons:
        why = plan.reasons[-1]
    text = wording.text(why) if why is not None else \
        "The model does not fit in this computer's memory."
    return f"Not loaded: {text}"


def gave_up_text(message: str, plan: LaunchPlan, retries: int, exhausted: bool) -> str:
    """The final failure after the ladder: the runner's words, then what Hearth tried."""
    message = message.strip() or "The model could not be loaded."
    if not message.endswith((".", "!", "?")):
        message += "."
    if not exhausted:
        return message
    tried = f" Hearth retried {retries} time{'s' if retries != 1 else ''} with smaller settings, " \
            f"down to {summary(plan)}." if retries else " There were no smaller settings to try."
    return (f"{message}{tried} Choose a smaller model or quantization, or close other programs "
            "and load it again.")


def died_text(message: str) -> str:
    message = message.strip() or "The model runner stopped."
    if not message.endswith((".", "!", "?")):
        message += "."
    return f"{message} Restart the model to continue; the conversation is kept."
