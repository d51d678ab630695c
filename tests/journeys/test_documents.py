"""Journey (issue 30): a person attaches a PDF too long for the model's context to a question.
The question goes with the passages that answer it, the chat says which went in, a click on the
document's name opens the file, and the passages go again with a Regenerate and after a
restart of Hearth. Real window, real runner counting tokens, real PDF."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import Qt, QUrl

from app.chat.transcript import DOCUMENTS, DOCUMENTS_USED
from tests.fixtures.models import _WORDS
from tests.fixtures.pdf import write_pdf
from tests.journeys.person import (
    LOAD_MS,
    REPLY_MS,
    choose_in_list,
    click,
    click_link,
    click_message_action,
    named,
    press,
    prompt_tokens,
    reply_done,
    runner_status,
    type_into,
    until,
    wait_named,
)


@pytest.mark.timeout(300)
def test_a_long_pdf_goes_in_as_the_passages_that_answer(
        qtbot: Any, returning: Any, start_hearth: Any, tiny_file: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    model = returning.put_model(tiny_file, "tiny.gguf")
    # Words of the test model's vocabulary (a token each), 40 pages of them: far more than its
    # context holds. One page answers the question.
    vocabulary = _WORDS
    pages = [" ".join(vocabulary[(i * 7 + j) % len(vocabulary)] for j in range(150))
             for i in range(40)]
    pages[17] = "The lighthouse keeper feeds the heron at dawn. " + pages[17]
    pdf = write_pdf(returning.user_home / "harbour.pdf", pages)
    window = start_hearth()
    picker = named(window, "Model")
    qtbot.waitUntil(until(lambda: any(model.name in picker.itemText(i)
                                      for i in range(picker.count())), "the model is not listed"),
                    timeout=60_000)
    choose_in_list(qtbot, named(window, "Model"), model.name)
    click(qtbot, window, "Load")
    wait_named(qtbot, window, "Send", timeout=LOAD_MS, enabled=True)

    from PySide6.QtWidgets import QFileDialog

    monkeypatch.setattr(QFileDialog, "getOpenFileNames",
                        lambda *a, **k: ([str(pdf)], ""))  # the system's dialog, answered
    click(qtbot, window, "Attach files")
    assert window.chat_panel.attachments.paths == [str(pdf)]
    type_into(qtbot, window, "Message", "Who feeds the heron?")
    press(Qt.Key.Key_Return)
    view = named(window, "Conversation")
    qtbot.waitUntil(until(lambda: "With this message:" in view.toPlainText(),
                          "the question did not go with its documents"), timeout=REPLY_MS)
    qtbot.waitUntil(until(lambda: reply_done(window), "the reply did not end"),
                    timeout=REPLY_MS)
    question = window.gui.session.transcript.messages[-2]
    (used,) = question.meta[DOCUMENTS_USED]
    assert not used["whole"] and "page 18" in used["places"], used
    assert "[harbour.pdf, page 18]" in question.meta[DOCUMENTS]
    assert "passages from harbour.pdf" in view.toPlainText() or \
        "passage from harbour.pdf" in view.toPlainText()
    assert window.chat_panel.attachments.paths == []  # sent: the next question starts bare
    sent = prompt_tokens(window)
    status = runner_status(window) or {}
    assert sent > 200, sent  # the passages went to the model, not the 6 words alone
    assert sent <= int(status.get("n_ctx") or status["model"].get("n_ctx") or 1 << 30)

    opened: list[QUrl] = []
    view._open_url = opened.append
    click_link(qtbot, view, "harbour.pdf")
    assert [u.toLocalFile() for u in opened] == [str(pdf)]

    click_message_action(qtbot, view, "Write this reply again")
    qtbot.waitUntil(until(lambda: reply_done(window) and prompt_tokens(window) == sent,
                          "the regenerated reply did not get the same passages"),
                    timeout=REPLY_MS)

    # A scan (no text layer): a sentence says so, and the question stays in the box.
    scan = write_pdf(returning.user_home / "scan.pdf", ["", ""])
    monkeypatch.setattr(QFileDialog, "getOpenFileNames", lambda *a, **k: ([str(scan)], ""))
    click(qtbot, window, "Attach files")
    type_into(qtbot, window, "Message", "What does the scan say?")
    press(Qt.Key.Key_Return)
    qtbot.waitUntil(until(lambda: "no text layer" in window.statusBar().currentMessage(),
                          lambda: f"said: {window.statusBar().currentMessage()!r}"),
                    timeout=REPLY_MS)
    assert named(window, "Message").toPlainText() == "What does the scan say?"
    assert window.chat_panel.attachments.paths == [str(scan)]
