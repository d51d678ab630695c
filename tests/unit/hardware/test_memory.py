"""System memory: the real machine against psutil and /proc/meminfo."""

from __future__ import annotations

import platform
from pathlib import Path

import psutil
import pytest

from app.hardware.memory import detect_memory, memory_from_meminfo


def test_real_memory_matches_psutil() -> None:
    mem = detect_memory()
    vm, sw = psutil.virtual_memory(), psutil.swap_memory()
    assert mem.total == vm.total
    assert abs(mem.available - vm.available) < 0.05 * vm.total
    assert mem.swap_total == sw.total
    assert 0 < mem.available <= mem.total


@pytest.mark.skipif(platform.system() != "Linux", reason="reads /proc/meminfo")
def test_real_memory_matches_proc_meminfo() -> None:
    from_file = memory_from_meminfo(Path("/proc/meminfo").read_text())
    assert detect_memory().total == from_file.total
    assert from_file.swap_total == psutil.swap_memory().total


def test_meminfo_without_memavailable() -> None:
    text = "MemTotal: 1000 kB\nMemFree: 100 kB\nBuffers: 10 kB\nCached: 200 kB\nSwapTotal: 0 kB\n"
    mem = memory_from_meminfo(text)
    assert (mem.total, mem.available, mem.swap_total) == (1024000, 310 * 1024, 0)
