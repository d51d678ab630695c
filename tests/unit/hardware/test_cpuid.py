"""x86 CPUID (the Windows path to FMA, F16C, AVX-VNNI and the AVX-512 subsets): the real stubs on
this machine against /proc/cpuinfo, and register values recorded from a real CPU."""

from __future__ import annotations

import platform
from pathlib import Path

import pytest

from app.hardware.cpu import X86_FLAGS, features_from_flags, parse_cpuinfo
from app.hardware.cpuid import CPUID_BITS, EBX, cpuid_stub, features_from_cpuid, read_cpuid

# CPUID leaves 0, 1, 7.0, 7.1 and XCR0 as the stubs read them on an Ice Lake-SP Xeon
# ("Intel(R) Xeon(R) Processor @ 2.80GHz", family 6 model 0x6a) under Linux 6.x.
ICE_LAKE_XEON = {
    (0, 0): (0x1B, 0x756E6547, 0x6C65746E, 0x49656E69),
    (1, 0): (0x606A6, 0x20800, 0xFFFA3203, 0x1F8BFBFF),
    (7, 0): (0x2, 0xF1BF2FFB, 0x415F46, 0x20000010),
    (7, 1): (0x0, 0x0, 0x0, 0x0),
}
ICE_LAKE_XCR0 = 0xE7  # x87, SSE, AVX, opmask, ZMM_Hi256, Hi16_ZMM

x86_linux = pytest.mark.skipif(
    platform.system() != "Linux" or platform.machine() not in ("x86_64", "i686", "i386"),
    reason="runs CPUID and compares with /proc/cpuinfo",
)


@x86_linux
def test_real_cpuid_agrees_with_proc_cpuinfo() -> None:
    result = read_cpuid()
    if result is None:
        pytest.skip("this system refuses executable pages")
    leaves, xcr0 = result
    assert leaves[(0, 0)][0] >= 1  # the highest basic leaf
    first = parse_cpuinfo(Path("/proc/cpuinfo").read_text())[0]
    expected = features_from_flags(first["flags"].split(), X86_FLAGS)
    assert features_from_cpuid(leaves, xcr0) == expected


def test_recorded_ice_lake_xeon() -> None:
    assert features_from_cpuid(ICE_LAKE_XEON, ICE_LAKE_XCR0) == [
        "SSE3", "SSSE3", "AVX", "AVX2", "F16C", "FMA", "BMI2", "AVX512", "AVX512_CD",
        "AVX512_BW", "AVX512_DQ", "AVX512_VL", "AVX512_VBMI", "AVX512_VNNI"]


def test_avx512_needs_the_os_to_save_zmm_registers() -> None:
    # Same CPU under an OS that enables AVX but not AVX-512 state (XCR0 = x87|SSE|AVX).
    features = features_from_cpuid(ICE_LAKE_XEON, 0b111)
    assert "AVX2" in features and "FMA" in features
    assert not any(f.startswith("AVX512") for f in features)


def test_without_osxsave_no_vector_extension_is_usable() -> None:
    assert features_from_cpuid(ICE_LAKE_XEON, None) == ["SSE3", "SSSE3", "BMI2"]


def test_leaf_7_1_bits_are_avx_vnni_and_avx512_bf16() -> None:
    # Bit positions from the Intel SDM (CPUID.(EAX=7,ECX=1):EAX[4] AVX-VNNI, [5] AVX512_BF16),
    # on the recorded leaves: Alder Lake sets bit 4 only, Sapphire Rapids both.
    alder_like = {**ICE_LAKE_XEON, (7, 1): (1 << 4, 0, 0, 0)}
    assert "AVX_VNNI" in features_from_cpuid(alder_like, ICE_LAKE_XCR0)
    assert "AVX512_BF16" not in features_from_cpuid(alder_like, ICE_LAKE_XCR0)
    both = {**ICE_LAKE_XEON, (7, 1): (0b11 << 4, 0, 0, 0)}
    assert {"AVX_VNNI", "AVX512_BF16"} <= set(features_from_cpuid(both, ICE_LAKE_XCR0))


def test_missing_leaf_7_means_no_leaf_7_features() -> None:
    old = {(0, 0): (0x5, 0, 0, 0), (1, 0): ICE_LAKE_XEON[(1, 0)]}
    assert features_from_cpuid(old, ICE_LAKE_XCR0) == ["SSE3", "SSSE3", "AVX", "F16C", "FMA"]


def test_stub_saves_rbx_and_returns_the_asked_register() -> None:
    # push rbx; mov eax, 7; mov ecx, 0; cpuid; mov eax, ebx; pop rbx; ret
    assert cpuid_stub(7, 0, EBX).hex() == "53b807000000b9000000000fa289d85bc3"


def test_cpuid_names_and_order_are_those_of_linux() -> None:
    assert list(CPUID_BITS) == list(X86_FLAGS.values())
