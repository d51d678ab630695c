"""Distributed benchmark: a model split over two RPC workers on loopback against the same model
loaded locally, in the same run; and the bytes and round trips each token costs on the wire.

Both loads use the portable CPU runtime (the built-in build has no RPC). The two set-ups take
turns, each first in every other round (ABBA), and the figures are the ratios of their medians.
Loopback has no network latency, so a third run puts a counting proxy in front of each worker and
measures what one decoded token exchanges; from that the benchmark estimates what a LAN adds per
token (round trips × the network's round-trip time + bytes ÷ its bandwidth).

    .venv/bin/python -m tests.bench.distributed [--rounds 4] [--tokens 128] [--model PATH]

No target: the issue asks for the figures (a split over machines is for models that fit no
single one, not for speed).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import signal
import socket
import statistics
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx2

from runner.settings import physical_cores
from tests.fixtures.models import BENCH, model_path
from tests.integration.conftest import spawn_runner, stop_runner
from tests.integration.test_runtimes import portable

REPO = Path(__file__).resolve().parents[2]
GEMMA = REPO / "tests" / ".models" / "gemma-3-270m-q4_k_m.gguf"
PROMPT = ("Write a short story about a lighthouse keeper who finds a message in a bottle. "
          "Describe the sea, the weather, the keeper's daily routine and the message itself. ")
# (name, round-trip time in ms, bandwidth in bit/s) of the networks the estimate is made for.
NETWORKS = (("gigabit Ethernet", 0.3, 1e9), ("Wi-Fi 5", 3.0, 300e6))


@dataclass
class Run:
    ttft_s: float
    decode_tps: float
    tokens: int


@contextlib.contextmanager
def workers(n: int, rt: Path) -> Iterator[list[str]]:
    procs = []
    try:
        for _ in range(n):
            p = subprocess.Popen(
                [sys.executable, "-m", "runner", "--runtime", str(rt), "rpc-worker", "--port",
                 "0", "--threads", str(physical_cores()), "--watch-stdin"],
                cwd=REPO, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL)
            procs.append(p)
        endpoints = []
        for p in procs:
            assert p.stdout is not None
            endpoints.append(json.loads(p.stdout.readline())["endpoint"])
        yield endpoints
    finally:
        for p in procs:
            p.send_signal(signal.SIGTERM)
            p.wait(10)


def measure(model: Path, rt: Path, tokens: int, rpc: list[str] | None) -> Run:
    extra = ["--rpc", ",".join(rpc), "--tensor-split", ",".join("1" * len(rpc))] if rpc else []
    r = spawn_runner("--ctx-size", "1024", *extra, model=model, runtime=rt)
    try:
        r.wait_listening()
        r.wait_ready(timeout=300)
        body = {"prompt": PROMPT, "max_tokens": tokens, "temperature": 0, "stream": True,
                "ignore_eos": True}
        with httpx2.Client(base_url=r.url, headers=r.headers, timeout=300) as http:
            start = time.perf_counter()
            first = 0.0
            n = 0
            with http.stream("POST", "/v1/completions", json=body) as resp:
                resp.raise_for_status()
                for line in resp.iter_lines():
                    if line.startswith("data: ") and '"text"' in line:
                        n += 1
                        if not first:
                            first = time.perf_counter()
            end = time.perf_counter()
        return Run(first - start, (n - 1) / (end - first) if n > 1 else 0.0, n)
    finally:
        stop_runner(r)


class CountingProxy(threading.Thread):
    """Forwards one TCP connection to ``target`` and counts what crosses it.

    ``round_trips`` counts each turn from the worker answering back to the runner asking: on a
    LAN each costs one network round trip."""

    def __init__(self, target: str) -> None:
        super().__init__(daemon=True)
        host, port = target.rsplit(":", 1)
        self.target = (host, int(port))
        self.listener = socket.socket()
        self.listener.bind(("127.0.0.1", 0))
        self.listener.listen(1)
        self.endpoint = f"127.0.0.1:{self.listener.getsockname()[1]}"
        self.bytes = 0
        self.round_trips = 0
        self._last = ""
        self._lock = threading.Lock()

    def snapshot(self) -> tuple[int, int]:
        with self._lock:
            return self.bytes, self.round_trips

    def _pump(self, src: socket.socket, dst: socket.socket, direction: str) -> None:
        with contextlib.suppress(OSError):
            while data := src.recv(1 << 16):
                with self._lock:
                    self.bytes += len(data)
                    if direction == "ask" and self._last != "ask":
                        self.round_trips += 1
                    self._last = direction
                dst.sendall(data)
        with contextlib.suppress(OSError):
            dst.shutdown(socket.SHUT_WR)

    def run(self) -> None:
        while True:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            server = socket.create_connection(self.target)
            for s in (client, server):
                s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            threading.Thread(target=self._pump, args=(server, client, "answer"),
                             daemon=True).start()
            self._pump(client, server, "ask")


def wire_cost(model: Path, rt: Path, tokens: int) -> tuple[float, float]:
    """(bytes, round trips) per decoded token, over both workers."""
    with workers(2, rt) as eps:
        proxies = [CountingProxy(e) for e in eps]
        for p in proxies:
            p.start()
        r = spawn_runner("--ctx-size", "1024", "--rpc", ",".join(p.endpoint for p in proxies),
                         "--tensor-split", "1,1", model=model, runtime=rt)
        try:
            r.wait_listening()
            r.wait_ready(timeout=300)
            body = {"prompt": PROMPT, "max_tokens": tokens, "temperature": 0, "stream": True,
                    "ignore_eos": True}
            with httpx2.Client(base_url=r.url, headers=r.headers, timeout=300) as http, \
                    http.stream("POST", "/v1/completions", json=body) as resp:
                n = 0
                before = (0, 0)
                for line in resp.iter_lines():
                    if line.startswith("data: ") and '"text"' in line:
                        n += 1
                        if n == 1:  # from the first token on: decode only, no prompt
                            before = tuple(map(sum, zip(*(p.snapshot() for p in proxies),
                                                        strict=True)))  # type: ignore[assignment]
                after = tuple(map(sum, zip(*(p.snapshot() for p in proxies), strict=True)))
        finally:
            stop_runner(r)
            for p in proxies:
                p.listener.close()
    decoded = max(1, n - 1)
    return (after[0] - before[0]) / decoded, (after[1] - before[1]) / decoded


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=4)
    parser.add_argument("--tokens", type=int, default=128)
    parser.add_argument("--model", type=Path, action="append",
                        help="models to split (default: the real Gemma 3 270M if present and "
                             "a generated one)")
    args = parser.parse_args(argv)
    rt = portable()
    models = args.model or ([GEMMA] if GEMMA.exists() else []) + [model_path(BENCH)]
    print(f"## Split over two RPC workers on loopback against a local load "
          f"({args.rounds} alternating rounds of {args.tokens} tokens, portable CPU runtime, "
          f"{physical_cores()} threads)\n")
    print("| model | local decode t/s | split decode t/s | ratio | local TTFT ms | split TTFT "
          "ms | ratio | bytes/token | round trips/token |")
    print("|---|---|---|---|---|---|---|---|---|")
    costs = []
    for model in models:
        local: list[Run] = []
        split: list[Run] = []
        with workers(2, rt) as eps:
            for i in range(args.rounds):
                pair = [(local, None), (split, eps)]
                for into, rpc in pair if i % 2 == 0 else pair[::-1]:
                    into.append(measure(model, rt, args.tokens, rpc))
        ld = statistics.median(r.decode_tps for r in local)
        sd = statistics.median(r.decode_tps for r in split)
        lt = statistics.median(r.ttft_s for r in local) * 1000
        st = statistics.median(r.ttft_s for r in split) * 1000
        per_token, trips = wire_cost(model, rt, args.tokens)
        costs.append((model.name, per_token, trips, sd))
        print(f"| {model.name} | {ld:.1f} | {sd:.1f} | {sd / ld:.3f} | {lt:.0f} | {st:.0f} | "
              f"{st / lt:.2f} | {per_token:,.0f} | {trips:.1f} |")
    print("\n## What a network adds per decoded token (estimate from the bytes and round trips "
          "measured above)\n")
    for name, per_token, trips, sd in costs:
        for net, rtt_ms, bps in NETWORKS:
            added = trips * rtt_ms + per_token * 8 / bps * 1000
            loop_ms = 1000 / sd if sd else 0.0
            print(f"- {name} on {net} (RTT {rtt_ms} ms, {bps / 1e6:.0f} Mbit/s): +{added:.1f} ms "
                  f"per token → about {1000 / (loop_ms + added):.1f} t/s instead of {sd:.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
