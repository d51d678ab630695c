#!/usr/bin/env python3
"""One prepared check of Hearth on a real NVIDIA GPU: the runtime, the planner, the dry run, speed.

    python3 tests/gpu/check.py OUTDIR              # on a machine with one NVIDIA GPU (≤ 5 min)
    python3 tests/gpu/check.py --rehearse OUTDIR   # here, on the CPU: the same steps and report

On the GPU machine nothing can be fetched, so what it needs travels with the checkout in the
ignored folder ``.gpu/`` (``python3 tests/gpu/carry.py`` fills it here, at most 64 MiB):
``runtime.tar.xz`` (the CUDA 13 runtime built here by installers/build_runtime.py for that card's
architecture, with llama.cpp's own ``llama-server`` built in the same tree, without its 600 MB
of cuBLAS, which the machine's CUDA toolkit provides), ``wheels/`` (the runner's Python packages
that machine lacks) and ``py/llama_cpp`` (the bindings, without their libraries).

Steps, each timed, each recorded in ``OUTDIR/gpu-check.json`` and ``OUTDIR/gpu-check.md``
(rewritten after every step, so a run cut short still reports what it did):

1. the runtime: unpacked (or ``--runtime DIR``), its libraries resolved (``ldd``);
2. its self-test (``hearth-runner selftest``);
3. fixtures: the card's NVML readings in tests/fixtures/hardware/nvml's format, the runner's
   device listing, ``hearth hardware --json``;
4. models written by tests/fixtures/header_only.write_filled (real shapes: Llama 3.1 8B Q4_K_M,
   gpt-oss-20b MoE, Gemma 3 12B sliding window, Qwen2.5 1.5B wide vocabulary; tiny ones when
   rehearsing), in the background while 1–3 run;
5. per model and case: ``hearth plan --json`` (the planner alone: no dry run, no stored
   measurements), ``hearth-runner probe`` (llama.cpp's dry run) and a real load through the
   runner; per device the predicted, dry-run and allocated weights, KV and compute buffers, and
   what NVML says the runner's process holds on the card (CUDA context, cuBLAS and the pools
   included), before against after;
6. speed: prompt processing and generation, 1 and 4 streams, the runner against a native
   ``llama-server`` on the same model and flags (rehearsing without one, a second runner stands
   in, so the code still runs).
"""

from __future__ import annotations

import argparse
import concurrent.futures
import glob
import http.client
import json
import os
import platform
import re
import secrets
import shutil
import signal
import subprocess
import sys
import tarfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
CARRY = ROOT / ".gpu"
MiB = 1 << 20
sys.path.insert(0, str(ROOT))

from tests.fixtures import header_only as ho  # noqa: E402  (after the path is set)


@dataclass(frozen=True)
class Case:
    """One load to measure: ``hearth plan`` options on one model."""

    name: str
    plan_args: tuple[str, ...] = ()


@dataclass(frozen=True)
class Model:
    key: str
    shape: ho.Shape
    cases: tuple[Case, ...]


def _cases(gpu: bool, moe_layers: int) -> dict[str, tuple[Case, ...]]:
    full = Case("full offload")
    return {
        "dense": (full, Case("flash attention off", ("--flash-attn", "off")),
                  Case("KV cache q8_0", ("--cache-type-k", "q8_0", "--cache-type-v", "q8_0")),
                  Case("KV cache q4_0, half the context",
                       ("--cache-type-k", "q4_0", "--cache-type-v", "q4_0",
                        "--ctx", "65536" if gpu else "4096")),
                  Case("as an 8 GB card", ("--gpu-budget-mib", "8192")),
                  Case("as a 24 GB card", ("--gpu-budget-mib", "24576"))),
        "moe": (full, Case("experts on the CPU", ("--n-cpu-moe", str(moe_layers))),
                Case("as an 8 GB card", ("--gpu-budget-mib", "8192"))),
        "swa": (full, Case("as an 8 GB card", ("--gpu-budget-mib", "8192"))),
        "vocab": (full,),
    }


