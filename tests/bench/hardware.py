"""Cold wall time of `hearth hardware --json` (target: 0.5 s or less).

Each run is a fresh interpreter, as a user typing the command would get. The bare interpreter's
start-up is measured in the same run so the figure can be read on any machine.

    .venv/bin/python -m tests.bench.hardware [runs]
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
TARGET_S = 0.5


def wall(argv: list[str]) -> float:
    start = time.perf_counter()
    proc = subprocess.run(argv, cwd=ROOT, capture_output=True, timeout=60)
    elapsed = time.perf_counter() - start
    if proc.returncode != 0:
        raise SystemExit(f"{argv} failed: {proc.stderr.decode(errors='replace')}")
    return elapsed


def main() -> int:
    runs = int(sys.argv[1]) if len(sys.argv) > 1 else 7
    baseline_cmd = [sys.executable, "-c", "pass"]
    hardware_cmd = [sys.executable, "-m", "app.cli.hardware", "--json"]
    wall(hardware_cmd)  # warm the OS file cache for .pyc files, as any second start would be
    base = [wall(baseline_cmd) for _ in range(runs)]
    hw = [wall(hardware_cmd) for _ in range(runs)]
    b, h = statistics.median(base), statistics.median(hw)
    print(f"python -c pass:                  median {b * 1000:6.0f} ms  (min {min(base) * 1000:.0f})")
    print(f"python -m app.cli.hardware --json: median {h * 1000:6.0f} ms  (min {min(hw) * 1000:.0f}, "
          f"max {max(hw) * 1000:.0f})")
    print(f"ratio to bare interpreter: {h / b:.1f}x; detection and imports: {(h - b) * 1000:.0f} ms")
    print(f"target <= {TARGET_S * 1000:.0f} ms: {'met' if h <= TARGET_S else 'MISSED'}")
    return 0 if h <= TARGET_S else 1


if __name__ == "__main__":
    sys.exit(main())
