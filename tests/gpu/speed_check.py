#!/usr/bin/env python3
"""Speculative decoding and the speed settings trial on a real NVIDIA GPU (issue 32's check).

    python3 tests/gpu/speed_check.py OUTDIR              # on the GPU machine (about 4 min)
    python3 tests/gpu/speed_check.py --rehearse OUTDIR   # here, on the CPU, tiny models

What travels is tests/gpu/carry.py's ``.gpu/`` (the CUDA runtime with its llama-server, the
wheels, the bindings); tests/gpu/check.py unpacks it. Two parts, each in OUTDIR/speed-check.json
and .md (rewritten after each part):

1. Speculation: a generated target whose 15 last layers are inert (16 x 2048, F16, 1.9 GB) and a
   one-layer draft sharing its first layer, embeddings and output (drafting must win), and a
   draft from another seed (it must lose). Tokens/s of a 256-token reply with and without the
   draft, every layer on the GPU, the runner against llama-server with the same flags; then the
   runner's own ``--spec-measure`` verdict and its speed after it.
2. The speed settings trial: Llama 3.1 8B's shape at Q4_K_M (filled, not trained), all on the
   GPU, ``--tune-speed`` with flash attention off, a q8_0 cache and micro-batches 256-2048 beside
   the plan's own; then the plan's settings and the chosen ones loaded in turn and timed on a
   long prompt and a reply, to see whether the choice's measured gain holds.
"""

from __future__ import annotations

import argparse
import json
import secrets
import statistics
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from tests.gpu import check  # noqa: E402  (after the path is set)

SPEC = "fa=off;kv=q8_0;ub=256,1024,2048"
REPLY = 256
ROUNDS = 3


def spec_models(env: check.Env, rehearse: bool) -> dict[str, str]:
    """Write the pair with the machine's Python (numpy there; gguf carried)."""
    code = (
        "import json, sys\n"
        "from dataclasses import replace\n"
        "from pathlib import Path\n"
        "from tests.fixtures.models import BENCH, ModelSpec, model_path\n"
        "from tests.fixtures.speculative import DRAFT, STRANGER, TARGET\n"
        "cache = Path(sys.argv[1])\n"
        "if sys.argv[2] == '1':\n"
        "    t, d, s = TARGET, DRAFT, STRANGER\n"
        "else:\n"
        "    t = replace(BENCH, n_layer=16, n_embd=2048, n_head=16, n_head_kv=4, n_ff=5632,\n"
        "                quant='F16', shared_weights=True, inert_layers=15, logit_scale=6.0,\n"
        "                name='hearth-gpu-spec-target')\n"
        "    d = replace(t, n_layer=1, inert_layers=0, name='hearth-gpu-spec-draft')\n"
        "    s = replace(d, seed=7, name='hearth-gpu-spec-stranger')\n"
        "print(json.dumps({k: str(model_path(m, cache)) for k, m in\n"
        "                  (('target', t), ('draft', d), ('stranger', s))}))\n")
    got = env.run_json([env.python, "-c", code, str(env.work / "models"),
                        "1" if rehearse else "0"], timeout=300)
    if "error" in got:
        raise RuntimeError(got["error"])
    return {k: str(v) for k, v in got.items()}


def _server(env: check.Env, native: bool, model: str, flags: list[str], log: str) -> check.Server:
    key = secrets.token_urlsafe(16)
    if native and env.llama_server is not None:
        port = check._free_port()
        cmd = [str(env.llama_server), "-m", model, *flags, "--port", str(port), "--host",
               "127.0.0.1", "--api-key", key, "--no-webui", "-a", "m"]
        return check.Server(cmd, env.env, key, env.work / log, port=port,
                            cwd=env.runtime / "lib" if env.runtime else ROOT)
    return check.Server(env.runner("serve", "--model", model, *flags, "--port", "0",
                                   "--alias", "m"),
                        dict(env.env, HEARTH_API_KEY=key), key, env.work / log)


def _reply_tps(server: check.Server, seed: int) -> tuple[float, int]:
    first, _, wall, usage = server.stream({
        "messages": [{"role": "user", "content": "hello world the model"}],
        "max_tokens": REPLY, "temperature": 0.8, "seed": seed, "ignore_eos": True,
        "cache_prompt": False, "stream": True, "stream_options": {"include_usage": True}})
    n = int(usage.get("completion_tokens", 0))
    return (n - 1) / max(1e-9, wall - first) if n > 1 else 0.0, n