def models(rehearse: bool) -> list[Model]:
    """The four shapes: real sizes on the GPU, tiny ones of the same architectures here."""
    if rehearse:
        shapes = {
            "dense": ho.Shape("llama-rehearsal", "llama", 2, 256, 4, 2, 512, 32000, 8192),
            "moe": ho.Shape("gpt-oss-rehearsal", "gpt-oss", 2, 256, 4, 2, 256, 32000, 8192,
                            head_dim=64, n_expert=4, n_expert_used=2, n_ff_exp=256,
                            qkv_bias=True, n_swa=128, swa_pattern=2, file_type=38),
            "swa": ho.Shape("gemma3-rehearsal", "gemma3", 6, 256, 4, 2, 512, 32000, 8192,
                            head_dim=64, tied=True, n_swa=256, swa_pattern=6),
            "vocab": ho.Shape("qwen2-rehearsal", "qwen2", 2, 256, 4, 2, 512, 151936, 8192,
                              tied=True, qkv_bias=True),
        }
    else:
        shapes = {"dense": ho.LLAMA31_8B, "moe": ho.GPT_OSS_20B, "swa": ho.GEMMA3_12B,
                  "vocab": ho.QWEN25_1_5B}
    cases = _cases(not rehearse, shapes["moe"].n_layer)
    return [Model(k, s, cases[k]) for k, s in shapes.items()]


# -- the report ------------------------------------------------------------------------------------

@dataclass
class Report:
    out: Path
    rehearse: bool
    started: float = field(default_factory=time.monotonic)
    data: dict[str, Any] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def step(self, name: str, value: Any, elapsed: float) -> None:
        with self.lock:
            self.data.setdefault("steps", {})[name] = {"elapsed_s": round(elapsed, 2),
                                                       "result": value}
            self.write()

    def write(self) -> None:
        self.data["total_s"] = round(time.monotonic() - self.started, 1)
        self.out.mkdir(parents=True, exist_ok=True)
        (self.out / "gpu-check.json").write_text(json.dumps(self.data, indent=2) + "\n")
        (self.out / "gpu-check.md").write_text(markdown(self.data))


def timed(report: Report, name: str, fn: Callable[[], Any]) -> Any:
    """Run one step; its failure is recorded, not raised: the next steps still run."""
    print(f"== {name}", flush=True)
    t0 = time.monotonic()
    try:
        value = fn()
    except Exception as exc:  # (a step's failure is a finding for the report)
        value = {"error": f"{type(exc).__name__}: {exc}"}
    report.step(name, value, time.monotonic() - t0)
    print(f"   {time.monotonic() - t0:.1f} s", flush=True)
    return value


# -- processes ---------------------------------------------------------------------------------------

@dataclass
class Env:
    """How this run starts Python programs: the interpreter, PYTHONPATH, the runtime."""

    python: str
    env: dict[str, str]
    runtime: Path | None  # None: llama-cpp-python's own build (rehearsing)
    llama_server: Path | None
    work: Path

    def runner(self, *args: str) -> list[str]:
        rt = ["--runtime", str(self.runtime)] if self.runtime else []
        return [self.python, "-m", "runner", *rt, *args]

    def hearth(self, *args: str) -> list[str]:
        return [self.python, "-m", "app", *args]

    def run_json(self, cmd: list[str], timeout: float) -> Any:
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout,
                              env=self.env, cwd=ROOT)
        text = done.stdout.strip()
        try:
            return json.loads(text[text.index("{"):]) if "{" in text else {
                "error": f"exit {done.returncode}: {done.stderr.strip()[-800:]}"}
        except ValueError:
            return {"error": f"exit {done.returncode}: not JSON: {text[-300:]} "
                             f"{done.stderr.strip()[-500:]}"}


