"""The model server (``python -m server``, issue 29): cold loads, two models at once, eviction.

Real servers (tests/integration/server_rig.py: each in a home folder of its own, with copies of
the benchmark model, tests/fixtures/models.py BENCH, about 100 MB at Q4_K_M) and real runners.
Every request is greedy (temperature 0, fixed seed, ``ignore_eos``), so both sides of a
comparison decode the same tokens.

1. **Cold model to first token** (target: <= 1.1x the baseline + 50 ms). A streaming chat
   request (``max_tokens`` 4) names a model that is not loaded; the figure runs from just before
   the request is sent to the first chunk with content. The server resolves the name, plans the
   model (hardware detection, the runtime, saved pins, the dry run: llama.cpp's ``no_alloc``
   load in a process of its own), starts its runner, waits for ``/health`` and forwards the
   request. The baseline is the same model loaded by hand: the runner command line the server
   used (read from its runner process; same interpreter, flags and environment, a key of our
   own) spawned by the benchmark, from spawn to ``/health`` 200 (polled every 10 ms; the server
   polls every 50) to the first content chunk of the same request, sent to the runner directly.
   Two servers run side by side, one with the dry run (the default: the target applies to it)
   and one with ``--no-dry-run``; their plans give the same flags here, else each gets its own
   baseline. After each measured request the model is unloaded (``POST /hearth/unload``), so
   the next is cold again (its file stays in the page cache, as it does for the baseline).
   Each server's first cold load and one load by hand come first, untimed in the medians (the
   first is printed: imports, the runtime's choice and the model's first dry run are paid once
   per server; a model loaded again whose plan comes out the same reuses that dry run,
   server/planning.py ``ProbeMemo``). Then ``--rounds`` rounds, the three taken in turns;
   medians.
2. **Two models resident, requests alternating** (reported, no target). Two copies of the model
   loaded in the default server; ``/v1/completions`` of ``--tokens`` tokens each (64),
   ``--requests`` per model (2): one model alone, the other alone, then one client
   alternating A, B, A, B (what an agent switching models does), then two clients at once (one
   per model). Total completion tokens over wall time; medians over the rounds. Each runner is
   given every core by its plan, so two decoding at once share them.
3. **Eviction and memory** (target: the memory the runners were given within 3 % of the
   planner's accounting; what they touched is reported beside it).
   A third server with ``--memory-budget-mib`` at 2.5 times one model's planned memory (read
   from the first server's ``GET /hearth/models``): A, B, A, then C. C must be served after B
   (the least recently used) is unloaded, with A and C resident. Every request there has a
   600-token prompt, so each runner has run a full 512-token batch.

   What is compared, and why not the runners' whole resident memory. The planner's accounting
   (the sum of ``/hearth/models`` ``memory`` for A and C, bytes on "cpu" here) is, per model,
   its weights (the GGUF tensors, mapped from the file), its KV cache and its compute buffers.
   It does not count the runner process itself: a Python interpreter with llama.cpp, an HTTP
   stack and their libraries, some 80 MiB resident per runner here, which the residency
   decision leaves out (it plans models, not processes). So the measured figure is, per runner
   (from ``/proc/PID/smaps``): the resident pages of the model file's mappings (the weights)
   plus its anonymous memory beyond the runner's own footprint (KV, compute, anything else the
   model made it allocate). That footprint is calibrated on a runner of the tiny model loaded
   in the same server afterwards: its anonymous memory less what its plan predicts beyond its
   mapped file (about 4 MiB in all), so the tiny runner's figure equals its prediction by
   construction. The whole processes' resident memory (RssAnon + RssFile) and llama.cpp's own
   allocations (``/runner/status`` of the by-hand runner of part 1: the same model and flags)
   are printed beside it, with a breakdown of one runner's anonymous memory (KV, weights
   llama.cpp copied out of the mapped file into CPU_REPACK buffers, compute pages touched), to
   show where a difference comes from. Two things the planner does not model move the figure
   in opposite directions: on CPUs where llama.cpp repacks quantized weights, the repacked
   copies are anonymous memory beyond the mapped file (the file's pages were read for them and
   stay mapped), and the compute buffer's worst case (logits for a whole batch) is reserved
   but never touched by chat requests. Linux only (smaps); elsewhere this row reads n/a.

   Which of the two carries the target. Memory runs out by what is given, not by what is
   touched: a GPU backend's buffers hold their whole size in VRAM from the moment they are
   made, Windows charges every allocation to the commit limit whether touched or not, and a
   batch of logits that a request does ask for touches the whole compute buffer. So the target
   is the committed figure, from the same smaps: the model file's mappings (``Size``) plus the
   private writable mappings without a file (``Size``: the heap, malloc's and llama.cpp's
   buffers) beyond the runner's own, calibrated on the tiny model as above. The touched figure
   (``Rss``, as above) is printed beside it, with its breakdown.

    .venv/bin/python -m tests.bench.server              # the table (3 to 4 minutes on 2 cores)
    .venv/bin/python -m tests.bench.server --rounds 5   # more rounds, medians
    .venv/bin/python -m tests.bench.server --strict     # exit 1 when a target is missed
"""

