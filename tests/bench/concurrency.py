"""Concurrency and prompt-cache benchmark for the runner.

1. Total tokens/s and p95 time to first token with 1, 4 and 8 concurrent streaming clients
   (runner started with --parallel 8), each against the single-client figure of the same run.
2. Time to first token per turn over a 10-turn conversation whose history grows to about 3,000
   tokens, with the prompt cache and without it (``cache_prompt: false``), in the same run.
   Each turn sends a short user message; the model's reply goes back into the history. Run on two
   shapes: LLAMA8B_SLICE (two layers of Llama 3.1 8B, the shape most people run) and the small
   BENCH model, whose narrow layers make attention over a long history cost more than its matmuls.

    .venv/bin/python -m tests.bench.concurrency [--quick] [--only clients|conversation]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import httpx2

from tests.fixtures.models import BENCH, LLAMA8B_SLICE, TINY, model_path
from tests.integration.conftest import spawn_runner, stop_runner


async def _stream(http: httpx2.AsyncClient, body: dict[str, Any]) -> tuple[float, int, float]:
    """(time to first token, completion tokens, total seconds) of one streamed request."""
    t0 = time.perf_counter()
    first = 0.0
    n = 0
    async with http.stream("POST", "/v1/chat/completions", json=body) as resp:
        resp.raise_for_status()
        async for line in resp.aiter_lines():
            if not line.startswith("data: ") or line == "data: [DONE]":
                continue
            if '"content": ' in line and '"role"' not in line:
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


def _conversation(url: str, key: str, turns: int, history_tokens: int, cache: bool,
                  user_tokens: int = 64) -> list[tuple[float, int, int]]:
    """(time to first token, prompt tokens, cached tokens) per turn of a chat whose history grows to
    about ``history_tokens`` tokens by turn ``turns``.

    Shaped like a real chat: each turn the user asks something short (``user_tokens``) and the
    model's streamed reply, several times longer, goes back into the history as the assistant
    message, exactly as the app sends it.
    """
    words = "the warm fire of the hearth and the light that is in it with us".split()
    messages: list[dict[str, str]] = []
    ttft: list[tuple[float, int, int]] = []
    with httpx2.Client(base_url=url, headers={"Authorization": f"Bearer {key}"}, timeout=None,
                       trust_env=False) as http:
        # Calibrate: how many tokens this model's vocabulary spends on these words.
        probe = http.post("/v1/completions", json={"prompt": " ".join(words * 10), "max_tokens": 1})
        per_word = probe.json()["usage"]["prompt_tokens"] / (len(words) * 10)
        n_words = max(1, round(user_tokens / per_word))
        reply_tokens = max(8, history_tokens // turns - user_tokens - _TEMPLATE_TOKENS)
        for turn in range(turns):
            text = " ".join(words[(turn + j) % len(words)] for j in range(n_words))
            messages.append({"role": "user", "content": f"{text} ?"})
            body = {"messages": messages, "max_tokens": reply_tokens, "ignore_eos": True,
                    "stream": True, "stream_options": {"include_usage": True}, "seed": turn,
                    "cache_prompt": cache}
            t0 = time.perf_counter()
            first, reply, usage = 0.0, "", {}
            with http.stream("POST", "/v1/chat/completions", json=body) as resp:
                if resp.status_code != 200:
                    raise SystemExit(f"turn {turn + 1} failed: {resp.read().decode()}")
                for line in resp.iter_lines():
                    if not line.startswith("data: {"):
                        continue
                    chunk = json.loads(line[6:])
                    if chunk.get("usage"):
                        usage = chunk["usage"]
                    for choice in chunk["choices"]:
                        piece = choice["delta"].get("content")
                        if piece and not first:
                            first = time.perf_counter() - t0
                        reply += piece or ""
            ttft.append((first, usage["prompt_tokens"], usage["prompt_tokens_details"]["cached_tokens"]))
            messages.append({"role": "assistant", "content": reply})
    return ttft


# ChatML around one user message and one reply in the test vocabulary (markers are one token
# each, "user" and "assistant" are spelled letter by letter).
_TEMPLATE_TOKENS = 24


def clients_table(model: Path, tokens: int) -> None:
    r = spawn_runner("--parallel", "8", "--ctx-size", str(8 * 4096), model=model)
    try:
        r.wait_listening()
        r.wait_ready()
        assert r.key is not None
        asyncio.run(_clients(r.url, r.key, 1, 8, "warm-up"))
        rows = []
        for k in (1, 4, 8):
            tps, p95 = asyncio.run(_clients(r.url, r.key, k, tokens, f"round {k}"))
            rows.append((k, tps, p95))
    finally:
        stop_runner(r)
    base_tps, base_ttft = rows[0][1], rows[0][2]
    print(f"\n1) concurrent streaming clients (--parallel 8), {model.name}")
    print(f"{'clients':>8} {'total tok/s':>12} {'x single':>9} {'p95 TTFT ms':>12} {'x single':>9}")
    for k, tps, p95 in rows:
        print(f"{k:>8} {tps:>12.1f} {tps / base_tps:>9.2f} {p95 * 1000:>12.1f} {p95 / base_ttft:>9.2f}")


def conversation_table(model: Path, history: int) -> None:
    r = spawn_runner("--ctx-size", str(history * 4 + 1024), model=model)
    try:
        r.wait_listening()
        r.wait_ready()
        assert r.key is not None
        _conversation(r.url, r.key, 2, 256, cache=True)  # warm-up: first-use costs out of turn 1
        # One TTFT is one noisy sample on a shared machine: each turn's figure with the cache is
        # the median of three conversations (each starts cold: the calibration prompt evicts the
        # last one from the slot, as "new chat" would).
        runs = [_conversation(r.url, r.key, 10, history, cache=True) for _ in range(3)]
        cached = [(statistics.median(run[i][0] for run in runs), *runs[0][i][1:])
                  for i in range(10)]
        uncached = _conversation(r.url, r.key, 10, history, cache=False)
    finally:
        stop_runner(r)
    print(f"\n2) 10-turn conversation, history growing to ~{history} tokens, {model.name}")
    print(f"{'turn':>5} {'prompt tok':>11} {'reused':>7} {'new':>5} {'cache ms':>10} {'no cache ms':>12}")
    for i, ((a, n, hit), (b, _, _)) in enumerate(zip(cached, uncached, strict=True), 1):
        print(f"{i:>5} {n:>11} {hit:>7} {n - hit:>5} {a * 1000:>10.1f} {b * 1000:>12.1f}")
    c = [t for t, _, _ in cached]
    u = [t for t, _, _ in uncached]
    print(f"turn 10 / turn 1: with cache {c[-1] / c[0]:.2f}x (target <= 1.5x), "
          f"without {u[-1] / u[0]:.2f}x; median speed-up on turns 2-10: "
          f"{statistics.median(b / a for a, b in zip(c[1:], u[1:], strict=True)):.1f}x")


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true", help="tiny model, few tokens (sanity check)")
    ap.add_argument("--only", choices=("clients", "conversation"), help="run one part")
    args = ap.parse_args(argv)
    spec = TINY if args.quick else BENCH
    model = model_path(spec)
    if args.only != "conversation":
        clients_table(model, 32 if args.quick else 128)
    if args.only != "clients":
        if args.quick:
            conversation_table(model, 600)
        else:
            conversation_table(model_path(LLAMA8B_SLICE), 3000)
            conversation_table(model, 3000)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
