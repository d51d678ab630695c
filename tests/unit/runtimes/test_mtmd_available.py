"""Whether the runner can load libmtmd (images) from the llama.cpp it serves with, asked before a
projector is loaded: a runtime built before libmtmd says to build it again."""

from __future__ import annotations

from pathlib import Path

import pytest

from runner import runtime
from tests.unit.runtimes.fakes import install_runtimes


def serve_with(monkeypatch: pytest.MonkeyPatch, folder: Path | None) -> None:
    """As runtime.use(folder) leaves it (None: the built-in), without touching os.environ."""
    chosen = None if folder is None else {**runtime.read_manifest(folder), "path": str(folder)}
    monkeypatch.setattr(runtime, "_chosen", chosen)


def test_a_runtime_built_without_libmtmd_says_to_build_it_again(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    folder = install_runtimes(tmp_path)["cpu-portable"]
    serve_with(monkeypatch, folder)
    assert runtime.mtmd_available(env={}) == (
        f"the runtime in {folder} was built without image support (libmtmd); build it again "
        "with installers/build_runtime.py.")
    # Its own folder decides, whatever MTMD_CPP_LIB says (use() points that at it anyway).
    assert runtime.mtmd_available(env={"MTMD_CPP_LIB": str(tmp_path)}) is not None


@pytest.mark.parametrize("name", runtime.MTMD_LIBRARIES)
def test_a_runtime_with_libmtmd_serves_images(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                              name: str) -> None:
    folder = install_runtimes(tmp_path)["vulkan"]
    (folder / "lib" / name).write_bytes(b"\x7fELF")
    serve_with(monkeypatch, folder)
    assert runtime.mtmd_available(env={}) is None


def test_the_builtin_libraries_are_looked_at_where_mtmd_cpp_loads_them(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    serve_with(monkeypatch, None)
    wheel = tmp_path / "llama_cpp" / "lib"
    wheel.mkdir(parents=True)
    monkeypatch.setattr(runtime, "_builtin_lib", lambda: wheel)
    problem = runtime.mtmd_available(env={})
    assert problem is not None and str(wheel) in problem and "libmtmd" in problem
    (wheel / "libmtmd.so").write_bytes(b"\x7fELF")
    assert runtime.mtmd_available(env={}) is None
    # MTMD_CPP_LIB moves llama_cpp.mtmd_cpp elsewhere: that folder is the one that counts.
    assert runtime.mtmd_available(env={"MTMD_CPP_LIB": str(tmp_path)}) is not None
    monkeypatch.setattr(runtime, "_builtin_lib", lambda: None)
    assert "not installed" in (runtime.mtmd_available(env={}) or "")


def test_the_installed_wheel_is_found_without_importing_it() -> None:
    lib = runtime._builtin_lib()
    assert lib is not None and lib.name == "lib" and lib.parent.name == "llama_cpp"
    # llama-cpp-python's wheel (the built-in runtime) ships libmtmd.
    assert runtime.mtmd_problem(lib) is None
