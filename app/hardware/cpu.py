"""CPU model, cores and the instruction sets llama.cpp cares about.

Linux reads /proc/cpuinfo and sysfs, macOS asks sysctl, Windows asks the registry, the kernel
and (for what the kernel has no name for) the CPU itself through CPUID (app.hardware.cpuid).
py-cpuinfo would do all of this but costs over a second at startup; these reads take milliseconds.
Feature names are llama.cpp's own (as printed by ``llama_print_system_info``), so the report can
be compared directly with what a runner build was compiled for.
"""

from __future__ import annotations

import logging
import os
import platform
import struct
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from app.hardware.report import CpuInfo

if TYPE_CHECKING:
    from app.hardware.cpuid import Leaves

log = logging.getLogger(__name__)

Sysctl = Callable[[str], str | None]

# /proc/cpuinfo x86 "flags" -> llama.cpp feature name; order is the order shown to the user.
X86_FLAGS: dict[str, str] = {
    "pni": "SSE3",
    "ssse3": "SSSE3",
    "avx": "AVX",
    "avx_vnni": "AVX_VNNI",
    "avx2": "AVX2",
    "f16c": "F16C",
    "fma": "FMA",
    "bmi2": "BMI2",
    "avx512f": "AVX512",
    "avx512cd": "AVX512_CD",
    "avx512bw": "AVX512_BW",
    "avx512dq": "AVX512_DQ",
    "avx512vl": "AVX512_VL",
    "avx512vbmi": "AVX512_VBMI",
    "avx512_vnni": "AVX512_VNNI",
    "avx512_bf16": "AVX512_BF16",
    "amx_int8": "AMX_INT8",
}

# /proc/cpuinfo ARM "Features" -> llama.cpp feature name.
ARM_FLAGS: dict[str, str] = {
    "asimd": "NEON",
    "asimdhp": "FP16_VA",  # half-precision vector arithmetic (fphp is the scalar one)
    "asimddp": "DOTPROD",
    "i8mm": "MATMUL_INT8",
    "sve": "SVE",
    "sve2": "SVE2",
    "sme": "SME",
}

# macOS sysctl names -> feature, for Apple Silicon.
APPLE_ARM_SYSCTLS: dict[str, str] = {
    "hw.optional.neon": "NEON",
    "hw.optional.neon_fp16": "FP16_VA",
    "hw.optional.arm.FEAT_DotProd": "DOTPROD",
    "hw.optional.arm.FEAT_I8MM": "MATMUL_INT8",
    "hw.optional.arm.FEAT_SME": "SME",
}

# macOS on Intel: words in machdep.cpu.features / leaf7_features.
APPLE_X86_WORDS: dict[str, str] = {
    "SSE3": "SSE3",
    "SSSE3": "SSSE3",
    "AVX1.0": "AVX",
    "AVX2": "AVX2",
    "F16C": "F16C",
    "FMA": "FMA",
    "BMI2": "BMI2",
    "AVX512F": "AVX512",
    "AVX512CD": "AVX512_CD",
    "AVX512BW": "AVX512_BW",
    "AVX512DQ": "AVX512_DQ",
    "AVX512VL": "AVX512_VL",
    "AVX512VBMI": "AVX512_VBMI",
    "AVX512VNNI": "AVX512_VNNI",
}

# Windows IsProcessorFeaturePresent constants (winnt.h PF_*) -> feature. On x86 these are only the
# fallback for when CPUID cannot be run (see app.hardware.cpuid): Windows has no constant for FMA,
# F16C, AVX-VNNI or the AVX-512 subsets.
WINDOWS_PF_X86: dict[int, str] = {
    13: "SSE3",
    36: "SSSE3",
    39: "AVX",
    40: "AVX2",
    60: "BMI2",
    41: "AVX512",  # PF_AVX512F
}
WINDOWS_PF_ARM: dict[int, str] = {
    29: "NEON",  # PF_ARM_V8_INSTRUCTIONS_AVAILABLE: ARMv8 always has Advanced SIMD
    67: "FP16_VA",  # PF_ARM_V82_FP16_INSTRUCTIONS_AVAILABLE
    43: "DOTPROD",  # PF_ARM_V82_DP_INSTRUCTIONS_AVAILABLE
    66: "MATMUL_INT8",  # PF_ARM_V82_I8MM_INSTRUCTIONS_AVAILABLE
    46: "SVE",  # PF_ARM_SVE_INSTRUCTIONS_AVAILABLE
    47: "SVE2",  # PF_ARM_SVE2_INSTRUCTIONS_AVAILABLE
    70: "SME",  # PF_ARM_SME_INSTRUCTIONS_AVAILABLE
}

