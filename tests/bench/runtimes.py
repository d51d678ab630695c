"""Runtime benchmark: each runtime's self-test, and the portable CPU runtime's decode speed
against the built-in llama-cpp-python build on the same model, in the same run.

The two runners take turns, each first in every other round (the second of two back-to-back
runs measured slower), so a noisy neighbour and the order cost both alike; the figure is the
ratio of their medians. Target: portable ≥ 0.97× built-in.

    .venv/bin/python -m tests.bench.runtimes [--rounds 5] [--tokens 256] [--strict]
        [--runtime NAME ...]   # default: every runtime found (python3 installers/build_runtime.py)
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import httpx2

from app.runtimes.catalog import list_runtimes
from tests.fixtures.models import BENCH, model_path
from tests.integration.conftest import spawn_runner, stop_runner

REPO = Path(__file__).resolve().parents[2]
GEMMA = REPO / "tests" / ".models" / "gemma-3-270m-q4_k_m.gguf"
TARGET = 0.97


def selftest(folder: Path | None) -> dict[str, Any]:
    pre = ["--runtime", str(folder)] if folder is not None else []
    done = subprocess.run([sys.executable, "-m", "runner", *pre, "selftest", "--json"],
                          cwd=REPO, capture_output=True, text=True, timeout=300)
    lines = [ln for ln in done.stdout.splitlines() if ln.startswith("{")]
    return json.loads(lines[-1]) if lines else {"ok": False, "error": done.stderr[-300:]}


def decode_speed(model: Path, folder: Path | None, tokens: int,
                 program: Sequence[str] | None = None) -> float:
    """Decode tokens/s of one streamed completion (time to first token excluded);
    ``program`` replaces ``python -m runner`` (an installed runner)."""
    r = spawn_runner("--ctx-size", "1024", "--parallel", "1", model=model, runtime=folder,
                     program=program)
    try:
        r.wait_listening()
        r.wait_ready(timeout=120)
        body = {"prompt": "Once upon a time", "max_tokens": tokens, "temperature": 0,
                "stream": True, "ignore_eos": True}
        with httpx2.Client(base_url=r.url, headers=r.headers, timeout=120) as http:
            first = 0.0
            n = 0
            with http.stream("POST", "/v1/completions", json=body) as resp:
                resp.raise_for_status()
                for line in resp.iter_lines():
                    if line.startswith("data: ") and line != "data: [DONE]" and '"text"' in line:
                        n += 1
                        if not first:
                            first = time.perf_counter()
            end = time.perf_counter()
        return (n - 1) / (end - first) if n > 1 and end > first else 0.0
    finally:
        stop_runner(r)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--tokens", type=int, default=256)
    parser.add_argument("--runtime", action="append", help="only these runtimes (by name)")
    parser.add_argument("--strict", action="store_true", help="exit 1 when a target is missed")
    args = parser.parse_args(argv)

    runtimes = [rt for rt in list_runtimes() if not rt.problem
                and (not args.runtime or rt.name in args.runtime or rt.builtin)]
    print("## Self-test per runtime\n")
    for rt in runtimes:
        report = selftest(rt.path)
        for d in report.get("devices", []):
            state = "ok" if d.get("ok") else f"FAILED: {d.get('error')}"
            print(f"- {rt.name}: {d['device']} ({d['description']}) {state}, "
                  f"{d.get('tokens_per_s', 0)} tokens/s, load {d.get('load_s', 0)} s, "
                  f"{d.get('layers_on_device', 0)} layers on the device"
                  + (f", CPU variant {report['cpu_variant']}" if report.get("cpu_variant")
                     else ""))
        if not report.get("devices"):
            print(f"- {rt.name}: FAILED: {report.get('error')}")

    portable = next((rt for rt in runtimes if rt.name == "cpu-portable"), None)
    if portable is None:
        print("\nNo portable CPU runtime: python3 installers/build_runtime.py cpu")
        return 1 if args.strict else 0
    missed = False
    models = [model_path(BENCH)] + ([GEMMA] if GEMMA.exists() else [])
    print(f"\n## Decode tokens/s, portable CPU runtime against the built-in build "
          f"({args.rounds} alternating rounds of {args.tokens} tokens)\n")
    print("| model | built-in | cpu-portable | ratio | target |")
    print("|---|---|---|---|---|")
    for model in models:
        base: list[float] = []
        port: list[float] = []
        for i in range(args.rounds):
            # ABBA: whichever runs second in a round was measured slower here, so each goes
            # first in half the rounds.
            pair = [(base, None), (port, portable.path)]
            for into, folder in pair if i % 2 == 0 else pair[::-1]:
                into.append(decode_speed(model, folder, args.tokens))
        b, p = statistics.median(base), statistics.median(port)
        ratio = p / b if b else 0.0
        ok = ratio >= TARGET
        missed |= not ok
        print(f"| {model.name} | {b:.1f} | {p:.1f} | {ratio:.3f} | ≥ {TARGET} "
              f"{'met' if ok else 'MISSED'} |")
    return 1 if args.strict and missed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
