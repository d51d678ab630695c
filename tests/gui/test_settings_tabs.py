"""The Settings dialog's parts on their own (app/ui/settings_tabs/): the one owner of the
settings being edited, and what the sharing box says the running model does not have yet."""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from types import SimpleNamespace
from typing import Any

import pytest

from app.remote.share import ALL_INTERFACES, Interface
from app.settings import AppSettings
from app.ui.settings_tabs.edit import SettingsEdit
from app.ui.settings_tabs.sharing import connection_note, waiting_sentences

LAN = [Interface("eth0", "192.168.1.23"), Interface("wlan0", "10.0.0.7")]


@pytest.fixture
def env(qtbot: Any) -> Any:
    """A SettingsEdit whose saves, announcements and messages are recorded."""
    e = SimpleNamespace(saved=[], changes=[], said=[])
    e.edit = SettingsEdit(AppSettings(), e.saved.append)
    e.edit.changed.connect(e.changes.append)
    e.edit.message.connect(lambda text, error: e.said.append((text, error)))
    return e


def test_a_change_is_applied_saved_and_announced(env: Any) -> None:
    assert env.edit.update(theme="dark") is True
    assert env.edit.settings.theme == "dark"
    assert env.saved == [env.edit.settings] and env.changes == [env.edit.settings]
    assert env.said == [("", False)]  # an earlier error is cleared


def test_a_value_not_allowed_is_said_and_changes_nothing(env: Any) -> None:
    assert env.edit.update(runner_port=80) is False
    assert env.edit.settings == AppSettings() and env.saved == [] and env.changes == []
    assert len(env.said) == 1 and env.said[0][1] is True and "port" in env.said[0][0]


def test_a_change_that_cannot_be_saved_still_applies_and_says_so(qtbot: Any) -> None:
    def fail(_s: AppSettings) -> None:
        raise OSError("disk full")

    e = SettingsEdit(AppSettings(), fail)
    said: list[tuple[str, bool]] = []
    changes: list[AppSettings] = []
    e.message.connect(lambda text, error: said.append((text, error)))
    e.changed.connect(changes.append)
    assert e.update(share_runner=True) is True
    assert e.settings.share_runner and changes == [e.settings]
    assert said == [("The settings could not be saved (disk full); they apply until Hearth "
                     "closes.", True)]


def test_nothing_waits_when_the_running_model_has_the_settings() -> None:
    s = AppSettings(share_runner=True, runner_port=8765, share_host=ALL_INTERFACES)
    assert waiting_sentences(s, "http://0.0.0.0:8765", "k", "k", rotated=False) == []
    assert waiting_sentences(AppSettings(), "http://127.0.0.1:41234", "own", "", False) == []


def test_what_waits_for_the_next_load_is_said_one_sentence_each() -> None:
    s = AppSettings(share_runner=True, runner_port=8765, share_host=ALL_INTERFACES)
    # Loaded on loopback, another port, and the key was rotated here since.
    assert waiting_sentences(s, "http://127.0.0.1:41234", "old", "new", rotated=True) == [
        "The choice of who can connect applies from the next load.",
        "The port chosen above applies from the next load.",
        "The new key applies from the next load."]
    # Loaded before sharing was on: its own private address and key.
    assert waiting_sentences(s, "http://127.0.0.1:41234", "own", "kept", rotated=False) == [
        "The model running now was loaded with a private address and key: what is shown "
        "here applies from the next load."]
    # Sharing turned off while a shared model runs: it stays reachable until it loads again.
    off = AppSettings(share_runner=False, runner_port=8765)
    assert waiting_sentences(off, "http://0.0.0.0:8765", "k", "", False) == [
        "Other apps and devices can use the model running now until it loads again."]
    assert waiting_sentences(off, "http://127.0.0.1:8765", "k", "", False) == [
        "Other apps can use the model running now until it loads again."]


def test_the_note_names_the_other_addresses_and_apply_now() -> None:
    s = AppSettings(share_runner=True, share_host=ALL_INTERFACES, runner_port=0)
    note = connection_note(s, LAN, running=True, waiting=["The port waits."], can_apply=True)
    assert "on another device on your network" in note
    assert "other addresses work too: 10.0.0.7." in note
    assert "choose a fixed port" in note  # "any free port" changes at each load
    assert note.endswith(" The port waits. Or press “Apply now” to load it again at once.")
    idle = connection_note(AppSettings(share_runner=True), LAN, running=False, waiting=[],
                           can_apply=False)
    assert idle.startswith("Load a model in the chat to use it this way. ")
    assert "Only this computer can connect (127.0.0.1)." in idle
    assert connection_note(AppSettings(), LAN, running=True, waiting=[], can_apply=False) \
        .startswith("Only Hearth talks to the model.")
