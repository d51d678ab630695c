"""Runtimes for real: the portable CPU build (every CPU variant, RPC) that the set-up command
builds into ``.venv/runtimes``, through a real runner: its devices, its self-test, a chat, and
the app's choice among runtimes with a broken one beside it.

Skipped where the runtime has not been built (``python3 installers/build_runtime.py cpu``);
``python3 installers/dev.py test`` (CI) builds it first.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from app.runtimes.catalog import list_runtimes
from app.runtimes.select import RuntimeSelection
from app.runtimes.selftest import SelftestCache, run_selftest
from tests.fixtures.hardware.make_reports import load_report
from tests.integration.conftest import openai_client, running

REPO = Path(__file__).resolve().parents[2]
# What GGML_CPU_ALL_VARIANTS builds on x86 Linux (ggml/src/CMakeLists.txt).
X86_VARIANTS = {"x64", "sse42", "sandybridge", "ivybridge", "piledriver", "haswell", "skylakex",
                "cannonlake", "cascadelake", "icelake", "cooperlake", "zen4", "alderlake",
                "sapphirerapids"}


def portable() -> Path:
    for rt in list_runtimes():
        if rt.name == "cpu-portable" and rt.path is not None and not rt.problem:
            return rt.path
    pytest.skip("the portable CPU runtime is not built: python3 installers/build_runtime.py cpu")


def runner_json(*argv: str) -> tuple[int, dict[str, Any], str]:
    done = subprocess.run([sys.executable, "-m", "runner", *argv], cwd=REPO, capture_output=True,
                          text=True, timeout=120)
    lines = [ln for ln in done.stdout.splitlines() if ln.startswith("{")]
    return done.returncode, json.loads(lines[-1]) if lines else {}, done.stderr


def test_the_portable_runtime_runs_the_best_cpu_variant_and_has_rpc() -> None:
    code, data, err = runner_json("--runtime", str(portable()), "devices")
    assert code == 0, err
    assert data["runtime"]["name"] == "cpu-portable"
    variant = data["cpu_variant"]
    assert variant in X86_VARIANTS if sys.platform == "linux" else variant
    # The variant is the one for this processor: one with AVX2 where the CPU has it.
    flags = Path("/proc/cpuinfo").read_text() if Path("/proc/cpuinfo").exists() else ""
    if " avx2 " in flags:
        assert variant not in {"x64", "sse42", "sandybridge", "ivybridge", "piledriver"}
        assert "AVX2" in data["cpu_features"]
    assert "RPC" in data["backends"] and "CPU" in data["backends"]
    assert [d["type"] for d in data["devices"]].count("cpu") == 1


def test_selftest_of_the_portable_runtime_passes() -> None:
    code, data, err = runner_json("--runtime", str(portable()), "selftest", "--json")
    assert code == 0, err
    assert data["ok"] and data["runtime"]["name"] == "cpu-portable"
    (cpu,) = [d for d in data["devices"] if d["type"] == "cpu"]
    assert cpu["ok"] and cpu["tokens_per_s"] > 0 and cpu["load_s"] >= 0


def test_serves_a_chat_through_the_runtime(tiny_model: Path) -> None:
    folder = portable()
    with running(model=tiny_model, runtime=folder) as r:
        with r.client() as http:
            status = http.get("/runner/status").json()
        assert status["build"]["runtime"]["name"] == "cpu-portable"
        assert status["build"]["cpu_variant"] in X86_VARIANTS | {""}
        with openai_client(r) as client:
            reply = client.chat.completions.create(
                model="m", messages=[{"role": "user", "content": "hello"}], max_tokens=8)
        assert reply.choices[0].message.content


def test_a_runtime_for_other_bindings_is_refused_with_a_clear_message(tmp_path: Path) -> None:
    folder = tmp_path / "old"
    shutil.copytree(portable(), folder, symlinks=True)
    manifest = json.loads((folder / "manifest.json").read_text())
    (folder / "manifest.json").write_text(json.dumps({**manifest, "llama_cpp_python": "0.2.0"}))
    code, _, err = runner_json("--runtime", str(folder), "devices")
    assert code == 2
    assert "built for llama-cpp-python 0.2.0" in err and "build it again" in err


def test_the_app_chooses_the_portable_runtime_and_skips_a_broken_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    good = portable()
    broken = tmp_path / "runtimes" / "cpu-broken"
    (broken / "lib").mkdir(parents=True)
    (broken / "lib" / "libllama.so").write_bytes(b"not a library")
    (broken / "manifest.json").write_text(json.dumps({"name": "cpu-broken", "backend": "cpu"}))
    monkeypatch.setenv("HEARTH_RUNTIME", "auto")
    calls: list[str] = []

    def counted(program: Any, **kw: Any) -> Any:
        calls.append(" ".join(program))
        return run_selftest(program, **kw)

    cache = SelftestCache(tmp_path / "selftests.json")
    folders = [tmp_path / "runtimes", good.parent]
    selection = RuntimeSelection(folders=folders, selftests=cache, selftest=counted)
    choice = selection.select(lambda: load_report("cpu_only_16gb"))
    assert choice.runtime.name == "cpu-portable"
    assert selection.program().argv[-2:] == ["--runtime", str(good)]
    from app.planner import wording

    text = " ".join(wording.texts(choice.reasons))
    assert "Runtime cpu-broken not used: its self-test" in text
    assert "Runtime: cpu-portable (CPU), the portable CPU build" in text
    assert len(calls) == 2
    # A new process: the cached self-tests answer, nothing runs again.
    again = RuntimeSelection(folders=folders, selftests=cache, selftest=counted).select(
        lambda: load_report("cpu_only_16gb"))
    assert again.runtime.name == "cpu-portable" and len(calls) == 2
