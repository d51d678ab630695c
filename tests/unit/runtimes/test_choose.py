"""Which runtime a machine gets: ranked from recorded hardware reports, self-tests as a lookup."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from app.planner import wording
from app.runtimes.catalog import BUILTIN, Runtime, find, list_runtimes
from app.runtimes.choose import choose, ranked
from app.runtimes.selftest import SelftestCache, SelftestResult, parse
from tests.fixtures.hardware.make_reports import load_report

CUDA12 = Runtime("cuda12", "cuda", Path("/rt/cuda12"), min_driver="525.60.13", cuda_major=12)
CUDA13 = Runtime("cuda13", "cuda", Path("/rt/cuda13"), min_driver="580.65.06", cuda_major=13)
VULKAN = Runtime("vulkan", "vulkan", Path("/rt/vulkan"))
METAL = Runtime("metal", "metal", Path("/rt/metal"))
CPU = Runtime("cpu-portable", "cpu", Path("/rt/cpu-portable"))
ALL = [CPU, VULKAN, CUDA12, CUDA13, METAL]

PASS = SelftestResult(True, parse({"ok": True, "devices": [
    {"device": "GPU0", "description": "x", "type": "gpu", "ok": True, "tokens_per_s": 900}]}
).devices)


def names(rts: list[Runtime]) -> list[str]:
    return [r.name for r in rts]


@pytest.mark.parametrize("machine, expected", [
    # driver 550 supports CUDA 12.4: CUDA 13 is left out, Vulkan is the GPU's second chance
    ("rtx4090_24gb", ["cuda12", "vulkan", "cpu-portable", "built-in"]),
    ("m2pro_16gb", ["metal", "cpu-portable", "built-in"]),
    ("rx7900xtx", ["vulkan", "cpu-portable", "built-in"]),
    ("cpu_only_16gb", ["cpu-portable", "built-in"]),
])
def test_ranked_by_the_hardware(machine: str, expected: list[str]) -> None:
    order, _ = ranked(load_report(machine), ALL)
    assert names(order) == expected


def test_a_driver_too_old_for_cuda_13_is_explained() -> None:
    _, notes = ranked(load_report("rtx4090_24gb"), ALL)
    text = " ".join(wording.texts(notes))
    assert "Runtime cuda13 not used: it needs CUDA 13 (NVIDIA driver 580.65.06 or newer)" in text
    assert "supports CUDA 12: update the NVIDIA driver" in text


def test_a_failed_self_test_skips_to_the_next_with_the_reason() -> None:
    tested: list[str] = []

    def selftest(rt: Runtime) -> SelftestResult:
        tested.append(rt.name)
        if rt.name == "cuda12":
            return parse({"ok": False, "devices": [
                {"device": "CUDA0", "description": "NVIDIA GeForce RTX 4090", "type": "gpu",
                 "ok": False, "error": "CUDA error: no kernel image is available"}]})
        return PASS

    choice = choose(load_report("rtx4090_24gb"), ALL, selftest)
    assert choice.runtime.name == "vulkan"
    assert tested == ["cuda12", "vulkan"]
    text = " ".join(wording.texts(choice.reasons))
    assert ("Runtime cuda12 not used: its self-test failed on CUDA0 (NVIDIA GeForce RTX 4090): "
            "CUDA error: no kernel image is available.") in text
    assert "Runtime: vulkan, it drives this machine's GPU (NVIDIA GeForce RTX 4090)" \
        in text
    assert "self-test passed (GPU0 900 tokens/s)" in text


def test_nothing_passes_the_built_in_runtime_serves() -> None:
    choice = choose(load_report("cpu_only_16gb"), ALL,
                    lambda rt: SelftestResult(False, error="illegal instruction"))
    assert choice.runtime is BUILTIN
    text = " ".join(wording.texts(choice.reasons))
    assert "Runtime cpu-portable not used: its self-test could not start it: illegal " \
           "instruction." in text
    assert "Runtime: built-in, no better runtime passed its self-test." in text


def test_only_the_built_in_runtime_is_not_self_tested() -> None:
    def never(rt: Runtime) -> SelftestResult:
        raise AssertionError("nothing to choose between: no self-test")

    choice = choose(load_report("rtx4090_24gb"), [BUILTIN], never)
    assert choice.runtime is BUILTIN and choice.args == ()
    assert "the only runtime installed" in wording.texts(choice.reasons)[-1]


def test_the_users_choice_goes_first_but_must_still_pass() -> None:
    report = load_report("rtx4090_24gb")
    picked = choose(report, ALL, lambda rt: PASS, wanted="cpu-portable")
    assert picked.runtime == CPU and picked.args == ("--runtime", "/rt/cpu-portable")
    assert "your choice" in wording.texts(picked.reasons)[-1]
    broken = choose(report, ALL, lambda rt: SelftestResult(False, error="boom")
                    if rt.name == "cpu-portable" else PASS, wanted="cpu-portable")
    assert broken.runtime.name == "cuda12"
    missing = choose(report, ALL, lambda rt: PASS, wanted="rocm")
    assert any("Runtime rocm not used: it is not installed" in t
               for t in wording.texts(missing.reasons))


def make_runtime(parent: Path, name: str, backend: str, lib: bool = True) -> Path:
    folder = parent / name
    (folder / "lib").mkdir(parents=True)
    (folder / "manifest.json").write_text(json.dumps({"name": name, "backend": backend,
                                                      "llama_cpp_python": "0.3.36"}))
    if lib:
        (folder / "lib" / "libllama.so").write_bytes(b"\x7fELF")
    return folder


def test_catalog_lists_folders_first_wins_and_broken_ones_say_why(tmp_path: Path) -> None:
    a, b = tmp_path / "a", tmp_path / "b"
    make_runtime(a, "cpu-portable", "cpu")
    make_runtime(b, "cpu-portable", "cpu")  # the same name later: shadowed
    make_runtime(b, "vulkan", "vulkan", lib=False)
    (b / "junk").mkdir()
    (b / "bad").mkdir()
    (b / "bad" / "manifest.json").write_text("{not json")
    found = list_runtimes([a, b, tmp_path / "missing"])
    assert names(found) == ["cpu-portable", "bad", "vulkan", "built-in"]
    assert found[0].path == a / "cpu-portable"
    assert "manifest cannot be read" in found[1].problem
    assert "has no llama library" in found[2].problem
    order, notes = ranked(load_report("rx7900xtx"), found)
    assert names(order) == ["cpu-portable", "built-in"]  # the broken Vulkan is not tried
    assert any("Runtime vulkan not used: it has no llama library" in t
               for t in wording.texts(notes))
    assert find(found, str(a / "cpu-portable")) == found[0]
    assert find(found, "nothing") is None


def test_selftest_cache_is_keyed_by_fingerprint_and_driver(tmp_path: Path) -> None:
    cache = SelftestCache(tmp_path / "selftests.json")
    key = cache.key("fp1", "nvidia:RTX:550.120")
    cache.put("cuda12", key, PASS)
    assert cache.get("cuda12", key) == PASS
    assert cache.get("cuda12", cache.key("fp1", "nvidia:RTX:560.35")) is None  # new driver
    assert cache.get("cuda12", cache.key("fp2", "nvidia:RTX:550.120")) is None  # rebuilt
    (tmp_path / "selftests.json").write_text("garbage")
    assert cache.get("cuda12", key) is None


def test_malformed_selftest_output_is_a_failure_not_a_crash() -> None:
    assert not parse(None).ok
    assert not parse({"ok": True, "devices": []}).ok  # no device tested proves nothing
    assert not parse({"ok": True, "devices": [{"ok": False}]}).ok
    assert parse({"ok": False, "error": "no backend"}).why_not() == \
        "its self-test could not start it: no backend"
