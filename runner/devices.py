"""`hearth-runner devices`: the ggml backend devices this runner build really sees.

The app detects what the machine has; only the runner knows what its llama.cpp build can use of it
(a CPU-only wheel on a CUDA machine sees no GPU). This asks ggml directly, through ctypes on the
libggml that llama-cpp-python ships, and prints JSON:

    {"devices": [{"name", "description", "type", "free", "total"}], "backends": [...],
     "system_info": "...", "cpu_features": [...], "llama_cpp_version": "..."}
"""

from __future__ import annotations

import argparse
import ctypes
import json
import logging
import sys
from pathlib import Path
from typing import Any

log = logging.getLogger(__name__)

# enum ggml_backend_dev_type (ggml-backend.h); IGPU was inserted before ACCEL in 2025.
DEVICE_TYPES = {0: "cpu", 1: "gpu", 2: "igpu", 3: "accel"}

# system_info keys that are build options, not CPU instruction sets.
_NOT_ISA = {"LLAMAFILE", "OPENMP", "REPACK", "KLEIDIAI", "ACCELERATE", "BLAS", "AARCH64_REPACK"}


class DevicesError(RuntimeError):
    """The runner's llama.cpp libraries could not be loaded or asked for devices."""


def _lib_path(directory: Path, base: str) -> Path:
    for name in (f"lib{base}.so", f"lib{base}.dylib", f"{base}.dll", f"lib{base}.dll"):
        if (directory / name).exists():
            return directory / name
    raise DevicesError(
        f"The runner's ggml library ({base}) is missing from {directory}; reinstall the runner."
    )


class _Ggml:
    """ctypes bindings for the few ggml-backend functions this needs."""

    def __init__(self, lib_dir: Path) -> None:
        # libggml holds the registry (count/get/load_all); libggml-base the device accessors.
        self.ggml = ctypes.CDLL(str(_lib_path(lib_dir, "ggml")))
        self.base = ctypes.CDLL(str(_lib_path(lib_dir, "ggml-base")))
        g, b = self.ggml, self.base
        g.ggml_backend_dev_count.argtypes = []
        g.ggml_backend_dev_count.restype = ctypes.c_size_t
        g.ggml_backend_dev_get.argtypes = [ctypes.c_size_t]
        g.ggml_backend_dev_get.restype = ctypes.c_void_p
        g.ggml_backend_reg_count.argtypes = []
        g.ggml_backend_reg_count.restype = ctypes.c_size_t
        g.ggml_backend_reg_get.argtypes = [ctypes.c_size_t]
        g.ggml_backend_reg_get.restype = ctypes.c_void_p
        b.ggml_backend_reg_name.argtypes = [ctypes.c_void_p]
        b.ggml_backend_reg_name.restype = ctypes.c_char_p
        for fn in (b.ggml_backend_dev_name, b.ggml_backend_dev_description):
            fn.argtypes = [ctypes.c_void_p]
            fn.restype = ctypes.c_char_p
        b.ggml_backend_dev_type.argtypes = [ctypes.c_void_p]
        b.ggml_backend_dev_type.restype = ctypes.c_int
        b.ggml_backend_dev_memory.argtypes = [
            ctypes.c_void_p,
            ctypes.POINTER(ctypes.c_size_t),
            ctypes.POINTER(ctypes.c_size_t),
        ]
        b.ggml_backend_dev_memory.restype = None

    def load_backends(self, lib_dir: Path) -> None:
        """Builds with GGML_BACKEND_DL register nothing until their backend libraries load."""
        fn = getattr(self.ggml, "ggml_backend_load_all_from_path", None)
        if fn is not None:
            fn.argtypes = [ctypes.c_char_p]
            fn.restype = None
            fn(str(lib_dir).encode())
            return
        fn = getattr(self.ggml, "ggml_backend_load_all", None)
        if fn is not None:
            fn.argtypes = []
            fn.restype = None
            fn()

    def backends(self) -> list[str]:
        return [
            _text(self.base.ggml_backend_reg_name(self.ggml.ggml_backend_reg_get(i)))
            for i in range(self.ggml.ggml_backend_reg_count())
        ]

    def devices(self) -> list[dict[str, Any]]:
        out = []
        for i in range(self.ggml.ggml_backend_dev_count()):
            dev = self.ggml.ggml_backend_dev_get(i)
            free, total = ctypes.c_size_t(0), ctypes.c_size_t(0)
            self.base.ggml_backend_dev_memory(dev, ctypes.byref(free), ctypes.byref(total))
            kind = self.base.ggml_backend_dev_type(dev)
            out.append({
                "name": _text(self.base.ggml_backend_dev_name(dev)),
                "description": _text(self.base.ggml_backend_dev_description(dev)),
                "type": DEVICE_TYPES.get(kind, f"other({kind})"),
                "free": int(free.value),
                "total": int(total.value),
            })
        return out


def _text(value: bytes | None) -> str:
    return value.decode("utf-8", "replace") if value else ""


def cpu_features(system_info: str) -> list[str]:
    """CPU instruction sets in llama.cpp's system info (``CPU : AVX = 1 | AVX2 = 1 | ...``)."""
    features: list[str] = []
    in_cpu = False
    for part in system_info.split("|"):
        part = part.strip()
        head, sep, rest = part.partition(" : ")
        if sep and "=" not in head:
            in_cpu = head.strip() == "CPU"
            part = rest
        key, eq, value = part.partition("=")
        if in_cpu and eq and value.strip() == "1" and key.strip() not in _NOT_ISA:
            features.append(key.strip())
    return features


def list_devices() -> dict[str, Any]:
    """The devices and CPU features of this runner build; raises DevicesError if unloadable."""
    try:
        import llama_cpp
    except Exception as exc:  # ImportError, or OSError from a library that fails to load
        raise DevicesError(
            f"llama-cpp-python could not be loaded ({exc}); install the runner's dependencies "
            "(pip install 'hearth[runner]')."
        ) from exc
    lib_dir = Path(llama_cpp.__file__).resolve().parent / "lib"
    try:
        ggml = _Ggml(lib_dir)
        if ggml.ggml.ggml_backend_dev_count() == 0:
            ggml.load_backends(lib_dir)
        devices = ggml.devices()
        backends = ggml.backends()
    except (OSError, AttributeError) as exc:
        raise DevicesError(
            f"The runner's ggml library in {lib_dir} does not answer device queries ({exc}); "
            "it may be from an incompatible llama-cpp-python build."
        ) from exc
    system_info = _text(llama_cpp.llama_print_system_info()).strip()
    return {
        "devices": devices,
        "backends": backends,
        "system_info": system_info,
        "cpu_features": cpu_features(system_info),
        "llama_cpp_version": str(getattr(llama_cpp, "__version__", "")),
    }


def main(argv: list[str]) -> int:
    """`hearth-runner devices [--pretty]`: print the device JSON on stdout."""
    parser = argparse.ArgumentParser(
        prog="hearth-runner devices",
        description="Print the ggml devices and CPU features this runner build can use, as JSON.",
    )
    parser.add_argument("--pretty", action="store_true", help="indent the JSON")
    args = parser.parse_args(argv)
    try:
        data = list_devices()
    except DevicesError as exc:
        print(json.dumps({"error": str(exc)}))
        print(f"hearth-runner devices: {exc}", file=sys.stderr)
        return 1
    print(json.dumps(data, indent=2 if args.pretty else None))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
