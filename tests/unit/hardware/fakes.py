"""Recorded machines, faked at the lowest boundary: pynvml functions, files, tool output."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pynvml

from app.hardware._subprocess import ToolResult

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "hardware"


def fixture_text(rel: str) -> str:
    return (FIXTURES / rel).read_text(encoding="utf-8")


def fixture_json(rel: str) -> Any:
    return json.loads(fixture_text(rel))


class FakeNvml:
    """The pynvml functions detection calls, answering with values recorded from a machine.

    Errors are real ``pynvml.NVMLError`` instances, so the code under test sees what it would see.
    ``init_error``: NVML return code nvmlInit fails with. ``lost``: {index: code} for GPUs that
    fail after nvmlDeviceGetCount counted them (fallen off the bus).
    """

    NVMLError = pynvml.NVMLError

    def __init__(self, recording: str | dict[str, Any] | None, init_error: int | None = None,
                 lost: dict[int, int] | None = None) -> None:
        if isinstance(recording, str):
            recording = fixture_json(f"nvml/{recording}.json")
        self.rec = recording or {"driver": "", "cuda": 0, "devices": [], "process_names": {}}
        self.init_error = init_error
        self.lost = dict(lost or {})
        self.initialised = 0
        self.shutdowns = 0

    def _dev(self, handle: Any) -> dict[str, Any]:
        if handle.index in self.lost:
            raise pynvml.NVMLError(self.lost[handle.index])
        return self.rec["devices"][handle.index]

    def nvmlInit(self) -> None:
        if self.init_error is not None:
            raise pynvml.NVMLError(self.init_error)
        self.initialised += 1

    def nvmlShutdown(self) -> None:
        self.shutdowns += 1

    def nvmlSystemGetDriverVersion(self) -> str:
        return self.rec["driver"]

    def nvmlSystemGetCudaDriverVersion(self) -> int:
        return self.rec["cuda"]

    def nvmlDeviceGetCount(self) -> int:
        return len(self.rec["devices"])

    def nvmlDeviceGetHandleByIndex(self, i: int) -> Any:
        if i >= len(self.rec["devices"]):
            raise pynvml.NVMLError(pynvml.NVML_ERROR_INVALID_ARGUMENT)
        return SimpleNamespace(index=i)

    def nvmlDeviceGetName(self, h: Any) -> str:
        return self._dev(h)["name"]

    def nvmlDeviceGetUUID(self, h: Any) -> str:
        return self._dev(h)["uuid"]

    def nvmlDeviceGetPciInfo(self, h: Any) -> Any:
        return SimpleNamespace(busId=self._dev(h)["busId"])

    def nvmlDeviceGetMemoryInfo(self, h: Any) -> Any:
        return SimpleNamespace(**self._dev(h)["memory"])

    def nvmlDeviceGetCudaComputeCapability(self, h: Any) -> tuple[int, int]:
        major, minor = self._dev(h)["cc"]
        return major, minor

    def nvmlDeviceGetComputeRunningProcesses(self, h: Any) -> list[Any]:
        return [SimpleNamespace(**p) for p in self._dev(h)["compute_procs"]]

    def nvmlDeviceGetGraphicsRunningProcesses(self, h: Any) -> list[Any]:
        return [SimpleNamespace(**p) for p in self._dev(h)["graphics_procs"]]

    def nvmlSystemGetProcessName(self, pid: int) -> str:
        name = self.rec["process_names"].get(str(pid))
        if name is None:
            raise pynvml.NVMLError(pynvml.NVML_ERROR_NOT_FOUND)
        return name


def materialize(tree: dict[str, str], root: Path) -> Path:
    """Write a recorded {relative path: content} file tree under ``root``."""
    for rel, content in tree.items():
        if rel.startswith("_"):
            continue
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(content, encoding="utf-8")
    return root


class FakeTools:
    """Stands in for run_tool: answers recorded stdout per command, records the calls."""

    def __init__(self, outputs: dict[str, ToolResult]) -> None:
        self.outputs = outputs
        self.calls: list[list[str]] = []

    def __call__(self, argv: list[str], timeout: float = 3.0) -> ToolResult:
        self.calls.append(list(argv))
        key = " ".join(argv)
        for prefix in sorted(self.outputs, key=len, reverse=True):
            if key == prefix or key.startswith(prefix + " "):
                return self.outputs[prefix]
        return ToolResult(False, reason=f"{argv[0]} is not installed")


def sysctl_from(rel: str) -> Any:
    """A sysctl reader answering from a recorded ``sysctl name: value`` listing."""
    values = {}
    for line in fixture_text(rel).splitlines():
        name, sep, value = line.partition(":")
        if sep:
            values[name.strip()] = value.strip()
    return values.get
