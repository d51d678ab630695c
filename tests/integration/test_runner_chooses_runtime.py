"""``hearth-runner`` started without ``--runtime`` chooses its runtime by the app's rules; one
given with ``--runtime`` is used as is.

The real runner, as a person starts it by hand (``serve``, ``rpc-worker``, ``devices``), with
runtime folders in ``HEARTH_RUNTIMES`` and no ``HEARTH_RUNTIME`` (which the test suite sets to
``built-in``). A runtime folder with a stand-in library proves the choice through the runner's
log line; the real portable CPU runtime (``python3 installers/build_runtime.py cpu``, skipped
where it is not built) proves it through llama.cpp: an RPC worker that starts, and
``/runner/status``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from importlib import metadata
from pathlib import Path
from typing import Any

import pytest

from app.runtimes.catalog import list_runtimes
from tests.integration.conftest import Runner, spawn_runner, stop_runner

REPO = Path(__file__).resolve().parents[2]


def portable() -> Path:
    for rt in list_runtimes():
        if rt.name == "cpu-portable" and rt.path is not None and not rt.problem:
            return rt.path
    pytest.skip("the portable CPU runtime is not built: python3 installers/build_runtime.py cpu")


def runtimes_env(folder: Path, home: Path) -> dict[str, str]:
    """The environment of a runner started by hand: these runtime folders, no wish (empty: the
    runner fixtures add this environment to the test's, where it is ``built-in``)."""
    env = {k: v for k, v in os.environ.items() if k not in ("HEARTH_RUNTIME", "HEARTH_RUNTIMES")}
    env["HEARTH_RUNTIME"] = ""
    env["HEARTH_RUNTIMES"] = str(folder)
    env["HEARTH_HOME"] = str(home)  # an empty user runtimes folder
    return env


def stand_in_runtime(parent: Path, name: str = "cpu-stand-in", backend: str = "cpu") -> Path:
    """A runtime folder the runner can choose but not load (its library is not one)."""
    folder = parent / name
    (folder / "lib").mkdir(parents=True)
    (folder / "manifest.json").write_text(json.dumps({
        "format": 1, "name": name, "backend": backend, "min_driver": "", "cuda_major": 0,
        "llama_cpp_python": metadata.version("llama-cpp-python")}))
    (folder / "lib" / "libllama.so").write_bytes(b"not a library")
    return folder


def chosen_lines(runner: Runner) -> list[dict[str, Any]]:
    """The runner's "runtime chosen" log lines (llama.cpp's own lines on stderr are not JSON)."""
    events = [json.loads(ln) for ln in runner.stderr_lines if ln.startswith("{")]
    return [e for e in events if e.get("event") == "runtime_chosen"]


def run_json(argv: list[str], env: dict[str, str]) -> tuple[int, dict[str, Any], str]:
    done = subprocess.run([sys.executable, "-m", "runner", *argv], cwd=REPO, env=env,
                          capture_output=True, text=True, timeout=120)
    lines = [ln for ln in done.stdout.splitlines() if ln.startswith("{")]
    return done.returncode, json.loads(lines[-1]) if lines else {}, done.stderr


def test_serve_without_runtime_chooses_an_installed_one_and_says_why(
        tmp_path: Path, tiny_model: Path) -> None:
    folder = tmp_path / "runtimes"
    stand_in = stand_in_runtime(folder)
    r = spawn_runner(model=tiny_model, env=runtimes_env(folder, tmp_path / "home"))
    try:
        r.wait_listening()
        code = r.process.wait(30)
    finally:
        r.kill()
    r.join_streams()
    (line,) = chosen_lines(r)
    assert line["msg"] == ("runtime chosen: cpu-stand-in (CPU) because the portable CPU build, "
                           "tuned for this processor at run time"), line
    assert line["runtime"] == "cpu-stand-in" and line["path"] == str(stand_in)
    # It really loads the chosen runtime's library (which is not one): no built-in behind it.
    assert code != 0 and str(stand_in / "lib" / "libllama.so") in r.stderr_text()


def test_rpc_worker_without_runtime_lends_this_machine_through_the_portable_runtime(
        tmp_path: Path) -> None:
    """llama-cpp-python's own build has no RPC backend: before, a worker started by hand said
    so even where the portable runtime was installed."""
    folder = tmp_path / "runtimes"
    folder.mkdir()
    (folder / "cpu-portable").symlink_to(portable(), target_is_directory=True)
    r = spawn_runner("--host", "127.0.0.1", "--port", "0", "--watch-stdin", command="rpc-worker",
                     env=runtimes_env(folder, tmp_path / "home"))
    try:
        deadline = time.monotonic() + 60
        while not r.stdout_lines and r.process.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
        assert r.stdout_lines, f"exit {r.process.poll()}: {r.stderr_text()[-2000:]}"
        event = json.loads(r.stdout_lines[0])
        assert event["event"] == "listening" and event["devices"], event
        assert stop_runner(r) == 0
    finally:
        r.kill()
    r.join_streams()
    (line,) = chosen_lines(r)
    assert line["runtime"] == "cpu-portable", line
    assert "because the portable CPU build" in line["msg"]


def test_serve_without_runtime_reports_the_chosen_runtime_in_its_status(
        tmp_path: Path, tiny_model: Path) -> None:
    folder = tmp_path / "runtimes"
    folder.mkdir()
    (folder / "cpu-portable").symlink_to(portable(), target_is_directory=True)
    r = spawn_runner(model=tiny_model, env=runtimes_env(folder, tmp_path / "home"))
    try:
        r.wait_listening()
        r.wait_ready()
        with r.client() as http:
            runtime = http.get("/runner/status").json()["build"]["runtime"]
        assert stop_runner(r) == 0
    finally:
        r.kill()
    assert runtime["name"] == "cpu-portable", runtime
    assert runtime["why"] == "the portable CPU build, tuned for this processor at run time"


def test_an_explicit_runtime_is_used_as_given(tmp_path: Path) -> None:
    folder = tmp_path / "runtimes"
    stand_in_runtime(folder)  # what the runner would choose, left to itself
    env = runtimes_env(folder, tmp_path / "home")
    for given in ("built-in", "builtin"):
        code, data, err = run_json(["--runtime", given, "devices"], env)
        assert code == 0, err
        assert data["runtime"]["name"] == "built-in"
        assert data["runtime"]["why"] == "given with --runtime"
    code, data, err = run_json(["--runtime=built-in", "devices"], env)  # as the app names it
    assert code == 0 and data["runtime"]["name"] == "built-in", err
    # HEARTH_RUNTIME, the app's wish, is the runner's too when no --runtime is given.
    code, data, err = run_json(["devices"], {**env, "HEARTH_RUNTIME": "built-in"})
    assert code == 0 and data["runtime"]["name"] == "built-in", err
    assert "HEARTH_RUNTIME" in data["runtime"]["why"]
    code, _, err = run_json(["--runtime", "rocm", "devices"], env)
    assert code == 2 and "no runtime named rocm" in err, err


def test_an_explicit_runtime_name_or_folder_is_served_as_given(tmp_path: Path) -> None:
    folder = tmp_path / "runtimes"
    folder.mkdir()
    (folder / "cpu-portable").symlink_to(portable(), target_is_directory=True)
    stand_in_runtime(folder, "vulkan-stand-in", "vulkan")
    env = runtimes_env(folder, tmp_path / "home")
    code, data, err = run_json(["--runtime", "cpu-portable", "devices"], env)
    assert code == 0, err
    assert data["runtime"]["name"] == "cpu-portable" and "RPC" in data["backends"]
    assert data["runtime"]["why"] == "given with --runtime"
    code, data, err = run_json(["--runtime", str(portable()), "devices"], env)
    assert code == 0 and data["runtime"]["path"] == str(portable().resolve()), err
