"""``hearth plan MODEL [--ctx N] [--hardware REPORT.json] [--json]``.

Prints the plan, its per-device breakdown and its reasons. With ``--hardware`` it plans for a
recorded report (a 4090, an M2) on any machine; without it, it detects this machine and confirms
the plan with the runner's dry run.
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from app.gguf import GGUFError, read_model
from app.planner.confirm import confirm
from app.planner.memory import Correction
from app.planner.plan import LaunchPlan, plan
from app.planner.types import GiB, Pins, PlannerError, Wishes

log = logging.getLogger(__name__)


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="hearth plan",
                                description="Plan how to load a GGUF model on this computer.")
    p.add_argument("model", help="path to a .gguf file (any part of a split model)")
    p.add_argument("--ctx", default="fit",
                   help="context size in tokens, 'fit' (as much as fits, the default) or 'max' "
                        "(the model's trained context)")
    p.add_argument("--hardware", type=Path, default=None,
                   help="plan for a recorded hardware report (JSON) instead of this machine")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.add_argument("--priority", choices=("speed", "context"), default="speed")
    p.add_argument("--margin-mib", type=int, default=1024,
                   help="memory left free on each GPU (default 1024)")
    p.add_argument("--no-quantized-kv", action="store_true",
                   help="never store the KV cache quantized")
    p.add_argument("--cpu-only", action="store_true")
    p.add_argument("--n-gpu-layers", type=int, default=None, help="pin the offloaded layers")
    p.add_argument("--flash-attn", choices=("on", "off", "auto"), default=None)
    p.add_argument("--cache-type-k", default=None)
    p.add_argument("--cache-type-v", default=None)
    p.add_argument("--no-probe", action="store_true", help="skip llama.cpp's dry run")
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


def main(argv: list[str]) -> int:
    """Entry point for ``hearth plan``; returns the exit status."""
    args = build_parser().parse_args(argv)
    try:
        ctx = _context(args.ctx)
        model = read_model(args.model)
        if args.hardware is not None:
            hardware = _load_report(args.hardware)
        else:
            from app.hardware import detect_hardware

            hardware = detect_hardware()
        wishes = Wishes(
            context=ctx,  # type: ignore[arg-type]
            priority=args.priority,
            pins=Pins(n_gpu_layers=args.n_gpu_layers, flash_attn=args.flash_attn,
                      cache_type_k=args.cache_type_k, cache_type_v=args.cache_type_v),
            margin=args.margin_mib * (1 << 20),
            allow_quantized_kv=not args.no_quantized_kv,
            cpu_only=args.cpu_only,
        )

        def replan(corr: Mapping[str, Correction]) -> LaunchPlan:
            return plan(model, hardware, wishes, corr)

        result = replan({})
        probe_note = None
        if args.hardware is None and not args.no_probe and result.fits:
            confirmation = confirm(replan, result)
            result = confirmation.plan
            probe_note = confirmation.note
        elif args.hardware is not None:
            probe_note = "Not checked with the dry run: the plan is for a recorded machine."
    except (GGUFError, PlannerError, OSError, ValueError) as exc:
        print(f"hearth plan: {exc}", file=sys.stderr)
        return 2
    if args.json:
        out = result.to_json()
        out["runner_args"] = result.runner_args()
        if probe_note:
            out["probe"] = probe_note
        print(json.dumps(out, indent=2))
    else:
        print(render(result, probe_note))
    return 0 if result.fits else 1


def _load_report(path: Path) -> Any:
    from app.hardware import HardwareReport

    try:
        data = json.loads(path.read_text("utf-8"))
    except (OSError, ValueError) as exc:
        raise PlannerError(f"Cannot read the hardware report {path}: {exc}.") from exc
    return HardwareReport.from_json(data)


def render(p: LaunchPlan, probe_note: str | None = None) -> str:
    """The plan as text for a terminal."""
    s = p.settings
    lines = [p.model.summary(), ""]
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
    lines += [f"- {r}" for r in p.reasons]
    if probe_note and probe_note not in p.reasons:
        lines.append(f"- {probe_note}")
    return "\n".join(lines)


def _g(n: int) -> str:
    return f"{n / GiB:.2f}"
