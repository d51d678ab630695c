"""Speculative decoding: the runner against native llama-server with the same draft.

Generated pairs at BENCH's shape (tests/fixtures/speculative.py): a draft that predicts the
target exactly (where drafting must win), a draft from another seed (where it loses: the
measurement at load must then turn it off), and prompt lookup (ngram-simple) on a reply that
copies its prompt (a JSON schema whose one value is a paragraph of the prompt). For each, the
tokens/s of a 256-token reply with speculation against the same server without it, measured
in the same run, and the same for llama-server (--llama-server PATH, from
../shared/tools/build-llama-server). Each server also says whether its text at a seed was the
same with and without speculation.

    .venv/bin/python -m tests.bench.speculative [--llama-server PATH] [--strict] [--quick]

The runner also starts with ``--spec-measure`` for each case: what its trial at load chose, and
its speed after that choice against the plain runner (never slower is the target).

--strict exits 1 when the runner's text with speculation differs from llama-server's (where the
two agree without it), when its speed-up with the matching draft falls below 0.9x llama-server's,
or when its speed after the load's choice falls below 0.9x the plain runner's.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx2

from tests.bench.concurrency import _same_threads, llama_server
from tests.fixtures.models import model_path, vocabulary
from tests.fixtures.speculative import BENCH_DRAFT, BENCH_STRANGER, BENCH_TARGET
from tests.integration.conftest import spawn_ready, stop_runner

# Words of the generated vocabulary, each one token there.
PARAGRAPH = (
    "the warm fire of the hearth was the light of the world in the long years and people came "
    "to it from the state when the day was over to see what the other men had made and to know "
    "what they would make of the work that was there since the last time they were here "
    "with the old man who had been there for many years before them all"
)
ASK = [{"role": "user", "content": "hello world the model"}]
COPY = [{"role": "user", "content": f"Repeat this: {PARAGRAPH}"}]


def copy_request() -> dict[str, Any]:
    """A reply that copies the prompt's paragraph three times: a grammar (llama-server's
    ``grammar`` field) says what to write, and a bias on its words makes the random model write
    each as the one token the prompt has it as (not "▁w" "arm"), so the lookup can find it."""
    tokens, _, _ = vocabulary(BENCH_TARGET.n_vocab, BENCH_TARGET.markers)
    ids = {t: i for i, t in enumerate(tokens)}
    bias = {str(ids["▁" + w]): 50.0 for w in set(PARAGRAPH.split())}
    text = " ".join([PARAGRAPH] * 3)
    return {"grammar": f'root ::= " {text}"', "logit_bias": bias}

Server = Callable[[Sequence[str]], Any]  # flags -> a context manager yielding (url, key)


@contextmanager
def runner(flags: Sequence[str]) -> Iterator[tuple[str, str]]:
    r = spawn_ready(*flags, model=model_path(BENCH_TARGET))
    try:
        yield r.url, r.key or ""
    finally:
        stop_runner(r)


def peer(binary: Path) -> Server:
    @contextmanager
    def start(flags: Sequence[str]) -> Iterator[tuple[str, str]]:
        proc, url, key = llama_server(binary, model_path(BENCH_TARGET), 4096,
                                      ["-np", "1", *_same_threads(), *flags])
        try:
            yield url, key
        finally:
            proc.terminate()
            proc.wait(timeout=30)

    return start


def reply(url: str, key: str, messages: list[Any], tokens: int, extra: dict[str, Any],
          seed: int = 1) -> tuple[str, float]:
    """One reply's text and its tokens/s (completion tokens over the request's time)."""
    body: dict[str, Any] = {"messages": messages, "max_tokens": tokens, "temperature": 0.8,
                            "seed": seed, "ignore_eos": not extra, "cache_prompt": False,
                            **extra}
    with httpx2.Client(base_url=url, headers={"Authorization": f"Bearer {key}"}, timeout=None,
                       trust_env=False) as http:
        t0 = time.perf_counter()
        r = http.post("/v1/chat/completions", json=body)
        wall = time.perf_counter() - t0
    r.raise_for_status()
    data = r.json()
    return data["choices"][0]["message"]["content"], data["usage"]["completion_tokens"] / wall


def chosen(flags: Sequence[str], messages: list[Any], tokens: int, extra: dict[str, Any],
           rounds: int) -> tuple[dict[str, Any], float]:
    """The runner with ``--spec-measure``: what its trial at load found, and the tokens/s it
    then gives (with speculation or without, as it chose)."""
    with runner([*flags, "--spec-measure"]) as (url, key):
        with httpx2.Client(base_url=url, headers={"Authorization": f"Bearer {key}"},
                           trust_env=False) as http:
            trial = http.get("/runner/status").json()["speculative"]["measured"]
        reply(url, key, messages, tokens, extra)
        speeds = [reply(url, key, messages, tokens, extra, seed=1 + i)[1]
                  for i in range(rounds)]
    return trial, statistics.median(speeds)


def measure(server: Server, flags: Sequence[str], messages: list[Any], tokens: int,
            extra: dict[str, Any], rounds: int) -> tuple[str, float]:
    """The text at seed 1 and the median tokens/s over ``rounds`` replies (after a warm-up)."""
    with server(flags) as (url, key):
        text, _ = reply(url, key, messages, tokens, extra)
        speeds = [reply(url, key, messages, tokens, extra, seed=1 + i)[1]
                  for i in range(rounds)]
    return text, statistics.median(speeds)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--llama-server", type=Path, default=None)
    ap.add_argument("--strict", action="store_true")
    ap.add_argument("--quick", action="store_true", help="fewer rounds and tokens")
    args = ap.parse_args(argv)
    rounds, tokens = (1, 96) if args.quick else (3, 256)
    draft, stranger = str(model_path(BENCH_DRAFT)), str(model_path(BENCH_STRANGER))
    # The type named: llama-server only loads a draft model it is not told to draft with.
    drafting = ["--spec-type", "draft-simple", "--spec-draft-n-max", "3", "--spec-draft-model"]
    cases: list[tuple[str, list[str], list[Any], dict[str, Any]]] = [
        ("matching draft", [*drafting, draft], ASK, {}),
        ("stranger draft", [*drafting, stranger], ASK, {}),
        ("prompt lookup", ["--spec-type", "ngram-simple"], COPY, copy_request())]
    servers: list[tuple[str, Server]] = [("runner", runner)]
    if args.llama_server:
        servers.append(("llama-server", peer(args.llama_server)))
    print(f"target {BENCH_TARGET.name} ({BENCH_TARGET.n_layer} layers, "
          f"{BENCH_TARGET.inert_layers} inert), {tokens} tokens, median of {rounds}")
    print(f"{'case':<16} {'server':<13} {'plain tok/s':>11} {'spec tok/s':>10} {'speed-up':>9} "
          f"{'same text':>9}")
    gains: dict[tuple[str, str], float] = {}
    texts: dict[tuple[str, str], str] = {}
    choices: dict[str, float] = {}
    same_all = True
    for case, flags, messages, extra in cases:
        for name, server in servers:
            plain_text, plain = measure(server, [], messages, tokens, extra, rounds)
            spec_text, spec = measure(server, flags, messages, tokens, extra, rounds)
            texts[case, name] = spec_text
            texts[case, name + " plain"] = plain_text
            gains[case, name] = spec / plain
            print(f"{case:<16} {name:<13} {plain:>11.1f} {spec:>10.1f} {spec / plain:>8.2f}x "
                  f"{'yes' if plain_text == spec_text else 'no':>9}")
            if name == "runner":
                trial, after = chosen(flags, messages, tokens, extra, rounds)
                choices[case] = after / plain
                print(f"{'':<16} --spec-measure: {trial['gain']:.2f}x at load, so "
                      f"{'kept' if trial['kept'] else 'turned off'}; then {after:.1f} tok/s, "
                      f"{after / plain:.2f}x the plain runner (target >= 0.90x)")
        if (case, "llama-server") in texts:
            # The same rule gives the same tokens: where batched kernels break a near-tie
            # differently from single-token ones (both servers alike), the texts agree still.
            # Only where the two agree without speculation.
            if texts[case, "runner plain"] != texts[case, "llama-server plain"]:
                print(f"{'':<16} (the two servers' texts differ without speculation too)")
                continue
            same = texts[case, "runner"] == texts[case, "llama-server"]
            same_all &= same
            print(f"{'':<16} the runner's text with speculation is llama-server's: "
                  f"{'yes' if same else 'NO'}")
    failed = not same_all or any(r < 0.9 for r in choices.values())
    if ("matching draft", "llama-server") in gains:
        vs = gains["matching draft", "runner"] / gains["matching draft", "llama-server"]
        print(f"runner's speed-up / llama-server's with the matching draft: {vs:.2f}x "
              "(target >= 0.90x)")
        failed |= vs < 0.9
    if not same_all:
        print("the runner's text with speculation differs from llama-server's")
    return 1 if failed and args.strict else 0


if __name__ == "__main__":
    sys.exit(main())
