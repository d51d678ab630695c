"""Decode speed on a busy desktop: another program keeps one core busy.

llama.cpp waits for its slowest thread at every operation, so a thread that shares its core with
another program slows every step. Rows, all in the same run, each the median of ``--rounds``
streamed requests (``--tokens`` tokens each, decode tokens/s measured by the client):

- idle machine: the runner with the plan's thread count (one per physical core, today's
  choice), Hearth's automatic choice (``--adapt-threads``), llama-server's defaults;
- one core busy: a sweep over fixed thread counts, Hearth's automatic choice loaded while the
  core was busy, Hearth's automatic choice loaded on the idle machine before the program started
  (it must notice), llama-server's defaults, and with ``--knobs`` llama-server with llama.cpp's
  own knobs (polling 0, high priority, a CPU mask, strict placement).

Targets: automatic >= 0.9x the best of the sweep with the core busy; automatic >= 0.97x the
plan's count on the idle machine. ``--strict`` exits 1 when one is missed.

    .venv/bin/python -m tests.bench.contention [--model PATH] [--rounds 3] [--tokens 256]
        [--llama-server PATH] [--knobs] [--strict]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import statistics
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx2

from runner.settings import physical_cores
from tests.bench.concurrency import has_text, llama_server
from tests.fixtures.models import BENCH, model_path
from tests.integration.conftest import spawn_runner, stop_runner

BUSY = [sys.executable, "-c", "while True: pass"]  # the stand-in: one core, always runnable


@contextlib.contextmanager
def busy_core() -> Iterator[None]:
    p = subprocess.Popen(BUSY)
    try:
        time.sleep(0.5)  # let the scheduler place it
        yield
    finally:
        p.kill()
        p.wait()


class Server:
    """One started server: the runner (with flags) or llama-server; ``url``, ``key``, ``stop``."""

    def __init__(self, name: str, args: list[str], model: Path, binary: Path | None = None) -> None:
        self.name = name
        if binary is None:
            self.proc: Any = spawn_runner("--ctx-size", "4096", *args, model=model)
            self.proc.wait_listening()
            self.proc.wait_ready()
            self.url, self.key = self.proc.url, self.proc.key
        else:
            self.proc, self.url, self.key = llama_server(binary, model, 4096, args)

    def stop(self) -> None:
        if isinstance(self.proc, subprocess.Popen):
            self.proc.terminate()
            self.proc.wait(10)
        else:
            stop_runner(self.proc)

    def status(self) -> dict[str, Any]:
        if isinstance(self.proc, subprocess.Popen):
            return {}
        r = httpx2.get(f"{self.url}/runner/status", headers={"Authorization": f"Bearer {self.key}"},
                       trust_env=False)
        return dict(r.json())


def decode_tps(server: Server, tokens: int, seed: int) -> float:
    """Decode tokens/s of one streamed reply: tokens after the first over the time they took."""
    body = {"messages": [{"role": "user", "content": f"{seed}: tell me a long story"}],
            "max_tokens": tokens, "ignore_eos": True, "stream": True, "seed": seed,
            "temperature": 0}
    stamps: list[float] = []
    with httpx2.Client(base_url=server.url, headers={"Authorization": f"Bearer {server.key}"},
                       timeout=None, trust_env=False) as http, \
            http.stream("POST", "/v1/chat/completions", json=body) as resp:
        resp.raise_for_status()
        for line in resp.iter_lines():
            if has_text(line):
                stamps.append(time.perf_counter())
    if len(stamps) < 2:
        raise SystemExit(f"{server.name}: only {len(stamps)} tokens came back")
    return (len(stamps) - 1) / (stamps[-1] - stamps[0])


def measure(servers: list[Server], rounds: int, tokens: int) -> dict[str, float]:
    """Median decode tokens/s per server, the servers taking turns each round, in a rotated order
    (drift and going first fall on all alike)."""
    for s in servers:
        decode_tps(s, 16, -1)  # warm-up
    got: dict[str, list[float]] = {s.name: [] for s in servers}
    for r in range(rounds):
        for s in servers[r % len(servers):] + servers[:r % len(servers)]:  # each goes first once
            got[s.name].append(decode_tps(s, tokens, r))
    return {name: statistics.median(v) for name, v in got.items()}


def started(specs: list[tuple[str, list[str], Path | None]], model: Path) -> list[Server]:
    out: list[Server] = []
    try:
        for name, args, binary in specs:
            out.append(Server(name, args, model, binary))
    except BaseException:
        for s in out:
            s.stop()
        raise
    return out


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", type=Path, help="GGUF file (default: the bench model)")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--tokens", type=int, default=256)
    ap.add_argument("--llama-server", type=Path, metavar="PATH",
                    help="also measure this native llama-server with its default threads")
    ap.add_argument("--knobs", action="store_true",
                    help="with --llama-server: also llama.cpp's polling, priority and CPU mask")
    ap.add_argument("--strict", action="store_true", help="exit 1 when a target is missed")
    args = ap.parse_args(argv)
    model = args.model or model_path(BENCH)
    cores = physical_cores()
    plan = str(cores)
    auto = ["--threads", plan, "--adapt-threads"]
    peer = args.llama_server

    print(f"{model.name}: {cores} physical cores; {args.rounds} rounds of {args.tokens} tokens; "
          "decode tokens/s (client-side medians)")
    # 1. The idle machine. The automatic runner loaded here stays up for part 2.
    idle_specs: list[tuple[str, list[str], Path | None]] = [
        (f"plan ({plan} threads)", ["--threads", plan], None), ("automatic", auto, None)]
    if peer:
        idle_specs.append(("llama-server defaults", [], peer))
    idle = started(idle_specs, model)
    early = idle[1]
    try:
        idle_tps = measure(idle, args.rounds, args.tokens)
        before = early.status().get("threads", {})
        for s in idle:
            if s is not early:
                s.stop()
        # 2. One core busy.
        with busy_core():
            specs: list[tuple[str, list[str], Path | None]] = [
                (f"{n} thread{'s' * (n > 1)}", ["--threads", str(n)], None)
                for n in range(1, cores + 1)]
            specs.append(("automatic, loaded while busy", auto, None))
            if peer:
                specs.append(("llama-server defaults", [], peer))
                if args.knobs:
                    mask = hex((1 << cores) - 1)
                    specs += [("llama-server --poll 0", ["--poll", "0"], peer),
                              ("llama-server --prio 2", ["--prio", "2"], peer),
                              (f"llama-server -C {mask} --cpu-strict 1",
                               ["-C", mask, "--cpu-strict", "1"], peer)]
            busy = started(specs, model)
            early.name = "automatic, loaded before the program started"
            try:
                busy_tps = measure([*busy, early], args.rounds, args.tokens)
                statuses = {s.name: s.status().get("threads", {}) for s in [*busy, early]}
            finally:
                for s in busy:
                    s.stop()
    finally:
        early.stop()

    print("\nidle machine")
    base = idle_tps[f"plan ({plan} threads)"]
    for name, tps in idle_tps.items():
        print(f"  {name:<48} {tps:8.1f}  {tps / base:5.2f}x the plan's count")
    print(f"  (automatic chose {before.get('threads')} threads; measured "
          f"{json.dumps(before.get('tokens_per_second'))})")
    print("\none core kept busy by another program")
    sweep = {k: v for k, v in busy_tps.items() if k.endswith(("thread", "threads"))}
    best_name = max(sweep, key=lambda k: sweep[k])
    best = sweep[best_name]
    for name, tps in busy_tps.items():
        note = ""
        if statuses.get(name):
            st = statuses[name]
            note = f"  (uses {st.get('threads')}; trials {st.get('trials')})"
        print(f"  {name:<48} {tps:8.1f}  {tps / best:5.2f}x the sweep's best{note}")

    a_idle = idle_tps["automatic"] / base
    a_busy = busy_tps["automatic, loaded while busy"] / best
    a_late = busy_tps["automatic, loaded before the program started"] / best
    print(f"\ntargets: automatic with a busy core {a_busy:.2f}x the best of the sweep "
          f"({best_name}; target >= 0.90); loaded before the program started {a_late:.2f}x "
          f"(target >= 0.90); idle machine {a_idle:.2f}x the plan's count (target >= 0.97)")
    missed = a_busy < 0.9 or a_late < 0.9 or a_idle < 0.97
    if missed:
        print("a target was missed")
    return 1 if missed and args.strict else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
