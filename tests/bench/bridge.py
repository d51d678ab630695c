"""How much speed does the runner's HTTP bridge cost? Decode tokens/s and time to first token.

Three ways, on the same generated model of realistic size (``tests.fixtures.models.BENCH``, 8
layers x 1024 wide, Q4_K_M), the same prompts, thread count and context, greedy sampling, and
exactly N generated tokens:

  (a) the floor: a lean loop over llama-cpp-python's low-level API (``llama_decode`` one token
      at a time, llama.cpp's C sampler chain, ``llama_token_to_piece``);
  (b) llama-cpp-python's high-level ``Llama.create_completion(stream=True)``;
  (c) the runner as a subprocess, streamed over HTTP with httpx2: ``/v1/completions`` with the
      same raw prompt, and ``/v1/chat/completions`` (compared with (a) on the same rendered
      chat prompt).

(a) and (b) run in subprocesses of their own, one after the other, never while the runner is
busy. Every repetition uses a different first word, so no prompt cache (the runner's or the
high-level ``Llama``'s) can skip the prompt, and the runner is asked not to (``cache_prompt``
false): each TTFT includes a full prompt decode. Byte,
control and unknown tokens are banned (in every method, by llama.cpp's logit-bias sampler or
an equivalent logits processor), so each generated token is one whole piece of text and one
streamed chunk, and EOS cannot end a run early.

Client-side measures: tokens/s = (n - 1) / (t_last - t_first) over the content chunks; TTFT =
first content chunk - request sent. For (a) the same clocks sit around the loop itself.

    .venv/bin/python -m tests.bench.bridge            # 256 tokens, 5 repetitions
    .venv/bin/python -m tests.bench.bridge --quick    # a sanity run in a few seconds
    .venv/bin/python -m tests.bench.bridge --strict   # exit 1 if a target is missed

Targets: (c)/(a) >= 0.95 for decode speed, and (c) TTFT - (a) TTFT <= 5 ms.
"""

from __future__ import annotations

import argparse
import json
import os
import secrets
import statistics
import subprocess
import sys
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
TARGET_RATIO = 0.95
TARGET_TTFT_OVERHEAD_MS = 5.0
# Tokens 0..258 of the generated vocabulary: <unk>, <s>, </s> and the 256 byte tokens.
N_BANNED = 259
BASE_PROMPT = ("the world is warm and the fire is light . tell me about the hearth and the "
               "people who made it , how they work and live")
# Distinct first words that are one token each, so every repetition's prompt has the same length.
FIRST_WORDS = ["people", "little", "state", "good", "very", "make", "world", "still", "own", "see",
               "men", "work", "long", "get", "here", "between", "both", "life", "being", "under",
               "never", "day", "same", "another", "know", "while"]


@dataclass
class Config:
    model: str
    n_tokens: int
    reps: int
    threads: int
    n_ctx: int
    n_batch: int = 512
    flash_attn: str = "auto"


@dataclass
class Run:
    ttft_s: float
    tps: float
    n: int
    prompt_tokens: int = 0
    server: dict[str, Any] = field(default_factory=dict)


@dataclass
class Result:
    label: str
    runs: list[Run]
    note: str = ""

    @property
    def tps(self) -> float:
        return statistics.median(r.tps for r in self.runs)

    @property
    def ttft_ms(self) -> float:
        return 1000 * statistics.median(r.ttft_s for r in self.runs)

    @property
    def prompt_tokens(self) -> int:
        return self.runs[0].prompt_tokens if self.runs else 0


def prompts(count: int) -> list[str]:
    """``count`` prompts that differ in their first word; index 0 is the warm-up."""
    return [f"{FIRST_WORDS[i % len(FIRST_WORDS)]} {BASE_PROMPT}" for i in range(count)]


def chat_messages(prompt: str) -> list[dict[str, str]]:
    return [{"role": "user", "content": prompt}]


def render_chat(prompt: str) -> str:
    """The prompt the runner builds for ``chat_messages(prompt)`` from the model's template."""
    from jinja2.sandbox import ImmutableSandboxedEnvironment

    from tests.fixtures.models import BENCH, CHATML_TEMPLATE

    template = BENCH.chat_template or CHATML_TEMPLATE
    env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True)
    return env.from_string(template).render(messages=chat_messages(prompt),
                                            add_generation_prompt=True)