from __future__ import annotations

import argparse
import json
import re
import secrets
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx2

from app.runner_client.client import iter_sse
from tests.fixtures.models import BENCH, TINY, model_path
from tests.integration.server_rig import REPO, Server, add_model, running, server_env, until

MiB = 1 << 20
RATIO_TARGET = 1.1
SLACK_S = 0.050
MEMORY_TOLERANCE = 0.03
HEALTH_POLL_S = 0.010
READY_TIMEOUT_S = 120.0

A, B, C, T = "bench-a.gguf", "bench-b.gguf", "bench-c.gguf", "tiny.gguf"
HELLO = [{"role": "user", "content": "hello"}]
LONG = [{"role": "user", "content": "the world is warm " * 150}]  # ~620 tokens: > one batch
GREEDY = {"temperature": 0, "seed": 1, "ignore_eos": True}


# ---- pure helpers (tests/unit/test_bench_server.py) -----------------------------------------

def chunk_content(payload: str) -> str:
    """The text a chat-completion stream chunk carries ('' for the role chunk, usage, [DONE])."""
    if payload.strip() == "[DONE]":
        return ""
    try:
        data = json.loads(payload)
    except ValueError:
        return ""
    choices = data.get("choices") if isinstance(data, dict) else None
    if not choices:
        return ""
    delta = choices[0].get("delta") or {}
    return str(delta.get("content") or "")


_MAPPING = re.compile(r"^[0-9a-f]+-[0-9a-f]+\s")


def smaps_memory(text: str, path: str) -> tuple[int, int]:
    """From a /proc/PID/smaps text: the resident bytes of ``path``'s mappings, and the
    process's anonymous bytes (every mapping's ``Anonymous:``)."""
    file_rss = anon = 0
    current = ""
    for line in text.splitlines():
        if _MAPPING.match(line):
            parts = line.split(None, 5)
            current = parts[5].strip() if len(parts) > 5 else ""
            continue
        key, _, value = line.partition(":")
        if key == "Rss" and current == path:
            file_rss += int(value.split()[0]) * 1024
        elif key == "Anonymous":
            anon += int(value.split()[0]) * 1024
    return file_rss, anon


def smaps_committed(text: str, path: str) -> tuple[int, int]:
    """From a /proc/PID/smaps text: the size of ``path``'s mappings, and of the private
    writable mappings with no file (heap, malloc's and llama.cpp's buffers, thread stacks):
    what the process was given, touched or not."""
    file_size = anon_size = 0
    current, private_rw = "", False
    for line in text.splitlines():
        if _MAPPING.match(line):
            parts = line.split(None, 5)
            current = parts[5].strip() if len(parts) > 5 else ""
            private_rw = parts[1].startswith("rw") and parts[1].endswith("p")
            continue
        key, _, value = line.partition(":")
        if key != "Size":
            continue
        if current == path:
            file_size += int(value.split()[0]) * 1024
        elif private_rw and (not current or current.startswith("[")):
            anon_size += int(value.split()[0]) * 1024
    return file_size, anon_size


