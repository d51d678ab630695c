"""Fixtures that start the real runner as a subprocess, the way the app does.

The runner gets its key in the environment, prints one JSON "listening" line on stdout, logs JSON
lines on stderr and, started with ``--watch-stdin`` as the app starts it, exits when its stdin
closes; these helpers pass that flag unless told otherwise, hold the pipe open, drain both
streams on threads (a full pipe would block the runner) and check the exit on teardown.
"""

from __future__ import annotations

import json
import os
import queue
import secrets
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx2
import openai
import pytest

from tests.fixtures.models import TINY, model_path

REPO = Path(__file__).resolve().parents[2]
LISTEN_TIMEOUT_S = 30.0
READY_TIMEOUT_S = 60.0
# A hang guard, not a speed: a runner asked to exit must exit by itself (not be killed), however
# busy the machine. How quickly it exits is measured by tests/bench/lifecycle.py.
EXIT_TIMEOUT_S = 30.0


@dataclass
class Runner:
    """A running runner subprocess: its URL, key and process, plus what it wrote."""

    process: subprocess.Popen[bytes]
    key: str | None
    url: str = ""
    stdout_lines: list[str] = field(default_factory=list)
    stderr_lines: list[str] = field(default_factory=list)
    _stdout_q: queue.Queue[str | None] = field(default_factory=queue.Queue)
    _threads: list[threading.Thread] = field(default_factory=list)

    @property
    def pid(self) -> int:
        return self.process.pid

    @property
    def headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.key}"} if self.key else {}

    def client(self, **kwargs: Any) -> httpx2.Client:
        kwargs.setdefault("timeout", httpx2.Timeout(10.0, read=60.0))
        return httpx2.Client(base_url=self.url, headers=self.headers, trust_env=False, **kwargs)

    def wait_listening(self, timeout: float = LISTEN_TIMEOUT_S) -> str:
        """The URL from the first stdout line; fails if the process exits first."""
        try:
            line = self._stdout_q.get(timeout=timeout)
        except queue.Empty:
            raise AssertionError(f"no listening line within {timeout} s; stderr: "
                                 f"{self.stderr_text()[-2000:]}") from None
        if line is None:
            raise AssertionError(f"runner exited ({self.process.wait(5)}) before listening; "
                                 f"stderr: {self.stderr_text()[-2000:]}")
        event = json.loads(line)
        assert event["event"] == "listening", event
        self.url = event["url"]
        return self.url

    def wait_ready(self, timeout: float = READY_TIMEOUT_S) -> None:
        deadline = time.monotonic() + timeout
        with self.client() as http:
            while time.monotonic() < deadline:
                if self.process.poll() is not None:
                    raise AssertionError(f"runner exited with {self.process.returncode}: "
                                         f"{self.stderr_text()[-2000:]}")
                try:
                    resp = http.get("/health")
                except httpx2.TransportError:
                    time.sleep(0.02)
                    continue
                if resp.status_code == 200 and resp.json() == {"status": "ok"}:
                    return
                if resp.status_code == 500:
                    raise AssertionError(f"runner failed to load: {resp.text}")
                time.sleep(0.02)
        raise AssertionError(f"runner not ready within {timeout} s")

    def close_stdin(self) -> None:
        if self.process.stdin and not self.process.stdin.closed:
            try:
                self.process.stdin.close()
            except OSError:
                pass

    def wait_exit(self, timeout: float = EXIT_TIMEOUT_S) -> int:
        """The exit code; fails (and kills the process) if it does not exit in time."""
        try:
            return self.process.wait(timeout)
        except subprocess.TimeoutExpired:
            self.kill()
            raise AssertionError(f"runner {self.pid} did not exit within {timeout} s") from None

    def join_streams(self, timeout: float = 5.0) -> None:
        for t in self._threads:
            t.join(timeout)

    def kill(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait(5)
        self.close_stdin()

    def stderr_text(self) -> str:
        return "\n".join(self.stderr_lines)

    def stderr_json(self) -> list[dict[str, Any]]:
        return [json.loads(line) for line in self.stderr_lines if line.strip()]

    def wait_event(self, event: str, since: int = 0, timeout: float = 60.0) -> dict[str, Any]:
        """The first log line of ``event`` from stderr line ``since`` on (a hang guard only).
        The runner writes it before it answers, but the thread that reads its stderr may not
        have read it when the answer arrives."""
        deadline = time.monotonic() + timeout
        while True:
            exited = self.process.poll() is not None
            if exited:
                self.join_streams()  # then every line it wrote has been read
            for line in self.stderr_lines[since:]:
                try:
                    entry = json.loads(line)
                except ValueError:  # a library's own line on stderr
                    continue
                if isinstance(entry, dict) and entry.get("event") == event:
                    return entry
            assert not exited, f"the runner exited: {self.stderr_text()[-2000:]}"
            assert time.monotonic() < deadline, \
                f"no {event!r} line within {timeout:g} s; stderr: {self.stderr_text()[-2000:]}"
            time.sleep(0.02)

    def signal(self, sig: int = signal.SIGTERM) -> None:
        os.kill(self.pid, sig)


def spawn_runner(
    *args: str,
    model: str | os.PathLike[str] | None = None,
    key: str | None = "",
    env: dict[str, str] | None = None,
    command: str = "serve",
    stdin: int = subprocess.PIPE,
    watch_stdin: bool = True,
    runtime: str | os.PathLike[str] | None = None,
    program: Sequence[str] | None = None,
) -> Runner:
    """Start ``python -m runner serve --model <model> [--watch-stdin] <args>``; do not wait.

    ``program`` replaces ``python -m runner`` (an installed ``hearth-runner``).

    ``key=""`` makes a random key; ``key=None`` leaves HEARTH_API_KEY unset. ``watch_stdin=False``
    and ``stdin=subprocess.DEVNULL`` start it headless, as a service would: then only a signal
    stops it.
    """
    if key == "":
        key = secrets.token_urlsafe(24)
    full_env = {k: v for k, v in os.environ.items() if k != "HEARTH_API_KEY"}
    if key is not None:
        full_env["HEARTH_API_KEY"] = key
    full_env.update(env or {})
    argv = [*(program or [sys.executable, "-m", "runner"]),
            *(["--runtime", str(runtime)] if runtime is not None else []), command]
    if model is not None or command == "serve":
        argv += ["--model", str(model if model is not None else model_path(TINY))]
    if command == "serve" and watch_stdin:
        argv.append("--watch-stdin")  # as the app starts it: closing stdin stops it
    argv += list(args)
    proc = subprocess.Popen(argv, cwd=REPO, env=full_env, stdin=stdin,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    runner = Runner(process=proc, key=key)

    def read_stdout() -> None:
        assert proc.stdout is not None
        for raw in proc.stdout:
            line = raw.decode("utf-8", errors="replace").rstrip("\n")
            runner.stdout_lines.append(line)
            runner._stdout_q.put(line)
        runner._stdout_q.put(None)

    def read_stderr() -> None:
        assert proc.stderr is not None
        for raw in proc.stderr:
            runner.stderr_lines.append(raw.decode("utf-8", errors="replace").rstrip("\n"))

    for target in (read_stdout, read_stderr):
        t = threading.Thread(target=target, daemon=True)
        t.start()
        runner._threads.append(t)
    return runner


def stop_runner(runner: Runner) -> int:
    """Close stdin (the app's way of saying "exit") and require it to exit by itself."""
    runner.close_stdin()
    return runner.wait_exit(EXIT_TIMEOUT_S)


StartRunner = Callable[..., Runner]


@pytest.fixture(scope="session")
def tiny_model() -> Path:
    return model_path(TINY)


def spawn_ready(*args: str, model: str | os.PathLike[str] | None = None,
                runtime: str | os.PathLike[str] | None = None) -> Runner:
    """A runner that listens and has loaded its model (killed if it never gets there)."""
    r = spawn_runner(*args, model=model, runtime=runtime)
    try:
        r.wait_listening()
        r.wait_ready()
    except BaseException:
        r.kill()
        raise
    return r


@contextmanager
def running(*args: str, model: str | os.PathLike[str] | None = None,
            runtime: str | os.PathLike[str] | None = None) -> Iterator[Runner]:
    """A ready runner for a fixture's lifetime; it must exit cleanly (code 0) at the end."""
    r = spawn_ready(*args, model=model, runtime=runtime)
    yield r
    code = stop_runner(r)
    assert code == 0, f"runner exited with {code}: {r.stderr_text()[-2000:]}"


@contextmanager
def openai_client(r: Runner) -> Iterator[openai.OpenAI]:
    """The official client pointed at a runner, no retries (a test sees the first answer)."""
    client = openai.OpenAI(base_url=r.url + "/v1", api_key=r.key, max_retries=0, timeout=60)
    try:
        yield client
    finally:
        client.close()


def streamed_call(stream: Any) -> tuple[str, str | None, str, str]:
    """A streamed reply with one tool call: its content, finish reason, the call's name and its
    arguments, each put together from the chunks."""
    content, finish, name, arguments = "", None, "", ""
    for chunk in stream:
        if not chunk.choices:
            continue
        delta = chunk.choices[0].delta
        content += delta.content or ""
        for tc in delta.tool_calls or []:
            name += tc.function.name or ""  # type: ignore[union-attr]
            arguments += tc.function.arguments or ""  # type: ignore[union-attr]
        finish = chunk.choices[0].finish_reason or finish
    return content, finish, name, arguments


@pytest.fixture(scope="session")
def runner(tiny_model: Path) -> Iterator[Runner]:
    """One runner on the tiny model for the whole session (tests must not change its state)."""
    with running(model=tiny_model) as r:
        yield r


@pytest.fixture
def start_runner() -> Iterator[StartRunner]:
    """Factory: ``start_runner(*args, model=..., key=..., wait=True)``; all stopped on teardown."""
    started: list[Runner] = []

    def start(*args: str, model: str | os.PathLike[str] | None = None, key: str | None = "",
              env: dict[str, str] | None = None, wait: bool = True) -> Runner:
        r = spawn_runner(*args, model=model, key=key, env=env)
        started.append(r)
        if wait:
            r.wait_listening()
            r.wait_ready()
        return r

    yield start
    for r in started:
        if r.process.poll() is None:
            r.close_stdin()
            try:
                r.process.wait(EXIT_TIMEOUT_S)
            except subprocess.TimeoutExpired:
                r.kill()
                pytest.fail(f"runner {r.pid} did not exit within {EXIT_TIMEOUT_S:g} s of stdin "
                            "closing")
        r.close_stdin()