def timing(t_start: float, stamps: list[float]) -> tuple[float, float]:
    """(TTFT, decode tokens/s) from the request time and each token's arrival time."""
    ttft = stamps[0] - t_start
    span = stamps[-1] - stamps[0]
    return ttft, (len(stamps) - 1) / span if span > 0 else 0.0


# ---- (a) the lean low-level loop (runs in its own process) ------------------------------------

def lean_worker(cfg: Config, texts: list[str], special: bool) -> list[dict[str, Any]]:
    import ctypes

    import llama_cpp

    from runner.settings import FLASH_ATTN

    quiet = llama_cpp.llama_log_callback(lambda *_: None)  # referenced while llama.cpp logs
    llama_cpp.llama_log_set(quiet, ctypes.c_void_p(0))
    llama_cpp.llama_backend_init()
    mparams = llama_cpp.llama_model_default_params()
    mparams.n_gpu_layers = 0
    model = llama_cpp.llama_model_load_from_file(cfg.model.encode(), mparams)
    assert model, "model did not load"
    cparams = llama_cpp.llama_context_default_params()
    cparams.n_ctx = cfg.n_ctx
    cparams.n_batch = cfg.n_batch
    cparams.n_ubatch = cfg.n_batch
    cparams.n_threads = cfg.threads
    cparams.n_threads_batch = cfg.threads
    cparams.flash_attn_type = FLASH_ATTN[cfg.flash_attn]
    cparams.no_perf = True
    ctx = llama_cpp.llama_init_from_model(model, cparams)
    assert ctx, "context was not created"
    vocab = llama_cpp.llama_model_get_vocab(model)
    n_vocab = llama_cpp.llama_vocab_n_tokens(vocab)
    memory = llama_cpp.llama_get_memory(ctx)

    chain = llama_cpp.llama_sampler_chain_init(llama_cpp.llama_sampler_chain_default_params())
    bias = (llama_cpp.llama_logit_bias * N_BANNED)()
    for i in range(N_BANNED):
        bias[i].token = i
        bias[i].bias = -100.0  # what the runner does with an OpenAI logit_bias of -100
    llama_cpp.llama_sampler_chain_add(chain, llama_cpp.llama_sampler_init_logit_bias(
        n_vocab, N_BANNED, bias))
    llama_cpp.llama_sampler_chain_add(chain, llama_cpp.llama_sampler_init_greedy())

    buf = ctypes.create_string_buffer(256)
    out = []
    for text in texts:
        llama_cpp.llama_memory_clear(memory, True)
        llama_cpp.llama_sampler_reset(chain)
        stamps: list[float] = []
        pieces: list[bytes] = []
        t_start = time.perf_counter()
        data = text.encode()
        toks = (llama_cpp.llama_token * (len(data) + 8))()
        n_prompt = llama_cpp.llama_tokenize(vocab, data, len(data), toks, len(toks), True,
                                            special)
        assert n_prompt > 0
        batch = llama_cpp.llama_batch_get_one(toks, n_prompt)  # toks stays referenced
        one = (llama_cpp.llama_token * 1)()
        for i in range(cfg.n_tokens):
            if llama_cpp.llama_decode(ctx, batch) != 0:
                raise RuntimeError("llama_decode failed")
            tok = llama_cpp.llama_sampler_sample(chain, ctx, -1)
            n = llama_cpp.llama_token_to_piece(vocab, tok, buf, 256, 0, False)
            pieces.append(buf.raw[:n])
            stamps.append(time.perf_counter())
            if i + 1 < cfg.n_tokens:
                one[0] = tok
                batch = llama_cpp.llama_batch_get_one(one, 1)
        ttft, tps = timing(t_start, stamps)
        assert all(pieces), "a banned token was generated"
        out.append({"ttft_s": ttft, "tps": tps, "n": len(stamps), "prompt_tokens": n_prompt})
    return out


# ---- (b) the high-level create_completion (runs in its own process) --------------------------

