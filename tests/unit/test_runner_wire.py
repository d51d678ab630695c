"""runner.wire: the rules the app and the runner share, standard library only.

The app chooses a runtime from its hardware report and self-tests; ``hearth-runner`` started
without ``--runtime`` chooses with the same rules from a plain look at the machine. For the
recorded machines both must see the same machine and choose the same runtime.
"""

from __future__ import annotations

import json
import os
import pkgutil
import subprocess
import sys
import tomllib
from importlib import metadata
from pathlib import Path
from typing import Any

import pytest

import runner
from app.hardware.report import HardwareReport
from app.runtimes import catalog
from app.runtimes.choose import choose as app_choose
from app.runtimes.choose import machine_of
from app.runtimes.choose import ranked as app_ranked
from app.runtimes.selftest import SelftestCache, SelftestResult
from runner import runtime as runner_runtime
from runner.nvidia import NvidiaDriver
from runner.wire import choose as rules
from runner.wire import runtimes as wire
from tests.fixtures.hardware.make_reports import load_report

REPO = Path(__file__).resolve().parents[2]
MACHINES = ["2x3090", "cpu_only_16gb", "h100_80gb", "m2pro_16gb", "rtx3060_laptop",
            "rtx4090_24gb", "rx7900xtx"]
SYSFS = REPO / "tests" / "fixtures" / "hardware" / "sysfs"
PCI = {"nvidia": 0x10DE, "amd": 0x1002, "intel": 0x8086}
BINDINGS = metadata.version("llama-cpp-python")
# The manifests installers/build_runtime.py writes (its MIN_DRIVER for the CUDA ones).
KINDS: dict[str, dict[str, Any]] = {
    "cpu-portable": {"backend": "cpu"},
    "vulkan": {"backend": "vulkan"},
    "metal": {"backend": "metal"},
    "cuda12": {"backend": "cuda", "min_driver": "525.60.13", "cuda_major": 12},
    "cuda13": {"backend": "cuda", "min_driver": "580.65.06", "cuda_major": 13},
}
SETS = {
    "all": ["cpu-portable", "vulkan", "metal", "cuda12", "cuda13"],
    "cuda13+cpu": ["cuda13", "cpu-portable"],
    "vulkan+cpu": ["vulkan", "cpu-portable"],
    "cpu": ["cpu-portable"],
    "none": [],
}


def make_runtime(parent: Path, name: str, lib: bool = True, **manifest: Any) -> Path:
    """A runtime folder in build_runtime.py's format (a stand-in library file)."""
    folder = parent / name
    (folder / "lib").mkdir(parents=True)
    data = {"format": 1, "name": name, "llama_cpp_python": BINDINGS, "min_driver": "",
            "cuda_major": 0, "platform": "linux-x86_64", **KINDS.get(name, {}), **manifest}
    (folder / "manifest.json").write_text(json.dumps(data))
    if lib:
        (folder / "lib" / "libllama.so").write_bytes(b"\x7fELF")
    return folder


def runner_sees(report: HardwareReport, root: Path) -> rules.Machine:
    """What the runner's plain look finds on the recorded machine: the kernel's list of display
    devices (sysfs, or the registry on Windows), the NVIDIA driver, the system and processor."""
    system = {"Linux": "Linux", "macOS": "Darwin", "Windows": "Windows"}[report.os.name]
    adapters: list[tuple[int, str]] = []
    driver = None
    for i, gpu in enumerate(report.gpus):
        vendor = PCI.get(gpu.vendor.lower())
        if vendor is None:
            continue
        adapters.append((vendor, gpu.name))
        if system == "Linux":
            card = root / f"sys/class/drm/card{i}/device"
            card.mkdir(parents=True)
            (card / "vendor").write_text(f"0x{vendor:04x}\n")
        if gpu.vendor == "nvidia":
            major, minor = (int(p) for p in str(gpu.cuda_driver_version).split("."))
            driver = NvidiaDriver(gpu.driver_version or "", (major, minor))
            if system == "Linux":
                info = root / f"proc/driver/nvidia/gpus/0000:0{i + 1}:00.0"
                info.mkdir(parents=True)
                (info / "information").write_text(f"Model: \t\t {gpu.name}\nIRQ:   \t\t 190\n")
    return runner_runtime.this_machine(
        driver, system=system, arch=report.cpu.arch, root=root,
        adapters=adapters if system == "Windows" else None)


