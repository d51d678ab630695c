"""installers/windows/hearth.nsi compiles with makensis (NSIS 3 builds Windows installers on
Linux too): a stand-in payload, the real script and the real command line of build_windows.py,
warnings as errors."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path
from types import ModuleType

import pytest

from tests.fixtures.scripts import load_script

REPO = Path(__file__).resolve().parents[2]
ICON = REPO / "resources" / "icons" / "hearth.ico"

MAKENSIS = shutil.which("makensis")
pytestmark = pytest.mark.skipif(
    MAKENSIS is None, reason="makensis (NSIS 3) is not on PATH: apt-get install nsis, or "
                             "winget install NSIS.NSIS on Windows")


def build_windows() -> ModuleType:
    return load_script("windows/build_windows.py")


def stand_in_payload(folder: Path) -> Path:
    """The layout installers/freeze.py makes, with small text files for the programs."""
    files = {
        "hearth.exe": "the GUI",
        "hearth-runner.exe": "the runner",
        "hearth-server.exe": "the model server",
        "_internal/x.dll": "a library",
        "runtimes/cpu-portable/manifest.json": '{"name": "cpu-portable", "backend": "cpu"}\n',
        "runtimes/cpu-portable/lib/ggml.dll": "a runtime library",
    }
    for name, text in files.items():
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return folder


def makensis(cmd: list[str]) -> subprocess.CompletedProcess[str]:
    # -V2 (in the command) keeps warnings and errors; -WX makes any warning fail the build.
    return subprocess.run(cmd, capture_output=True, text=True, timeout=120)


def test_the_installer_compiles_cleanly(tmp_path: Path) -> None:
    assert MAKENSIS is not None
    payload = stand_in_payload(tmp_path / "hearth")
    outfile = tmp_path / "out" / "Hearth-0.1.0-setup.exe"
    outfile.parent.mkdir()
    cmd = build_windows().makensis_command(MAKENSIS, payload, outfile, "0.1.0", ICON)
    assert "-WX" in cmd
    result = makensis(cmd)
    output = result.stdout + result.stderr
    assert result.returncode == 0, output
    assert "warning" not in output.lower(), output
    data = outfile.read_bytes()
    assert data[:2] == b"MZ"
    # The payload went in: the installer is larger than the NSIS stub and the icon alone, and
    # a verbose run lists each file of the stand-in payload.
    verbose = makensis([*cmd[:-1], "-V4", cmd[-1]])  # the last -V wins
    assert verbose.returncode == 0, verbose.stdout + verbose.stderr
    for name in ("hearth.exe", "hearth-runner.exe", "hearth-server.exe", "x.dll", "manifest.json",
                 "ggml.dll"):
        assert f'File: "{name}"' in verbose.stdout, name


@pytest.mark.parametrize("missing", ["PAYLOAD", "OUTFILE", "VERSION", "ICON"])
def test_a_missing_define_stops_the_build_and_names_it(tmp_path: Path, missing: str) -> None:
    assert MAKENSIS is not None
    payload = stand_in_payload(tmp_path / "hearth")
    outfile = tmp_path / "setup.exe"
    cmd = build_windows().makensis_command(MAKENSIS, payload, outfile, "0.1.0", ICON)
    cmd = [arg for arg in cmd if not arg.startswith(f"-D{missing}=")]
    result = makensis(cmd)
    output = result.stdout + result.stderr
    assert result.returncode != 0, output
    assert f"{missing} is not defined" in output, output
    assert not outfile.exists()


def test_a_payload_without_the_app_is_refused(tmp_path: Path) -> None:
    assert MAKENSIS is not None
    empty = tmp_path / "empty"
    empty.mkdir()
    cmd = build_windows().makensis_command(MAKENSIS, empty, tmp_path / "setup.exe", "0.1.0", ICON)
    result = makensis(cmd)
    assert result.returncode != 0
    assert "has no hearth.exe" in result.stdout + result.stderr