def high_worker(cfg: Config, texts: list[str]) -> list[dict[str, Any]]:
    import numpy as np
    from llama_cpp import Llama, LogitsProcessorList

    llm = Llama(model_path=cfg.model, n_ctx=cfg.n_ctx, n_batch=cfg.n_batch,
                n_ubatch=cfg.n_batch, n_threads=cfg.threads, n_threads_batch=cfg.threads,
                n_gpu_layers=0, flash_attn=cfg.flash_attn != "off", verbose=False)
    banned = np.arange(N_BANNED)

    def ban(_ids: Any, scores: Any) -> Any:
        scores[banned] = -np.inf  # one vectorized write: as cheap as a processor can be
        return scores

    out = []
    for text in texts:
        stamps: list[float] = []
        t_start = time.perf_counter()
        stream = llm.create_completion(text, max_tokens=cfg.n_tokens, temperature=0.0,
                                       repeat_penalty=1.0, stream=True,
                                       logits_processor=LogitsProcessorList([ban]))
        for chunk in stream:
            if chunk["choices"][0]["text"]:
                stamps.append(time.perf_counter())
        ttft, tps = timing(t_start, stamps)
        n_prompt = len(llm.tokenize(text.encode(), add_bos=True))
        out.append({"ttft_s": ttft, "tps": tps, "n": len(stamps), "prompt_tokens": n_prompt})
    return out


def run_worker(kind: str, cfg: Config, texts: list[str], special: bool = False) -> list[Run]:
    """Run a worker in a fresh process; the first text is a warm-up and is dropped."""
    job = json.dumps({"kind": kind, "config": asdict(cfg), "texts": texts, "special": special})
    proc = subprocess.run([sys.executable, "-m", "tests.bench.bridge", "--worker"], input=job,
                          capture_output=True, text=True, cwd=REPO, check=False)
    if proc.returncode != 0:
        raise SystemExit(f"{kind} worker failed with exit code {proc.returncode}:\n"
                         f"{proc.stderr[-3000:]}")
    runs = [Run(**r) for r in json.loads(proc.stdout.strip().splitlines()[-1])]
    return runs[1:]


def worker_main() -> int:
    job = json.loads(sys.stdin.read())
    cfg = Config(**job["config"])
    if job["kind"] == "lean":
        result = lean_worker(cfg, job["texts"], job["special"])
    else:
        result = high_worker(cfg, job["texts"])
    print(json.dumps(result), flush=True)
    return 0


# ---- (c) the runner over HTTP -------------------------------------------------------------------