@pytest.mark.parametrize("machine", MACHINES)
def test_the_runner_sees_the_recorded_machine_as_the_app_does(
        machine: str, tmp_path: Path) -> None:
    report = load_report(machine)
    assert runner_sees(report, tmp_path) == machine_of(report)


@pytest.mark.parametrize("installed", list(SETS))
@pytest.mark.parametrize("machine", MACHINES)
def test_the_app_and_the_runner_choose_the_same_runtime(
        machine: str, installed: str, tmp_path: Path) -> None:
    folder = tmp_path / "runtimes"
    folder.mkdir()
    for name in SETS[installed]:
        make_runtime(folder, name)
    make_runtime(folder, "broken-cpu", lib=False, backend="cpu")
    report = load_report(machine)
    runtimes = catalog.list_runtimes([folder])

    app = app_choose(report, runtimes, lambda rt: None)
    seen = runner_sees(report, tmp_path / "root")
    check = runner_runtime.light_check(None if seen.cuda_major == 0 else NvidiaDriver(
        "999.0", (seen.cuda_major, 0)), vulkan_loader=lambda: True)
    ran = runner_runtime.decide(None, env={}, folders=[folder], machine=seen, check=check)
    assert ran.runtime == app.runtime, (ran.notes, app.reasons)
    assert [n.text() for n in ran.notes if n.code == rules.SKIPPED] == [
        n.text() for n in (rules.Note(r.code, {k: str(v) for k, v in r.params.items()})
                           for r in app.reasons) if n.code == rules.SKIPPED]
    order, _ = app_ranked(report, runtimes)
    assert [r.name for r in rules.ranked(seen, runtimes)[0]] == [r.name for r in order]


def test_both_take_the_wish_in_hearth_runtime_first(tmp_path: Path) -> None:
    folder = tmp_path / "runtimes"
    for name in SETS["all"]:
        make_runtime(folder, name)
    report = load_report("rtx4090_24gb")
    runtimes = catalog.list_runtimes([folder])
    seen = runner_sees(report, tmp_path / "root")
    for wanted in ("cpu-portable", "built-in"):
        app = app_choose(report, runtimes, lambda rt: None, wanted)
        ran = runner_runtime.decide(None, env={"HEARTH_RUNTIME": wanted}, folders=[folder],
                                    machine=seen, check=lambda rt: None)
        assert ran.runtime == app.runtime and app.runtime.name == wanted
        assert "HEARTH_RUNTIME" in ran.why
    auto = runner_runtime.decide("auto", env={"HEARTH_RUNTIME": "built-in"}, folders=[folder],
                                 machine=seen, check=lambda rt: None)
    assert auto.runtime.name == "cuda12"  # --runtime auto: the machine decides, not the wish