def cold_target_s(baseline_s: float) -> float:
    return RATIO_TARGET * baseline_s + SLACK_S


def budget_mib(need: int) -> int:
    """A memory budget two such models fit in and three do not."""
    return int(2.5 * need / MiB)


def within(measured: float, predicted: float, tolerance: float = MEMORY_TOLERANCE) -> bool:
    return predicted > 0 and abs(measured / predicted - 1) <= tolerance


# ---- requests --------------------------------------------------------------------------------

def _stream_first_token(http: httpx2.Client, path: str, body: dict[str, Any], t0: float) -> float:
    """Seconds from ``t0`` to the first content chunk; the stream is read to its end."""
    first = None
    with http.stream("POST", path, json=body) as r:
        if r.status_code != 200:
            raise SystemExit(f"{path} answered {r.status_code}: {r.read().decode()[:500]}")
        for payload in iter_sse(r.iter_lines()):
            if first is None and chunk_content(payload):
                first = time.perf_counter() - t0
    if first is None:
        raise SystemExit(f"{path}: the stream carried no content")
    return first


def _chat(model: str, messages: list[dict[str, str]], max_tokens: int = 4,
          stream: bool = False) -> dict[str, Any]:
    return {"model": model, "messages": messages, "max_tokens": max_tokens, "stream": stream,
            **GREEDY}


def _ask(server: Server, model: str, messages: list[dict[str, str]] = HELLO) -> None:
    with server.client() as http:
        r = http.post("/v1/chat/completions", json=_chat(model, messages))
    if r.status_code != 200:
        raise SystemExit(f"{model}: {r.status_code} {r.text[:500]}\n{server.log()}")


def _complete(http: httpx2.Client, model: str, tokens: int) -> int:
    r = http.post("/v1/completions", json={"model": model, "prompt": "the world is warm",
                                           "max_tokens": tokens, **GREEDY})
    if r.status_code != 200:
        raise SystemExit(f"{model}: {r.status_code} {r.text[:500]}")
    return int(r.json()["usage"]["completion_tokens"])


def _unload(server: Server, model: str) -> None:
    with server.client() as http:
        r = http.post("/hearth/unload", json={"model": model})
    if r.status_code != 200:
        raise SystemExit(f"unloading {model}: {r.status_code} {r.text[:300]}")
    until(lambda: model not in server.runners(), f"{model}'s runner to exit")


# ---- 1. cold model to first token ------------------------------------------------------------

@dataclass
class Cold:
    server_s: list[float] = field(default_factory=list)
    loaded_s: list[float] = field(default_factory=list)  # the server's own "loaded in" lines
    first_s: float = 0.0  # the first cold load after the server started
    argv: list[str] = field(default_factory=list)


_LOADED = re.compile(r"loaded (\S+) in ([0-9.]+) s")


def _server_loads(server: Server, model: str) -> list[float]:
    out = []
    for line in server.stderr:
        m = _LOADED.search(line)
        if m and m.group(1) == model:
            out.append(float(m.group(2)))
    return out


def server_cold_s(server: Server, model: str) -> tuple[float, list[str]]:
    """A request naming ``model``, not loaded: seconds to its first token, and the command line
    the server started its runner with; the model is unloaded again after."""
    assert model not in server.resident(), f"{model} is not cold"
    with server.client() as http:
        t0 = time.perf_counter()
        first = _stream_first_token(http, "/v1/chat/completions",
                                    _chat(model, HELLO, stream=True), t0)
    argv = server.runners()[model].cmdline()
    _unload(server, model)
    return first, argv


@dataclass
class ByHand:
    ready_s: float  # spawn to /health 200
    first_s: float  # spawn to the first content chunk
    status: dict[str, Any]


