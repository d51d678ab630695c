"""``hearth plan MODEL [--ctx N] [--hardware REPORT.json [--runner-json DEVICES.json]] [--json]``.

``--gpu-budget-mib N`` plans each GPU as if it had N MiB (``Wishes.gpu_budget``), so a GPU check
on a big card can test partial offload; ``--n-cpu-moe N`` pins the MoE experts kept on the CPU.

Prints the plan, its per-device breakdown and its reasons. It plans exactly as the window does
(the same :func:`~app.loading.prepare.prepare_load`): for the devices this machine's runner build
drives, with what earlier loads of the model measured, confirmed by the runner's dry run. With
``--hardware`` it plans for a recorded report (a 4090, an M2) on any machine instead, and with
``--runner-json`` for a recorded runner build too; a recorded machine is not dry-run.
See docs/architecture.md for where planning sits.
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from app.gguf import GGUFError, read_model
from app.hardware.merge import RunnerDevicesError
from app.hub.types import HubError
from app.jobs import CancelledError, never_cancelled
from app.loading.confirm import run_probe
from app.loading.flags import plan_args
from app.loading.prepare import Prepared, prepare_load
from app.loading.speed import SpeedSense
from app.loading.workers import normalize
from app.planner.corrections import CorrectionStore
from app.planner.plan import LaunchPlan
from app.planner.types import GiB, Pins, PlannerError, Wishes
from app.runner_client.build import (
    RunnerBuild,
    runner_build_from_json,
)
from app.runtimes.select import RuntimeSelection

log = logging.getLogger(__name__)

RECORDED_NOTE = "Not checked with the dry run: the plan is for a recorded machine."


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="hearth plan",
        description="Plan how to load a GGUF model on this computer, as the app would.")
    p.add_argument("model", help="path to a .gguf file (any part of a split model), or "
                                 "hf://OWNER/REPO/FILE.gguf to plan from the remote header alone")
    p.add_argument("--ctx", default="fit",
                   help="context size in tokens, 'fit' (as much as fits, the default) or 'max' "
                        "(the model's trained context)")
    p.add_argument("--hardware", type=Path, default=None,
                   help="plan for a recorded hardware report (JSON) instead of this machine")
    p.add_argument("--runner-json", type=Path, default=None,
                   help="plan for a saved `hearth-runner devices` output instead of asking this "
                        "machine's runner which devices its build drives")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.add_argument("--runtime", metavar="NAME",
                   help="plan for this runtime (a name or folder; 'auto' chooses from the "
                        "hardware) instead of HEARTH_RUNTIME or the automatic choice")
    p.add_argument("--priority", choices=("speed", "context"), default="speed")
    p.add_argument("--margin-mib", type=int, default=1024,
                   help="memory left free on each GPU (default 1024)")
    p.add_argument("--no-quantized-kv", action="store_true",
                   help="never store the KV cache quantized")
    p.add_argument("--cpu-only", action="store_true")
    p.add_argument("--n-gpu-layers", type=int, default=None, help="pin the offloaded layers")
    p.add_argument("--n-cpu-moe", type=int, default=None, metavar="N",
                   help="pin the MoE experts on the CPU: the first N layers keep their expert "
                        "tensors in system RAM")
    p.add_argument("--gpu-budget-mib", type=int, default=None, metavar="N",
                   help="plan each GPU as if it had N MiB (with what other programs use on it "
                        "now): tests partial offload on a big card")
    p.add_argument("--flash-attn", choices=("on", "off", "auto"), default=None)
    p.add_argument("--cache-type-k", default=None)
    p.add_argument("--cache-type-v", default=None)
    p.add_argument("--rpc", metavar="HOST:PORT[,HOST:PORT...]", default="",
                   help="split the model over these RPC workers ('hearth-runner rpc-worker' "
                        "on each machine) as well as this computer's devices")
    p.add_argument("--no-probe", action="store_true", help="skip llama.cpp's dry run")
    p.add_argument("--ignore-measurements", action="store_true",
                   help="plan from the file alone, without what earlier loads measured")
    return p


def _context(text: str) -> int | str:
    if text in ("fit", "max"):
        return text
    try:
        n = int(text)
    except ValueError:
        raise PlannerError(f"--ctx takes a number of tokens, 'fit' or 'max', not {text!r}.")\
            from None
    if n < 1:
        raise PlannerError("--ctx must be at least 1.")
    return n


def _at_least(value: int | None, low: int, flag: str, example: str) -> int | None:
    """``value`` checked against its floor; None stays None (the planner chooses)."""
    if value is not None and value < low:
        raise PlannerError(f"{flag} takes a whole number of at least {low} (e.g. {flag} "
                           f"{example}), not {value}.")
    return value


def main(argv: list[str]) -> int:
    """Entry point for ``hearth plan``; returns the exit status (0 fits, 1 does not, 2 error,
    a file llama.cpp would refuse included; for hf:// addresses also 3 the Hub cannot be
    reached, 4 a token is missing or refused)."""
    args = build_parser().parse_args(argv)
    try:
        budget_mib = _at_least(args.gpu_budget_mib, 1, "--gpu-budget-mib", "8192")
        wishes = Wishes(
            context=_context(args.ctx),  # type: ignore[arg-type]
            priority=args.priority,
            pins=Pins(n_gpu_layers=args.n_gpu_layers, flash_attn=args.flash_attn,
                      cache_type_k=args.cache_type_k, cache_type_v=args.cache_type_v,
                      n_cpu_moe=_at_least(args.n_cpu_moe, 0, "--n-cpu-moe", "10")),
            margin=args.margin_mib * (1 << 20),
            allow_quantized_kv=not args.no_quantized_kv,
            cpu_only=args.cpu_only,
            gpu_budget=None if budget_mib is None else budget_mib * (1 << 20),
        )
        recorded = args.hardware is not None
        if recorded:
            report = _load_report(args.hardware)

            def detect() -> Any:
                return report
        else:
            from app import hardware

            detect = hardware.detect_hardware
        token = never_cancelled()  # Ctrl-C still ends the dry run: run_runner kills it
        remote = None
        if args.model.startswith("hf://"):
            from app.cli.hub import remote_model_for

            remote = remote_model_for(args.model)[0]
        else:
            # A file llama.cpp would refuse (app/gguf/loadable.py) is refused at once, before
            # the hardware is detected and the runner asked what it drives, which take seconds.
            read_model(args.model)
        # This command's runtime: --runtime, else HEARTH_RUNTIME or the automatic choice.
        build = _runner_build(args.runner_json, recorded, detect, RuntimeSelection(args.runtime))
        prepared = prepare_load(
            args.model, cached=None, detect=detect, wishes=wishes,
            store=None if args.ignore_measurements else CorrectionStore(), build=build,
            probe=None if recorded or args.no_probe else run_probe, token=token, model=remote,
            workers=[normalize(e) for e in args.rpc.split(",") if e.strip()],
            # The speed settings this computer measured, as the window plans with them.
            speed=None if args.ignore_measurements or recorded else SpeedSense.here())
    except (GGUFError, PlannerError, RunnerDevicesError, OSError, ValueError,
            CancelledError) as exc:
        print(f"hearth plan: {exc}", file=sys.stderr)
        return 2
    except HubError as exc:
        from app.cli.hub import exit_code

        print(f"hearth plan: {exc}", file=sys.stderr)
        return exit_code(exc)
    note = RECORDED_NOTE if recorded else None
    result = prepared.plan
    if args.json:
        print(json.dumps(to_json(prepared, note), indent=2))
    else:
        print(render(result, note, prepared.build))
    return 0 if result.fits else 1


def _runner_build(runner_json: Path | None, recorded: bool, detect: Callable[[], Any],
                  runtime: RuntimeSelection) -> RunnerBuild:
    """The build to plan for: a saved device list, none for a recorded machine, else the
    runtime this machine's window would choose (or ``--runtime``), its devices asked once and
    cached, as the window does."""
    program = runtime.program().argv  # nothing chosen yet: the runner with no runtime named
    if runner_json is not None:
        try:
            data = json.loads(runner_json.read_text("utf-8"))
        except (OSError, ValueError) as exc:
            raise RunnerDevicesError(f"Cannot read {runner_json}: {exc}") from exc
        return runner_build_from_json(program, data if isinstance(data, dict) else {})
    if recorded:
        return RunnerBuild.unknown(program, "")  # this machine's build says nothing about it
    return runtime.chosen_build(None, detect)


def _load_report(path: Path) -> Any:
    from app.hardware import HardwareReport

    try:
        data = json.loads(path.read_text("utf-8"))
    except (OSError, ValueError) as exc:
        raise PlannerError(f"Cannot read the hardware report {path}: {exc}.") from exc
    return HardwareReport.from_json(data)


def to_json(prepared: Prepared, note: str | None = None) -> dict[str, Any]:
    """The plan, the flags it starts with and the runner build it is for, as JSON."""
    p, build = prepared.plan, prepared.build
    out = p.to_json()
    out["runner_args"] = plan_args(p) if p.model.path else []
    out["runner"] = {"program": list(build.program), "build": build.key,
                     "devices": [d.name for d in build.devices], "problem": build.problem}
    out["measured"] = {dev: {"kv": c.kv, "compute": c.compute, "compute_extra": c.compute_extra}
                       for dev, c in sorted(prepared.stored.items())}
    if note:
        out["probe"] = note
    return out


def render(p: LaunchPlan, note: str | None = None, build: RunnerBuild | None = None) -> str:
    """The plan as text for a terminal."""
    s = p.settings
    lines = [p.model.summary(), ""]
    if build is not None and build.known:
        lines += [f"Runner build {build.key}: {', '.join(d.name for d in build.devices)}", ""]
    lines.append("Fits." if p.fits else "Does NOT fit.")
    lines.append(
        f"Settings: n_gpu_layers={s.n_gpu_layers} n_ctx={s.n_ctx} n_batch={s.n_batch} "
        f"n_ubatch={s.n_ubatch} threads={s.n_threads}/{s.n_threads_batch} "
        f"flash_attn={s.flash_attn} kv={s.cache_type_k}/{s.cache_type_v}"
        + (f" n_cpu_moe={s.n_cpu_moe}" if s.n_cpu_moe else "")
        + (f" tensor_split={','.join(str(int(x)) for x in s.tensor_split)}"
           if s.tensor_split else ""))
    lines.append("")
    header = f"{'device':34} {'layers':>6} {'weights':>9} {'KV':>9} {'compute':>9} " \
             f"{'total':>9} {'budget':>9} {'free':>9} {'capacity':>9}"
    lines.append(header)
    for b in p.devices:
        u, d = b.usage, b.device
        lines.append(
            f"{d.name[:34]:34} {u.layers:>6} {_g(u.weights):>9} {_g(u.kv):>9} "
            f"{_g(u.compute):>9} {_g(u.total):>9} {_g(d.budget):>9} {_g(d.free):>9} "
            f"{_g(d.total):>9}")
    lines.append("(GiB; budget = free − reserve; free already excludes other programs)")
    lines.append("")
    texts = p.reason_texts()
    lines += [f"- {r}" for r in texts]
    if note and note not in texts:
        lines.append(f"- {note}")
    return "\n".join(lines)


def _g(n: int) -> str:
    return f"{n / GiB:.2f}"
