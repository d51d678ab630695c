"""What the runner's request and connection limits cost the clients they protect (issue 24).

With the runner on its default limits, measured against the same figures with nothing else going
on (ratios from the same run):

- ``/health`` latency and a concurrent stream's token rate while (a) the largest body the limits
  admit (one message just under ``--max-body-mib``) is sent back to back, and one a second, and
  (b) as many idle connections as ``--max-connections`` admits are held open (topped up as the
  header time-out closes them);
- for reference (no target), the stream's rate while the same bytes are pumped between two other
  processes over loopback: what moving them costs a machine whose cores the stream needs;
- (c) the same two figures while the largest enum the default limits admit (1,000 values, its
  grammar just under ``--max-grammar-bytes``) is asked for again and again, one request after
  another, each built on the grammar thread;
- for reference (no target), the same two figures on a runner whose limits admit a 60,000-value enum
  (``--max-schema-items 100000 --max-grammar-bytes 4000000``), while that enum's grammar is
  being built (on the grammar thread: converted, then parsed by llama.cpp), against that
  runner alone; its request is dropped before the build ends, so no step samples with it;
- the time to refuse each over-limit request, from its last byte sent to the first byte of the
  answer: a body over the limit (by its Content-Length), too many messages, a foreign Host, and
  the grammar bombs of part 1 (a huge maxLength, an enum over the limit, a huge minItems);
- the chat view's main-thread time to open a 1 MB one-line reply and a 2000×50 table, and per
  streamed update (tests/bench/hostile_view.py, against a normal reply).

Targets: ``/health`` ≤ 100 ms (the worst seen), the stream ≥ 0.8× its rate alone, each refusal
≤ 50 ms, each chat view figure ≤ 100 ms. ``--strict`` exits 1 when one is missed.

    .venv/bin/python -m tests.bench.hostile [--tiny] [--seconds S] [--strict]
"""

from __future__ import annotations

import argparse
import json
import socket
import statistics
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

import httpx2

from runner.limits import Limits
from tests.fixtures.models import BENCH, TINY, model_path
from tests.integration.conftest import Runner, spawn_runner, stop_runner

HEALTH_TARGET_S = 0.100
STREAM_TARGET = 0.8
REFUSAL_TARGET_S = 0.050
STREAM_TOKENS = 256


@dataclass
class Figures:
    health: list[float]
    stream_rate: float


def _address(r: Runner) -> tuple[str, int]:
    parts = urlsplit(r.url)
    assert parts.hostname is not None and parts.port is not None
    return parts.hostname, parts.port


def _health_latencies(r: Runner, stop: threading.Event, out: list[float]) -> None:
    """GET /health every 10 ms on one kept-alive connection until ``stop``."""
    with r.client(timeout=httpx2.Timeout(30.0)) as http:
        while not stop.is_set():
            t0 = time.perf_counter()
            resp = http.get("/health")
            out.append(time.perf_counter() - t0)
            if resp.status_code != 200:
                raise SystemExit(f"/health answered {resp.status_code}: {resp.text}")
            stop.wait(0.01)


def _stream_rate(r: Runner, seed: int) -> float:
    """Tokens per second of one streamed reply, from its first token to its last."""
    body = {"messages": [{"role": "user", "content": f"tell me a story {seed}"}],
            "max_tokens": STREAM_TOKENS, "ignore_eos": True, "stream": True, "seed": seed}
    first = last = 0.0
    n = 0
    with r.client(timeout=httpx2.Timeout(120.0)) as http, \
            http.stream("POST", "/v1/chat/completions", json=body) as resp:
        resp.raise_for_status()
        for line in resp.iter_lines():
            if line.startswith("data: {") and '"content": "' in line and \
                    '"content": ""' not in line:
                n += 1
                last = time.perf_counter()
                first = first or last
    return (n - 1) / (last - first) if n > 1 and last > first else 0.0