def test_the_runner_reads_the_recorded_laptop_sysfs(tmp_path: Path) -> None:
    recorded = json.loads((SYSFS / "intel_nvidia_laptop.json").read_text())
    for rel, text in recorded.items():
        if not rel.startswith("_"):
            (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
            (tmp_path / rel).write_text(text)
    # No NVIDIA driver: nouveau drives the card, Vulkan can, CUDA cannot.
    bare = runner_runtime.this_machine(None, system="Linux", arch="x86_64", root=tmp_path)
    assert bare.gpu_vendors == {"intel", "nvidia"} and bare.cuda_major == 0
    assert not bare.apple_silicon
    with_driver = runner_runtime.this_machine(NvidiaDriver("580.95.05", (13, 0)), system="Linux",
                                              arch="x86_64", root=tmp_path)
    assert with_driver.cuda_major == 13
    # A driver library without an NVIDIA GPU (a container, a removed card) is not a GPU.
    empty = tmp_path / "empty"
    empty.mkdir()
    assert runner_runtime.this_machine(NvidiaDriver("580.95.05", (13, 0)), system="Linux",
                                       arch="x86_64", root=empty).gpu_vendors == frozenset()


def test_the_runner_skips_what_it_can_tell_will_not_run(tmp_path: Path) -> None:
    folder = tmp_path / "runtimes"
    make_runtime(folder, "cuda13")
    make_runtime(folder, "vulkan")
    make_runtime(folder, "cpu-old", backend="cpu", llama_cpp_python="0.2.0")
    make_runtime(folder, "cpu-portable")
    seen = rules.Machine(frozenset({"nvidia"}), 0, gpu_names=("NVIDIA GeForce RTX 4090",))
    old_driver = NvidiaDriver("550.120", None)  # the CUDA version unknown: min_driver decides
    check = runner_runtime.light_check(old_driver, vulkan_loader=lambda: False)
    choice = runner_runtime.decide(None, env={}, folders=[folder], machine=seen, check=check)
    assert choice.runtime.name == "cpu-portable"
    texts = " ".join(n.text() for n in choice.notes)
    assert "runtime cuda13 not used: This NVIDIA driver is 550.120; the CUDA 13 runtime needs " \
           "580.65.06 or newer" in texts
    assert "runtime vulkan not used: the Vulkan loader" in texts
    assert f"runtime cpu-old not used: it was built for llama-cpp-python 0.2.0 and this " \
           f"runner has {BINDINGS}" in texts
    assert choice.notes[-1].text() == ("runtime chosen: cpu-portable (CPU) because the portable "
                                       "CPU build, tuned for this processor at run time")


def test_an_explicit_runtime_is_taken_as_given_never_chosen(tmp_path: Path) -> None:
    folder = tmp_path / "runtimes"
    make_runtime(folder, "cuda13")
    portable = make_runtime(folder, "cpu-portable")
    seen = rules.Machine(frozenset({"nvidia"}), 13)

    def never(rt: wire.Runtime) -> rules.Verdict:
        raise AssertionError("a runtime given is not checked or ranked")

    env = {"HEARTH_RUNTIME": "cuda13"}
    for given in ("built-in", "builtin"):
        choice = runner_runtime.decide(given, env=env, folders=[folder], machine=seen, check=never)
        assert choice.runtime is wire.BUILTIN and "given with --runtime" in choice.why
    by_name = runner_runtime.decide("cpu-portable", env=env, folders=[folder], machine=seen,
                                    check=never)
    assert by_name.runtime.path == portable
    by_folder = runner_runtime.decide(str(portable), env=env, folders=[], machine=seen,
                                      check=never)
    assert by_folder.runtime.path == portable and by_folder.why == "given with --runtime"
    with pytest.raises(runner_runtime.RuntimeUnusable, match="no runtime named rocm"):
        runner_runtime.decide("rocm", env=env, folders=[folder], machine=seen, check=never)


def test_the_wire_modules_import_only_the_standard_library() -> None:
    code = ("import json, sys; import runner.wire.runtimes, runner.wire.choose; "
            "print(json.dumps(sorted(sys.modules)))")
    done = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True,
                          text=True, timeout=60, check=True)
    loaded = {m.split(".")[0] for m in json.loads(done.stdout)}
    foreign = {m for m in loaded - set(sys.stdlib_module_names) - {"runner"}
               if not m.startswith("_")}
    assert not foreign, foreign
    ours = {m for m in json.loads(done.stdout) if m.startswith("runner")}
    assert ours == {"runner", "runner.wire", "runner.wire.runtimes", "runner.wire.choose"}


