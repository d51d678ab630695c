"""The runtime build script's CMake options: what every runtime must have."""

from __future__ import annotations

from pathlib import Path
from types import ModuleType

import pytest

from tests.fixtures.scripts import load_script


def script() -> ModuleType:
    return load_script("build_runtime.py")


@pytest.mark.parametrize("kind", ["cpu", "vulkan", "cuda12", "cuda13", "metal"])
def test_every_runtime_is_portable_loadable_and_has_rpc(kind: str) -> None:
    opts = script().options_for(kind, Path("/hdr"))
    for needed in ("-DGGML_RPC=ON", "-DGGML_RPC_RDMA=OFF", "-DGGML_BACKEND_DL=ON",
                   "-DBUILD_SHARED_LIBS=ON", "-DGGML_NATIVE=OFF", "-DLLAMA_BUILD_APP=OFF"):
        assert needed in opts
    variants = "-DGGML_CPU_ALL_VARIANTS=ON" in opts
    assert variants == (kind == "cpu")  # Apple Silicon has one CPU to build for
    # GPU runtimes take the portable build's CPU modules instead of compiling them again.
    assert ("-DGGML_CPU=OFF" in opts) == (kind not in ("cpu", "metal"))
    assert any(o.startswith("-DCMAKE_INSTALL_RPATH=") for o in opts)
    if kind == "vulkan":
        assert "-DVulkan_INCLUDE_DIR=/hdr" in opts
    if kind.startswith("cuda"):
        assert "-DGGML_CUDA=ON" in opts


def test_an_unknown_kind_is_refused() -> None:
    with pytest.raises(ValueError):
        script().options_for("rocm")