def _measure(r: Runner, seconds: float, seed: int) -> Figures:
    """/health latencies over ``seconds`` with a stream (or several, one after another) running
    meanwhile; the stream rate is the mean of those streams."""
    stop = threading.Event()
    latencies: list[float] = []
    poller = threading.Thread(target=_health_latencies, args=(r, stop, latencies))
    poller.start()
    rates = []
    end = time.monotonic() + seconds
    try:
        while time.monotonic() < end or not rates:
            rates.append(_stream_rate(r, seed + len(rates)))
    finally:
        stop.set()
        poller.join()
    return Figures(latencies, statistics.mean(rates))


# ---- the loads ----------------------------------------------------------------------------------

# Sends the largest admitted body again and again on one connection, in a process of its own:
# in the measuring process its work would hold that process's GIL and count against the runner.
_SENDER = """
import json, sys, httpx2
url, key, size, mode = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
if mode == "body":
    overhead = len(json.dumps({"messages": [{"role": "user", "content": ""}], "max_tokens": 1}))
    content = "hello world " * ((size - overhead - 64) // 12)
    body = json.dumps({"messages": [{"role": "user", "content": content}],
                       "max_tokens": 1}).encode()
    assert len(body) <= size
else:  # an enum of `size` values, each as long as the grammar limit lets it be
    width = int(sys.argv[5])
    enum = [f"{i:06d}" + "x" * (width - 6) for i in range(size)]
    body = json.dumps({"messages": [{"role": "user", "content": "hi"}], "max_tokens": 1,
                       "response_format": {"type": "json_schema", "json_schema": {
                           "name": "x", "schema": {"enum": enum}}}}).encode()
with httpx2.Client(base_url=url, headers={"Authorization": "Bearer " + key}, timeout=120,
                   trust_env=False) as http:
    while sys.stdin.readline():  # one line in, one request out: the parent sets the pace
        resp = http.post("/v1/chat/completions", content=body,
                         headers={"Content-Type": "application/json"})
        print(resp.status_code, flush=True)
"""


@contextmanager
def _big_bodies(r: Runner, limits: Limits, every: float = 0.0) -> Iterator[list[int]]:
    """The largest admitted body (one message just under the body limit) in flight, one after
    another (``every`` > 0: one starting every that many seconds); yields the status codes."""
    with _sending(r, [str(limits.max_body_bytes), "body"], every) as codes:
        yield codes


# Values of the largest admitted enum: as many as --max-schema-items allows, each this long,
# which keeps its grammar just under the default --max-grammar-bytes (checked by the 200s).
ENUM_WIDTH = 122  # 131,021 bytes of grammar, the limit 131,072


@contextmanager
def _largest_enums(r: Runner, limits: Limits) -> Iterator[list[int]]:
    """The largest enum the limits admit, asked for again and again; yields the status codes."""
    with _sending(r, [str(limits.max_schema_items), "enum", str(ENUM_WIDTH)], 0.0) as codes:
        yield codes