# ARM CPU implementer / part numbers (as lscpu knows them) for Linux boxes whose /proc/cpuinfo has
# no model name; only cores people run models on.
ARM_PARTS: dict[tuple[int, int], str] = {
    (0x41, 0xD03): "Cortex-A53",
    (0x41, 0xD05): "Cortex-A55",
    (0x41, 0xD08): "Cortex-A72",
    (0x41, 0xD0B): "Cortex-A76",
    (0x41, 0xD0C): "Neoverse-N1",
    (0x41, 0xD40): "Neoverse-V1",
    (0x41, 0xD41): "Cortex-A78",
    (0x41, 0xD44): "Cortex-X1",
    (0x41, 0xD49): "Neoverse-N2",
    (0x41, 0xD4F): "Neoverse-V2",
    (0x41, 0xD80): "Cortex-A520",
    (0x41, 0xD81): "Cortex-A720",
    (0x41, 0xD82): "Cortex-X4",
    (0x41, 0xD8E): "Neoverse-N3",
    (0x4E, 0x004): "NVIDIA Carmel",
    (0x51, 0x001): "Qualcomm Oryon",
    (0x61, 0x022): "Apple M1",
    (0x61, 0x032): "Apple M2",
    (0xC0, 0xAC3): "Ampere-1",
    (0xC0, 0xAC4): "Ampere-1a",
}

_ARM_IMPLEMENTERS = {0x41: "ARM", 0x4E: "NVIDIA", 0x51: "Qualcomm", 0x61: "Apple", 0xC0: "Ampere"}


def detect_cpu(system: str | None = None) -> CpuInfo:
    """The CPU of this machine. Never raises for missing information: fields fall back."""
    system = system or platform.system()
    if system == "Darwin":
        return cpu_from_sysctl(read_sysctl)
    if system == "Windows":
        return _cpu_windows()
    return cpu_from_linux(Path("/"))


# -- Linux -------------------------------------------------------------------------------------


def cpu_from_linux(root: Path, machine: str | None = None) -> CpuInfo:
    """Read /proc/cpuinfo and sysfs under ``root`` (``/`` in real use, a recorded tree in tests)."""
    machine = machine or platform.machine()
    try:
        text = (root / "proc/cpuinfo").read_text(encoding="utf-8", errors="replace")
    except OSError as exc:
        log.info("cannot read /proc/cpuinfo: %s", exc)
        text = ""
    blocks = parse_cpuinfo(text)
    first = blocks[0] if blocks else {}
    logical = len(blocks) or _logical_count()
    physical = _physical_cores_linux(blocks, root) or logical

    vendor = first.get("vendor_id", "")
    model = first.get("model name") or first.get("Processor") or ""
    if "flags" in first:
        features = features_from_flags(first["flags"].split(), X86_FLAGS)
    else:
        arm_words = first.get("Features", "").split()
        features = features_from_flags(arm_words, ARM_FLAGS)
        if "NEON" in features or machine in ("aarch64", "arm64"):
            # ARMv8 has fused multiply-add in its SIMD unit; llama.cpp calls it ARM_FMA.
            features.insert(1 if "NEON" in features else 0, "ARM_FMA")
        if not model:
            model, vendor = _arm_model(first, root)
    return CpuInfo(
        model=model.strip() or platform.processor() or machine,
        arch=machine,
        physical_cores=physical,
        logical_cores=logical,
        performance_cores=performance_cores_linux(root, logical),
        features=features,
        vendor=vendor,
    )


