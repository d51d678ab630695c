"""HardwareReport: JSON round trip, tolerance, and the memory views the planner relies on."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from app.hardware.report import (
    CpuInfo,
    GpuInfo,
    GpuProcess,
    HardwareReport,
    MemoryInfo,
    OsInfo,
    ReportFormatError,
    SourceStatus,
)
from tests.fixtures.hardware.make_reports import REPORTS, load_report

GiB = 1024**3


@pytest.mark.parametrize("name", sorted(REPORTS))
def test_recorded_reports_round_trip_through_json_text(name: str) -> None:
    report = load_report(name)
    again = HardwareReport.from_json(json.loads(json.dumps(report.to_json())))
    assert again == report
    assert again == REPORTS[name]()  # the files on disk are what the generator writes


sizes = st.integers(min_value=0, max_value=2**44)
gpus = st.builds(
    GpuInfo,
    name=st.text(min_size=1, max_size=30),
    vendor=st.sampled_from(["nvidia", "amd", "apple", "intel", "other"]),
    backend=st.sampled_from(["cuda", "rocm", "metal", "vulkan"]),
    index=st.integers(0, 16),
    total=sizes,
    free=sizes,
    used_by_others=sizes,
    unified=st.booleans(),
    estimate=st.booleans(),
    uuid=st.none() | st.text(max_size=40),
    processes=st.lists(st.builds(GpuProcess, pid=st.integers(1, 2**22), name=st.text(),
                                 used=st.none() | sizes), max_size=3),
    details=st.dictionaries(st.text(max_size=10), st.text(max_size=10), max_size=3),
    runner_free=st.none() | sizes,
)


@given(
    gpus=st.lists(gpus, max_size=4),
    perf=st.none() | st.integers(1, 64),
    features=st.lists(st.sampled_from(["AVX", "AVX2", "NEON", "SVE"]), unique=True),
)
def test_any_report_round_trips(gpus: list[GpuInfo], perf: int | None, features: list[str]) -> None:
    report = HardwareReport(
        os=OsInfo("Linux", "Debian", "6.1"),
        cpu=CpuInfo("x", "x86_64", 4, 8, perf, features),
        memory=MemoryInfo(16 * GiB, 8 * GiB, 0, 0),
        gpus=gpus,
        sources=[SourceStatus("nvidia", False, "why")],
    )
    assert HardwareReport.from_json(json.loads(json.dumps(report.to_json()))) == report


def test_unknown_keys_are_ignored_and_missing_optional_keys_default() -> None:
    data = load_report("rtx4090_24gb").to_json()
    data["future_field"] = {"x": 1}
    data["gpus"][0]["future_gpu_field"] = 3
    del data["gpus"][0]["processes"]
    del data["runner"]
    report = HardwareReport.from_json(data)
    assert report.gpus[0].processes == []
    assert report.runner is None


def test_a_broken_report_raises_a_readable_error() -> None:
    data = load_report("rtx4090_24gb").to_json()
    del data["cpu"]["model"]
    with pytest.raises(ReportFormatError, match="detect the hardware again"):
        HardwareReport.from_json(data)
    with pytest.raises(ReportFormatError):
        HardwareReport.from_json({"os": "nonsense"})


def test_unified_memory_is_never_counted_on_top_of_ram() -> None:
    mac = load_report("m2pro_16gb")
    assert mac.gpus[0].unified
    assert mac.total_memory == mac.memory.total
    laptop = load_report("rtx3060_laptop")  # RTX 3060 6 GB + Iris Xe sharing RAM
    assert laptop.dedicated_gpu_memory == 6 * GiB
    assert laptop.total_memory == laptop.memory.total + 6 * GiB
    rigs = load_report("2x3090")
    assert rigs.total_memory == rigs.memory.total + 2 * 24 * GiB


def test_usable_cpu_features_without_runner_are_the_cpus() -> None:
    report = load_report("rx7900xtx")
    assert report.usable_cpu_features == report.cpu.features
