"""One model over several machines, for real on loopback: two ``hearth-runner rpc-worker``
processes lend their CPUs, a runner splits a generated model over them through llama.cpp's RPC
backend, and its replies match a local load's token for token at temperature 0.

A worker that does not answer, speaks another protocol version or is busy is refused before
llama.cpp sees its address (llama.cpp would abort the whole runner); a worker killed mid-chat
ends the runner with exit 6 and a line that names it.

Needs the portable CPU runtime (llama-cpp-python's own build has no RPC backend); skipped where
it has not been built, as tests/integration/test_runtimes.py.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import struct
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx2
import pytest

from runner.wire.exits import ExitCode
from tests.fixtures.models import ModelSpec, model_path
from tests.integration.conftest import openai_client, running, spawn_runner
from tests.integration.test_runtimes import portable

REPO = Path(__file__).resolve().parents[2]
# Eight layers: enough to split over two workers and the CPU.
SPLIT = ModelSpec(n_layer=8, n_embd=128, n_ff=256, name="hearth-test-rpc")
PROMPT = [{"role": "user", "content": "hello world model"}]


@dataclass
class Worker:
    process: subprocess.Popen[bytes]
    endpoint: str
    line: dict[str, Any]

    def stop(self) -> int:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
        try:
            return self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            return self.process.wait()


def start_worker(*args: str, runtime: Path | None = None) -> Worker:
    argv = [sys.executable, "-m", "runner", "--runtime", str(runtime or portable()),
            "rpc-worker", "--port", "0", "--threads", "1", "--watch-stdin", *args]
    proc = subprocess.Popen(argv, cwd=REPO, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)
    assert proc.stdout is not None
    line = proc.stdout.readline().decode()
    if not line:
        err = proc.stderr.read().decode() if proc.stderr else ""
        proc.wait(10)
        raise AssertionError(f"the worker did not start (exit {proc.returncode}): {err}")
    data = json.loads(line)
    return Worker(proc, data["endpoint"], data)


@pytest.fixture()
def workers() -> Iterator[list[Worker]]:
    ws = [start_worker(), start_worker()]
    yield ws
    for w in ws:
        w.stop()


@pytest.fixture(scope="module")
def split_model() -> Path:
    return model_path(SPLIT)


def chat(r: Any, max_tokens: int = 24) -> tuple[str, list[str]]:
    with openai_client(r) as client:
        out = client.chat.completions.create(model="m", messages=PROMPT, temperature=0,
                                             max_tokens=max_tokens, logprobs=True)
    choice = out.choices[0]
    tokens = [t.token for t in (choice.logprobs.content or [])] if choice.logprobs else []
    return choice.message.content or "", tokens


def test_a_worker_prints_its_endpoint_and_devices_and_answers_the_protocol() -> None:
    w = start_worker()
    try:
        assert w.line["event"] == "listening"
        host, port = w.endpoint.rsplit(":", 1)
        assert host == "127.0.0.1" and int(port) > 0
        assert w.line["protocol"] == "7.0.0"
        assert [d["type"] for d in w.line["devices"]] == ["cpu"]
        done = subprocess.run([sys.executable, "-m", "runner", "rpc-check", w.endpoint],
                              cwd=REPO, capture_output=True, text=True, timeout=60)
        assert done.returncode == 0, done.stdout + done.stderr
        checked = json.loads(done.stdout)["workers"][0]
        assert checked["endpoint"] == w.endpoint and checked["protocol"] == "7.0.0"
        assert checked["devices"][0]["total"] == w.line["devices"][0]["total"] > 0
    finally:
        assert w.stop() == 0  # SIGTERM is a clean exit


def test_a_worker_exits_when_the_app_closes_its_stdin() -> None:
    w = start_worker()
    assert w.process.stdin is not None
    w.process.stdin.close()
    assert w.process.wait(timeout=10) == 0


def test_a_worker_refuses_other_interfaces_without_the_flag() -> None:
    done = subprocess.run([sys.executable, "-m", "runner", "--runtime", str(portable()),
                           "rpc-worker", "--host", "0.0.0.0", "--port", "0"], cwd=REPO,
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == ExitCode.BAD_ARGS
    assert "--allow-remote" in done.stderr and "run code on this machine" in done.stderr
    assert done.stdout == ""


def test_a_split_model_answers_token_for_token_as_a_local_load(
        workers: list[Worker], split_model: Path) -> None:
    rt = portable()
    with running("--ctx-size", "512", model=split_model, runtime=rt) as local:
        want_text, want_tokens = chat(local)
    rpc = ",".join(w.endpoint for w in workers)
    with running("--ctx-size", "512", "--rpc", rpc, "--tensor-split", "1,1",
                 "--n-gpu-layers", "6", model=split_model, runtime=rt) as split:
        got_text, got_tokens = chat(split)
        status = httpx2.get(split.url + "/runner/status",
                           headers={"Authorization": f"Bearer {split.key}"}).json()
    assert want_tokens and got_tokens == want_tokens
    assert got_text == want_text
    remote = [d for d in status["devices"] if d.get("worker")]
    assert [d["worker"] for d in remote] == [w.endpoint for w in workers]
    assert all(d["total"] > 0 for d in remote)
    # The weights really are on the workers (6 of 8 layers, 3 each), the rest in local RAM.
    memory = {m["device"]: m for m in status["memory"]}
    names = [d["name"] for d in remote]
    assert all(memory[n]["weights"] > 0 for n in names)
    assert memory["CPU"]["weights"] > 0


def test_an_unreachable_worker_fails_the_load_cleanly_and_names_it(split_model: Path) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        closed = f"127.0.0.1:{s.getsockname()[1]}"
    r = spawn_runner("--rpc", closed, model=split_model, runtime=portable())
    code = r.process.wait(timeout=60)
    assert code == 3  # a load failure, not SIGABRT (-6) from llama.cpp
    assert closed in r.stderr_text() and "cannot be reached" in r.stderr_text()


class OldWorker(threading.Thread):
    """A server that answers HELLO as an RPC server of protocol 6.1.0 would."""

    def __init__(self) -> None:
        super().__init__(daemon=True)
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(4)
        self.endpoint = f"127.0.0.1:{self.sock.getsockname()[1]}"

    def run(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            with conn:
                conn.recv(1 + 8 + 24)
                conn.sendall(struct.pack("<Q", 28) + bytes([6, 1, 0, 0]) + bytes(24))
                time.sleep(0.1)


def test_a_worker_of_another_protocol_version_is_refused_before_llama_sees_it(
        split_model: Path) -> None:
    old = OldWorker()
    old.start()
    try:
        r = spawn_runner("--rpc", old.endpoint, model=split_model, runtime=portable())
        code = r.process.wait(timeout=60)
    finally:
        old.sock.close()
    assert code == 3
    assert "protocol 6.1.0" in r.stderr_text() and old.endpoint in r.stderr_text()


def test_a_busy_worker_is_reported_as_busy(workers: list[Worker], split_model: Path) -> None:
    w = workers[0]
    with running("--ctx-size", "256", "--rpc", w.endpoint, model=split_model,
                 runtime=portable()):
        done = subprocess.run([sys.executable, "-m", "runner", "rpc-check", w.endpoint,
                               "--timeout", "1"], cwd=REPO, capture_output=True, text=True,
                              timeout=60)
    assert done.returncode == 1
    assert "busy with another Hearth" in json.loads(done.stdout)["errors"][0]["error"]


def test_a_worker_killed_mid_chat_ends_the_runner_with_a_line_that_names_it(
        workers: list[Worker], split_model: Path) -> None:
    rpc = ",".join(w.endpoint for w in workers)
    r = spawn_runner("--ctx-size", "2048", "--rpc", rpc, "--tensor-split", "1,1",
                     model=split_model, runtime=portable())
    try:
        r.wait_listening()
        r.wait_ready()
        got: list[str] = []
        with openai_client(r) as client:
            stream = client.chat.completions.create(
                model="m", messages=PROMPT, temperature=0, max_tokens=1500, stream=True,
                extra_body={"ignore_eos": True})
            with pytest.raises(Exception):  # noqa: B017 - the connection drops, any client error
                for chunk in stream:
                    got.append(chunk.choices[0].delta.content or "" if chunk.choices else "")
                    if len(got) == 5:
                        os.kill(workers[1].process.pid, signal.SIGKILL)
        code = r.process.wait(timeout=60)
    finally:
        r.kill()
    assert len(got) >= 5
    assert code == ExitCode.WORKER_LOST, r.stderr_text()[-2000:]
    last = json.loads(r.stderr_lines[-1])
    assert workers[1].endpoint in last["msg"] and last["workers"] == [workers[1].endpoint]


def test_the_app_plans_a_split_checks_it_with_the_dry_run_and_falls_back_without_a_lost_worker(
        workers: list[Worker], split_model: Path) -> None:
    """The app's own path: the workers checked in a child process, the plan over them confirmed
    by llama.cpp's dry run, started with the plan's flags; then a worker dies, the runner says
    so (exit 6), and the ladder's next plan loads on this computer alone and answers."""
    from app.hardware import detect_hardware
    from app.loading.confirm import run_probe
    from app.loading.flags import plan_flags
    from app.loading.ladder import classify_failure, uses_gpu
    from app.loading.prepare import prepare_load
    from app.planner import Pins, Wishes, next_fallback
    from app.runner_client.build import detect_runner_build

    rt = portable()
    build = detect_runner_build([sys.executable, "-m", "runner", "--runtime", str(rt)])
    endpoints = [w.endpoint for w in workers]
    prepared = prepare_load(
        str(split_model), cached=None, detect=detect_hardware, build=build, store=None,
        wishes=Wishes(context=512, pins=Pins(tensor_split=(1.0, 1.0))), probe=run_probe,
        workers=[*endpoints, "127.0.0.1:9"])
    p = prepared.plan
    codes = [r.code for r in p.reasons]
    assert p.fits, p.reason_texts()
    assert "split_machines" in codes
    assert {"probe_matches", "probe_corrected"} & set(codes), p.reason_texts()
    assert any("Worker 127.0.0.1:9 left out" in t for t in p.reason_texts())
    flags = plan_flags(p, str(split_model))
    assert flags[flags.index("--rpc") + 1] == ",".join(endpoints)

    r = spawn_runner(*flags, model=split_model, runtime=rt)
    try:
        r.wait_listening()
        r.wait_ready()
        split_text, _ = chat(r)
        workers[0].process.kill()
        with pytest.raises(Exception):  # noqa: B017 - the runner goes away mid-request
            chat(r)
        code = r.process.wait(timeout=60)
    finally:
        r.kill()
    message = json.loads(r.stderr_lines[-1])["msg"]
    kind = classify_failure(code, False, message, uses_gpu(p), str(split_model))
    assert kind == "worker_lost" and workers[0].endpoint in message
    local = next_fallback(p, kind)
    assert local is not None and "--rpc" not in plan_flags(local, str(split_model))
    with running(*plan_flags(local, str(split_model)), model=split_model, runtime=rt) as again:
        local_text, _ = chat(again)
    assert local_text == split_text  # the same answer, now from this computer alone
