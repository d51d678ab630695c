"""Shared test setup: an isolated Hearth home for every test session, offscreen Qt."""

from __future__ import annotations

import os
import tempfile

# Before anything imports Qt or app.paths: tests never touch the user's real files or display.
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
os.environ["HEARTH_HOME"] = tempfile.mkdtemp(prefix="hearth-test-home-")