def test_the_app_may_import_only_the_wire_module_of_the_runner() -> None:
    """The contract names every runner module but the wire one: a new module is forbidden to
    the app from its first day."""
    contracts = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["importlinter"][
        "contracts"]
    (app_side,) = [c for c in contracts if c.get("source_modules") == ["app", "app.**"]
                   and "runner" in c.get("forbidden_modules", [])]
    modules = {f"runner.{m.name}" for m in pkgutil.iter_modules(runner.__path__)}
    assert set(app_side["forbidden_modules"]) == {"runner"} | modules - {"runner.wire"}
    assert not any("ignore_imports" in c for c in contracts)


def test_the_user_runtimes_folder_is_the_apps(monkeypatch: pytest.MonkeyPatch,
                                              tmp_path: Path) -> None:
    from app.paths import runtimes_dir

    assert wire.user_runtimes_dir() == runtimes_dir()  # HEARTH_HOME, as every test sets
    monkeypatch.delenv("HEARTH_HOME")
    monkeypatch.setenv("HOME", str(tmp_path))
    for xdg in (None, str(tmp_path / "xdg"), "relative/ignored"):
        if xdg is None:
            monkeypatch.delenv("XDG_DATA_HOME", raising=False)
        else:
            monkeypatch.setenv("XDG_DATA_HOME", xdg)
        assert wire.user_runtimes_dir() == runtimes_dir(), xdg
    assert catalog.runtime_folders()[-1] == wire.runtime_folders()[-1]
    extra = str(tmp_path / "a") + os.pathsep + str(tmp_path / "b")
    env = {"HEARTH_RUNTIMES": extra}
    assert catalog.runtime_folders(env)[:2] == wire.runtime_folders(env)[:2] == [
        tmp_path / "a", tmp_path / "b"]


def test_the_app_names_the_built_in_runtime_where_the_runner_could_choose_another(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A runner given no --runtime chooses for itself: when the app's choice is the built-in
    runtime although the runner would find another (its self-test failed, or the settings ask
    for the built-in one), the app says so on the runner's command line."""
    from app.runtimes.select import RuntimeSelection

    folder = tmp_path / "runtimes"
    make_runtime(folder, "cpu-portable")
    monkeypatch.setenv("HEARTH_RUNTIMES", str(folder))  # where a runner looks, too
    failed = SelftestResult(False, error="illegal instruction")
    cache = SelftestCache(tmp_path / "selftests.json")

    selection = RuntimeSelection(selftests=cache, selftest=lambda program, **kw: failed)

    def chosen() -> wire.Runtime:
        selection.forget()
        return selection.select(lambda: load_report("cpu_only_16gb")).runtime

    monkeypatch.setenv("HEARTH_RUNTIME", "auto")
    assert chosen().builtin  # the portable runtime failed its self-test
    assert selection.program().argv[-1] == "--runtime=built-in"
    selection.want("built-in")  # the settings' choice, which the runner cannot see
    assert chosen().builtin and selection.program().argv[-1] == "--runtime=built-in"
    selection.want(None)
    monkeypatch.setenv("HEARTH_RUNTIME", "built-in")  # the runner reads it too
    assert chosen().builtin
    assert not any(a.startswith("--runtime") for a in selection.program().argv)


def test_the_app_may_import_only_the_wire_module_of_the_mcp_host() -> None:
    """The same for the MCP host (mcphost/): every module but its wire one is named."""
    import mcphost

    contracts = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["importlinter"][
        "contracts"]
    (app_side,) = [c for c in contracts if c.get("source_modules") == ["app", "app.**"]
                   and "mcphost" in c.get("forbidden_modules", [])]
    modules = {f"mcphost.{m.name}" for m in pkgutil.iter_modules(mcphost.__path__)}
    assert set(app_side["forbidden_modules"]) == {"mcphost"} | modules - {"mcphost.wire"}