def prepare_env(args: argparse.Namespace) -> Env:
    """PYTHONPATH with the carried packages, the runtime unpacked, cuBLAS found."""
    work = Path(args.work)
    work.mkdir(parents=True, exist_ok=True)
    env = dict(os.environ, PYTHONUNBUFFERED="1", HEARTH_HOME=str(work / "home"))
    paths = [str(ROOT)]
    # What was carried is for the GPU machine's Python; a rehearsal runs with this checkout's.
    wheels = [] if args.rehearse else sorted((CARRY / "wheels").glob("*.whl"))
    if wheels:
        site = work / "site"
        if not site.exists():
            subprocess.check_call([sys.executable, "-m", "pip", "install", "-q", "--no-index",
                                   "--no-deps", "--no-compile", "--target", str(site),
                                   *map(str, wheels)])
        paths.append(str(site))
    if (CARRY / "py").is_dir() and not args.rehearse:
        paths.append(str(CARRY / "py"))
    env["PYTHONPATH"] = os.pathsep.join([*paths, env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    runtime: Path | None = Path(args.runtime).resolve() if args.runtime else None
    packed = CARRY / "runtime.tar.xz"
    if runtime is None and not args.rehearse and packed.exists():
        runtime = work / "runtime"
        if not (runtime / "manifest.json").exists():
            shutil.rmtree(runtime, ignore_errors=True)
            with tarfile.open(packed) as tar:
                tar.extractall(work, filter="data")
            (work / next(p.name for p in work.iterdir()
                         if (p / "manifest.json").exists() and p.name != "runtime")
             ).rename(runtime)
    server = Path(args.llama_server) if args.llama_server else None
    if server is None and runtime is not None and (runtime / "bin" / "llama-server").exists():
        server = runtime / "bin" / "llama-server"
    if runtime is not None:
        # The runtime's own libraries first; the machine's cuBLAS where the carried runtime
        # left its 600 MB of cuBLAS behind.
        extra = [str(runtime / "lib"), *_cuda_library_dirs(runtime / "lib")]
        env["LD_LIBRARY_PATH"] = os.pathsep.join([*extra, env.get("LD_LIBRARY_PATH", "")])
    return Env(sys.executable, env, runtime, server, work)


_CUDA_LIBS = ("libcublas.so.13", "libcublasLt.so.13")


def _cuda_library_dirs(lib: Path) -> list[str]:
    missing = [n for n in _CUDA_LIBS if not (lib / n).exists()]
    if not missing:
        return []
    patterns = ["/usr/local/cuda*/lib64", "/usr/local/cuda*/targets/*/lib",
                "/usr/lib/x86_64-linux-gnu", "/opt/*/.venv/lib/python3*/site-packages/nvidia/*/lib",
                "/usr/local/lib/python3*/dist-packages/nvidia/*/lib",
                str(Path(sys.prefix) / "lib/python3*/site-packages/nvidia/*/lib")]
    dirs: list[str] = []
    for name in missing:
        for pattern in patterns:
            hit = sorted(glob.glob(f"{pattern}/{name}"))
            if hit:
                folder = str(Path(hit[0]).parent)
                if folder not in dirs:
                    dirs.append(folder)
                break
    return dirs


# -- steps ------------------------------------------------------------------------------------------

def step_environment(env: Env) -> dict[str, Any]:
    out: dict[str, Any] = {"python": sys.version.split()[0], "cpus": os.cpu_count(),
                           "machine": platform.machine(), "kernel": platform.release(),
                           "runtime": str(env.runtime or "llama-cpp-python's own build"),
                           "llama_server": str(env.llama_server or "none: a runner stands in"),
                           "LD_LIBRARY_PATH": env.env.get("LD_LIBRARY_PATH", "")}
    smi = shutil.which("nvidia-smi")
    if smi:
        q = subprocess.run([smi, "--query-gpu=name,driver_version,memory.total,memory.used,"
                            "compute_cap", "--format=csv,noheader"],
                           capture_output=True, text=True, timeout=30)
        out["nvidia_smi"] = q.stdout.strip() or q.stderr.strip()
    if env.runtime is not None:
        out["manifest"] = json.loads((env.runtime / "manifest.json").read_text())
        ldd: dict[str, list[str]] = {}
        for so in sorted((env.runtime / "lib").glob("libggml-cuda*.so")):
            done = subprocess.run(["ldd", str(so)], capture_output=True, text=True,
                                  env=env.env, timeout=30)
            ldd[so.name] = [ln.strip() for ln in done.stdout.splitlines()
                            if "cuda" in ln or "cublas" in ln or "not found" in ln]
        out["ldd"] = ldd
    return out


def step_selftest(env: Env) -> Any:
    return env.run_json(env.runner("selftest", "--json"), timeout=120)


def step_fixtures(env: Env, out: Path) -> dict[str, Any]:
    """The card as NVML and the runner see it, in the formats the hardware tests replay."""
    result: dict[str, Any] = {}
    result["nvml"] = nvml = nvml_snapshot()
    if "devices" in nvml:
        (out / "nvml.json").write_text(json.dumps(nvml, indent=2) + "\n")
    devices = env.run_json(env.runner("devices"), timeout=120)
    if "error" in devices:
        raise RuntimeError(f"hearth-runner devices: {devices['error']}")
    result["runner_devices"] = devices
    (out / "runner-devices.json").write_text(json.dumps(devices) + "\n")
    hardware = env.run_json(env.hearth("hardware", "--json"), timeout=120)
    if "error" in hardware:
        raise RuntimeError(f"hearth hardware: {hardware['error']}")
    (out / "hardware-report.json").write_text(json.dumps(hardware, indent=2) + "\n")
    result["hardware_gpus"] = hardware.get("gpus", [])
    return result


def nvml_snapshot() -> dict[str, Any]:
    """pynvml's values, as tests/fixtures/hardware/nvml/*.json record them."""
    try:
        import pynvml
    except ImportError as exc:
        return {"error": f"no nvidia-ml-py: {exc}"}
    try:
        pynvml.nvmlInit()
    except Exception as exc:  # (no driver: recorded)
        return {"error": f"NVML did not start: {exc}"}
    try:
        out: dict[str, Any] = {
            "_recorded": f"tests/gpu/check.py on {platform.node()}, {time.strftime('%Y-%m-%d')}",
            "driver": _text(pynvml.nvmlSystemGetDriverVersion()),
            "cuda": pynvml.nvmlSystemGetCudaDriverVersion(), "devices": [],
            "process_names": {}}
        for i in range(pynvml.nvmlDeviceGetCount()):
            h = pynvml.nvmlDeviceGetHandleByIndex(i)
            mem = pynvml.nvmlDeviceGetMemoryInfo(h)
            procs = _procs(pynvml, h)
            out["devices"].append({
                "name": _text(pynvml.nvmlDeviceGetName(h)),
                "uuid": _text(pynvml.nvmlDeviceGetUUID(h)),
                "busId": _text(pynvml.nvmlDeviceGetPciInfo(h).busId),
                "memory": {"total": mem.total, "free": mem.free, "used": mem.used},
                "cc": list(pynvml.nvmlDeviceGetCudaComputeCapability(h)),
                "compute_procs": procs, "graphics_procs": []})
        return out
    finally:
        pynvml.nvmlShutdown()


def _text(v: Any) -> str:
    return v.decode() if isinstance(v, bytes) else str(v)


def _procs(pynvml: Any, h: Any) -> list[dict[str, int]]:
    try:
        return [{"pid": p.pid, "usedGpuMemory": p.usedGpuMemory or 0}
                for p in pynvml.nvmlDeviceGetComputeRunningProcesses(h)]
    except Exception:  # (some virtual machines refuse per-process figures)
        return []


def gpu_memory(pid: int | None = None) -> dict[str, int] | None:
    """Device 0's used bytes, and the bytes process ``pid`` holds there where NVML says."""
    snap = nvml_snapshot()
    if "devices" not in snap or not snap["devices"]:
        return None
    dev = snap["devices"][0]
    out = {"device_used": dev["memory"]["used"]}
    for p in dev["compute_procs"]:
        if pid is not None and p["pid"] == pid:
            out["process"] = p["usedGpuMemory"]
    return out


def write_models(work: Path, rehearse: bool) -> dict[str, Any]:
    """Write every model file (threads: numpy and the disk release the GIL)."""
    folder = work / "models"
    folder.mkdir(parents=True, exist_ok=True)
    paths: dict[str, Any] = {}

    def one(m: Model) -> tuple[str, Path, float]:
        path = folder / f"{m.shape.name}.gguf"
        t0 = time.monotonic()
        if not path.exists():
            ho.write_filled(path, m.shape)
        return m.key, path, time.monotonic() - t0

    with concurrent.futures.ThreadPoolExecutor(4) as pool:
        for key, path, took in pool.map(one, models(rehearse)):
            paths[key] = {"path": str(path), "bytes": path.stat().st_size,
                          "written_s": round(took, 1)}
    return paths


# -- one load ---------------------------------------------------------------------------------------

class Server:
    """A runner or llama-server child on a free loopback port, with an API key."""

    def __init__(self, cmd: list[str], env: dict[str, str], key: str, log: Path,
                 port: int | None = None, cwd: Path = ROOT) -> None:
        self.key = key
        self.log = log.open("w")
        self.port = port
        self.proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=self.log, env=env,
                                     cwd=cwd, text=True, start_new_session=True)

    def wait_ready(self, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        if self.port is None:  # the runner says where it listens on its first stdout line
            line = _readline(self.proc, deadline)
            self.port = int(json.loads(line)["url"].rsplit(":", 1)[1])
        else:
            threading.Thread(target=self.proc.stdout.read, daemon=True).start()  # type: ignore[union-attr]
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"the server exited with {self.proc.returncode}: "
                                   f"{_tail(Path(self.log.name))}")
            try:
                status, _ = self.get("/health")
                if status == 200:
                    return
            except OSError:
                pass
            time.sleep(0.2)
        raise TimeoutError(f"not ready in {timeout:.0f} s: {_tail(Path(self.log.name))}")

    def get(self, path: str) -> tuple[int, Any]:
        conn = http.client.HTTPConnection("127.0.0.1", self.port or 0, timeout=30)
        try:
            conn.request("GET", path, headers={"Authorization": f"Bearer {self.key}"})
            resp = conn.getresponse()
            body = resp.read()
            try:
                return resp.status, json.loads(body)
            except ValueError:
                return resp.status, body.decode(errors="replace")
        finally:
            conn.close()

    def stream(self, body: dict[str, Any]) -> tuple[float, int, float, dict[str, Any]]:
        """(seconds to the first piece, pieces, seconds in all, usage) of a streamed chat."""
        conn = http.client.HTTPConnection("127.0.0.1", self.port or 0, timeout=300)
        t0 = time.perf_counter()
        first = 0.0
        pieces = 0
        usage: dict[str, Any] = {}
        try:
            conn.request("POST", "/v1/chat/completions", json.dumps(body),
                         {"Authorization": f"Bearer {self.key}",
                          "Content-Type": "application/json"})
            resp = conn.getresponse()
            if resp.status != 200:
                raise RuntimeError(f"HTTP {resp.status}: {resp.read()[:300]!r}")
            for raw in resp:
                line = raw.decode(errors="replace").strip()
                if not line.startswith("data: {"):
                    continue
                if _TEXT.search(line):
                    pieces += 1
                    if not first:
                        first = time.perf_counter() - t0
                if '"usage"' in line:
                    got = json.loads(line[6:]).get("usage")
                    if got:
                        usage = got
        finally:
            conn.close()
        return first, pieces, time.perf_counter() - t0, usage

    def stop(self) -> None:
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait()
        self.log.close()


_TEXT = re.compile(r'"content": ?"[^"]')


def _readline(proc: subprocess.Popen[str], deadline: float) -> str:
    box: list[str] = []
    t = threading.Thread(target=lambda: box.append(proc.stdout.readline()),  # type: ignore[union-attr]
                         daemon=True)
    t.start()
    t.join(max(0.1, deadline - time.monotonic()))
    if not box or not box[0]:
        raise RuntimeError(f"no listening line (exit {proc.poll()})")
    threading.Thread(target=proc.stdout.read, daemon=True).start()  # type: ignore[union-attr]
    return box[0]


def _tail(log: Path, n: int = 600) -> str:
    try:
        return log.read_text(errors="replace")[-n:].replace("\n", " | ")
    except OSError:
        return ""


def _free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def measure_case(env: Env, model: Model, path: str, case: Case, index: int) -> dict[str, Any]:
    """Plan, dry-run and load one case; every figure per device."""
    out: dict[str, Any] = {"model": model.shape.name, "case": case.name}
    rt = ["--runtime", str(env.runtime)] if env.runtime else []
    plan = env.run_json(env.hearth("plan", path, "--json", "--no-probe", "--ignore-measurements",
                                   *rt, *case.plan_args), timeout=120)
    if "error" in plan or "runner_args" not in plan:
        out["error"] = f"plan: {plan.get('error', plan)}"
        return out
    s = plan["settings"]
    out["plan"] = {k: s.get(k) for k in ("n_gpu_layers", "n_ctx", "n_batch", "n_ubatch",
                                         "flash_attn", "cache_type_k", "cache_type_v",
                                         "n_cpu_moe")}
    out["fits"] = plan.get("fits")
    out["predicted"] = {d["llama_name"] or d["name"]: d["predicted"] for d in plan["devices"]}
    out["budget"] = {d["llama_name"] or d["name"]: d["budget"] for d in plan["devices"]}
    args = [a for a in plan["runner_args"]]
    probe = env.run_json(env.runner("probe", *args), timeout=120)
    out["dry_run"] = {d["device"]: {k: d[k] for k in ("weights", "kv", "compute")}
                      for d in probe.get("devices", [])} if "devices" in probe else probe
    before = gpu_memory()
    key = secrets.token_urlsafe(16)
    server = Server(env.runner("serve", *args, "--port", "0", "--alias", "m"),
                    dict(env.env, HEARTH_API_KEY=key), key, env.work / f"serve-{index}.log")
    try:
        t0 = time.monotonic()
        server.wait_ready(timeout=180)
        out["load_s"] = round(time.monotonic() - t0, 2)
        _, status = server.get("/runner/status")
        memory = status.get("memory", []) if isinstance(status, dict) else []
        out["allocated"] = {d["device"]: {k: d.get(k, 0) for k in ("weights", "kv", "compute",
                                                                  "output")} for d in memory}
        loaded = gpu_memory(server.proc.pid)
        # A prompt longer than a micro-batch: the backend's pools grow to what prompt
        # processing needs, as in a real first chat.
        _, pieces, _, _ = server.stream({
            "messages": [{"role": "user", "content": _prompt(700, index)}],
            "max_tokens": 8, "ignore_eos": True, "stream": True})
        after = gpu_memory(server.proc.pid)
        out["generated"] = pieces
        out["loaded"] = pieces > 0
        if before and loaded and after:
            out["nvml"] = {"device_used_before": before["device_used"],
                           "device_used_loaded": loaded["device_used"],
                           "device_used_after_generating": after["device_used"],
                           "process_loaded": loaded.get("process"),
                           "process_after_generating": after.get("process")}
    except Exception as exc:  # (a failed load is the finding)
        out["loaded"] = False
        out["error"] = f"{type(exc).__name__}: {exc}"
    finally:
        server.stop()
    return out


def step_cases(env: Env, paths: dict[str, Any], rehearse: bool, deadline: float,
               report: Report) -> list[dict[str, Any]]:
    results: list[dict[str, Any]] = []
    index = 0
    for model in models(rehearse):
        for case in model.cases:
            index += 1
            if time.monotonic() > deadline:
                results.append({"model": model.shape.name, "case": case.name,
                                "error": "skipped: the run's time was up"})
                continue
            t0 = time.monotonic()
            r = measure_case(env, model, paths[model.key]["path"], case, index)
            r["elapsed_s"] = round(time.monotonic() - t0, 1)
            print(f"   {model.shape.name} / {case.name}: {r.get('error') or 'ok'} "
                  f"({r['elapsed_s']} s)", flush=True)
            results.append(r)
            report.step("cases (in progress)", results, 0)
    return results


# -- speed ------------------------------------------------------------------------------------------

PROMPT_WORDS = "the warm fire of the hearth and the light that is in it with us".split()


def _prompt(n_words: int, tag: int) -> str:
    return f"{tag} " + " ".join(PROMPT_WORDS[(tag + i) % len(PROMPT_WORDS)]
                                for i in range(n_words))


def speed_round(server: Server, rehearse: bool, tag: int) -> dict[str, float]:
    """Prompt tokens/s (one long prompt), generation tokens/s with 1 and 4 streams."""
    n_prompt_words, n_gen = (200, 24) if rehearse else (1500, 128)
    out: dict[str, float] = {}
    ttft, _, _, usage = server.stream({
        "messages": [{"role": "user", "content": _prompt(n_prompt_words, tag)}],
        "max_tokens": 1, "stream": True, "stream_options": {"include_usage": True},
        "cache_prompt": False})
    prompt_tokens = int(usage.get("prompt_tokens", 0))
    out["prompt_tokens"] = prompt_tokens
    out["pp_tps"] = prompt_tokens / ttft if ttft and prompt_tokens else 0.0
    for k in (1, 4):
        bodies = [{"messages": [{"role": "user", "content": f"story {tag}-{k}-{i}"}],
                   "max_tokens": n_gen, "ignore_eos": True, "stream": True, "seed": i,
                   "stream_options": {"include_usage": True}}
                  for i in range(k)]
        t0 = time.perf_counter()
        with concurrent.futures.ThreadPoolExecutor(k) as pool:
            results = list(pool.map(server.stream, bodies))
        wall = time.perf_counter() - t0
        # From the first piece of the first stream: the prompt is not generation. Tokens as
        # the server counts them (a random model's pieces can be empty text).
        first = min(r[0] for r in results)
        tokens = sum(int(r[3].get("completion_tokens", n_gen)) for r in results)
        out[f"tg{k}_tps"] = tokens / max(1e-9, wall - first)
    return out


def step_speed(env: Env, paths: dict[str, Any], rehearse: bool) -> dict[str, Any]:
    """The runner against llama-server, same model and flags, two rounds each, taking turns."""
    path = paths["dense"]["path"]
    rt = ["--runtime", str(env.runtime)] if env.runtime else []
    plan = env.run_json(env.hearth("plan", path, "--json", "--no-probe", "--ignore-measurements",
                                   "--ctx", "16384", *rt), timeout=120)
    if "runner_args" not in plan:
        return {"error": f"plan: {plan.get('error', plan)}"}
    args = [*_fixed_threads(plan["runner_args"]), "--parallel", "4"]
    key = secrets.token_urlsafe(16)

    def runner() -> Server:
        return Server(env.runner("serve", *args, "--port", "0", "--alias", "m"),
                      dict(env.env, HEARTH_API_KEY=key), key, env.work / "speed-runner.log")

    def native() -> Server:
        port = _free_port()
        if env.llama_server is not None:
            cmd = [str(env.llama_server), *args, "--port", str(port), "--host", "127.0.0.1",
                   "--api-key", key, "--no-webui", "-a", "m"]
            # ggml looks for its backend modules beside the program and in the working folder.
            return Server(cmd, env.env, key, env.work / "speed-native.log", port=port,
                          cwd=env.runtime / "lib" if env.runtime else ROOT)
        # Rehearsing without llama-server: a second runner stands in, so this code runs.
        return Server(env.runner("serve", *args, "--port", str(port), "--alias", "m"),
                      dict(env.env, HEARTH_API_KEY=key), key, env.work / "speed-native.log",
                      port=port)

    servers: dict[str, Callable[[], Server]] = {"runner": runner, "llama-server": native}
    rounds: dict[str, list[dict[str, float]]] = {name: [] for name in servers}
    for order in (("runner", "llama-server"), ("llama-server", "runner")):
        for name in order:
            server = servers[name]()
            try:
                server.wait_ready(timeout=180)
                server.stream({"messages": [{"role": "user", "content": "warm up"}],
                               "max_tokens": 4, "stream": True})
                rounds[name].append(speed_round(server, rehearse, len(rounds[name])))
            finally:
                server.stop()
    best = {name: {m: max(r[m] for r in rs) for m in rs[0]} for name, rs in rounds.items()
            if rs}
    ratios = {m: best["runner"][m] / best["llama-server"][m]
              for m in ("pp_tps", "tg1_tps", "tg4_tps") if best["llama-server"].get(m)}
    return {"flags": args, "native": str(env.llama_server or "a second runner (stand-in)"),
            "rounds": rounds, "best": best, "ratio_runner_to_native": ratios}


def _fixed_threads(args: list[str]) -> list[str]:
    """The plan's flags without the runner's own thread measuring (llama-server has none)."""
    out: list[str] = []
    skip = 0
    for a in args:
        if skip:
            skip -= 1
            continue
        if a == "--adapt-threads":
            continue
        if a == "--max-threads":
            skip = 1
            continue
        out.append(a)
    return out


# -- the Markdown report ----------------------------------------------------------------------------

def _mib(v: Any) -> str:
    return f"{v / MiB:,.0f}" if isinstance(v, (int, float)) else "–"


def _err(pred: float, meas: float) -> str:
    return f"{100 * (pred - meas) / meas:+.1f}%" if meas else "–"


def case_rows(case: dict[str, Any]) -> list[str]:
    """One Markdown row per device of a case: predicted / dry run / allocated, MiB."""
    rows = []
    name = f"{case['model']} · {case['case']}"
    if "predicted" not in case:
        return [f"| {name} | – | {case.get('error', '')} |" + " |" * 9]
    plan = case.get("plan", {})
    setting = (f"ngl {plan.get('n_gpu_layers')}, ctx {plan.get('n_ctx')}, "
               f"fa {plan.get('flash_attn')}, kv {plan.get('cache_type_k')}")
    for dev, pred in case["predicted"].items():
        dry = case.get("dry_run", {}).get(dev, {}) if isinstance(case.get("dry_run"), dict) \
            else {}
        alloc = case.get("allocated", {}).get(dev, {})
        meas = sum(alloc.get(k, 0) for k in ("weights", "kv", "compute")) if alloc else 0
        nv = case.get("nvml", {}) if dev != "CPU" else {}
        proc = nv.get("process_after_generating")
        buffers = pred["weights"] + pred["kv"] + pred["compute"]
        card = (f"{_mib(pred['total'])} / {_mib(proc)} ({_err(pred['total'], proc)})"
                if proc else "–")
        rows.append(
            f"| {name} | {setting} | {dev} | {_mib(pred['weights'])} / {_mib(alloc.get('weights'))}"
            f" | {_mib(pred['kv'])} / {_mib(dry.get('kv'))} / {_mib(alloc.get('kv'))}"
            f" | {_mib(pred['compute'])} / {_mib(dry.get('compute'))} / {_mib(alloc.get('compute'))}"
            f" | {_mib(buffers)} / {_mib(meas)} | {_err(buffers, meas)} | {card}"
            f" | {'yes' if case.get('loaded') else 'NO: ' + case.get('error', '')} |")
    return rows


def markdown(data: dict[str, Any]) -> str:
    steps = data.get("steps", {})
    mode = "rehearsal on the CPU" if data.get("rehearse") else "a real NVIDIA GPU"
    lines = [f"# Hearth's GPU check ({mode})", "",
             f"Total {data.get('total_s')} s. Each figure: predicted by the planner / llama.cpp's "
             "dry run / allocated by the real load (MiB, from the runner's buffer lines). The "
             "whole card: the plan's total with the backend's own memory (CUDA's context, "
             "cuBLAS, pools) against what NVML saw the runner's process hold after a first "
             "prompt.",
             "", "| step | seconds | outcome |", "|---|---|---|"]
    for name, st in steps.items():
        res = st["result"]
        outcome = res.get("error", "ok") if isinstance(res, dict) else "ok"
        lines.append(f"| {name} | {st['elapsed_s']} | {outcome} |")
    env = steps.get("environment", {}).get("result", {})
    if env:
        lines += ["", f"Runtime: {env.get('runtime')}; GPU: {env.get('nvidia_smi', 'none')}; "
                      f"Python {env.get('python')}, {env.get('cpus')} CPUs."]
    self_test = steps.get("self-test", {}).get("result")
    if self_test:
        lines += ["", "## Self-test", "", "```", json.dumps(self_test)[:1500], "```"]
    cases = steps.get("cases", steps.get("cases (in progress)", {})).get("result") or []
    if cases:
        lines += ["", "## Memory per load", "",
                  "| model · case | plan | device | weights | KV | compute | buffers (pred / "
                  "alloc) | error | whole card: plan with CUDA's own / NVML (error) | loaded |",
                  "|---|---|---|---|---|---|---|---|---|---|"]
        for case in cases:
            lines += case_rows(case)
    speed = steps.get("speed", {}).get("result")
    if isinstance(speed, dict) and "best" in speed:
        lines += ["", f"## Speed (best of two rounds; native: {speed['native']})", "",
                  "| server | prompt tok/s | generation 1 stream | generation 4 streams |",
                  "|---|---|---|---|"]
        for name, b in speed["best"].items():
            lines.append(f"| {name} | {b['pp_tps']:.0f} | {b['tg1_tps']:.1f} | "
                         f"{b['tg4_tps']:.1f} |")
        r = speed["ratio_runner_to_native"]
        lines.append("| runner ÷ native | " + " | ".join(
            f"{r.get(m, 0):.3f}" for m in ("pp_tps", "tg1_tps", "tg4_tps")) + " |")
    return "\n".join(lines) + "\n"


# -- main ------------------------------------------------------------------------------------------

def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("out", type=Path, help="where the JSON and Markdown reports go")
    p.add_argument("--rehearse", action="store_true",
                   help="no GPU: the CPU build, tiny models, the same steps and report")
    p.add_argument("--tiny-models", action="store_true",
                   help="the rehearsal's tiny models on the GPU path (the carried runtime and "
                        "wheels): checks a carry here before a GPU machine's time is spent")
    p.add_argument("--runtime", help="a runtime folder (default: the carried one; rehearsing: "
                                     "llama-cpp-python's own build)")
    p.add_argument("--llama-server", help="a native llama-server (default: the runtime's bin/)")
    p.add_argument("--work", default="/tmp/hearth-gpu-check", help="models, logs, unpacked files")
    p.add_argument("--budget-s", type=float, default=280,
                   help="stop starting new loads after this many seconds (default 280)")
    args = p.parse_args(argv)
    report = Report(args.out, args.rehearse)
    report.data["rehearse"] = args.rehearse
    deadline = report.started + args.budget_s
    tiny = args.rehearse or args.tiny_models
    try:
        env = prepare_env(args)
    except Exception as exc:  # (nothing else can run: report why)
        report.step("prepare", {"error": f"{type(exc).__name__}: {exc}"}, 0)
        return 1
    report.step("prepare", {"runtime": str(env.runtime), "llama_server": str(env.llama_server)},
                time.monotonic() - report.started)
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        writing = pool.submit(write_models, env.work, tiny)
        timed(report, "environment", lambda: step_environment(env))
        timed(report, "self-test", lambda: step_selftest(env))
        timed(report, "fixtures", lambda: step_fixtures(env, args.out))
        paths = timed(report, "models", writing.result)
    if "error" in paths:
        return 1
    cases = timed(report, "cases", lambda: step_cases(env, paths, tiny, deadline - 60, report))
    report.data.get("steps", {}).pop("cases (in progress)", None)
    timed(report, "speed", lambda: step_speed(env, paths, tiny))
    report.write()
    ok = isinstance(cases, list) and all(c.get("loaded") for c in cases)
    print(f"report: {args.out / 'gpu-check.md'}", flush=True)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
