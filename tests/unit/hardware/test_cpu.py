"""CPU detection: the real machine against /proc/cpuinfo, os.cpu_count() and psutil; recorded
ARM, hybrid Intel, Apple and Windows machines through their files and sysctl values."""

from __future__ import annotations

import os
import platform
import struct
from pathlib import Path

import psutil
import pytest

from app.hardware.cpu import (
    cpu_from_linux,
    cpu_from_sysctl,
    detect_cpu,
    parse_cpu_list,
    performance_cores_windows,
    windows_features,
)
from app.hardware.cpuid import features_from_cpuid
from tests.unit.hardware.fakes import fixture_json, fixture_text, materialize, sysctl_from
from tests.unit.hardware.test_cpuid import ICE_LAKE_XCR0, ICE_LAKE_XEON

linux_only = pytest.mark.skipif(platform.system() != "Linux", reason="reads /proc/cpuinfo")


@linux_only
def test_real_cpu_matches_proc_cpuinfo_os_and_psutil() -> None:
    cpu = detect_cpu()
    text = Path("/proc/cpuinfo").read_text()
    fields = dict(
        (k.strip(), v.strip()) for k, _, v in (line.partition(":") for line in text.splitlines())
    )
    if "model name" in fields:
        assert cpu.model == fields["model name"]
    assert cpu.arch == platform.machine()
    assert cpu.logical_cores == os.cpu_count()
    assert cpu.physical_cores == psutil.cpu_count(logical=False)
    assert cpu.physical_cores <= cpu.logical_cores
    if "flags" in fields:
        flags = set(fields["flags"].split())
        for flag, name in [("avx", "AVX"), ("avx2", "AVX2"), ("fma", "FMA"), ("f16c", "F16C"),
                           ("avx512f", "AVX512"), ("avx512_vnni", "AVX512_VNNI"),
                           ("avx_vnni", "AVX_VNNI"), ("avx512_bf16", "AVX512_BF16")]:
            assert (name in cpu.features) == (flag in flags), name


def test_graviton3_neoverse_v1(tmp_path: Path) -> None:
    materialize({"proc/cpuinfo": fixture_text("cpuinfo/graviton3.txt")}, tmp_path)
    cpu = cpu_from_linux(tmp_path, machine="aarch64")
    assert cpu.model == "Neoverse-V1"
    assert cpu.vendor == "ARM"
    assert (cpu.logical_cores, cpu.physical_cores, cpu.performance_cores) == (4, 4, None)
    assert cpu.features == ["NEON", "ARM_FMA", "FP16_VA", "DOTPROD", "MATMUL_INT8", "SVE"]


def test_raspberry_pi_5(tmp_path: Path) -> None:
    materialize({"proc/cpuinfo": fixture_text("cpuinfo/raspberry_pi5.txt")}, tmp_path)
    cpu = cpu_from_linux(tmp_path, machine="aarch64")
    assert cpu.model == "Cortex-A76 (Raspberry Pi 5 Model B Rev 1.0)"
    assert cpu.logical_cores == 4
    assert "DOTPROD" in cpu.features and "MATMUL_INT8" not in cpu.features


def _alder_lake_tree(root: Path) -> None:
    rec = fixture_json("cpuinfo/alder_lake_12700h.json")
    blocks = []
    for n, pkg, core in rec["cpus"]:
        blocks.append(
            f"processor\t: {n}\nvendor_id\t: GenuineIntel\nmodel name\t: {rec['model name']}\n"
            f"physical id\t: {pkg}\ncore id\t\t: {core}\nflags\t\t: {rec['flags']}\n"
        )
        materialize({
            f"sys/devices/system/cpu/cpu{n}/topology/core_id": f"{core}\n",
            f"sys/devices/system/cpu/cpu{n}/topology/physical_package_id": f"{pkg}\n",
        }, root)
    materialize({"proc/cpuinfo": "\n".join(blocks), **rec["sysfs"]}, root)


def test_alder_lake_hybrid_counts_performance_cores(tmp_path: Path) -> None:
    _alder_lake_tree(tmp_path)
    cpu = cpu_from_linux(tmp_path, machine="x86_64")
    assert cpu.model == "12th Gen Intel(R) Core(TM) i7-12700H"
    assert (cpu.physical_cores, cpu.logical_cores, cpu.performance_cores) == (14, 20, 6)
    assert "AVX_VNNI" in cpu.features and "AVX2" in cpu.features
    assert not any(f.startswith("AVX512") for f in cpu.features)


def test_big_little_arm_from_cpu_capacity(tmp_path: Path) -> None:
    # RK3588: four Cortex-A55 (capacity 414) and four Cortex-A76 (capacity 1024)
    text = fixture_text("cpuinfo/raspberry_pi5.txt").split("Revision")[0]
    blocks = text.strip().split("\n\n")
    blocks = blocks + [b.replace(f": {i}\n", f": {i + 4}\n", 1) for i, b in enumerate(blocks)]
    tree = {"proc/cpuinfo": "\n\n".join(blocks) + "\n"}
    for n in range(8):
        tree[f"sys/devices/system/cpu/cpu{n}/cpu_capacity"] = "414\n" if n < 4 else "1024\n"
    cpu = cpu_from_linux(materialize(tree, tmp_path), machine="aarch64")
    assert cpu.logical_cores == 8
    assert cpu.performance_cores == 4


