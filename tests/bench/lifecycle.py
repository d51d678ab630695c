"""How soon the runner exits when it is asked to, idle and in the middle of a stream.

The tests (tests/integration/test_runner_lifecycle.py) check that it exits by itself, with the
right code, and without first finishing the reply; how soon is this benchmark's figure. The
app waits 3 s after closing the runner's stdin before it kills it (RunnerProcess.stop_and_wait),
so the target is 2 s, the bound those tests used to assert on a quiet machine.

Each figure runs from just before the request to exit to the process's end, median of
``--rounds`` runs on the benchmark model (tests/fixtures/models.py BENCH):

- stdin closed (the app's way), idle and while a 4,000-token reply streams;
- SIGTERM (a service manager's way), idle and while a reply streams;
- the parent killed (SIGKILL) while the runner's stdin is a pipe it shares with another process:
  only the runner's watch on its parent can notice.

The baseline, measured in turns with them: ``python -c pass`` (spawn to exit, the same
interpreter), what any process start and end costs on this machine now.

    .venv/bin/python -m tests.bench.lifecycle [--rounds N] [--strict]
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import statistics
import subprocess
import sys
import textwrap
import time
from collections.abc import Callable
from typing import Any

import httpx2

from app.runner_client.client import iter_sse
from tests.fixtures.models import BENCH, model_path
from tests.integration.conftest import REPO, Runner, spawn_ready

TARGET_S = 2.0


def _stream_started(r: Runner) -> tuple[httpx2.Client, Any]:
    """A 4,000-token completion streaming, read to its second piece."""
    http = r.client()
    body = {"prompt": "the world is warm", "max_tokens": 4000, "ignore_eos": True,
            "stream": True}
    cm = http.stream("POST", "/v1/completions", json=body)
    resp = cm.__enter__()
    lines = iter_sse(resp.iter_lines())
    for _ in range(2):
        next(lines)
    return http, cm


def _exit_s(ask: Callable[[Runner], None], streaming: bool) -> float:
    r = spawn_ready(model=model_path(BENCH))
    http = cm = None
    try:
        if streaming:
            http, cm = _stream_started(r)
        t0 = time.perf_counter()
        ask(r)
        r.process.wait(120)
        return time.perf_counter() - t0
    finally:
        if cm is not None:
            try:
                cm.__exit__(None, None, None)
            except httpx2.HTTPError:
                pass
        if http is not None:
            http.close()
        r.kill()


_PARENT = textwrap.dedent("""
    import subprocess, sys
    child = subprocess.Popen([sys.executable, "-m", "runner", "serve", "--model", sys.argv[1],
                              "--watch-stdin"], stdin=None, stderr=subprocess.DEVNULL)
    print(child.pid, flush=True)
    child.wait()
""")


def _parent_killed_s() -> float:
    """From the parent's SIGKILL to the runner's end; the runner's stdin is inherited (the
    benchmark holds the other end open), so only its watch on its parent notices."""
    env = {**os.environ, "HEARTH_API_KEY": "bench-key", "PYTHONPATH": str(REPO)}
    parent = subprocess.Popen([sys.executable, "-c", _PARENT, str(model_path(BENCH))], cwd=REPO,
                              env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert parent.stdout is not None and parent.stdin is not None
    pid = int(parent.stdout.readline())
    listening = json.loads(parent.stdout.readline())
    headers = {"Authorization": "Bearer bench-key"}
    deadline = time.monotonic() + 120
    while True:
        try:
            if httpx2.get(listening["url"] + "/health", headers=headers, trust_env=False,
                          timeout=30).status_code == 200:
                break
        except httpx2.TransportError:
            pass
        if time.monotonic() > deadline:
            raise SystemExit("the runner did not load within 120 s")
        time.sleep(0.02)
    t0 = time.perf_counter()
    parent.kill()
    parent.wait(30)
    try:
        while _running(pid):
            if time.perf_counter() - t0 > 120:
                os.kill(pid, signal.SIGKILL)
                raise SystemExit(f"the runner {pid} outlived its parent by 120 s")
            time.sleep(0.005)
        return time.perf_counter() - t0
    finally:
        parent.stdin.close()
        parent.stdout.close()


def _running(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split(")")[-1].split()[0] != "Z"
    except OSError:
        return False


def _pass_s() -> float:
    t0 = time.perf_counter()
    subprocess.run([sys.executable, "-c", "pass"], check=True)
    return time.perf_counter() - t0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=3, help="runs per figure (median)")
    parser.add_argument("--strict", action="store_true", help="exit 1 when a target is missed")
    args = parser.parse_args(argv)

    def close_stdin(r: Runner) -> None:
        r.close_stdin()

    def sigterm(r: Runner) -> None:
        r.signal(signal.SIGTERM)

    cases: list[tuple[str, Callable[[], float]]] = [
        ("stdin closed, idle", lambda: _exit_s(close_stdin, False)),
        ("stdin closed, mid-stream", lambda: _exit_s(close_stdin, True)),
        ("SIGTERM, idle", lambda: _exit_s(sigterm, False)),
        ("SIGTERM, mid-stream", lambda: _exit_s(sigterm, True)),
        ("parent killed, idle", _parent_killed_s),
    ]
    times: dict[str, list[float]] = {name: [] for name, _ in cases}
    base: list[float] = []
    for _ in range(args.rounds):  # in turns: the machine's other work weighs on all alike
        for name, run in cases:
            base.append(_pass_s())
            times[name].append(run())
    base_med = statistics.median(base)
    print(f"baseline: python -c pass, spawn to exit {base_med * 1e3:.0f} ms (median of "
          f"{len(base)})\n")
    print(f"{'runner asked to exit':28}{'median':>10}{'worst':>10}{'× baseline':>12}"
          f"{'target':>10}  verdict")
    missed = []
    for name, _ in cases:
        med, worst = statistics.median(times[name]), max(times[name])
        ok = med <= TARGET_S
        if not ok:
            missed.append(name)
        print(f"{name:28}{med:>9.2f}s{worst:>9.2f}s{med / base_med:>12.1f}"
              f"{f'<= {TARGET_S:g} s':>10}  {'met' if ok else 'MISSED'}")
    return 1 if missed and args.strict else 0


if __name__ == "__main__":
    sys.exit(main())
