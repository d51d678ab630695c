"""Installed runtimes for the selection's tests: two folders in build_runtime.py's format (a
stand-in library file) and a self-test every runtime passes, so the choice is the wish's."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from app.runtimes.selftest import SelftestResult, parse

# Both may serve on any machine when asked for: which one is chosen is only the wish.
NAMES = {"cpu-portable": "cpu", "vulkan": "vulkan"}


def install_runtimes(parent: Path) -> dict[str, Path]:
    """The runtime folders under ``parent``, by name."""
    made = {}
    for name, backend in NAMES.items():
        folder = parent / name
        (folder / "lib").mkdir(parents=True)
        (folder / "manifest.json").write_text(json.dumps(
            {"format": 1, "name": name, "backend": backend}))
        (folder / "lib" / "libllama.so").write_bytes(b"\x7fELF")
        made[name] = folder
    return made


def passing(program: Any, **kw: Any) -> SelftestResult:
    """A self-test that passes on the CPU (no runner is started)."""
    return parse({"ok": True, "devices": [
        {"device": "CPU", "description": "stand-in", "type": "cpu", "ok": True}]})