@contextmanager
def _sending(r: Runner, args: list[str], every: float) -> Iterator[list[int]]:
    """_SENDER with ``args``, one request after another (``every`` > 0: one starting every
    that many seconds); yields the status codes."""
    sender = subprocess.Popen([sys.executable, "-c", _SENDER, r.url, r.key or "", *args],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert sender.stdin is not None and sender.stdout is not None
    stop = threading.Event()
    codes: list[int] = []

    def pace() -> None:
        assert sender.stdin is not None and sender.stdout is not None
        while not stop.is_set():
            start = time.monotonic()
            sender.stdin.write("go\n")
            sender.stdin.flush()
            codes.append(int(sender.stdout.readline()))
            stop.wait(max(0.0, every - (time.monotonic() - start)))

    pacer = threading.Thread(target=pace)
    pacer.start()
    time.sleep(0.5)  # the first one is in flight
    try:
        yield codes
    finally:
        stop.set()
        pacer.join()
        sender.stdin.close()
        sender.wait(30)


# The same bytes pumped between two other processes over loopback: what sending them costs this
# machine's cores without the runner doing anything (a reference, no target).
_SINK = """
import socket
s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen(); print(s.getsockname()[1], flush=True)
c, _ = s.accept()
while c.recv(1 << 20): pass
"""
_PUMP = """
import socket, sys
c = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
blob = b"x" * int(sys.argv[2])
while True: c.sendall(blob)
"""


@contextmanager
def _loopback_pump(size: int) -> Iterator[None]:
    sink = subprocess.Popen([sys.executable, "-c", _SINK], stdout=subprocess.PIPE, text=True)
    assert sink.stdout is not None
    pump = subprocess.Popen([sys.executable, "-c", _PUMP, sink.stdout.readline().strip(),
                             str(size)])
    try:
        yield
    finally:
        for p in (pump, sink):
            p.kill()
            p.wait(10)


@contextmanager
def _idle_connections(r: Runner, n: int) -> Iterator[list[int]]:
    """``n`` idle connections held open, topped up as the runner closes them; yields
    [connections opened in all]."""
    address = _address(r)
    stop = threading.Event()
    opened = [0]
    socks: list[socket.socket] = []

    def top_up() -> None:
        while not stop.is_set():
            for s in list(socks):
                s.settimeout(0)
                try:
                    closed = s.recv(1) == b""
                except BlockingIOError:
                    closed = False
                except OSError:
                    closed = True
                if closed:
                    socks.remove(s)
                    s.close()
            while len(socks) < n and not stop.is_set():
                socks.append(socket.create_connection(address, timeout=5))
                opened[0] += 1
            stop.wait(0.2)

    keeper = threading.Thread(target=top_up)
    keeper.start()
    deadline = time.monotonic() + 30
    while opened[0] < n and time.monotonic() < deadline:
        time.sleep(0.05)
    try:
        yield opened
    finally:
        stop.set()
        keeper.join()
        for s in socks:
            s.close()


# ---- refusals ------------------------------------------------------------------------------------

def _raw_refusal(r: Runner, head: bytes, body: bytes = b"") -> tuple[float, int]:
    """Seconds from the request's last byte to the answer's first, and the answer's status."""
    with socket.create_connection(_address(r), timeout=30) as s:
        s.sendall(head + body)
        t0 = time.perf_counter()
        first = s.recv(65536)
        elapsed = time.perf_counter() - t0
    return elapsed, int(first.split(b" ", 2)[1])


def _post_head(r: Runner, body_length: int, host: str | None = None) -> bytes:
    host = host or _address(r)[0]
    return (f"POST /v1/chat/completions HTTP/1.1\r\nHost: {host}\r\n"
            f"Authorization: Bearer {r.key}\r\nContent-Type: application/json\r\n"
            f"Content-Length: {body_length}\r\n\r\n").encode()


def _refusals(r: Runner, limits: Limits) -> list[tuple[str, float, int]]:
    def timed(name: str, make: Callable[[], tuple[bytes, bytes]]) -> tuple[str, float, int]:
        head, body = make()
        times, status = [], 0
        for _ in range(5):
            t, status = _raw_refusal(r, head, body)
            times.append(t)
        return name, statistics.median(times), status

    def chat(extra: dict[str, object], n_messages: int = 1) -> tuple[bytes, bytes]:
        body = json.dumps({"messages": [{"role": "user", "content": "hi"}] * n_messages,
                          "max_tokens": 1, **extra}).encode()
        return _post_head(r, len(body)), body

    schema = {"type": "json_schema", "json_schema": {"name": "x", "schema": {
        "type": "string", "maxLength": 100_000}}}
    min_items = {"type": "json_schema", "json_schema": {"name": "x", "schema": {
        "type": "array", "items": {"type": "integer"}, "minItems": 10_000_000}}}
    enum = {"type": "json_schema", "json_schema": {"name": "x", "schema": {
        "enum": [f"v{i}" for i in range(limits.max_schema_items + 1)]}}}
    return [
        timed(f"body over {limits.max_body_mib} MiB (413)",
              lambda: (_post_head(r, limits.max_body_bytes + 1), b"")),
        timed(f"{limits.max_messages + 1} messages (400)",
              lambda: chat({}, limits.max_messages + 1)),
        timed("Host: evil.example (421)",
              lambda: (f"GET /v1/models HTTP/1.1\r\nHost: evil.example\r\nAuthorization: "
                       f"Bearer {r.key}\r\n\r\n".encode(), b"")),
        timed("maxLength 100000 (400)", lambda: chat({"response_format": schema})),
        timed(f"enum of {limits.max_schema_items + 1} (400)",
              lambda: chat({"response_format": enum})),
        timed("minItems 10000000 (400)", lambda: chat({"response_format": min_items})),
    ]


# ---- (c) a grammar being built ---------------------------------------------------------------------

GRAMMAR_LIMITS = ("--max-schema-items", "100000", "--max-grammar-bytes", "4000000",
                  "--max-grammar-seconds", "120")


def _building(r: Runner) -> bool:
    status = httpx2.get(r.url + "/runner/status", headers=r.headers, trust_env=False,
                        timeout=30).json()
    return bool(status["requests"].get("building_grammar"))


@contextmanager
def _grammar_being_built(r: Runner) -> Iterator[Callable[[], bool]]:
    """A 60,000-value enum sent on a socket of its own, its build begun; yields "is it still
    being built?". The socket is closed at the end: the runner drops the request."""
    enum = {"enum": [f"value-{i}" for i in range(60_000)]}
    body = json.dumps({"messages": [{"role": "user", "content": "hi"}], "max_tokens": 1,
                       "response_format": {"type": "json_schema",
                                           "json_schema": {"name": "x", "schema": enum}}}).encode()
    with socket.create_connection(_address(r), timeout=30) as sock:
        sock.sendall(_post_head(r, len(body)) + body)
        deadline = time.monotonic() + 60
        while not _building(r):
            if time.monotonic() > deadline:
                raise SystemExit("the enum's grammar build did not begin within 60 s")
            time.sleep(0.01)
        yield lambda: _building(r)


def _grammar_figures(model: Path, seconds: float) -> tuple[Figures, Figures, bool]:
    """(alone, while a grammar is built, whether it was still being built at the end)."""
    r = spawn_runner(*GRAMMAR_LIMITS, model=model)
    try:
        r.wait_listening()
        r.wait_ready(180)
        _stream_rate(r, 0)  # warm up
        alone = _measure(r, seconds, 400)
        with _grammar_being_built(r) as building:
            during = _measure(r, seconds, 500)
            still = building()
    finally:
        if r.process.poll() is None:
            stop_runner(r)
    return alone, during, still


# ---- report --------------------------------------------------------------------------------------

def _p95(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]


def _chat_view() -> list[str]:
    """The chat view's main-thread time for the biggest replies (tests/bench/hostile_view.py);
    the targets missed."""
    import os

    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from tests.bench.hostile_view import measure

    print(f"\n{'chat view (main-thread CPU, median)':52}{'CPU':>9}{'wall':>9}{'target':>9}")
    missed = []
    for f in measure():
        target = f"{f.target_ms:.0f} ms" if f.target_ms is not None else "baseline"
        print(f"{f.what:52}{f.ms:>7.1f}ms{f.wall_ms:>7.1f}ms{target:>9}")
        if f.target_ms is not None and f.ms > f.target_ms:
            missed.append(f"chat view, {f.what}: {f.ms:.0f} ms")
    return missed


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tiny", action="store_true", help="the tiny test model (fast, but its "
                                                            "stream measures mostly Python)")
    parser.add_argument("--seconds", type=float, default=6.0, help="each measurement's length")
    parser.add_argument("--strict", action="store_true", help="exit 1 when a target is missed")
    args = parser.parse_args(argv)
    limits = Limits()
    model = model_path(TINY if args.tiny else BENCH)
    r = spawn_runner(model=model)
    missed: list[str] = []
    try:
        r.wait_listening()
        r.wait_ready(180)
        _stream_rate(r, 0)  # warm up: the first request pays for caches
        status = httpx2.get(r.url + "/runner/status", headers=r.headers, trust_env=False).json()
        cap = status.get("connections", {}).get("max", limits.max_connections)
        print(f"model {model.name}; default limits; connection cap in effect {cap}")
        alone = _measure(r, args.seconds, 100)
        with _big_bodies(r, limits) as codes:
            body = _measure(r, args.seconds, 200)
        with _big_bodies(r, limits, every=1.0) as paced_codes:
            paced = _measure(r, args.seconds, 250)
        with _loopback_pump(limits.max_body_bytes):
            pumped = _measure(r, args.seconds, 280)
        with _idle_connections(r, cap) as opened:
            idle = _measure(r, args.seconds, 300)
        with _largest_enums(r, limits) as enum_codes:
            enums = _measure(r, args.seconds, 350)
        if set(enum_codes) != {200}:
            raise SystemExit(f"the largest admitted enum was answered {sorted(set(enum_codes))}")
        print(f"\n{'':38}{'/health p50':>12}{'p95':>9}{'worst':>9}{'stream tok/s':>14}"
              f"{'× alone':>9}")
        rows = [("alone", alone, ""),
                (f"(a) {len(codes)} bodies of {limits.max_body_mib} MiB back to back", body,
                 f" (answers: {sorted(set(codes))})"),
                (f"(a) {len(paced_codes)} of them, one a second", paced, ""),
                (f"(b) {cap} idle connections", idle, f" ({opened[0]} opened)"),
                (f"(c) {len(enum_codes)} enums of {limits.max_schema_items} back to back", enums,
                 "")]
        for name, f, note in rows:
            ratio = f.stream_rate / alone.stream_rate if alone.stream_rate else 0.0
            print(f"{name:38}{statistics.median(f.health) * 1e3:>10.1f}ms"
                  f"{_p95(f.health) * 1e3:>7.1f}ms{max(f.health) * 1e3:>7.1f}ms"
                  f"{f.stream_rate:>14.1f}{ratio:>9.2f}{note}")
            if f is not alone:
                if max(f.health) > HEALTH_TARGET_S:
                    missed.append(f"{name}: /health worst {max(f.health) * 1e3:.0f} ms")
                if ratio < STREAM_TARGET:
                    missed.append(f"{name}: stream {ratio:.2f}× alone")
        ratio = pumped.stream_rate / alone.stream_rate if alone.stream_rate else 0.0
        print(f"{'ref.: same bytes, two other processes':38}{'':26}{pumped.stream_rate:>14.1f}"
              f"{ratio:>9.2f} (no runner work; no target)")
        g_alone, g_during, still = _grammar_figures(model, args.seconds)
        for name, f, note in (("ref.: limits raised, alone", g_alone, ""),
                              ("ref.: a 60,000-value enum being built", g_during,
                               " (no target: over the default limits)" if still else
                               " (its build ended before the measurement)")):
            ratio = f.stream_rate / g_alone.stream_rate if g_alone.stream_rate else 0.0
            print(f"{name:38}{statistics.median(f.health) * 1e3:>10.1f}ms"
                  f"{_p95(f.health) * 1e3:>7.1f}ms{max(f.health) * 1e3:>7.1f}ms"
                  f"{f.stream_rate:>14.1f}{ratio:>9.2f}{note}")
        print(f"\ntargets: /health ≤ {HEALTH_TARGET_S * 1e3:.0f} ms, stream ≥ {STREAM_TARGET}× "
              f"alone, refusal ≤ {REFUSAL_TARGET_S * 1e3:.0f} ms\n")
        print(f"{'refused request':38}{'median':>10}{'status':>8}")
        for name, t, code in _refusals(r, limits):
            print(f"{name:38}{t * 1e3:>8.1f}ms{code:>8}")
            if t > REFUSAL_TARGET_S:
                missed.append(f"refusing {name}: {t * 1e3:.0f} ms")
    finally:
        if r.process.poll() is None:
            stop_runner(r)
    missed += _chat_view()
    if missed:
        print("\nmissed: " + "; ".join(missed))
    return 1 if missed and args.strict else 0


if __name__ == "__main__":
    sys.exit(main())
