"""`hearth-runner devices`: the ggml backend devices this runner build really sees.

The app detects what the machine has; only the runner knows what its llama.cpp build can use of it
(a CPU-only wheel on a CUDA machine sees no GPU). This asks ggml directly, through ctypes on the
llama.cpp libraries the runner loaded (runner/runtime.py), and prints JSON:

    {"devices": [{"name", "description", "type", "free", "total"}], "backends": [...],
     "system_info": "...", "cpu_features": [...], "cpu_variant": "haswell",
     "runtime": {"name", "backend", "path", ...}, "llama_cpp_version": "..."}
"""

from __future__ import annotations

import argparse
import ctypes
import json
import logging
import sys
from typing import Any

log = logging.getLogger(__name__)

# enum ggml_backend_dev_type (ggml-backend.h); IGPU was inserted before ACCEL in 2025.
DEVICE_TYPES = {0: "cpu", 1: "gpu", 2: "igpu", 3: "accel"}

# system_info keys that are build options, not CPU instruction sets.
_NOT_ISA = {"LLAMAFILE", "OPENMP", "REPACK", "KLEIDIAI", "ACCELERATE", "BLAS", "AARCH64_REPACK"}


class DevicesError(RuntimeError):
    """The runner's llama.cpp libraries could not be loaded or asked for devices."""


class _Ggml:
    """ctypes bindings for the few ggml-backend functions this needs, on libllama's handle.

    Not on ``libggml.so`` opened by path: that would be a second ggml with a registry of its own
    (runner/runtime.py), blind to the backends llama loaded.
    """

    def __init__(self, handle: ctypes.CDLL) -> None:
        h = self.h = handle
        h.ggml_backend_dev_count.argtypes = []
        h.ggml_backend_dev_count.restype = ctypes.c_size_t
        h.ggml_backend_dev_get.argtypes = [ctypes.c_size_t]
        h.ggml_backend_dev_get.restype = ctypes.c_void_p
        h.ggml_backend_reg_count.argtypes = []
        h.ggml_backend_reg_count.restype = ctypes.c_size_t
        h.ggml_backend_reg_get.argtypes = [ctypes.c_size_t]
        h.ggml_backend_reg_get.restype = ctypes.c_void_p
        h.ggml_backend_reg_name.argtypes = [ctypes.c_void_p]
        h.ggml_backend_reg_name.restype = ctypes.c_char_p
        for fn in (h.ggml_backend_dev_name, h.ggml_backend_dev_description):
            fn.argtypes = [ctypes.c_void_p]
            fn.restype = ctypes.c_char_p
        h.ggml_backend_dev_backend_reg.argtypes = [ctypes.c_void_p]
        h.ggml_backend_dev_backend_reg.restype = ctypes.c_void_p
        h.ggml_backend_dev_type.argtypes = [ctypes.c_void_p]
        h.ggml_backend_dev_type.restype = ctypes.c_int
        h.ggml_backend_dev_memory.argtypes = [
            ctypes.c_void_p,
            ctypes.POINTER(ctypes.c_size_t),
            ctypes.POINTER(ctypes.c_size_t),
        ]
        h.ggml_backend_dev_memory.restype = None

    def backends(self) -> list[str]:
        h = self.h
        return [_text(h.ggml_backend_reg_name(h.ggml_backend_reg_get(i)))
                for i in range(h.ggml_backend_reg_count())]

    def devices(self) -> list[dict[str, Any]]:
        h = self.h
        out = []
        for i in range(h.ggml_backend_dev_count()):
            dev = h.ggml_backend_dev_get(i)
            free, total = ctypes.c_size_t(0), ctypes.c_size_t(0)
            h.ggml_backend_dev_memory(dev, ctypes.byref(free), ctypes.byref(total))
            kind = h.ggml_backend_dev_type(dev)
            entry: dict[str, Any] = {
                "name": _text(h.ggml_backend_dev_name(dev)),
                "description": _text(h.ggml_backend_dev_description(dev)),
                "type": DEVICE_TYPES.get(kind, f"other({kind})"),
                "free": int(free.value),
                "total": int(total.value),
            }
            if _text(h.ggml_backend_reg_name(h.ggml_backend_dev_backend_reg(dev))) == "RPC":
                # A device of an RPC worker: llama.cpp describes it by the worker's address.
                entry["worker"] = entry["description"]
            out.append(entry)
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
    from runner import runtime

    try:
        llama_cpp = runtime.llama()
    except runtime.RuntimeUnusable as exc:
        raise DevicesError(str(exc)) from exc
    except Exception as exc:  # ImportError, or OSError from a library that fails to load
        raise DevicesError(
            f"llama-cpp-python could not be loaded ({exc}); install the runner's dependencies "
            "(pip install 'hearth[runner]'), or build the runtime again."
        ) from exc
    try:
        ggml = _Ggml(runtime.lib())
        devices = ggml.devices()
        backends = ggml.backends()
    except (OSError, AttributeError) as exc:
        raise DevicesError(
            f"The runner's llama.cpp libraries do not answer device queries ({exc}); they may "
            "be from an incompatible build."
        ) from exc
    system_info = _text(llama_cpp.llama_print_system_info()).strip()
    return {
        "devices": devices,
        "backends": backends,
        "system_info": system_info,
        "cpu_features": cpu_features(system_info),
        "cpu_variant": runtime.cpu_variant(),
        "runtime": runtime.chosen(),
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
