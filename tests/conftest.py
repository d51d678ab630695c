"""Shared test setup: an isolated Hearth home for every test session, offscreen Qt."""

from __future__ import annotations

import os
import socket
import tempfile
from collections.abc import Iterator

import pytest

# Before anything imports Qt or app.paths: tests never touch the user's real files or display.
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
os.environ["HEARTH_HOME"] = tempfile.mkdtemp(prefix="hearth-test-home-")
# Nothing reaches huggingface.co from a test: the Hub's address is a closed local port unless a
# test starts the fake Hub (tests/fixtures/fake_hub.py), and its cache and token are temporary.
os.environ["HF_ENDPOINT"] = "http://127.0.0.1:9"
os.environ["HF_HOME"] = os.path.join(os.environ["HEARTH_HOME"], "hf-home")
os.environ.pop("HF_TOKEN", None)
os.environ.pop("HF_HUB_OFFLINE", None)
# No test may read or write the real OS keyring; tests that need one install an in-memory one.
os.environ["PYTHON_KEYRING_BACKEND"] = "keyring.backends.fail.Keyring"
os.environ["HEARTH_MODELS_DIR"] = os.path.join(os.environ["HEARTH_HOME"], "models")
# The runner's own llama-cpp-python libraries, whatever runtimes this checkout has built: the
# runtime tests (tests/integration/test_runtimes.py) name the runtime they exercise.
os.environ["HEARTH_RUNTIME"] = "built-in"
# One language whatever the machine's: a started Hearth (--check-start) speaks English.
os.environ["HEARTH_LANGUAGE"] = "en"


@pytest.fixture
def closed_url() -> Iterator[str]:
    """An address nothing answers at: a port bound and never listening, so every connection is
    refused at once (offline, faked at the lowest boundary)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        yield f"http://127.0.0.1:{s.getsockname()[1]}"