def timed_replies(env: check.Env, native: bool, model: str, flags: list[str], log: str
                  ) -> dict[str, Any]:
    server = _server(env, native, model, flags, log)
    try:
        server.wait_ready(timeout=240)
        _reply_tps(server, 99)  # warm-up
        speeds = [_reply_tps(server, 1 + i)[0] for i in range(ROUNDS)]
        status: Any = None
        if not native:
            _, status = server.get("/runner/status")
        spec = status.get("speculative") if isinstance(status, dict) else None
        # Where the draft's buffers went (the plan puts all of them on the first GPU).
        memory = status.get("memory") if isinstance(status, dict) else None
        drafted = [m for m in memory or [] if isinstance(m, dict) and m.get("draft")]
        return {"tps": statistics.median(speeds), "rounds": speeds, "speculative": spec,
                "draft_memory": drafted}
    finally:
        server.stop()


def part_speculation(env: check.Env, rehearse: bool) -> dict[str, Any]:
    models = spec_models(env, rehearse)
    base = ["-c", "4096", "-ngl", "99", "-np", "1"]
    drafting = ["--spec-type", "draft-simple", "--spec-draft-n-max", "3",
                "--spec-draft-ngl", "99", "--spec-draft-model"]
    cases = {"plain": [], "matching draft": [*drafting, models["draft"]],
             "stranger draft": [*drafting, models["stranger"]]}
    out: dict[str, Any] = {"models": models, "servers": {}}
    for native in (False, True):
        name = "llama-server" if native else "runner"
        if native and env.llama_server is None:
            continue
        got: dict[str, Any] = {}
        for case, flags in cases.items():
            got[case] = timed_replies(env, native, models["target"], [*base, *flags],
                                      f"spec-{name}-{case.replace(' ', '-')}.log")
            print(f"   {name} / {case}: {got[case]['tps']:.1f} tok/s", flush=True)
        for case in ("matching draft", "stranger draft"):
            got[case]["speed_up"] = got[case]["tps"] / got["plain"]["tps"]
        out["servers"][name] = got
    runner = out["servers"]["runner"]
    for case in ("matching draft", "stranger draft"):
        chosen = timed_replies(env, False, models["target"],
                               [*base, *cases[case], "--spec-measure"],
                               f"spec-measure-{case.replace(' ', '-')}.log")
        runner[case]["after_measure"] = {
            "verdict": (chosen["speculative"] or {}).get("measured"),
            "tps": chosen["tps"], "vs_plain": chosen["tps"] / runner["plain"]["tps"]}
    if "llama-server" in out["servers"]:
        peer = out["servers"]["llama-server"]
        out["runner_speed_up_over_llama_server_s"] = (
            runner["matching draft"]["speed_up"] / peer["matching draft"]["speed_up"])
    return out


def _turn(server: check.Server, tag: int) -> dict[str, float]:
    """A turn like the trial's standard one: prompt tokens/s on a long prompt, then generation
    tokens/s of the reply that follows it (at that depth)."""
    first, _, wall, usage = server.stream({
        "messages": [{"role": "user", "content": check._prompt(700, tag)}],
        "max_tokens": 128, "ignore_eos": True, "stream": True, "cache_prompt": False,
        "stream_options": {"include_usage": True}})
    n = int(usage.get("completion_tokens", 0))
    return {"pp_tps": int(usage.get("prompt_tokens", 0)) / first if first else 0.0,
            "tg_tps": (n - 1) / max(1e-9, wall - first)}


def part_trial(env: check.Env, rehearse: bool) -> dict[str, Any]:
    from tests.fixtures import header_only as ho

    shape = check.models(rehearse)[0].shape  # Llama 3.1 8B's (a tiny llama rehearsing)
    path = env.work / "models" / f"{shape.name}.gguf"
    path.parent.mkdir(parents=True, exist_ok=True)
    if not path.exists():
        ho.write_filled(path, shape)
    base = ["-c", "16384", "-ngl", "99", "--flash-attn", "on", "--cache-type-k", "f16",
            "--cache-type-v", "f16", "--ubatch-size", "512", "--batch-size", "2048"]
    server = _server(env, False, str(path), [*base, "--tune-speed", SPEC], "trial.log")
    trial: Any = None
    try:
        server.wait_ready(timeout=240)
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            _, status = server.get("/runner/status")
            trial = status.get("speed_trial")
            if isinstance(trial, dict) and trial.get("state") == "done":
                break
            time.sleep(0.2)
    finally:
        server.stop()
    out: dict[str, Any] = {"model": shape.name, "flags": base, "spec": SPEC, "trial": trial}
    chosen = (trial or {}).get("chosen")
    if not chosen:
        return out
    picked = [*base[:4], "--flash-attn", chosen["flash_attn"], "--cache-type-k",
              chosen["cache_type"], "--cache-type-v", chosen["cache_type"], "--ubatch-size",
              str(chosen["n_ubatch"]), "--batch-size", str(chosen["n_batch"])]
    rounds: dict[str, list[dict[str, float]]] = {"plan": [], "chosen": []}
    for order in (("plan", "chosen"), ("chosen", "plan")):
        for name in order:
            s = _server(env, False, str(path), base if name == "plan" else picked,
                        f"turn-{name}.log")
            try:
                s.wait_ready(timeout=240)
                _turn(s, 0)  # warm-up
                rounds[name].append(_turn(s, len(rounds[name]) + 1))
            finally:
                s.stop()
    best = {n: {k: max(r[k] for r in rs) for k in rs[0]} for n, rs in rounds.items()}

    def turn_s(f: dict[str, float]) -> float:
        return 1024 / f["pp_tps"] + 256 / f["tg_tps"]

    out.update(rounds=rounds, best=best,
               measured_gain=turn_s(best["plan"]) / turn_s(best["chosen"]))
    return out


