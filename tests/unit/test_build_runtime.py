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


@pytest.mark.parametrize("with_server", [False, True])
@pytest.mark.parametrize("kind", ["cpu", "vulkan", "cuda12", "cuda13", "metal"])
def test_every_runtime_builds_libmtmd_without_video(kind: str, with_server: bool) -> None:
    """Images go through libmtmd linked to the runtime's own ggml; video would need ffmpeg."""
    build = script()
    opts = build.options_for(kind, Path("/hdr"), with_server=with_server)
    tools_and_common = {"-DLLAMA_BUILD_TOOLS=ON", "-DLLAMA_BUILD_COMMON=ON"} <= set(opts)
    # tools/mtmd comes in standalone, or with the tools (llama-server's build).
    assert "-DLLAMA_BUILD_MTMD=ON" in opts or tools_and_common
    assert tools_and_common == with_server
    assert "-DMTMD_VIDEO=OFF" in opts
    # Named targets: what is built, and only that. The backend modules come with ``ggml``.
    targets = build.targets_for(with_server)
    assert {"llama", "mtmd"} <= set(targets)
    assert ("llama-server" in targets) == with_server


def test_a_switch_is_given_once() -> None:
    """CMake takes the last of two contradicting -D options: none may be left to that."""
    for kind in ("cpu", "vulkan", "cuda13", "metal"):
        for with_server in (False, True):
            opts = script().options_for(kind, Path("/hdr"), with_server=with_server)
            switches = [o.split("=")[0] for o in opts]
            assert len(switches) == len(set(switches)), opts


def test_an_unknown_kind_is_refused() -> None:
    with pytest.raises(ValueError):
        script().options_for("rocm")