def parse_cpuinfo(text: str) -> list[dict[str, str]]:
    """/proc/cpuinfo as one dict per logical CPU (ARM's trailing global block is merged in)."""
    blocks: list[dict[str, str]] = []
    current: dict[str, str] = {}
    for line in [*text.splitlines(), ""]:
        if not line.strip():
            if current:
                blocks.append(current)
                current = {}
            continue
        key, sep, value = line.partition(":")
        if sep:
            current[key.strip()] = value.strip()
    cpus = [b for b in blocks if "processor" in b]
    extra = [b for b in blocks if "processor" not in b]
    for block in extra:  # e.g. "Hardware : BCM2835" / "Model : Raspberry Pi 5"
        for cpu in cpus:
            for k, v in block.items():
                cpu.setdefault(k, v)
    return cpus or extra


def features_from_flags(words: Iterable[str], table: dict[str, str]) -> list[str]:
    have = set(words)
    return [name for flag, name in table.items() if flag in have]


def _physical_cores_linux(blocks: list[dict[str, str]], root: Path) -> int:
    pairs = {(b.get("physical id", "0"), b["core id"]) for b in blocks if "core id" in b}
    if pairs:
        return len(pairs)
    # ARM /proc/cpuinfo has no core ids; sysfs topology does.
    cores = _sysfs_physical_cores(root, range(len(blocks)))
    if cores:
        return cores
    if root == Path("/"):
        try:
            import psutil

            return int(psutil.cpu_count(logical=False) or 0)
        except Exception:  # psutil missing or failing: fall back to logical count
            return 0
    return 0


def _sysfs_physical_cores(root: Path, cpus: Iterable[int]) -> int:
    seen: set[tuple[str, str]] = set()
    for n in cpus:
        topo = root / f"sys/devices/system/cpu/cpu{n}/topology"
        try:
            core = (topo / "core_id").read_text().strip()
            pkg = (topo / "physical_package_id").read_text().strip()
        except OSError:
            continue
        seen.add((pkg, core))
    return len(seen)


def parse_cpu_list(text: str) -> list[int]:
    """A sysfs CPU list such as ``0-11,16`` as numbers."""
    cpus: list[int] = []
    for part in text.strip().split(","):
        if not part:
            continue
        lo, _, hi = part.partition("-")
        cpus.extend(range(int(lo), int(hi or lo) + 1))
    return cpus


def performance_cores_linux(root: Path, logical: int) -> int | None:
    """Physical performance cores on a hybrid CPU, None on a homogeneous one.

    Intel hybrid CPUs register two PMUs, /sys/devices/cpu_core (P) and cpu_atom (E). ARM
    big.LITTLE chips give each core a ``cpu_capacity``; the biggest ones are the performance cores.
    """
    core_list = root / "sys/devices/cpu_core/cpus"
    if core_list.exists() and (root / "sys/devices/cpu_atom/cpus").exists():
        try:
            p_cpus = parse_cpu_list(core_list.read_text())
        except (OSError, ValueError):
            return None
        return _sysfs_physical_cores(root, p_cpus) or len(p_cpus) or None
    capacities: dict[int, int] = {}
    for n in range(logical):
        try:
            capacities[n] = int((root / f"sys/devices/system/cpu/cpu{n}/cpu_capacity").read_text())
        except (OSError, ValueError):
            continue
    if len(set(capacities.values())) > 1:
        top = max(capacities.values())
        big = [n for n, c in capacities.items() if c == top]
        return _sysfs_physical_cores(root, big) or len(big)
    return None


def _arm_model(first: dict[str, str], root: Path) -> tuple[str, str]:
    try:
        impl = int(first.get("CPU implementer", "0"), 16)
        part = int(first.get("CPU part", "0"), 16)
    except ValueError:
        impl, part = 0, 0
    vendor = _ARM_IMPLEMENTERS.get(impl, "")
    name = ARM_PARTS.get((impl, part))
    board = first.get("Model", "")
    if not board:
        try:
            board = (root / "proc/device-tree/model").read_text().strip("\x00\n ")
        except OSError:
            board = ""
    if name and board:
        return f"{name} ({board})", vendor
    if name:
        return name, vendor
    if board:
        return board, vendor
    return (f"ARM CPU (implementer 0x{impl:02x}, part 0x{part:03x})" if impl else ""), vendor


