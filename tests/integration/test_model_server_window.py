"""The window's model-server service (app/services/model_server.py) against a real server: it
starts one, sees what it holds, pins and unloads, and stops the one it started when the window
closes; a server it found running stays."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import openai
import psutil
import pytest

from app.services.model_server import ModelServerService
from app.services.tasks import TaskRunner
from tests.integration.server_rig import KEY, add_model, running, server_env

pytestmark = pytest.mark.timeout(300)


def _free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _say(url: str, model: str) -> None:
    with openai.OpenAI(base_url=url + "/v1", api_key=KEY, max_retries=0) as client:
        client.chat.completions.create(model=model, max_tokens=2,
                                       messages=[{"role": "user", "content": "hi"}])


def test_the_window_starts_a_server_sees_pins_unloads_and_stops_it(
        qtbot: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from tests.integration import server_rig

    add_model(tmp_path, "alpha.gguf")
    server_rig._put_key(tmp_path)
    for name, value in server_env(tmp_path).items():
        monkeypatch.setenv(name, value)  # the server the window starts inherits them
    port = _free_port()
    url = f"http://127.0.0.1:{port}"
    service = ModelServerService(
        TaskRunner(), lambda: (url, KEY),
        lambda: [sys.executable, "-m", "server", "--port", str(port), "--no-dry-run"])
    service.ensure()  # none runs: it starts one (the setting "while Hearth is open")
    qtbot.waitUntil(lambda: service.running is True, timeout=60_000)  # asked once it listens
    assert service._started is not None
    assert service.models == [] and service.url == url
    _say(url, "alpha")
    service.refresh()
    qtbot.waitUntil(lambda: [m.id for m in service.models] == ["alpha.gguf"], timeout=30_000)
    assert service.models[0].memory > 0 and not service.models[0].pinned
    service.pin("alpha.gguf", True)
    qtbot.waitUntil(lambda: service.models and service.models[0].pinned, timeout=30_000)
    service.unload("alpha.gguf")
    qtbot.waitUntil(lambda: service.models == [], timeout=30_000)
    started = service._started
    assert started is not None
    runners = [p for p in psutil.Process(started.pid).children(recursive=True)]
    service.stop_started()  # the window closes
    assert started.poll() == 0
    assert not [p for p in runners if p.is_running()]


def test_a_server_the_window_found_running_stays_when_it_closes(
        qtbot: Any, tmp_path: Path) -> None:
    with running(tmp_path, "--no-dry-run") as server:
        service = ModelServerService(TaskRunner(), lambda: (server.url, KEY),
                                     lambda: [sys.executable, "-m", "server"])
        service.ensure()  # one runs: attached, not a second one started
        qtbot.waitUntil(lambda: service.running is True, timeout=30_000)
        assert service._started is None
        service.stop_started()
        assert server.process.poll() is None


def test_the_windows_load_is_served_by_the_running_server_and_taken_back(
        qtbot: Any, tmp_path: Path) -> None:
    """The window's own runner (RunnerProcess, as the app starts it) handed to a real server:
    with sharing on at the server's port it starts private instead of failing "port in use",
    requests naming the model reach it through the server (no second copy), and unloading it in
    the window takes it back at once."""
    from urllib.parse import urlsplit

    from app.services.model_server import serve_window_model
    from app.services.runner_process import RunnerProcess, RunnerState
    from app.settings import AppSettings

    with running(tmp_path, "--no-dry-run", models=("alpha.gguf",)) as server:
        tasks = TaskRunner()
        service = ModelServerService(tasks, lambda: (server.url, KEY),
                                     lambda: [sys.executable, "-m", "server"])
        runner = RunnerProcess(tasks)
        shared = AppSettings(share_runner=True, runner_port=urlsplit(server.url).port or 0)
        configure = serve_window_model(runner, service, lambda: shared)
        configure()
        assert runner.port == shared.runner_port and runner.sharing  # no server known yet
        service.refresh()
        qtbot.waitUntil(lambda: service.running is True, timeout=30_000)
        assert runner.port == 0 and not runner.sharing  # the server holds port and key
        try:
            with qtbot.waitSignal(runner.ready, timeout=60_000):
                runner.start(str(server.models_dir / "alpha.gguf"))
            qtbot.waitUntil(lambda: service.handed == "alpha.gguf", timeout=30_000)
            row = server.resident()["alpha.gguf"]
            assert row["window"] is True, row
            _say(server.url, "alpha")
            assert not server.runners(), "the server loaded a copy of its own"
            service.refresh()
            qtbot.waitUntil(lambda: bool(service.models) and service.models[0].window,
                            timeout=30_000)
            runner.stop()
            qtbot.waitUntil(lambda: runner.state == RunnerState.STOPPED, timeout=30_000)
            qtbot.waitUntil(lambda: "alpha.gguf" not in server.resident(), timeout=30_000)
            assert service.handed == ""
        finally:
            runner.stop_and_wait()
            tasks.wait(5000)