def test_homogeneous_cpu_has_no_performance_core_count(tmp_path: Path) -> None:
    materialize({"proc/cpuinfo": fixture_text("cpuinfo/graviton3.txt")}, tmp_path)
    assert cpu_from_linux(tmp_path, machine="aarch64").performance_cores is None


def test_m2_pro_from_sysctl() -> None:
    cpu = cpu_from_sysctl(sysctl_from("sysctl/m2pro_16gb.txt"))
    assert cpu.model == "Apple M2 Pro"
    assert cpu.arch == "arm64"
    assert (cpu.physical_cores, cpu.logical_cores, cpu.performance_cores) == (10, 10, 6)
    assert cpu.features == ["NEON", "ARM_FMA", "FP16_VA", "DOTPROD", "MATMUL_INT8"]


def test_rosetta_still_reports_the_arm_machine() -> None:
    values = {"machdep.cpu.brand_string": "Apple M1", "sysctl.proc_translated": "1",
              "hw.physicalcpu": "8", "hw.logicalcpu": "8"}
    assert cpu_from_sysctl(values.get).arch == "arm64"


def test_intel_mac_from_sysctl() -> None:
    cpu = cpu_from_sysctl(sysctl_from("sysctl/intel_mac_i9.txt"))
    assert cpu.arch == "x86_64"
    assert (cpu.physical_cores, cpu.logical_cores, cpu.performance_cores) == (8, 16, None)
    assert cpu.features == ["SSE3", "SSSE3", "AVX", "AVX2", "F16C", "FMA", "BMI2"]


def _core_record(efficiency_class: int) -> bytes:
    # SYSTEM_LOGICAL_PROCESSOR_INFORMATION_EX, RelationProcessorCore, one GROUP_AFFINITY
    body = struct.pack("<BB20sH", 1, efficiency_class, b"", 1) + struct.pack("<QH6x", 0b11, 0)
    return struct.pack("<II", 0, 8 + len(body)) + body


def _cache_record() -> bytes:
    body = bytes(32)
    return struct.pack("<II", 2, 8 + len(body)) + body


def test_windows_hybrid_counts_highest_efficiency_class() -> None:
    buf = b"".join([_core_record(1)] * 6 + [_cache_record()] + [_core_record(0)] * 8)
    assert performance_cores_windows(buf) == 6


def test_windows_homogeneous_has_no_performance_core_count() -> None:
    assert performance_cores_windows(b"".join([_core_record(0)] * 8)) is None


def test_parse_cpu_list() -> None:
    assert parse_cpu_list("0-3,8,10-11\n") == [0, 1, 2, 3, 8, 10, 11]


# IsProcessorFeaturePresent answers, as sets of the PF_* numbers that are TRUE on these CPUs
# (from the features each CPU documents, not a dump).
# Snapdragon X Elite (Oryon, Armv8.7: dot product, int8 matrix multiply, FP16; no SVE).
SNAPDRAGON_X_ELITE_PF = {29, 30, 31, 34, 43, 44, 45, 62, 64, 65, 66, 67, 68}
# Ice Lake-SP under Windows: SSE3, SSSE3, SSE4.1/4.2, AVX, AVX2, AVX512F, BMI2, XSAVE, ...
ICE_LAKE_PF = {3, 6, 7, 8, 9, 10, 12, 13, 17, 20, 23, 36, 37, 38, 39, 40, 41, 42, 60}


def test_windows_on_arm_features() -> None:
    assert windows_features("ARM64", SNAPDRAGON_X_ELITE_PF.__contains__, None) == [
        "NEON", "ARM_FMA", "FP16_VA", "DOTPROD", "MATMUL_INT8"]


def test_windows_x86_uses_cpuid_for_what_windows_cannot_name() -> None:
    features = windows_features("AMD64", ICE_LAKE_PF.__contains__,
                                (ICE_LAKE_XEON, ICE_LAKE_XCR0))
    assert features == features_from_cpuid(ICE_LAKE_XEON, ICE_LAKE_XCR0)
    assert "AVX512_VNNI" in features and "AVX512_VBMI" in features


def test_windows_x86_without_cpuid_falls_back_to_processor_features() -> None:
    assert windows_features("AMD64", ICE_LAKE_PF.__contains__, None) == [
        "SSE3", "SSSE3", "AVX", "AVX2", "F16C", "FMA", "BMI2", "AVX512"]


def test_fp16_vector_arithmetic_is_asimdhp_not_fphp(tmp_path: Path) -> None:
    text = fixture_text("cpuinfo/raspberry_pi5.txt").replace(" asimdhp", "")
    materialize({"proc/cpuinfo": text}, tmp_path)
    assert "FP16_VA" not in cpu_from_linux(tmp_path, machine="aarch64").features
