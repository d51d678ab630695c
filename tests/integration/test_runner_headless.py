"""The runner started headless: a systemd service, docker without -i, nohup, cron.

There stdin is /dev/null (at end of file from the start) and the parent may be init or gone.
Only the app, which passes ``--watch-stdin``, asks the runner to exit when stdin closes or its
parent dies; a headless runner serves until a signal stops it.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import httpx2
import psutil

from runner.wire.exits import ExitCode
from tests.fixtures import bad_models as bad
from tests.fixtures.models import TINY, model_path
from tests.integration.conftest import EXIT_TIMEOUT_S, REPO, Runner, spawn_runner

# Longer than the parent watch's poll (0.5 s): a runner that would exit has had time to.
SETTLE_S = 1.5


def _headless(*args: str, model: str | os.PathLike[str] | None = None) -> Runner:
    return spawn_runner(*args, model=model, stdin=subprocess.DEVNULL, watch_stdin=False)


def _gone(pid: int, timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while True:
        try:
            if psutil.Process(pid).status() == psutil.STATUS_ZOMBIE:
                return True
        except psutil.NoSuchProcess:
            return True
        if time.monotonic() > deadline:
            return False
        time.sleep(0.02)


def test_serves_with_stdin_at_dev_null_until_sigterm() -> None:
    r = _headless()
    try:
        r.wait_listening()
        r.wait_ready()
        time.sleep(SETTLE_S)
        assert r.process.poll() is None, f"exited with {r.process.returncode}: " \
                                         f"{r.stderr_text()[-2000:]}"
        with r.client() as http:
            assert http.get("/health").json() == {"status": "ok"}
            resp = http.post("/v1/chat/completions", json={
                "messages": [{"role": "user", "content": "hello"}], "max_tokens": 4})
            assert resp.status_code == 200, resp.text
            assert resp.json()["choices"][0]["message"]["content"] is not None
        r.signal(signal.SIGTERM)
        assert r.wait_exit() == 0
    finally:
        r.kill()


def test_bad_file_with_stdin_at_dev_null_exits_3_naming_it(tmp_path: Path) -> None:
    path = bad.write_text_file(tmp_path / "page.gguf")
    r = _headless(model=path)
    try:
        code = r.process.wait(30)
    finally:
        r.kill()
    r.join_streams()
    assert code == ExitCode.LOAD_FAILED, (code, r.stderr_text())
    last = json.loads(r.stderr_lines[-1])
    assert last["level"] == "error" and str(path) in last["msg"], last


def test_with_watch_stdin_closing_stdin_still_exits_0() -> None:
    r = spawn_runner(watch_stdin=True)
    try:
        r.wait_listening()
        r.wait_ready()
        assert "--watch-stdin" in psutil.Process(r.pid).cmdline()
        r.close_stdin()
        assert r.wait_exit(EXIT_TIMEOUT_S) == 0
    finally:
        r.kill()


def test_keeps_serving_when_its_parent_exits(tmp_path: Path) -> None:
    """Started in the background (``nohup runner serve … &``) by a shell that then exits: the
    runner is reparented (to init, pid 1, or a subreaper) and must not take that for the app
    dying."""
    out, err = tmp_path / "stdout", tmp_path / "stderr"
    key = "headless-test-key"
    env = {**os.environ, "HEARTH_API_KEY": key}
    launcher = subprocess.run(
        ["sh", "-c", 'nohup "$0" -m runner serve --model "$1" </dev/null >"$2" 2>"$3" & '
                     'echo $!',
         sys.executable, str(model_path(TINY)), str(out), str(err)],
        cwd=REPO, env=env, capture_output=True, text=True, timeout=10, check=True)
    pid = int(launcher.stdout.strip())
    try:
        deadline = time.monotonic() + 30
        while not out.read_text().strip():
            assert time.monotonic() < deadline, f"no listening line; stderr: {err.read_text()}"
            assert not _gone(pid, 0), f"runner exited; stderr: {err.read_text()[-2000:]}"
            time.sleep(0.05)
        url = json.loads(out.read_text().splitlines()[0])["url"]
        headers = {"Authorization": f"Bearer {key}"}
        with httpx2.Client(base_url=url, headers=headers, trust_env=False, timeout=60) as http:
            while True:
                try:
                    if http.get("/health").status_code == 200:
                        break
                except httpx2.TransportError:
                    pass
                assert time.monotonic() < deadline, "not ready within 30 s"
                assert not _gone(pid, 0), f"runner exited; stderr: {err.read_text()[-2000:]}"
                time.sleep(0.05)
            assert psutil.Process(pid).ppid() != os.getpid()  # really reparented
            time.sleep(SETTLE_S)
            assert not _gone(pid, 0), f"runner exited; stderr: {err.read_text()[-2000:]}"
            resp = http.post("/v1/completions", json={"prompt": "hello", "max_tokens": 2})
            assert resp.status_code == 200, resp.text
        os.kill(pid, signal.SIGTERM)
        assert _gone(pid, EXIT_TIMEOUT_S), f"runner {pid} ignored SIGTERM"
    finally:
        if not _gone(pid, 0):
            psutil.Process(pid).kill()


def test_help_documents_watch_stdin() -> None:
    done = subprocess.run([sys.executable, "-m", "runner", "serve", "--help"], cwd=REPO,
                          capture_output=True, text=True, timeout=30, check=True)
    text = " ".join(done.stdout.split())
    assert "--watch-stdin" in text
    assert "exit when standard input closes" in text