def by_hand(argv: list[str], home: Path, model: str, status: bool = False) -> ByHand:
    """The server's runner command line, run by the benchmark: spawn -> ready -> first token."""
    key = secrets.token_urlsafe(24)
    env = dict(server_env(home), HEARTH_API_KEY=key)  # what the server's runners inherit, our key
    headers = {"Authorization": f"Bearer {key}"}
    t0 = time.perf_counter()
    p = subprocess.Popen(argv, cwd=REPO, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         stderr=subprocess.DEVNULL, text=True)
    try:
        assert p.stdout is not None
        url = json.loads(p.stdout.readline())["url"]
        threading.Thread(target=p.stdout.read, daemon=True).start()  # drain the rest
        with httpx2.Client(base_url=url, headers=headers, trust_env=False, timeout=120) as http:
            while True:
                try:
                    if http.get("/health").status_code == 200:
                        break
                except httpx2.TransportError:
                    pass
                if p.poll() is not None or time.perf_counter() - t0 > READY_TIMEOUT_S:
                    raise SystemExit(f"the runner by hand did not load: {argv}")
                time.sleep(HEALTH_POLL_S)
            ready = time.perf_counter() - t0
        with httpx2.Client(base_url=url, headers=headers, trust_env=False, timeout=120) as http:
            first = _stream_first_token(http, "/v1/chat/completions",
                                        _chat(model, HELLO, stream=True), t0)
            st = http.get("/runner/status").json() if status else {}
        return ByHand(ready, first, st)
    finally:
        assert p.stdin is not None
        p.stdin.close()  # --watch-stdin: the runner's way of being asked to exit
        try:
            p.wait(30)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()


# ---- 2. two models resident ------------------------------------------------------------------

def throughput(server: Server, requests: int, tokens: int) -> dict[str, float]:
    """Tokens/s: A alone, B alone, one client alternating A and B, two clients at once."""
    out: dict[str, float] = {}
    with server.client() as http:
        for name, order in (("A alone", [A] * requests), ("B alone", [B] * requests),
                            ("alternating A, B", [A, B] * requests)):
            t0 = time.perf_counter()
            n = sum(_complete(http, m, tokens) for m in order)
            out[name] = n / (time.perf_counter() - t0)
    counts: list[int] = []

    def client(model: str) -> None:
        with server.client() as http:
            counts.append(sum(_complete(http, model, tokens) for _ in range(requests)))

    threads = [threading.Thread(target=client, args=(m,)) for m in (A, B)]
    t0 = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    out["A and B at once"] = sum(counts) / (time.perf_counter() - t0)
    return out


# ---- 3. eviction and memory ------------------------------------------------------------------

@dataclass
class Memory:
    predicted: int  # the planner's accounting for A and C
    measured: int  # file pages + anonymous beyond the runner's footprint, A and C
    whole: int  # RssAnon + RssFile of the two runners
    base_anon: int  # the runner's own anonymous footprint (the tiny runner's calibration)
    per_model: dict[str, tuple[int, int]]  # model -> (file pages, anonymous beyond the base)
    committed: int  # file mapped + private memory given beyond the runner's own, A and C


def _planned(entry: dict[str, Any]) -> int:
    return int(sum(entry["memory"].values()))


def _smaps(pid: int, path: Path) -> tuple[int, int, int]:
    """(the model file's resident bytes, anonymous bytes, RssAnon + RssFile) of a process."""
    file_rss, anon = smaps_memory(Path(f"/proc/{pid}/smaps").read_text(), str(path))
    status = dict(line.split(":", 1) for line in
                  Path(f"/proc/{pid}/status").read_text().splitlines() if ":" in line)
    whole = sum(int(status[k].split()[0]) * 1024 for k in ("RssAnon", "RssFile"))
    return file_rss, anon, whole


def _committed(pid: int, path: Path) -> tuple[int, int]:
    return smaps_committed(Path(f"/proc/{pid}/smaps").read_text(), str(path))


