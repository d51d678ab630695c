"""x86 CPUID: the instruction sets that Windows has no name for.

Windows' IsProcessorFeaturePresent knows AVX, AVX2, AVX512F and BMI2, but not FMA, F16C, AVX-VNNI
or the AVX-512 subsets llama.cpp builds for (VNNI, VBMI, BF16, ...), and Windows has no
/proc/cpuinfo. So the CPU is asked directly: a few bytes of machine code run CPUID (or XGETBV)
with fixed inputs and return one register. Each stub saves RBX and otherwise touches only EAX, ECX
and EDX, which every x86 calling convention (System V, Microsoft x64, 32-bit cdecl) lets a callee
clobber, so the same bytes serve every x86 OS. The page is written while writable, then made
executable (never both at once, which security software objects to), called, and freed.

`features_from_cpuid` is pure: it decodes recorded register values, and only reports a vector
extension when XCR0 says the OS saves its registers (a CPU with AVX-512 under an OS that does not
enable it cannot run AVX-512 code). On Linux the tests run the real stubs and compare with
/proc/cpuinfo, where the kernel has already applied the same rules.
"""

from __future__ import annotations

import ctypes
import logging
import os
import struct
from collections.abc import Callable, Mapping

log = logging.getLogger(__name__)

EAX, EBX, ECX, EDX = 0, 1, 2, 3

# (leaf, subleaf) -> (eax, ebx, ecx, edx)
Leaves = Mapping[tuple[int, int], tuple[int, int, int, int]]

_XCR0_AVX = 0b110  # SSE and AVX (YMM upper halves) state
_XCR0_AVX512 = 0b1110_0000 | _XCR0_AVX  # opmask, ZMM0-15 upper halves, ZMM16-31
_XCR0_AMX = (1 << 17) | (1 << 18)  # tile config and tile data

# llama.cpp feature name -> (leaf, subleaf, register, bit, XCR0 bits the OS must enable).
# Same order as cpu.X86_FLAGS, so Windows and Linux list features alike.
CPUID_BITS: dict[str, tuple[int, int, int, int, int]] = {
    "SSE3": (1, 0, ECX, 0, 0),
    "SSSE3": (1, 0, ECX, 9, 0),
    "AVX": (1, 0, ECX, 28, _XCR0_AVX),
    "AVX_VNNI": (7, 1, EAX, 4, _XCR0_AVX),
    "AVX2": (7, 0, EBX, 5, _XCR0_AVX),
    "F16C": (1, 0, ECX, 29, _XCR0_AVX),
    "FMA": (1, 0, ECX, 12, _XCR0_AVX),
    "BMI2": (7, 0, EBX, 8, 0),
    "AVX512": (7, 0, EBX, 16, _XCR0_AVX512),
    "AVX512_CD": (7, 0, EBX, 28, _XCR0_AVX512),
    "AVX512_BW": (7, 0, EBX, 30, _XCR0_AVX512),
    "AVX512_DQ": (7, 0, EBX, 17, _XCR0_AVX512),
    "AVX512_VL": (7, 0, EBX, 31, _XCR0_AVX512),
    "AVX512_VBMI": (7, 0, ECX, 1, _XCR0_AVX512),
    "AVX512_VNNI": (7, 0, ECX, 11, _XCR0_AVX512),
    "AVX512_BF16": (7, 1, EAX, 5, _XCR0_AVX512),
    "AMX_INT8": (7, 0, EDX, 25, _XCR0_AMX),
}

_OSXSAVE_BIT = 27  # CPUID.1:ECX: the OS enabled XSAVE, so XGETBV may be executed


def features_from_cpuid(leaves: Leaves, xcr0: int | None) -> list[str]:
    """llama.cpp feature names from CPUID ``leaves``; ``xcr0`` None means XGETBV is unusable."""
    features = []
    for name, (leaf, subleaf, reg, bit, state) in CPUID_BITS.items():
        regs = leaves.get((leaf, subleaf))
        if regs is None or not regs[reg] >> bit & 1:
            continue
        if state and (xcr0 is None or xcr0 & state != state):
            continue
        features.append(name)
    return features


# -- running the instructions ------------------------------------------------------------------

_MOVE_TO_EAX = {EAX: b"", EBX: b"\x89\xd8", ECX: b"\x89\xc8", EDX: b"\x89\xd0"}
_SLOT = 32  # bytes per stub in the code page


def cpuid_stub(leaf: int, subleaf: int, reg: int) -> bytes:
    """push rbx; mov eax, leaf; mov ecx, subleaf; cpuid; mov eax, <reg>; pop rbx; ret."""
    return (b"\x53\xb8" + struct.pack("<I", leaf) + b"\xb9" + struct.pack("<I", subleaf)
            + b"\x0f\xa2" + _MOVE_TO_EAX[reg] + b"\x5b\xc3")


XGETBV_STUB = b"\x31\xc9\x0f\x01\xd0\xc3"  # xor ecx, ecx; xgetbv; ret  (EAX = XCR0 bits 0-31)

