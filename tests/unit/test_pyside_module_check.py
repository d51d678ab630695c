"""app/__main__.py's cheaper answer to PySide6's "does this module use PySide6?" (asked of every
module imported after it, on the way to the first frame) is the same answer as PySide's own."""

from __future__ import annotations

import sys
from types import ModuleType

import PySide6.QtCore  # noqa: F401  (PySide6's import hook and its check exist from here on)
import pytest

import app.settings
import app.ui.server_panel
from app.__main__ import _cheaper_pyside_module_check


def test_the_files_bytes_answer_as_pysides_own_check(monkeypatch: pytest.MonkeyPatch) -> None:
    feature = sys.modules["PySide6.support.feature"]
    original = feature._mod_uses_pyside
    monkeypatch.setattr(feature, "_mod_uses_pyside", original)  # put back afterwards
    _cheaper_pyside_module_check()
    cheaper = feature._mod_uses_pyside
    assert cheaper is not original
    without_file = ModuleType("made_here")
    for module in (app.settings, app.ui.server_panel, pytest, without_file):
        assert cheaper(module) == original(module), module
    assert cheaper(app.ui.server_panel) and not cheaper(app.settings)
