"""Installed-app benchmark: the frozen app's start-up and its runner's decode speed against
the development runner on the same model, in the same run.

    .venv/bin/python installers/freeze.py --dist dist            # or build_deb.py
    .venv/bin/python -m tests.bench.installed --frozen dist/hearth [--deb dist/hearth_*.deb]
        [--rounds 5] [--tokens 256] [--strict]

Start-up: ``hearth --check-start`` from launch to its "window shown" line (printed on the
event loop's first turn after the window was shown; then the app quits): the first run after
the page cache was dropped (when this user may drop it) and the median of the rest, beside
``python -m app --check-start`` of the checkout. Target: ≤ 2 s.
Decode: the frozen ``hearth-runner`` and ``python -m runner`` take turns with the same portable
CPU runtime (the frozen app's own copy and the checkout's), each first in every other round,
so a noisy neighbour and the order cost both alike; the figure is the ratio of their medians.
Target ≥ 0.97. ``--deb``: the package's size against the 150 MB target.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from tests.bench.runtimes import GEMMA, decode_speed
from tests.fixtures.models import BENCH, model_path

REPO = Path(__file__).resolve().parents[2]
START_TARGET_S = 2.0
DECODE_TARGET = 0.97
DEB_TARGET_MB = 150


def drop_page_cache() -> bool:
    """Make the next start a cold one (root only; the kernel may refuse in a container)."""
    try:
        os.sync()
        Path("/proc/sys/vm/drop_caches").write_text("3\n")
        return True
    except OSError:
        return False


def start_time(argv: list[str], home: Path) -> float:
    env = {k: v for k, v in os.environ.items() if k not in ("HEARTH_RUNTIME", "HEARTH_RUNNER")}
    env.update(HEARTH_HOME=str(home), QT_QPA_PLATFORM=env.get("QT_QPA_PLATFORM", "offscreen"))
    started = time.perf_counter()
    proc = subprocess.Popen([*argv, "--check-start"], env=env, cwd=REPO, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    assert proc.stdout is not None
    took = 0.0
    for line in proc.stdout:  # the line comes on the event loop's first turn after show()
        if "window shown" in line:
            took = time.perf_counter() - started
    if proc.wait(timeout=120) != 0 or not took:
        raise SystemExit(f"{argv[0]} did not show its window (exit code {proc.returncode})")
    return took


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--frozen", type=Path, required=True, help="the folder freeze.py made")
    parser.add_argument("--deb", type=Path, help="a .deb made by installers/linux/build_deb.py")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--tokens", type=int, default=256)
    parser.add_argument("--strict", action="store_true", help="exit 1 when a target is missed")
    args = parser.parse_args(argv)
    frozen = args.frozen.resolve()
    exe = ".exe" if os.name == "nt" else ""
    missed = False

    if args.deb is not None:
        mb = args.deb.stat().st_size / 1e6
        missed |= mb > DEB_TARGET_MB
        print(f"## Package\n\n{args.deb.name}: {mb:.1f} MB (target ≤ {DEB_TARGET_MB} MB: "
              f"{'met' if mb <= DEB_TARGET_MB else 'MISSED'})\n")

    with tempfile.TemporaryDirectory() as home:
        cold = drop_page_cache()
        first = start_time([str(frozen / f"hearth{exe}")], Path(home))
        frozen_runs, dev_runs = [], []
        for _ in range(args.rounds):
            frozen_runs.append(start_time([str(frozen / f"hearth{exe}")], Path(home)))
            dev_runs.append(start_time([sys.executable, "-m", "app"], Path(home)))
    median = statistics.median(frozen_runs)
    ok = first <= START_TARGET_S and median <= START_TARGET_S
    missed |= not ok
    print("## Start-up: launch to the window shown (`--check-start`)\n")
    print("| | first run | median of the rest |\n|---|---|---|")
    print(f"| frozen app | {first:.2f} s{' (page cache dropped)' if cold else ''} | "
          f"{median:.2f} s |")
    print(f"| `python -m app` | | {statistics.median(dev_runs):.2f} s |")
    print(f"\nTarget ≤ {START_TARGET_S} s: {'met' if ok else 'MISSED'}\n")

    runtime = "cpu-portable"
    model = GEMMA if GEMMA.exists() else model_path(BENCH)
    installed = [str(frozen / f"hearth-runner{exe}")]
    dev_rt, frozen_rt = REPO / ".venv" / "runtimes" / runtime, frozen / "runtimes" / runtime
    dev, inst = [], []
    for i in range(args.rounds):  # each goes first in every other round (ABBA)
        pair = [(dev, dev_rt, None), (inst, frozen_rt, installed)]
        for into, folder, program in pair if i % 2 == 0 else pair[::-1]:
            into.append(decode_speed(model, folder, args.tokens, program=program))
    d, i = statistics.median(dev), statistics.median(inst)
    ratio = i / d if d else 0.0
    missed |= ratio < DECODE_TARGET
    print(f"## Decode tokens/s on {model.name}, {runtime} ({args.rounds} alternating rounds of "
          f"{args.tokens} tokens)\n")
    print("| development runner | installed runner | ratio | target |\n|---|---|---|---|")
    print(f"| {d:.1f} | {i:.1f} | {ratio:.3f} | ≥ {DECODE_TARGET} "
          f"{'met' if ratio >= DECODE_TARGET else 'MISSED'} |")
    return 1 if args.strict and missed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
