"""`hearth hardware [--json] [--runner | --runner-json FILE]`: the hardware report on the terminal.

Runnable on its own (``python -m app.cli.hardware``) so its cold start can be measured without the
rest of the app: it imports no Qt and nothing heavy.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from app.hardware.report import GpuInfo, HardwareReport

if TYPE_CHECKING:
    from app.runner_client.command import RunnerProgram

GiB = 1024**3

RUNNER_TIMEOUT = 30.0  # importing llama.cpp and initialising CUDA can take a while


def main(argv: list[str]) -> int:
    """Entry point of `hearth hardware`; ``argv`` excludes the subcommand name."""
    parser = argparse.ArgumentParser(
        prog="hearth hardware",
        description="Show what this computer has for running models.",
    )
    parser.add_argument("--json", action="store_true", help="print the report as JSON")
    group = parser.add_mutually_exclusive_group()
    group.add_argument("--runner", action="store_true",
                       help="also ask the runner which devices its build can use")
    group.add_argument("--runner-json", metavar="FILE",
                       help="merge a saved `hearth-runner devices` output ('-' for stdin)")
    args = parser.parse_args(argv)

    from app.hardware.detect import detect_hardware
    from app.hardware.merge import RunnerDevicesError, merge_runner_devices

    report = detect_hardware()
    warning = ""
    try:
        runner_json = _runner_json(args)
        if runner_json is not None:
            report = merge_runner_devices(report, runner_json)
    except RunnerDevicesError as exc:
        warning = str(exc)
    if args.json:
        print(json.dumps(report.to_json(), indent=2))
    else:
        print(format_report(report))
    if warning:
        print(f"hearth hardware: {warning}", file=sys.stderr)
        return 1
    return 0


def _runner_json(args: argparse.Namespace) -> dict[str, Any] | None:
    from app.hardware.merge import RunnerDevicesError

    if args.runner_json:
        try:
            if args.runner_json == "-":
                text = sys.stdin.read()
            else:
                with open(args.runner_json, encoding="utf-8") as f:
                    text = f.read()
            data = json.loads(text)
        except (OSError, ValueError) as exc:
            raise RunnerDevicesError(f"Cannot read {args.runner_json}: {exc}") from exc
        return data if isinstance(data, dict) else {}
    if args.runner:
        from app.runtimes.select import RuntimeSelection

        # This command's runtime, not chosen (no self-tests on a terminal command): the runner
        # this app starts with no runtime named, which chooses by the same rules.
        return runner_devices(RuntimeSelection().program())
    return None


def runner_devices(program: RunnerProgram | Sequence[str] | None = None) -> dict[str, Any]:
    """What a runner build can use, asked now (free memory included, as the Hardware tab shows
    it): ``program``, by default the runner this app starts with no runtime named (a frozen
    build's own, or ``HEARTH_RUNNER``); the window asks the runtime it chose
    (``RuntimeSelection.chosen_program``). Planning asks through app/runner_client/build.py,
    which caches the answer."""
    from app.runner_client.build import query_runner_devices
    from app.runner_client.command import RunnerProgram

    return query_runner_devices(RunnerProgram.of(program).devices(), timeout=RUNNER_TIMEOUT)


# -- the table -----------------------------------------------------------------------------------


def human_bytes(n: int) -> str:
    if n >= GiB:
        return f"{n / GiB:.1f} GiB"
    if n >= 1024**2:
        return f"{n / 1024**2:.0f} MiB"
    return f"{n} B"


def format_report(report: HardwareReport) -> str:
    """The report as a table for people."""
    cpu, mem = report.cpu, report.memory
    cores = f"{cpu.physical_cores} cores, {cpu.logical_cores} threads"
    if cpu.performance_cores:
        cores += f" ({cpu.performance_cores} performance cores)"
    lines = [
        f"System   {report.os.version} ({report.os.kernel})" if report.os.kernel
        else f"System   {report.os.version}",
        f"CPU      {cpu.model} [{cpu.arch}]",
        f"         {cores}",
        f"         {' '.join(cpu.features) or 'no SIMD features detected'}",
        f"Memory   {human_bytes(mem.total)} total, {human_bytes(mem.available)} available; "
        f"swap {human_bytes(mem.swap_total)} ({human_bytes(mem.swap_free)} free)",
        "",
    ]
    if report.gpus:
        rows = [["#", "GPU", "Backend", "Total", "Free", "Used by others", "Notes"]]
        rows += [_gpu_row(g) for g in report.gpus]
        lines += _table(rows)
    else:
        lines.append("GPUs     none found: models run on the CPU")
    if report.runner is not None:
        r = report.runner
        lines += ["", "Runner build"]
        for d in r.devices:
            lines.append(f"  {d.name:<10} {d.type:<6} {d.description}  "
                         f"{human_bytes(d.free)} free of {human_bytes(d.total)}")
        if r.features:
            missing = [f for f in cpu.features if f not in r.features]
            lines.append(f"  compiled for: {' '.join(r.features)}")
            if missing:
                lines.append(f"  the CPU also has (unused by this build): {' '.join(missing)}")
        for unused in r.unused_gpus:
            lines.append(f"  not used: {unused}")
    lines += ["", "Sources"]
    width = max((len(s.name) for s in report.sources), default=0)
    for s in report.sources:
        state = "ok" if s.present else "not present"
        lines.append(f"  {s.name:<{width}}  {state}{': ' + s.reason if s.reason else ''}")
    return "\n".join(lines)


def _gpu_row(g: GpuInfo) -> list[str]:
    notes = []
    if g.unified:
        notes.append("shares system RAM")
    if g.estimate:
        notes.append("estimate")
    if g.compute_capability:
        notes.append(f"compute {g.compute_capability}")
    if g.other_backends:
        notes.append("also " + ", ".join(g.other_backends))
    if g.runner_device:
        notes.append(f"runner: {g.runner_device}")
    return [str(g.index), g.name, g.backend, human_bytes(g.total), human_bytes(g.free),
            human_bytes(g.used_by_others), "; ".join(notes)]


def _table(rows: list[list[str]]) -> list[str]:
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    right = {3, 4, 5}  # sizes line up on the right
    out = []
    for r in rows:
        cells = [
            c.rjust(w) if i in right else c.ljust(w)
            for i, (c, w) in enumerate(zip(r, widths, strict=True))
        ]
        out.append("  ".join(cells).rstrip())
    return out


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