def eviction(server: Server) -> tuple[bool, str, float, Memory | None]:
    """A, B, A, then C under a budget for two: is B (the least recently used) unloaded and C
    served? Then the memory of A and C against the planner's accounting."""
    for m in (A, B, A):
        _ask(server, m, LONG)
    t0 = time.perf_counter()
    _ask(server, C, LONG)
    third_s = time.perf_counter() - t0
    resident = server.resident()
    evicted = any(f"unloading {B}: making room for {C}" in line for line in server.stderr)
    ok = set(resident) == {A, C} and set(server.runners()) == {A, C} and evicted
    seen = (f"{'B unloaded, ' if evicted else 'B NOT unloaded, '}resident: "
            f"{', '.join(sorted(m.split('.')[0] for m in resident))}")
    if not ok or not Path("/proc/self/smaps").exists():
        return ok, seen, third_s, None
    _ask(server, T, LONG)  # the runner's own footprint, measured on the tiny model
    resident = server.resident()
    runners = server.runners()
    models = server.models_dir
    t_file, t_anon, _ = _smaps(runners[T].pid, models / T)
    base = t_anon - (_planned(resident[T]) - t_file)
    t_file_size, t_anon_size = _committed(runners[T].pid, models / T)
    base_committed = t_anon_size - (_planned(resident[T]) - t_file_size)
    per_model, whole, committed = {}, 0, 0
    for m in (A, C):
        file_rss, anon, w = _smaps(runners[m].pid, models / m)
        per_model[m] = (file_rss, anon - base)
        whole += w
        file_size, anon_size = _committed(runners[m].pid, models / m)
        committed += file_size + anon_size - base_committed
    measured = sum(f + a for f, a in per_model.values())
    return ok, seen, third_s, Memory(_planned(resident[A]) + _planned(resident[C]), measured,
                                     whole, base, per_model, committed)


# ---- the table -------------------------------------------------------------------------------

@dataclass
class Row:
    figure: str
    measured: str
    target: str = ""
    verdict: str = ""


def _print_table(rows: list[Row]) -> None:
    w = [max(len(getattr(r, f)) for r in rows) for f in ("figure", "measured", "target")]
    w = [max(x, len(h)) for x, h in zip(w, ("figure", "measured", "target"), strict=True)]
    print(f"{'figure':<{w[0]}}  {'measured':>{w[1]}}  {'target':<{w[2]}}  verdict")
    for r in rows:
        print(f"{r.figure:<{w[0]}}  {r.measured:>{w[1]}}  {r.target:<{w[2]}}  {r.verdict}")


def _med(xs: list[float]) -> float:
    return statistics.median(xs) if xs else float("nan")



def _flags(argv: list[str]) -> tuple[str, ...]:
    """A runner command line without its model path (each server has its own copy)."""
    i = argv.index("--model")
    return (*argv[:i], *argv[i + 2:])


def _verdict(ok: bool) -> str:
    return "met" if ok else "MISSED"


DEFAULT = "dry run (default)"


@dataclass
class Report:
    rows: list[Row] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    missed: list[str] = field(default_factory=list)


