"""Concurrency and prompt-cache benchmark for the runner.

1. Total tokens/s and p95 time to first token with 1, 4 and 8 concurrent streaming clients
   (runner started with --parallel 8), each against the single-client figure of the same run,
   and with --llama-server against a native llama-server with the same flags, taking turns.
2. Time to first token per turn over a 10-turn conversation whose history grows to about 3,000
   tokens, with the prompt cache and without it (``cache_prompt: false``), in the same run.
   Each turn sends a short user message; the model's reply goes back into the history. Run on two
   shapes: LLAMA8B_SLICE (two layers of Llama 3.1 8B, the shape most people run) and the small
   BENCH model, whose narrow layers make attention over a long history cost more than its matmuls.
   The baseline, measured in the same run: llama.cpp's own time to decode turn 1's and turn 10's
   new tokens at their positions (what remains when the cache reuses everything it can), and,
   with --llama-server, the same conversations against a native llama-server.

    .venv/bin/python -m tests.bench.concurrency [--quick] [--only clients|conversation]
        [--pause S] [--llama-server PATH] [--gemma]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import secrets
import socket
import statistics
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import httpx2

from tests.fixtures.models import BENCH, LLAMA8B_SLICE, TINY, model_path
from tests.integration.conftest import spawn_runner, stop_runner

GEMMA = Path(__file__).resolve().parents[2] / "tests" / ".models" / "gemma-3-270m-q4_k_m.gguf"
# A person reads the reply and types the next question: seconds between turns (far less than
# anyone takes). The runner decodes the turn boundary meanwhile, as it would in a real chat.
THINK_S = 1.0


# A piece of the reply in an SSE line, in the runner's JSON ("content": "x") and llama-server's
# ("content":"x"); not the empty first delta. A search, not a JSON parse: the client shares the
# machine's cores with the server it measures.
_TEXT = re.compile(r'"content": ?"[^"]')


def has_text(line: str) -> bool:
    """Whether an SSE line carries a piece of the reply."""
    return line.startswith("data: {") and _TEXT.search(line) is not None


async def _stream(http: httpx2.AsyncClient, body: dict[str, Any]) -> tuple[float, int, float]:
    """(time to first token, completion tokens, total seconds) of one streamed request."""
    t0 = time.perf_counter()
    first = 0.0
    n = 0
    async with http.stream("POST", "/v1/chat/completions", json=body) as resp:
        resp.raise_for_status()
        async for line in resp.aiter_lines():
            if has_text(line):
                n += 1
                if not first:
                    first = time.perf_counter() - t0
    return first, n, time.perf_counter() - t0


async def _clients(url: str, key: str, k: int, tokens: int, tag: str) -> tuple[float, float]:
    """Total tokens/s and p95 TTFT with k clients started together."""
    async with httpx2.AsyncClient(base_url=url, headers={"Authorization": f"Bearer {key}"},
                                  timeout=None, trust_env=False) as http:
        # A fresh prompt per client and round: no round is helped by an earlier one's cache.
        bodies = [{"messages": [{"role": "user", "content": f"{tag} client {i}: tell me a story"}],
                   "max_tokens": tokens, "ignore_eos": True, "stream": True, "seed": i}
                  for i in range(k)]
        t0 = time.perf_counter()
        results = await asyncio.gather(*(_stream(http, b) for b in bodies))
        wall = time.perf_counter() - t0
    total = sum(n for _, n, _ in results)
    ttfts = sorted(t for t, _, _ in results)
    p95 = ttfts[min(len(ttfts) - 1, round(0.95 * (len(ttfts) - 1)))]
    return total / wall, p95


Turn = tuple[float, int, int]  # (time to first token s, prompt tokens, tokens reused)


def _conversation(url: str, key: str, history_tokens: int, cache: bool, index: int,
                  pause: float, turns: int = 10, user_tokens: int = 64) -> list[Turn]:
    """One chat whose history grows to about ``history_tokens`` tokens by turn ``turns``.

    Shaped like a real chat: each turn the user asks something short (``user_tokens``) and the
    model's streamed reply, several times longer, goes back into the history as the assistant
    message, exactly as the app sends it. Between turns the user reads and types for ``pause``
    seconds (a person takes far longer); ``index`` makes each conversation's words its own.
    """
    words = "the warm fire of the hearth and the light that is in it with us".split()
    messages: list[dict[str, str]] = []
    out: list[Turn] = []
    with httpx2.Client(base_url=url, headers={"Authorization": f"Bearer {key}"}, timeout=None,
                       trust_env=False) as http:
        # Calibrate: how many tokens this model's vocabulary spends on these words. (A new
        # prompt: it also takes the slot from the last conversation, as "new chat" would.)
        probe = http.post("/v1/completions", json={
            "prompt": f"{index} " + " ".join(words * 10), "max_tokens": 1})
        per_word = probe.json()["usage"]["prompt_tokens"] / (len(words) * 10 + 1)
        n_words = max(1, round(user_tokens / per_word))
        reply_tokens = max(8, history_tokens // turns - user_tokens - _TEMPLATE_TOKENS)
        for turn in range(turns):
            if turn:
                time.sleep(pause)
            text = " ".join(words[(index + turn + j) % len(words)] for j in range(n_words))
            messages.append({"role": "user", "content": f"{text} ?"})
            body = {"messages": messages, "max_tokens": reply_tokens, "ignore_eos": True,
                    "stream": True, "stream_options": {"include_usage": True}, "seed": turn,
                    "cache_prompt": cache}
            t0 = time.perf_counter()
            first, reply, prompt, reused = 0.0, "", 0, 0
            with http.stream("POST", "/v1/chat/completions", json=body) as resp:
                if resp.status_code != 200:
                    raise SystemExit(f"turn {turn + 1} failed: {resp.read().decode()}")
                for line in resp.iter_lines():
                    if not line.startswith("data: {"):
                        continue
                    chunk = json.loads(line[6:])
                    if chunk.get("usage"):
                        prompt = chunk["usage"]["prompt_tokens"]
                        reused = (chunk["usage"].get("prompt_tokens_details") or {}).get(
                            "cached_tokens", reused)
                    if "timings" in chunk:  # llama-server says what it reused here
                        reused = chunk["timings"].get("cache_n", reused)
                    for choice in chunk["choices"]:
                        piece = choice["delta"].get("content")
                        if piece and not first:
                            first = time.perf_counter() - t0
                        reply += piece or ""
            out.append((first, prompt, reused))
            messages.append({"role": "assistant", "content": reply})
    return out


# ChatML around one user message and one reply in the test vocabulary (markers are one token
# each, "user" and "assistant" are spelled letter by letter).
_TEMPLATE_TOKENS = 24
# Each turn's figure with a prompt cache is the median over this many conversations: one time
# to first token is one noisy sample on a shared machine.
CONVERSATIONS = 5


def _conversations(url: str, key: str, history: int, pause: float, cache: bool = True,
                   count: int = CONVERSATIONS) -> list[Turn]:
    _conversation(url, key, 256, cache, -1, 0.0, turns=2)  # warm-up: first-use costs
    runs = [_conversation(url, key, history, cache, i, pause) for i in range(count)]
    return [(statistics.median(run[t][0] for run in runs), *runs[0][t][1:])
            for t in range(len(runs[0]))]


def llama_floor(model: Path, n_ctx: int, shallow: tuple[int, int], deep: tuple[int, int],
                reps: int = 7) -> tuple[float, float]:
    """Seconds llama.cpp itself spends (medians) decoding turn 1's new tokens at turn 1's position
    and turn 10's at turn 10's: the part of each time to first token no runner can remove.

    ``shallow`` and ``deep`` are (position, new tokens). The model is loaded with the runner's
    own settings, in one context with two sequences, each in a KV stream of the runner's size:
    the deep one keeps a history. The two are timed alternately, so the machine's drift falls on
    both alike.
    """
    import random

    import llama_cpp

    from runner.engine import Model
    from runner.settings import LoadSettings, physical_cores

    threads = physical_cores()
    # Two sequences, not unified: each gets its own stream of n_ctx cells and attends only to it.
    settings = LoadSettings(model=str(model), ctx_size=2 * n_ctx, threads=threads,
                            threads_batch=threads, parallel=2)
    m = Model.load(settings)
    batch = llama_cpp.llama_batch_init(settings.batch_size, 0, 1)
    rnd = random.Random(0)

    def decode(seq: int, pos: int, n: int) -> float:
        """Decode n tokens of a sequence at pos (the ids do not change the work); seconds."""
        t0 = time.perf_counter()
        for start in range(0, n, settings.batch_size):
            k = min(settings.batch_size, n - start)
            for j in range(k):
                batch.token[j] = rnd.randrange(m.n_vocab)
                batch.pos[j] = pos + start + j
                batch.n_seq_id[j] = 1
                batch.seq_id[j][0] = seq
                batch.logits[j] = int(j == k - 1)
            batch.n_tokens = k
            if llama_cpp.llama_decode(m.ctx, batch) != 0:
                raise SystemExit("llama_decode failed in the baseline measurement")
        return time.perf_counter() - t0

    try:
        (p1, n1), (p10, n10) = shallow, deep
        decode(0, 0, p10)  # the deep sequence's history, once
        decode(1, 0, p1)
        times: list[tuple[float, float]] = []
        for _ in range(reps + 1):  # the first round warms up
            llama_cpp.llama_memory_seq_rm(m.memory, 1, p1, -1)
            a = decode(1, p1, n1)
            llama_cpp.llama_memory_seq_rm(m.memory, 0, p10, -1)
            times.append((a, decode(0, p10, n10)))
    finally:
        llama_cpp.llama_batch_free(batch)
        m.close()
    return (statistics.median(a for a, _ in times[1:]),
            statistics.median(b for _, b in times[1:]))


def llama_server(binary: Path, model: Path, ctx: int, args: Sequence[str] = ()
                 ) -> tuple[subprocess.Popen[bytes], str, str]:
    """Start a native llama-server (the reference every competitor ships) on a free port, with
    ``args`` after the model, context, address and key (its defaults otherwise)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    key = secrets.token_urlsafe(16)
    proc = subprocess.Popen(
        [str(binary), "-m", str(model), "-c", str(ctx), "--host", "127.0.0.1", "--port",
         str(port), "--api-key", key, "--jinja", *args],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise SystemExit(f"{binary} exited with code {proc.returncode}")
        try:
            if httpx2.get(f"{url}/health", timeout=1, trust_env=False).status_code == 200:
                return proc, url, key
        except httpx2.HTTPError:
            pass
        time.sleep(0.2)
    proc.kill()
    raise SystemExit(f"{binary} did not become ready in 120 s")


def _same_threads() -> list[str]:
    """llama-server flags for the runner's default thread count (one per physical core)."""
    from runner.settings import physical_cores

    return ["-t", str(physical_cores())]


def clients_table(model: Path, tokens: int, peer: Path | None = None, rounds: int = 3) -> None:
    """Total tokens/s with 1, 4 and 8 clients; with ``peer``, a native llama-server with the
    same flags (8 slots, the same total context, the same threads) takes turns with the runner
    each round, so the machine's drift falls on both alike."""
    ctx = 8 * 4096
    r = spawn_runner("--parallel", "8", "--ctx-size", str(ctx), model=model)
    servers: list[tuple[str, str, str]] = []
    proc = None
    try:
        r.wait_listening()
        r.wait_ready()
        assert r.key is not None
        servers.append(("runner", r.url, r.key))
        if peer is not None:
            proc, url, key = llama_server(peer, model, ctx, ["-np", "8", *_same_threads()])
            servers.append(("llama-server", url, key))
        for _, url, key in servers:
            asyncio.run(_clients(url, key, 1, 8, "warm-up"))
        got: dict[tuple[str, int], list[tuple[float, float]]] = {}
        for rnd in range(rounds):
            for k in (1, 4, 8):
                for name, url, key in servers:
                    got.setdefault((name, k), []).append(
                        asyncio.run(_clients(url, key, k, tokens, f"round {rnd} {k}")))
    finally:
        stop_runner(r)
        if proc is not None:
            proc.terminate()
            proc.wait(10)

    def med(name: str, k: int) -> tuple[float, float]:
        runs = got[(name, k)]
        return statistics.median(t for t, _ in runs), statistics.median(p for _, p in runs)

    print(f"\n1) concurrent streaming clients (--parallel 8), {model.name}; medians of {rounds} rounds")
    head = f"{'clients':>8} {'total tok/s':>12} {'x single':>9} {'p95 TTFT ms':>12}"
    print(head + (f" {'llama-server':>13} {'x native':>9} {'its p95 ms':>11}" if peer else ""))
    base = med("runner", 1)[0]
    for k in (1, 4, 8):
        tps, p95 = med("runner", k)
        row = f"{k:>8} {tps:>12.1f} {tps / base:>9.2f} {p95 * 1000:>12.1f}"
        if peer:
            ntps, np95 = med("llama-server", k)
            row += f" {ntps:>13.1f} {tps / ntps:>9.2f} {np95 * 1000:>11.1f}"
        print(row)
    if peer:
        worst = min(med("runner", k)[0] / med("llama-server", k)[0] for k in (4, 8))
        print(f"runner / llama-server total tokens/s at 4 and 8 clients: worst {worst:.2f}x "
              "(target >= 0.95)")


def conversation_table(model: Path, history: int, pause: float,
                       peer: Path | None = None) -> None:
    """Print the per-turn table, with llama.cpp's own time for turns 1 and 10 under it."""
    ctx = history * 4 + 1024
    r = spawn_runner("--ctx-size", str(ctx), model=model)
    try:
        r.wait_listening()
        r.wait_ready()
        assert r.key is not None
        cached = _conversations(r.url, r.key, history, pause)
        uncached = _conversation(r.url, r.key, history, False, CONVERSATIONS, pause)
    finally:
        stop_runner(r)
    native: list[Turn] = []
    if peer is not None:
        proc, url, key = llama_server(peer, model, ctx, ["-np", "1", *_same_threads()])
        try:
            native = _conversations(url, key, history, pause)
        except httpx2.HTTPError as exc:  # a reference run that fails must not lose ours
            print(f"llama-server failed ({exc!r}; exit code {proc.poll()}); its column is left out")
        finally:
            proc.terminate()
            proc.wait(10)
    # llama.cpp's own share: the same new tokens at the same positions as turns 1 and 10.
    (_, n1, hit1), (_, n10, hit10) = cached[0], cached[-1]
    f1, f10 = llama_floor(model, ctx, (hit1, n1 - hit1), (hit10, n10 - hit10))

    print(f"\n2) 10-turn conversation, history growing to ~{history} tokens, {model.name}; "
          f"{pause:g} s between turns; medians of {CONVERSATIONS} conversations with the cache")
    head = f"{'turn':>5} {'prompt tok':>11} {'reused':>7} {'new':>5} {'cache ms':>10} {'no cache ms':>12}"
    print(head + (f" {'llama-server ms':>16} {'its reuse':>10}" if native else ""))
    for i, ((a, n, hit), (b, _, _)) in enumerate(zip(cached, uncached, strict=True)):
        row = f"{i + 1:>5} {n:>11} {hit:>7} {n - hit:>5} {a * 1000:>10.1f} {b * 1000:>12.1f}"
        if native:
            row += f" {native[i][0] * 1000:>16.1f} {native[i][2]:>10}"
        print(row)
    c = [t for t, _, _ in cached]
    u = [t for t, _, _ in uncached]
    print(f"turn 10 / turn 1: with cache {c[-1] / c[0]:.2f}x (target <= 1.5x), without "
          f"{u[-1] / u[0]:.2f}x; median speed-up on turns 2-10: "
          f"{statistics.median(b / a for a, b in zip(c[1:], u[1:], strict=True)):.1f}x")
    if native:
        print(f"llama-server, same conversations: turn 10 / turn 1 {native[-1][0] / native[0][0]:.2f}x")
    print(f"llama.cpp alone, the same new tokens at the same positions: turn 1 {f1 * 1000:.1f} ms, "
          f"turn 10 {f10 * 1000:.1f} ms: {f10 / f1:.2f}x. Runner minus llama.cpp alone (the "
          f"runner's own time, within this machine's noise): "
          f"turn 1 {(c[0] - f1) * 1000:+.1f} ms, turn 10 {(c[-1] - f10) * 1000:+.1f} ms")


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true", help="tiny model, few tokens (sanity check)")
    ap.add_argument("--only", choices=("clients", "conversation"), help="run one part")
    ap.add_argument("--pause", type=float, default=THINK_S,
                    help="seconds between a reply and the next question (default %(default)s)")
    ap.add_argument("--llama-server", type=Path, metavar="PATH",
                    help="also run the clients and the conversations against this native "
                         "llama-server binary (same flags)")
    ap.add_argument("--gemma", action="store_true",
                    help="the clients part on the real Gemma 3 270M model too")
    args = ap.parse_args(argv)
    spec = TINY if args.quick else BENCH
    model = model_path(spec)
    if args.only != "conversation":
        clients_table(model, 32 if args.quick else 128, args.llama_server)
        if args.gemma and not args.quick:
            clients_table(GEMMA, 128, args.llama_server)
    if args.only != "clients":
        if args.quick:
            conversation_table(model, 600, args.pause, args.llama_server)
        else:
            conversation_table(model_path(LLAMA8B_SLICE), 3000, args.pause, args.llama_server)
            conversation_table(model, 3000, args.pause, args.llama_server)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
