"""Journey: the person loads a model, opens its offload settings, gives it a smaller context
and applies it; the model loads again, and the runner reports the new context."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import Qt

from tests.journeys.person import (
    LOAD_MS,
    UI_MS,
    choose_in_list,
    click,
    named,
    press,
    runner_status,
    type_into,
    until,
    wait_dialog,
    wait_named,
)


def served_context(window: Any) -> int | None:
    status = runner_status(window)
    if status is None or status.get("status") != "ok" or "context" not in status:
        return None
    return int(status["context"]["n_ctx"])


@pytest.mark.timeout(300)
def test_offload_change_the_context_apply_and_the_runner_reports_it(
        qtbot: Any, returning: Any, start_hearth: Any, tiny_file: Path) -> None:
    model = returning.put_model(tiny_file, "tiny-chat.gguf")
    window = start_hearth()
    picker = named(window, "Model")
    qtbot.waitUntil(until(lambda: any("tiny-chat.gguf" in picker.itemText(i)
                                      for i in range(picker.count())),
                          "the model in the models folder is not in the list"), timeout=60_000)
    choose_in_list(qtbot, picker, "tiny-chat.gguf")
    click(qtbot, window, "Load")
    qtbot.waitUntil(until(lambda: served_context(window) is not None, "the model never loaded"),
                    timeout=LOAD_MS)
    first = served_context(window)
    assert first is not None and first > 1024, f"it loaded with a context of {first}"
    wait_named(qtbot, window, "Send", timeout=LOAD_MS, enabled=True)

    wait_named(qtbot, window, "Offload settings", enabled=True)
    click(qtbot, window, "Offload settings")
    dialog = wait_dialog(qtbot, window, starts_with="Offload settings")
    context = wait_named(qtbot, dialog, "Context (tokens)", timeout=60_000, enabled=True)
    type_into(qtbot, dialog, "Context (tokens)", "1024", replace=True)
    press(Qt.Key.Key_Tab)  # the edit is done: the context is pinned
    qtbot.waitUntil(lambda: context.value() == 1024, timeout=UI_MS)
    wait_named(qtbot, dialog, "Apply and reload", enabled=True)
    click(qtbot, dialog, "Apply and reload")

    # The loaded model loads again with the new context: the runner says so.
    qtbot.waitUntil(until(lambda: served_context(window) == 1024,
                          lambda: f"the runner reports a context of {served_context(window)}, "
                                  "not 1024"), timeout=LOAD_MS)
    status = runner_status(window)
    assert status is not None and status["model"]["path"] == str(model)
