"""The runner process as the app sees it: what it prints, how it loads, fails and exits.

The protocol (docs/architecture.md): one JSON "listening" line on stdout; JSON log lines on
stderr; /health reports load progress; SIGTERM, and with ``--watch-stdin`` (the app sets it)
closing stdin or the parent dying, ends it quickly; a failed load exits non-zero with a last log
line that names the file and the reason. Headless starts: test_runner_headless.py.
"""

from __future__ import annotations

import json
import signal
import socket
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

import httpx2
import psutil
import pytest

from app.runner_client.client import iter_sse
from tests.fixtures import bad_models as bad
from tests.fixtures.models import BENCH, TINY, ModelSpec, model_path
from tests.integration.conftest import EXIT_TIMEOUT_S, REPO, Runner, StartRunner, spawn_runner

# Big enough (about 320 MiB at F16) that reading it without mmap takes visible time.
SLOW_LOAD = ModelSpec(n_layer=8, n_embd=1024, n_ff=2816, n_vocab=32000, quant="F16")

EXIT_BAD_ARGS = 2
EXIT_LOAD_FAILED = 3
EXIT_PORT_IN_USE = 5


def _gone(pid: int) -> bool:
    """True once ``pid`` has exited (a zombie nobody reaped yet counts as exited)."""
    try:
        return psutil.Process(pid).status() == psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return True


