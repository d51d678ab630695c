"""Runtimes for real: the portable CPU build (every CPU variant, RPC) that the set-up command
builds into ``.venv/runtimes``, through a real runner: its devices, its self-test, a chat, an
image through the runtime's own libmtmd, and the app's choice among runtimes with a broken one
beside it.

Skipped where the runtime has not been built (``python3 installers/build_runtime.py cpu``);
``python3 installers/dev.py test`` (CI) builds it first.
"""

from __future__ import annotations

import base64
import importlib.util
import json
import re
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
from tests.fixtures.vision import VISION_PROJECTOR, png_bytes, vision_pair
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


def mapped_libraries(pid: int) -> set[Path]:
    """The llama.cpp libraries (libllama, libggml*, libmtmd) mapped into a process, by file."""
    found = set()
    for line in Path(f"/proc/{pid}/maps").read_text().splitlines():
        fields = line.split(maxsplit=5)
        if len(fields) == 6 and re.search(r"/lib(llama|ggml|mtmd)[\w.-]*\.so", fields[5]):
            found.add(Path(fields[5]))
    return found


@pytest.mark.skipif(sys.platform != "linux", reason="reads /proc/<pid>/maps")
def test_an_image_goes_through_the_runtimes_own_libmtmd_and_one_ggml() -> None:
    folder = portable()
    model, projector = vision_pair()
    counts = []
    with running("--mmproj", str(projector), "--ctx-size", "512", "--seed", "1", model=model,
                 runtime=folder) as r:
        with openai_client(r) as client:
            for image in (None, png_bytes(32, 32, (255, 0, 0))):
                parts: list[dict[str, Any]] = [{"type": "text", "text": "what is this"}]
                if image is not None:
                    url = "data:image/png;base64," + base64.b64encode(image).decode()
                    parts.append({"type": "image_url", "image_url": {"url": url}})
                messages: list[dict[str, Any]] = [{"role": "user", "content": parts}]
                reply = client.chat.completions.create(
                    model="m", messages=messages,  # type: ignore[arg-type]
                    max_tokens=8, temperature=0, seed=1)
                assert reply.choices[0].finish_reason in ("stop", "length")
                with r.client() as http:
                    status = http.get("/runner/status").json()
                counts.append(status["last_request"]["prompt_tokens"])
        mapped = mapped_libraries(r.pid)
    assert status["build"]["runtime"]["name"] == "cpu-portable"
    assert status["vision"]["projector"].endswith(".gguf")
    # The image's tokens reached the model (and the template's wrapping of them).
    assert counts[1] >= counts[0] + VISION_PROJECTOR.tokens_per_image
    # Every llama.cpp library in the process is the runtime's: libmtmd linked to its ggml, not
    # the wheel's copies (a second ggml would have its own, empty, backend registry).
    lib = (folder / "lib").resolve()
    spec = importlib.util.find_spec("llama_cpp")
    assert spec is not None and spec.origin is not None
    wheel = Path(spec.origin).resolve().parent / "lib"
    assert not [p for p in mapped if p.is_relative_to(wheel)], sorted(mapped)
    assert {p.parent for p in mapped} == {lib}, sorted(mapped)
    for name in ("libmtmd", "libllama", "libggml", "libggml-base"):
        copies = [p for p in mapped if re.fullmatch(re.escape(name) + r"\.so[\d.]*", p.name)]
        assert len(copies) == 1, (name, sorted(mapped))
    assert [p for p in mapped if p.name.startswith("libggml-cpu-")], sorted(mapped)


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