def part_cold(servers: dict[str, tuple[Server, Path]], rounds: int,
              report: Report) -> dict[str, Any]:
    """Figure 1; returns llama.cpp's /runner/status of a runner loaded by hand."""
    cold = {label: Cold() for label in servers}
    for label, (server, _home) in servers.items():
        cold[label].first_s, cold[label].argv = server_cold_s(server, A)
    # One baseline per distinct runner command line (the model's path aside).
    baselines: dict[tuple[str, ...], tuple[list[str], Path]] = {}
    for label, (_server, home) in servers.items():
        baselines.setdefault(_flags(cold[label].argv), (cold[label].argv, home))
    hand: dict[tuple[str, ...], list[ByHand]] = {k: [] for k in baselines}
    for cmd, home in baselines.values():  # each its untimed first run
        status = by_hand(cmd, home, A, status=True).status
    for _ in range(rounds):  # in turns: the machine's other work weighs on all alike
        for label, (server, _home) in servers.items():
            cold[label].server_s.append(server_cold_s(server, A)[0])
        for key, (cmd, home) in baselines.items():
            hand[key].append(by_hand(cmd, home, A))
    for label, (server, _home) in servers.items():
        cold[label].loaded_s = _server_loads(server, A)[1:]

    for label, c in cold.items():
        runs = hand[_flags(c.argv)]
        base = _med([h.first_s for h in runs])
        ready = _med([h.ready_s for h in runs])
        if len(baselines) > 1 or label == DEFAULT:
            which = "" if len(baselines) == 1 else f", {label}'s flags"
            report.rows.append(Row(f"cold → first token, by hand (baseline{which})",
                                   f"{base:.2f} s", f"(ready {ready:.2f} s + first token "
                                   f"{(base - ready) * 1e3:.0f} ms)"))
        med = _med(c.server_s)
        target = cold_target_s(base)
        ok = med <= target
        measured = f"{med:.2f} s = {med / base:.2f}×"
        if label == DEFAULT:
            report.rows.append(Row(f"cold → first token, server, {label}", measured,
                                   f"<= {target:.2f} s", _verdict(ok)))
            if not ok:
                report.missed.append("cold load")
        else:
            report.rows.append(Row(f"cold → first token, server, {label}", measured,
                                   f"(<= {target:.2f} s: reported)", "met" if ok else "missed"))
        loaded = _med(c.loaded_s)
        report.notes.append(
            f"{label}: the server's log says loaded in {loaded:.2f} s (spawn to ready, median; "
            f"by hand {ready:.2f} s); the other {med - loaded - (base - ready):.2f} s are "
            f"resolving, planning and forwarding. First cold load after start: {c.first_s:.2f} s.")
    if len(baselines) == 1:
        report.notes.append("both servers' runners had the same flags: "
                            + " ".join(_flags(cold[DEFAULT].argv)[3:]))
    return status


def part_two(server: Server, rounds: int, requests: int, tokens: int, report: Report) -> None:
    _ask(server, A)
    _ask(server, B)
    tps: dict[str, list[float]] = {}
    for _ in range(rounds):
        for name, value in throughput(server, requests, tokens).items():
            tps.setdefault(name, []).append(value)
    alone = (_med(tps["A alone"]) + _med(tps["B alone"])) / 2
    for name, values in tps.items():
        report.rows.append(Row(f"tokens/s, {name}", f"{_med(values):.0f} = "
                               f"{_med(values) / alone:.2f}×", "(reported; × mean alone)"))