def _wait_gone(pid: int, timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if _gone(pid):
            return True
        time.sleep(0.02)
    return _gone(pid)


class LongStream:
    """A streamed completion that would run for many seconds, opened and read to its 2nd chunk."""

    def __init__(self, http: httpx2.Client, max_tokens: int = 4000) -> None:
        body = {"prompt": "the world is warm", "max_tokens": max_tokens, "ignore_eos": True,
                "stream": True}
        self.max_tokens = max_tokens
        self._cm = http.stream("POST", "/v1/completions", json=body)
        resp = self._cm.__enter__()
        assert resp.status_code == 200
        self._lines = iter_sse(resp.iter_lines())
        self.tokens = 0
        for _ in range(2):
            assert json.loads(next(self._lines))["choices"][0]["text"] is not None
            self.tokens += 1

    def read_rest(self) -> str:
        """Read what arrived until the stream ended or broke; returns its finish reason ("" when
        it broke off)."""
        reason = ""
        try:
            for data in self._lines:
                if data == "[DONE]":
                    break
                choice = json.loads(data)["choices"][0]
                self.tokens += 1 if choice.get("text") else 0
                reason = choice.get("finish_reason") or reason
        except httpx2.HTTPError:
            pass
        return reason

    def close(self) -> None:
        """The GUI's Stop button: close the response."""
        try:
            self._cm.__exit__(None, None, None)
        except httpx2.HTTPError:
            pass


# ---- the protocol on stdout and stderr ------------------------------------------------------------

def test_stdout_is_one_listening_line_and_stderr_is_json(start_runner: StartRunner) -> None:
    r = start_runner()
    with r.client() as http:
        assert http.post("/v1/completions", json={"prompt": "hi", "max_tokens": 5}).status_code \
            == 200
        http.post("/v1/completions", json={"prompt": "x" * 10_000})  # an error on the way
    r.close_stdin()
    assert r.wait_exit() == 0
    r.join_streams()
    assert len(r.stdout_lines) == 1, r.stdout_lines
    event = json.loads(r.stdout_lines[0])
    assert event == {"event": "listening", "url": r.url}
    assert r.url.startswith("http://127.0.0.1:")
    assert r.stderr_lines, "expected at least the 'loaded' log line"
    for line in r.stderr_lines:
        obj = json.loads(line)  # raises on anything that is not one JSON object per line
        assert isinstance(obj, dict) and {"ts", "level", "msg"} <= obj.keys(), line
    loaded = [o for o in r.stderr_json() if o.get("event") == "loaded"]
    assert len(loaded) == 1 and loaded[0]["model"] == str(model_path(TINY))


def test_key_never_appears_in_output(start_runner: StartRunner) -> None:
    r = start_runner("--verbose")
    with r.client() as http:
        http.get("/runner/status")
        http.post("/v1/completions", json={"prompt": "hi", "max_tokens": 2})
    r.close_stdin()
    r.wait_exit()
    r.join_streams()
    assert r.key and r.key not in "\n".join(r.stdout_lines + r.stderr_lines)
    # --verbose adds llama.cpp's own log, still one JSON object per line.
    assert len(r.stderr_lines) > 20
    for line in r.stderr_lines:
        json.loads(line)


def test_health_reports_loading_progress(start_runner: StartRunner) -> None:
    path = model_path(SLOW_LOAD)
    r = start_runner("--no-mmap", model=path, wait=False)
    r.wait_listening()
    seen: list[float] = []
    refused_while_loading: list[dict[str, Any]] = []
    with r.client(timeout=30) as http:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            resp = http.get("/health")
            if resp.status_code == 200:
                assert resp.json() == {"status": "ok"}
                break
            assert resp.status_code == 503, resp.text
            body = resp.json()
            assert body["status"] == "loading" and set(body) == {"status", "progress"}
            seen.append(body["progress"])
            if not refused_while_loading:
                chat = http.post("/v1/chat/completions", json={
                    "messages": [{"role": "user", "content": "hi"}]})
                if chat.status_code == 503:
                    refused_while_loading.append(chat.json()["error"])
        else:
            pytest.fail("model did not load within 60 s")
        status = http.get("/runner/status").json()
    assert seen, "never saw the model loading; the load finished before the first poll"
    assert all(0.0 <= p <= 1.0 for p in seen), seen
    assert seen == sorted(seen), "progress went backwards"
    assert refused_while_loading and refused_while_loading[0]["code"] == "model_loading"
    assert status["status"] == "ok" and status["settings"]["mmap"] is False


def test_stdin_close_while_loading_exits_cleanly(start_runner: StartRunner) -> None:
    r = start_runner("--no-mmap", model=model_path(SLOW_LOAD), wait=False)
    r.wait_listening()
    with r.client() as http:
        assert http.get("/health").json()["status"] == "loading"
    r.close_stdin()
    assert r.wait_exit() == 0
    r.join_streams()
    assert not any(o.get("level") == "error" for o in r.stderr_json()), r.stderr_lines


# ---- exiting ------------------------------------------------------------------------------------

def test_exits_on_stdin_close(start_runner: StartRunner) -> None:
    r = start_runner()
    r.close_stdin()
    assert r.wait_exit() == 0  # by itself: not killed (how soon: tests/bench/lifecycle.py)


def test_exits_on_sigterm(start_runner: StartRunner) -> None:
    r = start_runner()
    r.signal(signal.SIGTERM)
    r.wait_exit()  # by itself, not killed


def test_sigterm_is_a_clean_exit(start_runner: StartRunner) -> None:
    """SIGTERM is the polite way to stop (the app's cancel: signal, wait, kill): it should end
    like closing stdin does, with exit code 0 and the log flushed, not as "killed by signal"."""
    r = start_runner()
    r.signal(signal.SIGTERM)
    code = r.wait_exit()
    assert code == 0, f"exit status {code} (negative: killed by signal {-code})"


@pytest.mark.parametrize("how", ["stdin", "sigterm"])
def test_exits_promptly_while_streaming(start_runner: StartRunner, how: str) -> None:
    """Asked to exit mid-stream, the runner ends the stream and exits; it does not first finish
    the reply (how soon it exits: tests/bench/lifecycle.py)."""
    r = start_runner(model=model_path(BENCH))
    with r.client() as http:
        stream = LongStream(http)
        if how == "stdin":
            r.close_stdin()
        else:
            r.signal(signal.SIGTERM)
        code = r.wait_exit(EXIT_TIMEOUT_S)
        finish = stream.read_rest()  # what the runner sent before it went
        stream.close()
    assert finish != "length" and stream.tokens < stream.max_tokens, (finish, stream.tokens)
    # The exit code after SIGTERM has a test of its own (test_sigterm_is_a_clean_exit).
    assert code == 0 or (how == "sigterm" and code == -signal.SIGTERM), code


@pytest.mark.parametrize("stdin", ["own-pipe", "inherited"])
def test_no_runner_left_when_parent_is_killed(tmp_path: Path, stdin: str) -> None:
    """A parent that dies without closing anything (SIGKILL) takes the runner with it.

    "inherited": the runner shares a stdin pipe that something else still holds open, so only
    the runner's watch on its parent can notice.
    """
    script = tmp_path / "parent.py"
    script.write_text(textwrap.dedent(f"""
        import subprocess, sys
        child = subprocess.Popen(
            [sys.executable, "-m", "runner", "serve", "--model", {str(model_path(TINY))!r},
             "--watch-stdin"],
            stdin={"subprocess.PIPE" if stdin == "own-pipe" else "None"},
            stderr=subprocess.DEVNULL)
        print(child.pid, flush=True)
        child.wait()
    """))
    env = {"HEARTH_API_KEY": "parent-test-key", "PATH": "/usr/bin:/bin",
           "PYTHONPATH": str(REPO)}
    parent = subprocess.Popen([sys.executable, str(script)], cwd=REPO, env=env,
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    assert parent.stdout is not None
    runner_pid = -1
    try:
        runner_pid = int(parent.stdout.readline())
        listening = json.loads(parent.stdout.readline())  # the runner writes to our pipe
        assert listening["event"] == "listening"
        headers = {"Authorization": "Bearer parent-test-key"}
        deadline = time.monotonic() + 30
        while httpx2.get(listening["url"] + "/health", headers=headers,
                         trust_env=False).status_code != 200:
            assert time.monotonic() < deadline
            time.sleep(0.05)
        parent.kill()
        parent.wait(5)
        assert _wait_gone(runner_pid, EXIT_TIMEOUT_S), f"runner {runner_pid} outlived its parent"
    finally:
        if parent.poll() is None:
            parent.kill()
        if runner_pid > 0 and not _gone(runner_pid):
            psutil.Process(runner_pid).kill()
        assert parent.stdin is not None
        parent.stdin.close()
        parent.stdout.close()


# ---- cancelling ---------------------------------------------------------------------------------

def test_client_disconnect_cancels_generation(start_runner: StartRunner) -> None:
    r = start_runner(model=model_path(BENCH))
    with r.client() as http:
        stream = LongStream(http, max_tokens=4000)
        stream.close()
        deadline = time.monotonic() + 30  # a hang guard: the finish reason tells what happened
        while True:
            last = http.get("/runner/status").json()["last_request"]
            if last["finish_reason"] or time.monotonic() > deadline:
                break
            time.sleep(0.01)
        assert last["finish_reason"] == "cancelled", last
        assert last["completion_tokens"] < stream.max_tokens, last
        # The only slot is free again: the next request does not wait for the cancelled one.
        status = http.get("/runner/status").json()
        assert status["requests"]["active"] == 0
        resp = http.post("/v1/completions", json={"prompt": "hello", "max_tokens": 4,
                                                  "ignore_eos": True})
        assert resp.status_code == 200
        assert resp.json()["usage"]["completion_tokens"] == 4
    # Its log line, read from stderr on a thread of the test's: waited for (a hang guard only).
    deadline = time.monotonic() + 30
    while not (cancelled := [o for o in r.stderr_json() if o.get("event") == "cancelled"]):
        assert time.monotonic() < deadline, "no 'cancelled' line on stderr"
        time.sleep(0.01)
    assert len(cancelled) == 1


def test_abandoned_non_streaming_request_stops_generating(start_runner: StartRunner) -> None:
    """A client that times out and goes away (the openai client then retries) must not leave
    a long generation occupying the only slot."""
    r = start_runner(model=model_path(BENCH))
    with r.client() as http:
        with pytest.raises(httpx2.ReadTimeout):
            http.post("/v1/completions", json={"prompt": "the world", "max_tokens": 3000,
                                               "ignore_eos": True}, timeout=0.5)
        deadline = time.monotonic() + 30  # a hang guard: the finish reason tells what happened
        while True:
            status = http.get("/runner/status").json()
            if status["requests"]["active"] == 0 or time.monotonic() > deadline:
                break
            time.sleep(0.02)
    assert status["requests"]["active"] == 0, "still generating for a client that left"
    assert status["last_request"]["finish_reason"] == "cancelled", status["last_request"]


# ---- refusing to start --------------------------------------------------------------------------

def _failed_start(model: Path | str, *args: str, key: str | None = "") -> tuple[Runner, int]:
    r = spawn_runner(*args, model=model, key=key)
    try:
        code = r.process.wait(30)
    except subprocess.TimeoutExpired:
        r.kill()
        raise AssertionError(f"runner did not exit: {r.stderr_text()[-2000:]}") from None
    finally:
        r.close_stdin()
    r.join_streams()
    return r, code


def _last_log(r: Runner) -> dict[str, Any]:
    assert r.stderr_lines, "no log line at all"
    last: dict[str, Any] = json.loads(r.stderr_lines[-1])
    return last


def _bad_file(tmp_path: Path, kind: str) -> Path:
    path = tmp_path / f"{kind}.gguf"
    if kind == "missing":
        return path
    if kind == "text":
        return bad.write_text_file(path)
    if kind == "random":
        return bad.write_random_bytes(path)
    if kind == "truncated":
        return bad.write_truncated(model_path(TINY), path)
    if kind == "huge-tensor-count":
        return bad.write_huge_tensor_count(path)
    if kind == "huge-string":
        return bad.write_huge_string_length(path)
    if kind == "huge-array":
        return bad.write_huge_array(path)
    if kind == "bad-dims":
        return bad.write_bad_dims(path)
    if kind == "not-a-model":  # a valid GGUF with no model in it: llama.cpp itself refuses
        return bad.write(path, bad.minimal_gguf())
    raise ValueError(kind)


@pytest.mark.parametrize(("kind", "reason"), [
    ("missing", "no such file"),
    ("text", "not a gguf"),
    ("random", "not a gguf"),
    ("truncated", "truncated"),
    ("huge-tensor-count", "damaged"),
    ("huge-string", "string"),
    ("huge-array", "array"),
    ("bad-dims", "dimensions"),
    ("not-a-model", "llama.cpp"),
])
def test_bad_model_file_exits_with_reason(tmp_path: Path, kind: str, reason: str) -> None:
    path = _bad_file(tmp_path, kind)
    r, code = _failed_start(path)
    assert code == EXIT_LOAD_FAILED, (code, r.stderr_text())
    # It listened first (the app learns the URL and can read /health), then failed.
    assert len(r.stdout_lines) == 1 and json.loads(r.stdout_lines[0])["event"] == "listening"
    last = _last_log(r)
    assert last["level"] == "error"
    assert str(path) in last["msg"], last
    assert reason in last["msg"].lower(), last
    assert last.get("event") == "load_failed" and last.get("exit_code") == EXIT_LOAD_FAILED


def test_failed_load_is_visible_on_health(tmp_path: Path) -> None:
    path = bad.write_text_file(tmp_path / "page.gguf")
    r = spawn_runner(model=path)
    try:
        r.wait_listening()
        seen: list[tuple[int, dict[str, Any]]] = []
        with r.client(timeout=30) as http:
            while r.process.poll() is None:
                try:
                    resp = http.get("/health")
                except httpx2.TransportError:
                    break
                seen.append((resp.status_code, resp.json()))
                time.sleep(0.02)
        assert r.process.wait(5) == EXIT_LOAD_FAILED
    finally:
        r.kill()
    errors = [body for code, body in seen if code == 500]
    assert errors, seen
    assert errors[0]["status"] == "error" and str(path) in errors[0]["message"]


def test_refuses_to_start_without_key() -> None:
    r, code = _failed_start(model_path(TINY), key=None)
    assert code == EXIT_BAD_ARGS
    assert r.stdout_lines == []
    assert "HEARTH_API_KEY" in _last_log(r)["msg"]


def test_no_auth_serves_without_key(start_runner: StartRunner) -> None:
    r = start_runner("--no-auth", key=None)
    resp = httpx2.get(r.url + "/v1/models", trust_env=False)
    assert resp.status_code == 200


def test_no_auth_does_not_override_a_key(start_runner: StartRunner) -> None:
    """With HEARTH_API_KEY set the key is still required, --no-auth or not."""
    r = start_runner("--no-auth")
    assert httpx2.get(r.url + "/v1/models", trust_env=False).status_code == 401
    assert httpx2.get(r.url + "/v1/models", headers=r.headers, trust_env=False).status_code == 200


@pytest.mark.parametrize("host", ["0.0.0.0", "::", "192.168.1.10"])
def test_refuses_remote_host_without_allow_remote(host: str) -> None:
    r, code = _failed_start(model_path(TINY), "--host", host)
    assert code == EXIT_BAD_ARGS
    assert r.stdout_lines == []
    last = _last_log(r)
    assert host in last["msg"] and "--allow-remote" in last["msg"]


def test_port_in_use() -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen(1)
        port = taken.getsockname()[1]
        r, code = _failed_start(model_path(TINY), "--port", str(port))
    assert code == EXIT_PORT_IN_USE
    assert r.stdout_lines == []
    assert str(port) in _last_log(r)["msg"]


def test_fixed_port_is_used(start_runner: StartRunner) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    r = start_runner("--port", str(port))
    assert r.url == f"http://127.0.0.1:{port}"


def test_ipv6_loopback(start_runner: StartRunner) -> None:
    try:
        with socket.socket(socket.AF_INET6) as s:
            s.bind(("::1", 0))
    except OSError:
        pytest.skip("no IPv6 loopback here")
    r = start_runner("--host", "::1")
    assert r.url.startswith("http://[::1]:")
    assert httpx2.get(r.url + "/health", headers=r.headers, trust_env=False).status_code == 200


@pytest.mark.parametrize("args", [["--ctx-size", "-1"], ["--parallel", "0"],
                                  ["--flash-attn", "maybe"], ["--bogus"]])
def test_bad_arguments_exit_2(args: list[str]) -> None:
    _, code = _failed_start(model_path(TINY), *args)
    assert code == EXIT_BAD_ARGS