_WANTED = ((0, 0), (1, 0), (7, 0), (7, 1))


def read_cpuid() -> tuple[dict[tuple[int, int], tuple[int, int, int, int]], int | None] | None:
    """CPUID leaves 0, 1, 7.0 and 7.1 and XCR0 of this CPU, or None where code cannot be run."""
    stubs = [cpuid_stub(leaf, sub, reg) for leaf, sub in _WANTED for reg in (EAX, EBX, ECX, EDX)]
    stubs.append(XGETBV_STUB)
    code = b"".join(s.ljust(_SLOT, b"\xcc") for s in stubs)
    try:
        with _code_page(code) as call:
            def leaf_regs(i: int) -> tuple[int, int, int, int]:
                a, b, c, d = (call(_SLOT * (4 * i + r)) for r in (EAX, EBX, ECX, EDX))
                return a, b, c, d

            leaves = {(0, 0): leaf_regs(0), (1, 0): leaf_regs(1)}
            max_leaf = leaves[(0, 0)][EAX]
            if max_leaf >= 7:
                leaves[(7, 0)] = leaf_regs(2)
                if leaves[(7, 0)][EAX] >= 1:  # EAX of leaf 7.0 is the highest subleaf
                    leaves[(7, 1)] = leaf_regs(3)
            osxsave = leaves[(1, 0)][ECX] >> _OSXSAVE_BIT & 1
            # Without OSXSAVE, XGETBV is an invalid instruction: never run it then.
            xcr0 = call(_SLOT * 4 * len(_WANTED)) if osxsave else None
    except (OSError, AttributeError, ValueError) as exc:
        log.info("cannot run CPUID: %s", exc)
        return None
    return leaves, xcr0


class _CodePage:
    """Machine code in memory of its own; calling it runs the stub at an offset."""

    def __init__(self, address: int, free: Callable[[], None]) -> None:
        self._address = address
        self._free = free
        self._proto = ctypes.CFUNCTYPE(ctypes.c_uint32)

    def __call__(self, offset: int) -> int:
        return int(self._proto(self._address + offset)())

    def __enter__(self) -> _CodePage:
        return self

    def __exit__(self, *exc: object) -> None:
        self._free()


def _code_page(code: bytes) -> _CodePage:
    return _windows_page(code) if os.name == "nt" else _posix_page(code)


def _posix_page(code: bytes) -> _CodePage:
    import mmap

    size = max(mmap.PAGESIZE, len(code))
    page = mmap.mmap(-1, size, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS,
                     prot=mmap.PROT_READ | mmap.PROT_WRITE)
    page.write(code)
    # The ctypes view only yields the address; it must go before the mapping can close.
    views = [ctypes.c_char.from_buffer(page)]
    address = ctypes.addressof(views[0])
    libc = ctypes.CDLL(None, use_errno=True)
    libc.mprotect.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
    libc.mprotect.restype = ctypes.c_int

    def free() -> None:
        views.clear()
        page.close()

    if libc.mprotect(address, size, mmap.PROT_READ | mmap.PROT_EXEC) != 0:
        free()
        raise OSError(ctypes.get_errno(), "mprotect refused an executable page")
    return _CodePage(address, free)


def _windows_page(code: bytes) -> _CodePage:
    kernel32 = ctypes.WinDLL("kernel32", use_last_error=True)  # type: ignore[attr-defined,unused-ignore]
    dword = ctypes.c_uint32
    kernel32.VirtualAlloc.argtypes = [ctypes.c_void_p, ctypes.c_size_t, dword, dword]
    kernel32.VirtualAlloc.restype = ctypes.c_void_p
    kernel32.VirtualProtect.argtypes = [ctypes.c_void_p, ctypes.c_size_t, dword,
                                        ctypes.POINTER(dword)]
    kernel32.VirtualProtect.restype = ctypes.c_int
    kernel32.VirtualFree.argtypes = [ctypes.c_void_p, ctypes.c_size_t, dword]
    kernel32.VirtualFree.restype = ctypes.c_int
    mem_commit_reserve, mem_release = 0x3000, 0x8000
    page_readwrite, page_execute_read = 0x04, 0x20
    size = max(4096, len(code))
    address = kernel32.VirtualAlloc(None, size, mem_commit_reserve, page_readwrite)
    if not address:
        raise OSError(ctypes.get_last_error(), "VirtualAlloc failed")  # type: ignore[attr-defined,unused-ignore]

    def free() -> None:
        kernel32.VirtualFree(address, 0, mem_release)

    ctypes.memmove(address, code, len(code))
    old = dword(0)
    if not kernel32.VirtualProtect(address, size, page_execute_read, ctypes.byref(old)):
        free()
        raise OSError(ctypes.get_last_error(), "VirtualProtect failed")  # type: ignore[attr-defined,unused-ignore]
    return _CodePage(address, free)