def part_evict(home: Path, need: int, status: dict[str, Any], report: Report) -> None:
    budget = budget_mib(need)
    with running(home, "--memory-budget-mib", str(budget), models=()) as server:
        ok, seen, third_s, memory = eviction(server)
    report.rows.append(Row("third model: LRU unloaded, it served", seen,
                           "B unloaded; A, C resident", _verdict(ok)))
    if not ok:
        report.missed.append("eviction")
    report.rows.append(Row("third model: request to reply (evict + load)", f"{third_s:.2f} s",
                           "(reported)"))
    report.notes.append(f"memory budget {budget} MiB; one bench model's planned memory "
                        f"{need / MiB:.1f} MiB")
    if memory is None:
        report.rows.append(Row("memory A + C: committed / planner", "n/a", "within 3 %", "n/a"))
    else:
        given = memory.committed / memory.predicted
        good = within(memory.committed, memory.predicted)
        report.rows.append(Row("memory A + C: committed (given) / planner",
                               f"{memory.committed / MiB:.1f} / {memory.predicted / MiB:.1f} MiB "
                               f"= {given:.3f}", "within 3 %", _verdict(good)))
        if not good:
            report.missed.append("memory")
        ratio = memory.measured / memory.predicted
        report.rows.append(Row("memory A + C: resident (touched) / planner",
                               f"{memory.measured / MiB:.1f} / {memory.predicted / MiB:.1f} MiB "
                               f"= {ratio:.3f}", "(reported)"))
        report.rows.append(Row("memory A + C: whole runners' RSS / planner",
                               f"{memory.whole / MiB:.1f} / {memory.predicted / MiB:.1f} MiB = "
                               f"{memory.whole / memory.predicted:.3f}", "(reported)"))
        for m, (file_rss, anon) in memory.per_model.items():
            report.notes.append(f"{m}: model file resident {file_rss / MiB:.1f} MiB + anonymous "
                                f"beyond the runner's footprint {anon / MiB:.1f} MiB")
        report.notes.append(f"the runner's own anonymous footprint (tiny-model calibration): "
                            f"{memory.base_anon / MiB:.1f} MiB")
    cpu = [d for d in status.get("memory", []) if d.get("device") == "CPU"]
    if cpu:
        dev = cpu[0]
        allocated = sum(int(dev.get(k, 0)) for k in ("weights", "kv", "compute", "output"))
        report.rows.append(Row("one model: llama.cpp allocated / planner",
                               f"{allocated / MiB:.1f} / {need / MiB:.1f} MiB = "
                               f"{allocated / need:.3f}", "(reported)"))
        report.notes.append(
            f"llama.cpp's buffers for one bench model (/runner/status of the runner by hand, "
            f"same flags): weights {dev['weights'] / MiB:.1f} MiB, KV {dev['kv'] / MiB:.1f}, "
            f"compute {dev['compute'] / MiB:.1f}, output {dev.get('output', 0) / MiB:.2f}")
        if memory is not None:
            file_rss, anon = memory.per_model[A]
            repacked = dev["weights"] - file_rss
            touched = anon - dev["kv"] - repacked
            report.notes.append(
                f"so {A}'s {anon / MiB:.1f} MiB of anonymous memory is KV {dev['kv'] / MiB:.1f} + "
                f"weights copied out of the mapped file (llama.cpp's weights less the "
                f"{file_rss / MiB:.1f} MiB of file pages: CPU_REPACK buffers) "
                f"{repacked / MiB:.1f} + compute pages touched {touched / MiB:.1f} of "
                f"{dev['compute'] / MiB:.1f}. The planner counts the weights once (the file) "
                f"and the whole compute buffer (its worst case: logits for a full batch, which "
                f"chat requests never ask for)")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=3, help="rounds per figure (median)")
    parser.add_argument("--requests", type=int, default=2,
                        help="requests per model per throughput figure")
    parser.add_argument("--tokens", type=int, default=64, help="tokens per throughput request")
    parser.add_argument("--strict", action="store_true", help="exit 1 when a target is missed")
    args = parser.parse_args(argv)

    root = Path(tempfile.mkdtemp(prefix="hearth-bench-server-"))
    dry_home, nodry_home, evict_home = root / "dry", root / "nodry", root / "evict"
    bench = model_path(BENCH)
    for name in (A, B):
        add_model(dry_home, name, bench)
    add_model(nodry_home, A, bench)
    for name in (A, B, C):
        add_model(evict_home, name, bench)
    add_model(evict_home, T, model_path(TINY))

    report = Report()
    try:
        with ExitStack() as stack:
            dry = stack.enter_context(running(dry_home, models=()))
            nodry = stack.enter_context(running(nodry_home, "--no-dry-run", models=()))
            print("1. cold model to first token ...", flush=True)
            status = part_cold({DEFAULT: (dry, dry_home), "--no-dry-run": (nodry, nodry_home)},
                               args.rounds, report)
            print("2. two models resident ...", flush=True)
            part_two(dry, args.rounds, args.requests, args.tokens, report)
            need = _planned(dry.resident()[A])
        print("3. eviction and memory ...", flush=True)
        part_evict(evict_home, need, status, report)
    finally:
        shutil.rmtree(root, ignore_errors=True)

    print()
    _print_table(report.rows)
    print()
    for note in report.notes:
        print("- " + note)
    return 1 if report.missed and args.strict else 0


if __name__ == "__main__":
    sys.exit(main())