def _logical_count() -> int:
    return os.cpu_count() or 1


# -- macOS -------------------------------------------------------------------------------------


def read_sysctl(name: str) -> str | None:
    """One sysctl value as text (ints as decimal), or None when the name does not exist.

    Through libc's sysctlbyname rather than the sysctl tool: no process start, no timeout needed.
    """
    import ctypes
    import ctypes.util

    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.dylib", use_errno=True)
    except OSError:
        return None
    size = ctypes.c_size_t(0)
    if libc.sysctlbyname(name.encode(), None, ctypes.byref(size), None, 0) != 0:
        return None
    buf = ctypes.create_string_buffer(size.value)
    if libc.sysctlbyname(name.encode(), buf, ctypes.byref(size), None, 0) != 0:
        return None
    raw = buf.raw[: size.value]
    if name not in _SYSCTL_STRINGS and size.value in (4, 8):
        return str(int.from_bytes(raw, "little"))
    return raw.rstrip(b"\x00").decode("utf-8", "replace")


# The sysctl names Hearth reads that hold text; every other one is an integer.
_SYSCTL_STRINGS = frozenset({
    "machdep.cpu.brand_string",
    "machdep.cpu.features",
    "machdep.cpu.leaf7_features",
    "machdep.cpu.vendor",
    "kern.osproductversion",
    "kern.osrelease",
    "hw.model",
})


def sysctl_int(sysctl: Sysctl, name: str) -> int | None:
    value = sysctl(name)
    if value is None:
        return None
    try:
        return int(value.strip())
    except ValueError:
        return None


def cpu_from_sysctl(sysctl: Sysctl) -> CpuInfo:
    """A Mac's CPU from sysctl values (``sysctl`` maps a name to its text value or None)."""
    brand = sysctl("machdep.cpu.brand_string") or "Mac CPU"
    # Under Rosetta platform.machine() says x86_64; the machine itself is arm64.
    translated = sysctl_int(sysctl, "sysctl.proc_translated") == 1
    arm = sysctl_int(sysctl, "hw.optional.arm64") == 1 or translated or brand.startswith("Apple")
    arch = "arm64" if arm else "x86_64"
    physical = sysctl_int(sysctl, "hw.physicalcpu") or _logical_count()
    logical = sysctl_int(sysctl, "hw.logicalcpu") or physical
    perf: int | None = None
    if (sysctl_int(sysctl, "hw.nperflevels") or 1) > 1:
        perf = sysctl_int(sysctl, "hw.perflevel0.physicalcpu")
    if arm:
        features = [f for name, f in APPLE_ARM_SYSCTLS.items() if sysctl_int(sysctl, name) == 1]
        if "NEON" in features:
            features.insert(1, "ARM_FMA")
    else:
        words = set((sysctl("machdep.cpu.features") or "").split())
        words |= set((sysctl("machdep.cpu.leaf7_features") or "").split())
        features = [f for word, f in APPLE_X86_WORDS.items() if word in words]
    return CpuInfo(
        model=brand.strip(),
        arch=arch,
        physical_cores=physical,
        logical_cores=logical,
        performance_cores=perf,
        features=features,
        vendor="Apple" if arm else (sysctl("machdep.cpu.vendor") or ""),
    )


# -- Windows -----------------------------------------------------------------------------------