def markdown(data: dict[str, Any]) -> str:
    lines = ["# Issue 32 on a real GPU", ""]
    env = data.get("environment") or {}
    lines += [f"GPU: {env.get('result', env)}", ""]
    spec = (data.get("speculation") or {}).get("result") or {}
    if "servers" in spec:
        lines += ["| server | case | tok/s | speed-up |", "|---|---|---|---|"]
        for name, cases in spec["servers"].items():
            for case, r in cases.items():
                up = f"{r['speed_up']:.2f}x" if "speed_up" in r else "–"
                lines.append(f"| {name} | {case} | {r['tps']:.1f} | {up} |")
                after = r.get("after_measure")
                if after:
                    v = after.get("verdict") or {}
                    lines.append(f"| runner --spec-measure | {case}: gain {v.get('gain')}, "
                                 f"kept {v.get('kept')} | {after['tps']:.1f} | "
                                 f"{after['vs_plain']:.2f}x plain |")
        if "runner_speed_up_over_llama_server_s" in spec:
            lines += ["", "runner's speed-up / llama-server's (matching draft): "
                      f"{spec['runner_speed_up_over_llama_server_s']:.2f}x"]
    elif spec:
        lines.append(f"speculation: {spec}")
    trial = (data.get("trial") or {}).get("result") or {}
    if trial:
        t = trial.get("trial") or {}
        lines += ["", f"## Speed trial ({trial.get('model')}, {trial.get('spec')})", "",
                  f"state {t.get('state')}, why {t.get('why')}, {t.get('seconds')} s, prompt "
                  f"{t.get('prompt_tokens')} tokens; chosen {t.get('chosen')}, gain "
                  f"{t.get('gain')}", "", "| fa | kv | ub | prompt tok/s | gen tok/s |",
                  "|---|---|---|---|---|"]
        for m in t.get("measured") or []:
            lines.append(f"| {m['flash_attn']} | {m['cache_type']} | {m['n_ubatch']} | "
                         f"{m['prompt_tokens_per_s']} | {m['gen_tokens_per_s']} |"
                         + (f" {m['failed']}" if m.get("failed") else ""))
        if "best" in trial:
            lines += ["", f"loaded in turn, best of 2: plan {trial['best']['plan']}, chosen "
                      f"{trial['best']['chosen']}; a turn's measured gain "
                      f"{trial['measured_gain']:.3f}x (the trial said {t.get('gain')})"]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("out", type=Path)
    p.add_argument("--rehearse", action="store_true",
                   help="no GPU: llama-cpp-python's own build and tiny models")
    p.add_argument("--tiny-models", action="store_true",
                   help="tiny models on the GPU path (the carried runtime and wheels): checks a "
                        "carry here before a GPU machine's time is spent")
    p.add_argument("--runtime")
    p.add_argument("--llama-server")
    p.add_argument("--work", default="/tmp/hearth-gpu-speed")
    args = p.parse_args(argv)
    tiny = args.rehearse or args.tiny_models
    data: dict[str, Any] = {}
    started = time.monotonic()

    def write() -> None:
        data["total_s"] = round(time.monotonic() - started, 1)
        args.out.mkdir(parents=True, exist_ok=True)
        (args.out / "speed-check.json").write_text(json.dumps(data, indent=2) + "\n")
        (args.out / "speed-check.md").write_text(markdown(data))

    def step(name: str, fn: Any) -> None:
        print(f"== {name}", flush=True)
        t0 = time.monotonic()
        try:
            data[name] = {"result": fn()}
        except Exception as exc:  # (a part's failure is a finding; the next part still runs)
            data[name] = {"result": {"error": f"{type(exc).__name__}: {exc}"}}
        data[name]["seconds"] = round(time.monotonic() - t0, 1)
        print(f"   {data[name]['seconds']} s", flush=True)
        write()

    env = check.prepare_env(args)
    step("environment", lambda: check.step_environment(env))
    step("trial", lambda: part_trial(env, tiny))
    step("speculation", lambda: part_speculation(env, tiny))
    print((args.out / "speed-check.md").read_text(), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
