"""Journey: the person lets other apps use the model (Settings → Other apps and devices), with a
port of their own so the address stays put; the address and the key are shown once the model
is loaded, another program can use them, and both stay the same when the model is loaded
again."""

from __future__ import annotations

import socket
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import Qt

from tests.journeys.person import (
    LOAD_MS,
    UI_MS,
    back_to,
    choose_in_list,
    click,
    http_get,
    named,
    press,
    type_into,
    until,
    wait_dialog,
    wait_named,
)

SHARE = "Let other apps and devices use this model"


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def open_settings(qtbot: Any, window: Any) -> Any:
    """Settings opened on its Sharing page, as a person finds it: the page in the side list."""
    click(qtbot, window, "Settings")
    dialog = wait_dialog(qtbot, window, "Settings")
    click(qtbot, dialog, "Sharing")
    return dialog


def close_settings(qtbot: Any, window: Any, dialog: Any) -> None:
    click(qtbot, dialog, "Close")
    qtbot.waitUntil(lambda: not dialog.isVisible(), timeout=UI_MS)
    back_to(qtbot, window)


def read_connection(qtbot: Any, window: Any) -> tuple[str, str]:
    """Settings opened, the address and the key read off it, Settings closed."""
    dialog = open_settings(qtbot, window)
    url = wait_named(qtbot, dialog, "Address (base URL)")
    key = wait_named(qtbot, dialog, "API key")
    qtbot.waitUntil(until(lambda: url.text() and key.text(),
                          "the address or the key is not shown"), timeout=UI_MS)
    shown = url.text(), key.text()
    close_settings(qtbot, window, dialog)
    return shown


def load(qtbot: Any, window: Any, button: str = "Load") -> None:
    wait_named(qtbot, window, button, enabled=True)
    click(qtbot, window, button)
    qtbot.waitUntil(until(lambda: named(window, "Send").isEnabled(),
                          "the model never became ready"), timeout=LOAD_MS)


def models_seen_by_another_app(url: str, key: str) -> list[str]:
    reply = http_get(url.rstrip("/") + "/models", key)
    assert reply.status_code == 200, f"{url}/models with the key shown: {reply.status_code}"
    return [m["id"] for m in reply.json()["data"]]


@pytest.mark.timeout(300)
def test_sharing_on_the_address_and_key_stay_the_same_across_a_reload(
        qtbot: Any, returning: Any, start_hearth: Any, tiny_file: Path) -> None:
    returning.put_model(tiny_file, "shared.gguf")
    window = start_hearth()

    dialog = open_settings(qtbot, window)
    share = named(dialog, SHARE)
    click(qtbot, dialog, SHARE)
    qtbot.waitUntil(share.isChecked, timeout=UI_MS)
    port = free_port()
    wait_named(qtbot, dialog, "Port", enabled=True)
    type_into(qtbot, dialog, "Port", str(port), replace=True)
    press(Qt.Key.Key_Tab)
    qtbot.waitUntil(lambda: named(dialog, "Port").value() == port, timeout=UI_MS)
    close_settings(qtbot, window, dialog)

    picker = named(window, "Model")
    qtbot.waitUntil(until(lambda: any("shared.gguf" in picker.itemText(i)
                                      for i in range(picker.count())),
                          "the model in the models folder is not in the list"), timeout=60_000)
    choose_in_list(qtbot, picker, "shared.gguf")
    load(qtbot, window)
    url, key = read_connection(qtbot, window)
    assert f":{port}" in url, f"the address {url} is not on the port chosen ({port})"
    assert models_seen_by_another_app(url, key)

    # The model loaded again: the same address and key; the other app goes on working.
    wait_named(qtbot, window, "Unload", enabled=True)
    click(qtbot, window, "Unload")
    load(qtbot, window)
    again = read_connection(qtbot, window)
    assert again == (url, key), f"before the reload {(url, key)}, after it {again}"
    assert models_seen_by_another_app(url, key)