def _cpu_windows() -> CpuInfo:
    import ctypes

    model = ""
    try:
        import winreg

        key = winreg.OpenKey(  # type: ignore[attr-defined,unused-ignore]
            winreg.HKEY_LOCAL_MACHINE,  # type: ignore[attr-defined,unused-ignore]
            r"HARDWARE\DESCRIPTION\System\CentralProcessor\0",
        )
        model = str(winreg.QueryValueEx(key, "ProcessorNameString")[0])  # type: ignore[attr-defined,unused-ignore]
    except OSError as exc:
        log.info("cannot read the CPU name from the registry: %s", exc)
    logical = _logical_count()
    physical = 0
    try:
        import psutil

        physical = int(psutil.cpu_count(logical=False) or 0)
    except Exception:
        log.info("psutil cannot count physical cores", exc_info=True)
    buf = _windows_processor_info()
    perf = performance_cores_windows(buf) if buf else None
    if not physical and buf:
        physical = len(windows_efficiency_classes(buf))
    kernel32 = ctypes.windll.kernel32  # type: ignore[attr-defined,unused-ignore]
    arch = os.environ.get("PROCESSOR_ARCHITECTURE", platform.machine())
    cpuid = None
    if not _is_arm(arch):
        from app.hardware.cpuid import read_cpuid

        cpuid = read_cpuid()
    features = windows_features(arch, lambda pf: bool(kernel32.IsProcessorFeaturePresent(pf)),
                                cpuid)
    return CpuInfo(
        model=model.strip() or platform.processor(),
        arch=arch,
        physical_cores=physical or logical,
        logical_cores=logical,
        performance_cores=perf,
        features=features,
        vendor=os.environ.get("PROCESSOR_IDENTIFIER", "").split(",")[-1].strip(),
    )


def _is_arm(arch: str) -> bool:
    return arch.upper() in ("ARM64", "AARCH64")


def windows_features(
    arch: str,
    is_present: Callable[[int], bool],
    cpuid: tuple[Leaves, int | None] | None,
) -> list[str]:
    """A Windows CPU's features from IsProcessorFeaturePresent (``is_present``) and, on x86, CPUID
    leaves and XCR0 (``cpuid``; None where the CPUID stubs could not run)."""
    if _is_arm(arch):
        features = [name for pf, name in WINDOWS_PF_ARM.items() if is_present(pf)]
        if "NEON" in features:
            features.insert(1, "ARM_FMA")  # as on Linux: ARMv8 SIMD has fused multiply-add
        return features
    if cpuid is not None:
        from app.hardware.cpuid import features_from_cpuid

        return features_from_cpuid(*cpuid)
    features = [name for pf, name in WINDOWS_PF_X86.items() if is_present(pf)]
    if "AVX2" in features:
        # No flag for these; every CPU with AVX2 (Haswell, Zen and later) has both.
        at = features.index("AVX2") + 1
        features[at:at] = ["F16C", "FMA"]
    return features


def _windows_processor_info() -> bytes | None:
    """Raw GetLogicalProcessorInformationEx(RelationProcessorCore) records."""
    import ctypes

    kernel32 = ctypes.windll.kernel32  # type: ignore[attr-defined,unused-ignore]
    size = ctypes.c_ulong(0)
    kernel32.GetLogicalProcessorInformationEx(0, None, ctypes.byref(size))
    if not size.value:
        return None
    buf = ctypes.create_string_buffer(size.value)
    if not kernel32.GetLogicalProcessorInformationEx(0, buf, ctypes.byref(size)):
        return None
    return buf.raw[: size.value]


def windows_efficiency_classes(buf: bytes) -> list[int]:
    """EfficiencyClass of each physical core in SYSTEM_LOGICAL_PROCESSOR_INFORMATION_EX records.

    Record layout: DWORD Relationship, DWORD Size, then PROCESSOR_RELATIONSHIP whose first two
    bytes are Flags and EfficiencyClass.
    """
    classes: list[int] = []
    offset = 0
    while offset + 10 <= len(buf):
        relationship, size = struct.unpack_from("<II", buf, offset)
        if size < 10:
            break
        if relationship == 0:  # RelationProcessorCore
            classes.append(buf[offset + 9])
        offset += size
    return classes


def performance_cores_windows(buf: bytes) -> int | None:
    """Cores in the highest efficiency class, when there is more than one class (hybrid CPUs)."""
    classes = windows_efficiency_classes(buf)
    if len(set(classes)) < 2:
        return None
    top = max(classes)
    return sum(1 for c in classes if c == top)

