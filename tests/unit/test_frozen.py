"""What changes when Hearth runs frozen (the installed app): where its runner is, and a windowed
app's missing stdout and stderr."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from app.__main__ import ensure_std_streams
from app.runner_client.command import base_program, build_launch
from app.runtimes.catalog import runtime_folders


def test_a_frozen_app_starts_the_runner_beside_itself(tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("HEARTH_RUNNER", raising=False)
    monkeypatch.setattr(sys, "frozen", True, raising=False)
    monkeypatch.setattr(sys, "executable", str(tmp_path / "hearth" / "hearth"))
    runner = tmp_path / "hearth" / ("hearth-runner.exe" if sys.platform == "win32" else "hearth-runner")
    assert base_program() == [str(runner)]
    launch = build_launch("m.gguf", program=None)
    assert launch.program == str(runner) and launch.args[0] == "serve"
    # ... and looks for the runtimes that came with it in the same folder.
    assert tmp_path / "hearth" / "runtimes" in runtime_folders({})


def test_from_a_checkout_the_runner_is_this_interpreter(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("HEARTH_RUNNER", raising=False)
    monkeypatch.delattr(sys, "frozen", raising=False)
    assert base_program() == [sys.executable, "-m", "runner"]


def test_a_windowed_app_without_stdout_or_stderr_can_still_print(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "stdout", None)
    monkeypatch.setattr(sys, "stderr", None)
    ensure_std_streams()
    print("nowhere")  # raised AttributeError on None before
    print("nowhere", file=sys.stderr)
    assert sys.stdout is not None and sys.stderr is not None
    sys.stdout.close()
    sys.stderr.close()


def test_the_installer_keeps_every_qt_module_the_app_imports() -> None:
    """The spec dropped QtNetwork, which the single-instance hand-over needs: the installed app
    could not pass a second start's file to the first."""
    import re

    root = Path(__file__).resolve().parents[2]
    spec = (root / "installers" / "hearth.spec").read_text(encoding="utf-8")
    imported = {m for path in (root / "app").rglob("*.py")
                for m in re.findall(r"PySide6\.(Qt\w+)", path.read_text(encoding="utf-8"))}
    assert "QtNetwork" in imported
    for module in imported:
        assert f'"PySide6.{module}"' not in spec, f"the spec excludes PySide6.{module}"
        assert f'"Qt6{module[2:]}"' not in spec, f"the spec drops the Qt6{module[2:]} library"


def test_the_installer_keeps_the_image_formats_people_attach() -> None:
    """Issue 30: images attached in the chat are decoded by Qt's plugins in the frozen app."""
    import re

    root = Path(__file__).resolve().parents[2]
    spec = (root / "installers" / "hearth.spec").read_text(encoding="utf-8")
    kept = re.search(r'"imageformats": \(([^)]*)\)', spec)
    assert kept is not None
    for plugin in ("qjpeg", "qgif", "qwebp"):
        assert f'"{plugin}"' in kept.group(1), f"the spec drops {plugin}"
