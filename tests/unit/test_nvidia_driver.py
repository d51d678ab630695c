"""A CUDA runtime's self-test names a missing or too old NVIDIA driver in one sentence."""

from __future__ import annotations

import ctypes.util
import json
import sys
from pathlib import Path

import pytest

from app.runtimes.selftest import parse
from runner import nvidia, runtime, selftest
from runner.nvidia import NvidiaDriver, driver_problem, parse_proc_version, read_driver

# /proc/driver/nvidia/version as real drivers write it (proprietary and open kernel modules).
PROC_580 = ("NVRM version: NVIDIA UNIX x86_64 Kernel Module  580.159.04  Tue Oct  7 23:56:40 UTC "
            "2025\nGCC version:  gcc version 13.3.0 (Ubuntu 13.3.0-6ubuntu2~24.04)\n")
PROC_550_OPEN = ("NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  550.54.14  Release "
                 "Build  (dvs-builder@U16-I3-B03-4-3)  Thu Feb 22 01:25:25 UTC 2024\n"
                 "GCC version:  gcc version 12.3.0 (Ubuntu 12.3.0-1ubuntu1~22.04)\n")
CUDA13 = {"name": "cuda13", "backend": "cuda", "min_driver": "580.65.06", "cuda_major": 13}
CUDA12 = {"name": "cuda12", "backend": "cuda", "min_driver": "525.60.13", "cuda_major": 12}


def test_the_driver_version_is_read_from_the_proc_file() -> None:
    assert parse_proc_version(PROC_580) == "580.159.04"
    assert parse_proc_version(PROC_550_OPEN) == "550.54.14"
    assert parse_proc_version("GCC version:  gcc version 13.3.0\n") == ""


def test_no_driver_is_said_with_what_to_install() -> None:
    assert driver_problem(CUDA13, None) == (
        "The NVIDIA driver is not installed (libcuda.so.1 was not found): install NVIDIA's "
        "driver 580 or newer, or use the Vulkan or CPU runtime.")


def test_a_driver_too_old_is_said_with_both_versions() -> None:
    old = NvidiaDriver("550.54.14", (12, 4))
    assert driver_problem(CUDA13, old) == (
        "This NVIDIA driver is 550.54.14; the CUDA 13 runtime needs 580.65.06 or newer: update "
        "the driver, or use the CUDA 12 (driver 525+) or Vulkan runtime.")
    # Too old for CUDA 12 as well: no CUDA runtime to suggest.
    assert driver_problem(CUDA12, NvidiaDriver("470.256.02", (11, 4))) == (
        "This NVIDIA driver is 470.256.02; the CUDA 12 runtime needs 525.60.13 or newer: update "
        "the driver, or use the Vulkan or CPU runtime.")


def test_without_the_proc_file_the_cuda_version_decides() -> None:
    # Windows, or a container that hides /proc/driver/nvidia: cuDriverGetVersion still answers.
    assert driver_problem(CUDA13, NvidiaDriver("", (12, 8))) == (
        "This NVIDIA driver supports CUDA 12.8; the CUDA 13 runtime needs driver 580.65.06 or "
        "newer: update the driver, or use the CUDA 12 (driver 525+) or Vulkan runtime.")
    assert driver_problem(CUDA13, NvidiaDriver("", (13, 0))) == ""
    assert driver_problem(CUDA13, NvidiaDriver("", None)) == ""  # nothing known: llama.cpp tries


def test_a_driver_new_enough_is_no_problem() -> None:
    # 580.159 > 580.65 as numbers, though "159" < "65" as text.
    assert driver_problem(CUDA13, NvidiaDriver("580.159.04", (13, 0))) == ""
    assert driver_problem(CUDA13, NvidiaDriver("580.65.06", (13, 0))) == ""
    assert driver_problem(CUDA12, NvidiaDriver("550.54.14", (12, 4))) == ""


def test_other_runtimes_are_not_checked() -> None:
    assert driver_problem({"name": "vulkan", "backend": "vulkan"}, None) == ""
    assert driver_problem({"name": "built-in", "backend": ""}, None) == ""


def test_read_driver_at_the_boundary(tmp_path: Path) -> None:
    assert read_driver(tmp_path / "version", "libhearth-no-such-cuda.so.1") is None
    libc = ctypes.util.find_library("c")
    if not sys.platform.startswith("linux") or libc is None:
        pytest.skip("needs a loadable C library standing in for libcuda")
    proc = tmp_path / "version"
    proc.write_text(PROC_580)
    # libc loads but has no cuDriverGetVersion: the version comes from the file alone.
    assert read_driver(proc, libc) == NvidiaDriver("580.159.04", None)
    assert read_driver(tmp_path / "missing", libc) == NvidiaDriver("", None)


class _LlamaAsked(Exception):
    """llama.cpp was asked for devices: the driver check let the self-test go on."""


def _selftest_json(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
                   manifest: dict[str, object], driver: NvidiaDriver | None) -> tuple[int, str]:
    monkeypatch.setattr(runtime, "_chosen", {**manifest, "path": "/opt/runtimes/x"})
    monkeypatch.setattr(nvidia, "read_driver", lambda: driver)

    def llama_devices() -> dict[str, object]:
        raise _LlamaAsked

    monkeypatch.setattr("runner.devices.list_devices", llama_devices)
    rc = selftest.main(["--json"])
    return rc, capsys.readouterr().out


@pytest.mark.parametrize("driver, sentence", [
    (None, "The NVIDIA driver is not installed"),
    (NvidiaDriver("550.54.14", (12, 4)), "This NVIDIA driver is 550.54.14; the CUDA 13 runtime"),
])
def test_the_selftest_fails_before_llama_cpp_and_the_app_gets_the_sentence(
        driver: NvidiaDriver | None, sentence: str, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    rc, out = _selftest_json(monkeypatch, capsys, CUDA13, driver)
    assert rc == 2
    data = json.loads(out.strip().splitlines()[-1])
    assert data["ok"] is False and data["devices"] == []
    assert data["error"].startswith(sentence)
    # What app/runtimes/selftest.py makes of that line: the sentence, unchanged.
    result = parse(data)
    assert not result.ok and result.error == driver_problem(CUDA13, driver)
    assert result.error in result.why_not()


@pytest.mark.parametrize("manifest", [CUDA13, {"name": "vulkan", "backend": "vulkan"}])
def test_a_good_driver_or_another_backend_goes_on_to_llama_cpp(
        manifest: dict[str, object], monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    driver = NvidiaDriver("580.159.04", (13, 0)) if manifest is CUDA13 else None
    with pytest.raises(_LlamaAsked):
        _selftest_json(monkeypatch, capsys, manifest, driver)
