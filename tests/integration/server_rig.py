"""A real model server (``python -m server``) in a home folder of its own, for the tests.

Its models are copies of the tiny generated model under other names (copies: the library lists
one file reached twice only once). The key is put in the home's secret store before it starts,
as the window or an earlier ``hearth serve`` would have left it.
"""

from __future__ import annotations

import json
import os
import queue
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx2
import psutil

from tests.fixtures.models import TINY, model_path

REPO = Path(__file__).resolve().parents[2]
KEY = "server-test-key-0123456789"
LISTEN_TIMEOUT_S = 60.0
EXIT_TIMEOUT_S = 30.0
WAIT_S = 60.0  # for states that follow a load or an unload; never a measured duration


@dataclass
class Server:
    process: subprocess.Popen[str]
    url: str
    home: Path
    stderr: list[str] = field(default_factory=list)

    @property
    def models_dir(self) -> Path:
        return self.home / "models"

    def client(self, key: str = KEY) -> httpx2.Client:
        return httpx2.Client(base_url=self.url, headers={"Authorization": f"Bearer {key}"},
                             timeout=120)

    def resident(self) -> dict[str, dict[str, Any]]:
        with self.client() as c:
            r = c.get("/hearth/models")
        r.raise_for_status()
        return {m["id"]: m for m in r.json()["models"]}

    def runners(self) -> dict[str, psutil.Process]:
        """The server's runner processes by the model they serve (their --alias)."""
        out = {}
        for child in psutil.Process(self.process.pid).children(recursive=True):
            try:
                argv = child.cmdline()
            except psutil.Error:
                continue
            if "--alias" in argv:
                out[argv[argv.index("--alias") + 1]] = child
        return out

    def log(self) -> str:
        return "\n".join(self.stderr[-40:])


def add_model(home: Path, name: str, source: Path | None = None) -> Path:
    """A copy of ``source`` (the tiny model) in the server's models folder as ``name``."""
    target = home / "models" / name
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(source or model_path(TINY), target)
    return target


def until(check: Callable[[], bool], what: str, timeout: float = WAIT_S) -> None:
    """Wait for ``check()`` (a state the server reaches by itself), failing after ``timeout``."""
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.05)


def server_env(home: Path) -> dict[str, str]:
    env = dict(os.environ, HEARTH_HOME=str(home), HEARTH_MODELS_DIR=str(home / "models"),
               PYTHON_KEYRING_BACKEND="keyring.backends.fail.Keyring", PYTHONUNBUFFERED="1")
    env["PYTHONPATH"] = str(REPO)
    return env


def _put_key(home: Path) -> None:
    code = ("from app.remote.share import KEY_NAME; from app.storage import secrets; "
            f"secrets.put(KEY_NAME, {KEY!r})")
    subprocess.run([sys.executable, "-c", code], env=server_env(home), check=True, timeout=60)


def start(home: Path, *args: str, models: tuple[str, ...] = ("alpha.gguf", "beta.gguf")) -> Server:
    for name in models:
        add_model(home, name)
    _put_key(home)
    process = subprocess.Popen([sys.executable, "-m", "server", "--port", "0", *args],
                               cwd=REPO, env=server_env(home), stdin=subprocess.DEVNULL,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    lines: queue.Queue[str] = queue.Queue()
    server = Server(process, "", home)

    def read_out() -> None:
        assert process.stdout is not None
        for line in process.stdout:
            lines.put(line)

    def read_err() -> None:
        assert process.stderr is not None
        for line in process.stderr:
            server.stderr.append(line.rstrip("\n"))

    for target in (read_out, read_err):
        threading.Thread(target=target, daemon=True).start()
    try:
        first = lines.get(timeout=LISTEN_TIMEOUT_S)
    except queue.Empty:
        process.kill()
        raise AssertionError(f"the server never listened:\n{server.log()}") from None
    event = json.loads(first)
    assert event["event"] == "listening", first
    server.url = event["url"]
    return server


def stop(server: Server) -> int:
    """SIGTERM, as a service manager stops it; its exit code."""
    if server.process.poll() is None:
        server.process.send_signal(signal.SIGTERM)
    try:
        return server.process.wait(EXIT_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        server.process.kill()
        raise AssertionError(f"the server did not exit on SIGTERM:\n{server.log()}") from None


@contextmanager
def running(home: Path, *args: str, **kw: Any) -> Iterator[Server]:
    server = start(home, *args, **kw)
    try:
        yield server
    finally:
        runners = list(server.runners().values()) if server.process.poll() is None else []
        code = stop(server)
        _gone, alive = psutil.wait_procs(runners, timeout=EXIT_TIMEOUT_S)
        for p in alive:
            p.kill()
        assert not alive, "runners outlived the server"
        assert code == 0, f"the server exited with {code}:\n{server.log()}"
