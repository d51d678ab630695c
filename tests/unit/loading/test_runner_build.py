"""The runner build as a value: asked once through ``<runner> devices``, cached per program until
its files change, and an unknown build when the runner cannot answer."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from app.jobs import CancelledError, CancelToken
from app.runner_client.build import (
    BuildCache,
    RunnerBuild,
    detect_runner_build,
    program_fingerprint,
    runner_build_from_json,
)
from tests.unit.loading.stand_in import make_stand_in, recorded_devices


def test_a_build_from_its_device_list() -> None:
    cpu = runner_build_from_json(["r"], recorded_devices("cpu_only_build"))
    assert cpu.known and not cpu.gpu_offload and [d.name for d in cpu.devices] == ["CPU"]
    assert cpu.features[:2] == ("SSE3", "SSSE3") and cpu.version == "0.3.36"
    cuda = runner_build_from_json(["r"], recorded_devices("cuda_2x3090"))
    assert cuda.gpu_offload and [d.name for d in cuda.gpu_devices] == ["CUDA0", "CUDA1"]
    # What the cache stores reads back as the same build.
    assert runner_build_from_json(["r"], cuda.to_json()) == cuda


def test_detect_asks_once_per_program_until_its_files_change(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    fake = make_stand_in(tmp_path / "r", monkeypatch, devices="cpu_only_build")
    cache = BuildCache(tmp_path / "builds.json")
    first = detect_runner_build(cache=cache)  # HEARTH_RUNNER: the runner this app starts
    assert first.program == (str(fake.path),) and first.known
    again = detect_runner_build(fake.program, cache=cache)
    assert again == first and fake.calls() == [["devices"]]

    # The runner is replaced by a CUDA build: its file changes, so it is asked again.
    before = program_fingerprint(fake.program)
    make_stand_in(tmp_path / "r", monkeypatch, devices="cuda_2x3090")
    os.utime(fake.path, ns=(1, 1))  # a different modification time even within one tick
    assert program_fingerprint(fake.program) != before
    cuda = detect_runner_build(fake.program, cache=cache)
    assert cuda.gpu_offload and cuda.key != first.key
    assert detect_runner_build(fake.program, cache=cache) == cuda
    assert fake.calls() == [["devices"], ["devices"]]  # once per version of the program


def test_from_source_the_fingerprint_follows_llama_cpp(monkeypatch: pytest.MonkeyPatch) -> None:
    program = [sys.executable, "-m", "runner"]
    fp = program_fingerprint(program)
    assert fp == program_fingerprint(program)
    monkeypatch.setenv("LLAMA_CPP_LIB_PATH", "/opt/other-llama")
    assert program_fingerprint(program) != fp


def test_a_runner_that_cannot_answer_is_an_unknown_build(tmp_path: Path) -> None:
    broken = [sys.executable, "-c",
              "import json; print(json.dumps({'error': 'llama-cpp-python could not be loaded "
              "(no module named llama_cpp); install the runner'})); raise SystemExit(1)"]
    build = detect_runner_build(broken, cache=BuildCache(tmp_path / "b.json"))
    assert not build.known and build.key is None
    assert "llama-cpp-python could not be loaded" in build.problem
    missing = detect_runner_build([str(tmp_path / "no-such-runner")])
    assert missing == RunnerBuild.unknown(missing.program, missing.problem)
    assert "could not be started" in missing.problem
    assert not (tmp_path / "b.json").exists()  # nothing cached for a failure


def test_detect_is_cancellable(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    fake = make_stand_in(tmp_path / "r", monkeypatch)
    token = CancelToken()
    token.cancel()
    with pytest.raises(CancelledError):
        detect_runner_build(fake.program, token=token)
    assert fake.calls() == []
