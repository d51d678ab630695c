"""The Linux package, end to end: freeze, build the .deb, install it into a temporary root,
start the installed app, plan and chat through the installed runner and model server,
uninstall.

Slow (PyInstaller takes about two minutes on 2 cores); skipped where dpkg or PyInstaller is
missing. The portable CPU runtime must have been built (installers/dev.py does it).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.fixtures.dpkg import dpkg, empty_dpkg_root
from tests.fixtures.models import TINY, model_path
from tests.integration.conftest import REPO, openai_client, spawn_runner, stop_runner

RUNTIMES = REPO / ".venv" / "runtimes"
pytestmark = [
    pytest.mark.slow,
    # Freezing and packaging happen in the first test's setup: minutes on 2 cores.
    pytest.mark.timeout(1800),
    pytest.mark.skipif(shutil.which("dpkg-deb") is None or shutil.which("dpkg") is None,
                       reason="dpkg is missing: the .deb is built on Debian or Ubuntu"),
    pytest.mark.skipif(subprocess.call([sys.executable, "-c", "import PyInstaller"],
                                       stderr=subprocess.DEVNULL) != 0,
                       reason="PyInstaller is not installed (pip install -e .[package])"),
    pytest.mark.skipif(not (RUNTIMES / "cpu-portable" / "manifest.json").exists(),
                       reason="the portable CPU runtime was not built (installers/dev.py)"),
]


@dataclass
class Installed:
    deb: Path
    root: Path
    env: dict[str, str]

    def dpkg(self, *args: str) -> subprocess.CompletedProcess[str]:
        return dpkg(self.root, *args)

    def files(self) -> list[Path]:
        return sorted(p for top in ("opt", "usr") for p in (self.root / top).rglob("*")
                      if not p.is_dir())


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Installed]:
    work = tmp_path_factory.mktemp("deb")
    # Only the CPU runtime: the test must not depend on whether Vulkan was built here.
    subprocess.run([sys.executable, str(REPO / "installers" / "freeze.py"), "--dist",
                    str(work / "dist"), "--runtimes", "cpu-portable"], check=True, timeout=1800)
    subprocess.run([sys.executable, str(REPO / "installers" / "linux" / "build_deb.py"),
                    "--frozen", str(work / "dist" / "hearth"), "--out", str(work / "out"),
                    # Fast compression: the same package otherwise; its release size (xz) is
                    # tests/bench/installed.py's figure.
                    "--compress", "gzip:1"],
                   check=True, timeout=1800)
    debs = sorted((work / "out").glob("hearth_*.deb"))
    assert len(debs) == 1, debs
    shutil.rmtree(work / "dist")  # the installed copy is what is tested from here on
    root = work / "root"
    empty_dpkg_root(root)
    env = {k: v for k, v in os.environ.items()
           if k not in ("HEARTH_RUNTIME", "HEARTH_RUNNER", "HEARTH_RUNTIMES", "PYTHONPATH")}
    env.update(HEARTH_HOME=str(work / "home"), QT_QPA_PLATFORM="offscreen")
    box = Installed(debs[0], root, env)
    # --force-depends: the temporary root's database knows none of the system's libraries.
    result = box.dpkg("--force-depends", "-i", str(box.deb))
    assert result.returncode == 0, result.stdout + result.stderr
    yield box


def test_the_package_installs_the_app_its_launchers_menu_entry_and_icons(installed: Installed) -> None:
    root = installed.root
    for path in ("opt/hearth/hearth", "opt/hearth/hearth-runner", "usr/bin/hearth",
                 "usr/bin/hearth-runner", "usr/share/applications/hearth.desktop",
                 "usr/share/icons/hicolor/48x48/apps/hearth.png",
                 "usr/share/icons/hicolor/scalable/apps/hearth.svg",
                 "opt/hearth/runtimes/cpu-portable/manifest.json"):
        assert (root / path).exists(), path
    assert os.access(root / "usr/bin/hearth", os.X_OK)
    info = subprocess.run(["dpkg-deb", "--field", str(installed.deb), "Depends"],
                          capture_output=True, text=True, check=True).stdout
    assert "libxcb-cursor0" in info and "libgomp1" in info
    if shutil.which("desktop-file-validate"):
        check = subprocess.run(["desktop-file-validate",
                                str(root / "usr/share/applications/hearth.desktop")],
                               capture_output=True, text=True)
        assert check.returncode == 0 and not check.stdout.strip(), check.stdout


def test_the_installed_app_starts_and_shows_its_window(installed: Installed) -> None:
    started = time.monotonic()
    run = subprocess.run([str(installed.root / "usr/bin/hearth"), "--check-start"],
                         env=installed.env, capture_output=True, text=True, timeout=120)
    took = time.monotonic() - started
    assert run.returncode == 0, run.stdout + run.stderr
    assert "hearth: window shown" in run.stdout
    print(f"installed app: window shown {took:.2f} s after launch")


def test_the_installed_app_speaks_german_and_draws_its_icons(installed: Installed) -> None:
    """Issue 27: the package carries Hearth's compiled catalog, Qt's own for the same language
    and the interface's icons; the installed app in German says so."""
    root = installed.root
    assert any(root.rglob("hearth_de.qm")), "hearth_de.qm is not in the package"
    assert any(root.rglob("qtbase_de.qm")), "Qt's own German catalog is not in the package"
    assert any(root.rglob("resources/icons/ui/LICENSE")), "the icons' licence is not shipped"
    env = dict(installed.env, HEARTH_LANGUAGE="de")
    run = subprocess.run([str(root / "usr/bin/hearth"), "--check-start"], env=env,
                         capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stdout + run.stderr
    line = next((ln for ln in run.stdout.splitlines() if ln.startswith("hearth: language")), "")
    # Hearth's own word and Qt's standard button, both German; every icon drawn.
    assert "language de: Einstellungen, Abbrechen;" in line, run.stdout
    drawn, total = line.rsplit("icons ", 1)[1].split("/")
    assert drawn == total and int(total) > 40, line


def test_the_installed_app_plans_with_its_own_runner_and_runtime(installed: Installed) -> None:
    run = subprocess.run([str(installed.root / "usr/bin/hearth"), "plan", str(model_path(TINY))],
                         env=installed.env, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stdout + run.stderr
    # Chosen from the installed runtimes, self-tested and confirmed by the bundled runner's
    # dry run.
    assert "Runtime: cpu-portable" in run.stdout, run.stdout
    assert "self-test passed" in run.stdout, run.stdout
    assert "dry run" in run.stdout, run.stdout


def test_the_installed_runner_loads_a_model_and_answers(installed: Installed) -> None:
    runtime = installed.root / "opt/hearth/runtimes/cpu-portable"
    runner = spawn_runner(env={"HEARTH_HOME": installed.env["HEARTH_HOME"]},
                          program=[str(installed.root / "usr/bin/hearth-runner"),
                                   "--runtime", str(runtime)])
    try:
        runner.wait_listening()
        runner.wait_ready()
        with runner.client() as http:
            status = http.get("/runner/status").json()
        with openai_client(runner) as client:
            reply = client.chat.completions.create(
                model="m", messages=[{"role": "user", "content": "hello"}], max_tokens=8)
    finally:
        code = stop_runner(runner)
    assert code == 0, runner.stderr_text()[-2000:]
    assert reply.choices[0].message.content
    # The runtime's own CPU module, not a library from the app's folder.
    build = status["build"]
    assert build["runtime"]["name"] == "cpu-portable", build
    assert build["cpu_variant"], build


def test_the_installed_model_server_serves_a_library_model(installed: Installed) -> None:
    """``hearth serve`` becomes the bundled hearth-server (issue 29), which loads a library
    model on request with the bundled runner and runtime, and exits cleanly on SIGTERM."""
    import json
    import signal

    import openai

    from tests.integration import server_rig

    home = Path(installed.env["HEARTH_HOME"]) / "serve"
    server_rig.add_model(home, "alpha.gguf")
    server_rig._put_key(home)  # the key in the owner-only file (no keyring here)
    env = dict(installed.env, HEARTH_HOME=str(home), HEARTH_MODELS_DIR=str(home / "models"),
               PYTHON_KEYRING_BACKEND="keyring.backends.fail.Keyring")
    process = subprocess.Popen(
        [str(installed.root / "usr/bin/hearth"), "serve", "--port", "0", "--no-dry-run",
         "--runtime", str(installed.root / "opt/hearth/runtimes/cpu-portable")],
        env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        text=True)
    try:
        assert process.stdout is not None
        listening = json.loads(process.stdout.readline() or "{}")
        assert listening.get("event") == "listening", process.stderr.read() if \
            process.stderr and process.poll() is not None else listening
        with openai.OpenAI(base_url=listening["url"] + "/v1", api_key=server_rig.KEY,
                           max_retries=0, timeout=120) as client:
            reply = client.chat.completions.create(
                model="alpha", messages=[{"role": "user", "content": "hello"}], max_tokens=4)
        assert reply.choices[0].message.content
    finally:
        process.send_signal(signal.SIGTERM)
        code = process.wait(60)
    assert code == 0, process.stderr.read() if process.stderr else code


def test_removing_the_package_leaves_no_file_behind(installed: Installed) -> None:
    assert installed.files(), "nothing was installed"
    result = installed.dpkg("--purge", "hearth")
    assert result.returncode == 0, result.stdout + result.stderr
    assert installed.files() == []