class RunnerProcess:
    """The runner as the app starts it: key in the environment, stdin held open."""

    def __init__(self, cfg: Config) -> None:
        self.key = secrets.token_urlsafe(24)
        env = {**os.environ, "HEARTH_API_KEY": self.key}
        argv = [sys.executable, "-m", "runner", "serve", "--model", cfg.model,
                "--ctx-size", str(cfg.n_ctx), "--threads", str(cfg.threads),
                "--batch-size", str(cfg.n_batch), "--ubatch-size", str(cfg.n_batch),
                "--flash-attn", cfg.flash_attn, "--n-gpu-layers", "0", "--watch-stdin"]
        self.proc = subprocess.Popen(argv, cwd=REPO, env=env, stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        if not line:
            raise SystemExit(f"the runner exited with {self.proc.wait()} before listening")
        self.url = json.loads(line)["url"]

    def wait_ready(self, http: Any, timeout: float = 120) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise SystemExit(f"the runner exited with {self.proc.returncode}")
            try:
                if http.get("/health").status_code == 200:
                    return
            except Exception:
                pass
            time.sleep(0.05)
        raise SystemExit("the runner did not load the model in time")

    def stop(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        try:
            self.proc.wait(5)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


def stream_once(http: Any, path: str, body: dict[str, Any], chat: bool) -> Run:
    stamps: list[float] = []
    usage: dict[str, Any] = {}
    t_start = time.perf_counter()
    with http.stream("POST", path, json=body) as resp:
        if resp.status_code != 200:
            raise SystemExit(f"{path}: HTTP {resp.status_code}: {resp.read()[:500]!r}")
        for line in resp.iter_lines():
            if not line.startswith("data: ") or line == "data: [DONE]":
                continue
            event = json.loads(line[6:])
            for choice in event["choices"]:
                text = choice["delta"].get("content") if chat else choice.get("text")
                if text:
                    stamps.append(time.perf_counter())
            if event.get("usage"):
                usage = event["usage"]
    ttft, tps = timing(t_start, stamps)
    return Run(ttft_s=ttft, tps=tps, n=len(stamps), prompt_tokens=usage.get("prompt_tokens", 0))


def runner_round(http: Any, cfg: Config, texts: list[str]) -> tuple[list[Run], list[Run]]:
    """One warm-up and ``len(texts) - 1`` measured requests on each endpoint."""
    bias = {str(i): -100 for i in range(N_BANNED)}
    # cache_prompt off: every request decodes its whole prompt, as (a) does (the distinct first
    # words already defeat the cache for /v1/completions; the chat template's common start would
    # not).
    common = {"max_tokens": cfg.n_tokens, "temperature": 0, "logit_bias": bias, "stream": True,
              "stream_options": {"include_usage": True}, "cache_prompt": False}
    results: tuple[list[Run], list[Run]] = ([], [])
    for chat, path in ((False, "/v1/completions"), (True, "/v1/chat/completions")):
        for i, text in enumerate(texts):
            body = dict(common, **({"messages": chat_messages(text)} if chat
                                   else {"prompt": text}))
            run = stream_once(http, path, body, chat)
            last = http.get("/runner/status").json()["last_request"]
            run.server = {"tps": last["tokens_per_second"],
                          "ttft_s": last["time_to_first_token_s"],
                          "cached": last["cached_tokens"]}
            if i:  # index 0 is the warm-up
                results[chat].append(run)
    return results


# ---- report -------------------------------------------------------------------------------------

def report(cfg: Config, rows: list[tuple[Result, Result | None]], system: str) -> list[str]:
    """Print the table; return the targets missed."""
    print(f"model    {cfg.model}")
    print(f"shape    8 layers x 1024 wide, Q4_K_M; n_ctx {cfg.n_ctx}, threads {cfg.threads}, "
          f"n_batch {cfg.n_batch}, flash_attn {cfg.flash_attn}")
    print(f"run      {cfg.n_tokens} tokens per run, greedy; {cfg.reps} runs per round after a "
          "warm-up; medians over all rounds")
    print(f"system   {system}")
    print()
    head = (f"{'method':<44} {'prompt':>6} {'gen':>4} {'runs':>4} {'tok/s':>7} {'min-max':>11} "
            f"{'x (a)':>6} {'TTFT ms':>8} {'min-max':>11} {'+ms vs (a)':>10}")
    print(head)
    print("-" * len(head))
    missed: list[str] = []
    for res, base in rows:
        ratio = f"{res.tps / base.tps:6.3f}" if base else f"{'1.000':>6}"
        over = f"{res.ttft_ms - base.ttft_ms:+10.1f}" if base else f"{'':>10}"
        gen = statistics.median(r.n for r in res.runs)
        tps = sorted(r.tps for r in res.runs)
        ttft = sorted(1000 * r.ttft_s for r in res.runs)
        print(f"{res.label:<44} {res.prompt_tokens:>6} {gen:>4.0f} {len(res.runs):>4} "
              f"{res.tps:>7.1f} {f'{tps[0]:.0f}-{tps[-1]:.0f}':>11} {ratio} {res.ttft_ms:>8.1f} "
              f"{f'{ttft[0]:.0f}-{ttft[-1]:.0f}':>11} {over}")
        if res.note:
            print(f"{'':<4}{res.note}")
    print()
    for res, base in rows:
        if base is None or not res.label.startswith("(c)"):
            continue
        ratio = res.tps / base.tps
        over = res.ttft_ms - base.ttft_ms
        ok_ratio = ratio >= TARGET_RATIO
        ok_ttft = over <= TARGET_TTFT_OVERHEAD_MS
        print(f"{res.label}: decode {ratio:.3f} of (a) (target >= {TARGET_RATIO}) "
              f"{'OK' if ok_ratio else 'MISSED'}; first token {over:+.2f} ms (target <= "
              f"{TARGET_TTFT_OVERHEAD_MS:.0f} ms) {'OK' if ok_ttft else 'MISSED'}")
        if not ok_ratio:
            missed.append(f"{res.label}: decode ratio {ratio:.3f} < {TARGET_RATIO}")
        if not ok_ttft:
            missed.append(f"{res.label}: TTFT overhead {over:.2f} ms > "
                          f"{TARGET_TTFT_OVERHEAD_MS} ms")
    return missed


def check_counts(results: list[Result], n_tokens: int) -> None:
    for res in results:
        bad = [r.n for r in res.runs if r.n != n_tokens]
        if bad:
            raise SystemExit(f"{res.label}: expected {n_tokens} content chunks per run, got {bad}"
                             " (a token without text would distort tokens/s)")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.bench.bridge", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="64 tokens, 2 runs: a sanity check")
    parser.add_argument("--strict", action="store_true", help="exit 1 if a target is missed")
    parser.add_argument("--tokens", type=int, help="tokens per run (default 256; quick: 64)")
    parser.add_argument("--reps", type=int, help="measured runs per method (default 5; quick: 2)")
    parser.add_argument("--rounds", type=int,
                        help="rounds alternating the methods (default 3; quick: 1)")
    parser.add_argument("--threads", type=int, default=0, help="default: physical cores")
    parser.add_argument("--ctx-size", type=int, default=2048)
    parser.add_argument("--skip-high-level", action="store_true", help="skip (b), the slowest")
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker:
        return worker_main()

    import httpx2

    from runner.settings import physical_cores
    from tests.fixtures.models import BENCH, model_path

    n_tokens = args.tokens or (64 if args.quick else 256)
    reps = args.reps or (2 if args.quick else 5)
    rounds = args.rounds or (1 if args.quick else 3)
    if n_tokens < 2 or reps < 1:
        parser.error("need at least 2 tokens and 1 repetition")
    cfg = Config(model=str(model_path(BENCH)), n_tokens=n_tokens, reps=reps,
                 threads=args.threads or physical_cores(), n_ctx=args.ctx_size)
    texts = prompts(reps + 1)
    chat_texts = [render_chat(t) for t in texts]

    t0 = time.perf_counter()
    lean = Result("(a) lean low-level loop", [])
    lean_chat = Result("(a) lean low-level loop, chat-rendered prompt", [])
    high = None
    comp = Result("(c) runner HTTP /v1/completions", [])
    chat = Result("(c) runner HTTP /v1/chat/completions", [])
    # Rounds alternate the methods, so a machine whose speed drifts (shared cloud cores do)
    # treats them alike. The runner stays up, idle, while (a) and (b) run.
    runner = RunnerProcess(cfg)
    try:
        with httpx2.Client(base_url=runner.url, trust_env=False,
                           headers={"Authorization": f"Bearer {runner.key}"},
                           timeout=httpx2.Timeout(10.0, read=300.0)) as http:
            runner.wait_ready(http)
            for round_ in range(rounds):
                lean.runs += run_worker("lean", cfg, texts)
                lean_chat.runs += run_worker("lean", cfg, chat_texts, special=True)
                if round_ == 0 and not args.skip_high_level:
                    high = Result("(b) high-level create_completion",
                                  run_worker("high", cfg, texts),
                                  note="(b) bans the same tokens with a vectorized numpy logits "
                                       "processor; measured in the first round only")
                comp_runs, chat_runs = runner_round(http, cfg, texts)
                comp.runs += comp_runs
                chat.runs += chat_runs
    finally:
        runner.stop()
    for res in (comp, chat):
        runs = res.runs
        res.note = (f"server-side: {statistics.median(r.server['tps'] for r in runs):.1f} tok/s, "
                    f"TTFT {1000 * statistics.median(r.server['ttft_s'] for r in runs):.1f} ms; "
                    f"prompt tokens reused from the cache: up to {max(r.server['cached'] for r in runs)}")
    rows: list[tuple[Result, Result | None]] = [(lean, None)]
    if high is not None:
        rows.append((high, lean))
    rows += [(comp, lean), (lean_chat, None), (chat, lean_chat)]
    check_counts([r for r, _ in rows], n_tokens)
    if comp.prompt_tokens != lean.prompt_tokens or chat.prompt_tokens != lean_chat.prompt_tokens:
        raise SystemExit(f"prompt token counts differ: (a) {lean.prompt_tokens} / "
                         f"{lean_chat.prompt_tokens}, (c) {comp.prompt_tokens} / "
                         f"{chat.prompt_tokens}: the methods are not doing the same work")
    system = f"{os.cpu_count()} logical CPUs, {sys.platform}, python {sys.version.split()[0]}"
    missed = report(cfg, rows, system)
    print(f"\nbenchmark took {time.perf_counter() - t0:.1f} s")
    if missed and args.strict:
        print("STRICT: targets missed:\n  " + "\n  ".join(missed))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
