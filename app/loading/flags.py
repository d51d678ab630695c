"""A plan as the runner's flags: the one place that speaks the runner's command line.

The planner decides settings in llama.cpp's terms; ``hearth-runner serve`` and ``probe`` take
them as flags (runner/settings.py defines them on the runner's side). Both the dry run and the
launch build their arguments here, so the plan that was checked is the plan that starts.
"""

from __future__ import annotations

from app.i18n import T_
from app.planner.plan import LaunchPlan
from app.planner.types import PlannerError
from app.planner.wording import num


def plan_args(plan: LaunchPlan, model_path: str | None = None) -> list[str]:
    """The ``hearth-runner serve``/``probe`` flags for ``plan``, ``--model`` first.

    Raises PlannerError for a plan made from a partial download (it has no file to name).
    """
    path = model_path or plan.model.path
    if not path:
        raise PlannerError(T_("This plan was made from a partial download; download the model "
                              "before starting it."))
    s = plan.settings
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
    # Flags beyond runner/settings.py's shared set, only when the plan needs them: an older
    # runner that lacks them still takes every plan that does not.
    if s.n_cpu_moe:
        args += ["--n-cpu-moe", str(s.n_cpu_moe)]
    if len(s.tensor_split) > 1:
        args += ["--tensor-split", ",".join(num(x) for x in s.tensor_split)]
    if s.max_threads:
        # The runner measures which count up to this is fastest, now and as the load changes.
        args += ["--adapt-threads", "--max-threads", str(s.max_threads)]
    workers = plan_workers(plan)
    if workers:
        args += ["--rpc", ",".join(workers)]
    if plan.model.projector is not None:
        args += ["--mmproj", plan.model.projector.path]
    draft = plan.model.draft
    if draft is not None:
        # Measured once per pair, runtime and computer: the first load asks the runner to.
        args += ["--spec-draft-model", draft.path, *(["--spec-measure"] if draft.gain is None
                                                      else [])]
    if plan.tune:
        # Measured once per model, runtime and computer, in the background after the load.
        args += ["--tune-speed", plan.tune]
    return args


def plan_workers(plan: LaunchPlan) -> list[str]:
    """The RPC workers a plan uses, in device order. A plan on this computer alone (the CPU,
    or after the fallback dropped them) names none: llama.cpp would still put layers on every
    worker it is given."""
    if plan.settings.n_gpu_layers == 0:
        return []
    out: list[str] = []
    for d in plan.devices:
        if d.device.worker and d.device.worker not in out:
            out.append(d.device.worker)
    return out


def plan_flags(plan: LaunchPlan, model_path: str) -> list[str]:
    """The plan's flags without ``--model``: the launch command names the model itself."""
    args = plan_args(plan, model_path)
    out: list[str] = []
    i = 0
    while i < len(args):
        if args[i] in ("--model", "-m"):
            i += 2
            continue
        out.append(args[i])
        i += 1
    return out
