"""The chat view: streaming updates in place, scroll kept, nothing loaded, links checked, themes."""

from __future__ import annotations

import logging
import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import QPoint, Qt, QUrl
from PySide6.QtGui import QColor, QDesktopServices, QPalette, QTextCursor, QTextDocument
from PySide6.QtWidgets import QApplication

from app.chat.message import Message
from app.chat.render import CURSOR_MARK
from app.ui.chat_view import ChatView
from app.ui.style import tokens

ROOT = Path(__file__).resolve().parents[2]

REPLY = """Here is how to read a file, with a **context manager**:

```python
def read(path: str) -> str:
    with open(path, encoding="utf-8") as f:
        return f.read()
```

1. Pass an `encoding`.
2. See the [Python docs](https://docs.python.org/3/library/pathlib.html).

| Method | Streams |
|:-------|--------:|
| `open()` | yes |
"""


def conversation(n: int) -> list[Message]:
    return [Message("user" if i % 2 == 0 else "assistant",
                    f"Question {i}?" if i % 2 == 0 else f"Answer {i}.\n\n{REPLY}")
            for i in range(n)]


def make_view(qtbot: Any, **kwargs: Any) -> ChatView:
    view = ChatView(**kwargs)
    qtbot.addWidget(view)
    view.resize(500, 300)
    view.show()
    qtbot.waitExposed(view)
    return view


def settle() -> None:
    QApplication.processEvents()


def dark_palette(base: QPalette) -> QPalette:
    p = QPalette(base)
    role = QPalette.ColorRole
    for r, color in [(role.Window, "#2b2b2b"), (role.WindowText, "#e6e6e6"),
                     (role.Base, "#1e1e1e"), (role.Text, "#e6e6e6"), (role.Link, "#78aeed"),
                     (role.PlaceholderText, "#8f8f8f"), (role.Button, "#353535"),
                     (role.ButtonText, "#e6e6e6"), (role.Highlight, "#2a82da")]:
        p.setColor(r, QColor(color))
    return p


# ---- 1. the scroll position survives streaming ---------------------------------------------------


def test_scrolling_up_is_kept_while_a_reply_streams(qtbot: Any) -> None:
    view = make_view(qtbot)
    view.set_messages(conversation(20))
    live = Message("assistant", "Thinking")
    view.set_live(live)
    settle()
    bar = view.verticalScrollBar()
    assert bar.maximum() > 600
    bar.setValue(bar.maximum() // 2)  # the user scrolls up to reread something
    kept = bar.value()
    for i in range(12):
        live.content += f" word{i}" + ("\n\n- item" if i % 4 == 3 else "")
        view.set_live(live)
        settle()
        assert bar.value() == kept, f"update {i} moved the view from {kept} to {bar.value()}"
    view.set_live(None)
    view.append_message(live)
    settle()
    assert bar.value() == kept
    view.append_message(Message("user", "And then?"))  # sending brings the view to the end
    settle()
    assert bar.value() == bar.maximum()


def test_at_the_bottom_the_view_follows_the_reply(qtbot: Any) -> None:
    view = make_view(qtbot)
    view.set_messages(conversation(20))
    live = Message("assistant", "")
    view.set_live(live)
    settle()
    bar = view.verticalScrollBar()
    assert bar.value() == bar.maximum() > 0
    start = bar.maximum()
    for i in range(30):
        live.content += f"token{i} " + ("\n\n" if i % 5 == 4 else "")
        view.set_live(live)
        settle()
        assert bar.value() == bar.maximum()
    assert bar.maximum() > start  # it grew, and the view went with it
    view.set_live(None)
    view.append_message(live)
    settle()
    assert bar.value() == bar.maximum()


# ---- 2. an update re-renders only the live message --------------------------------------------


def test_an_update_touches_only_the_live_message(qtbot: Any) -> None:
    view = make_view(qtbot)
    view.set_messages(conversation(30))
    settle()
    doc = view.document()
    finished_end = doc.characterCount() - 1  # the last position of the finished messages
    changes: list[tuple[int, int, int]] = []
    doc.contentsChange.connect(lambda pos, removed, added: changes.append((pos, removed, added)))
    live = Message("assistant", "Hello")
    for i in range(5):
        live.content += f" more{i}"
        view.set_live(live)
        settle()
    assert changes, "the updates changed nothing"
    assert all(pos >= finished_end for pos, _, _ in changes), changes
    assert f"more4{CURSOR_MARK}" in view.toPlainText()


def test_a_selection_in_an_earlier_message_survives_streaming(qtbot: Any) -> None:
    view = make_view(qtbot)
    view.set_messages(conversation(6))
    cursor = view.document().find("context manager")
    assert not cursor.isNull()
    view.setTextCursor(cursor)  # the user selected these words to copy them
    live = Message("assistant", "Streaming")
    for i in range(5):
        live.content += f" t{i}"
        view.set_live(live)
        settle()
    assert view.textCursor().selectedText() == "context manager"


def test_incremental_updates_look_like_a_full_render(qtbot: Any) -> None:
    messages = conversation(5)
    messages[-1].note = "Stopped."
    full = make_view(qtbot)
    full.set_messages([*messages, Message("user", "Last one")])
    grown = make_view(qtbot)
    grown.set_placeholder("Say hello.")
    live = Message("assistant", "")
    for m in messages:
        if m.role == "user":
            grown.append_message(m)
            continue
        for piece in (m.content[:10], m.content[:40], m.content):  # streamed, then finished
            live.content = piece
            grown.set_live(live)
        grown.set_live(None)
        grown.append_message(m)
    grown.append_message(Message("user", "Last one"))
    for view in (full, grown):
        view.verticalScrollBar().setValue(0)
    settle()
    assert grown.toPlainText() == full.toPlainText()
    assert grown.grab().toImage() == full.grab().toImage()


def test_streaming_shows_the_mark_and_a_finished_message_goes_before_the_live_one(
        qtbot: Any) -> None:
    view = make_view(qtbot)
    view.set_placeholder("Say hello.")
    assert view.toPlainText() == "Say hello."
    view.append_message(Message("user", "Hi"))
    assert "Say hello." not in view.toPlainText()
    live = Message("assistant", "Hel")
    view.set_live(live)
    assert view.toPlainText().endswith(f"Hel{CURSOR_MARK}")
    view.append_message(Message("user", "Interjection"))  # arrives while the reply streams
    text = view.toPlainText()
    assert text.index("Interjection") < text.index(f"Hel{CURSOR_MARK}")
    view.set_live(None)
    assert CURSOR_MARK not in view.toPlainText() and "Hel" not in view.toPlainText()
    live.note = "Stopped."
    view.append_message(live)
    assert view.toPlainText().endswith("Assistant\nHel\nStopped.")  # actions are buttons now
    view.set_messages([])
    assert view.toPlainText() == "Say hello."
    view.set_live(Message("assistant", "first"))  # a reply with nothing before it
    assert view.toPlainText().endswith(f"first{CURSOR_MARK}")
    view.set_live(None)
    assert view.toPlainText() == "Say hello."


def test_the_document_keeps_no_undo_history(qtbot: Any) -> None:
    view = make_view(qtbot)
    live = Message("assistant", "x")
    for _ in range(20):
        live.content += " y"
        view.set_live(live)
    assert not view.document().isUndoRedoEnabled()
    assert view.document().availableUndoSteps() == 0


def test_text_stays_selectable(qtbot: Any) -> None:
    view = make_view(qtbot)
    flags = view.textInteractionFlags()
    assert flags & Qt.TextInteractionFlag.TextSelectableByMouse
    assert flags & Qt.TextInteractionFlag.LinksAccessibleByMouse
    assert view.isReadOnly()


# ---- 3. model output never makes the view read a file ------------------------------------------


def _secret_file(tmp_path: Path) -> Path:
    secret = tmp_path / "secret.png"
    from PySide6.QtGui import QImage

    image = QImage(8, 8, QImage.Format.Format_RGB32)
    image.fill(QColor("red"))
    assert image.save(str(secret))
    return secret


def _reads_update_atime(path: Path) -> bool:
    # relatime updates the access time when it is older than a day: set it to 1970, read.
    os.utime(path, (0, time.time()))
    path.read_bytes()
    updated = os.stat(path).st_atime > 0
    os.utime(path, (0, time.time()))
    return updated


def test_an_image_in_a_reply_never_reads_the_file(qtbot: Any, tmp_path: Path) -> None:
    asked: list[str] = []

    class Recording(ChatView):
        def loadResource(self, type: int, name: QUrl | str) -> Any:
            asked.append(name if isinstance(name, str) else name.toString())
            return super().loadResource(type, name)

    secret = _secret_file(tmp_path)
    atime_works = _reads_update_atime(secret)
    view = Recording()
    qtbot.addWidget(view)
    view.resize(500, 300)
    view.show()
    url = QUrl.fromLocalFile(str(secret)).toString()
    text = (f"Look: ![x]({url}) ![y]({secret}) <img src=\"{secret}\">\n\n"
            f"[![z]({secret})](https://example.com)")
    view.append_message(Message("assistant", text))
    view.set_live(Message("assistant", text))
    settle()
    view.grab()  # paint: Qt loads images when it lays them out and draws them
    assert asked == []
    if atime_works:
        assert os.stat(secret).st_atime == 0, "the view read the file"
    assert "[image: x]" in view.toPlainText() and "<img src=" in view.toPlainText()
    block = view.document().begin()
    while block.isValid():
        it = block.begin()
        while not it.atEnd():
            assert not it.fragment().charFormat().isImageFormat()
            it += 1
        block = block.next()


def test_the_view_and_its_document_refuse_every_resource(qtbot: Any, tmp_path: Path) -> None:
    secret = _secret_file(tmp_path)
    view = make_view(qtbot)
    image = QTextDocument.ResourceType.ImageResource
    for url in (QUrl.fromLocalFile(str(secret)), QUrl(str(secret)), QUrl("/dev/zero"),
                QUrl("https://example.com/x.png")):
        assert view.loadResource(image, url) is None
        assert view.document().loadResource(image, url) is None
    # Even an image that got into the document some other way is neither read nor drawn (also
    # after a full re-render, which clears the document).
    view.set_messages(conversation(2))
    atime_works = _reads_update_atime(secret)
    cursor = QTextCursor(view.document())
    cursor.movePosition(QTextCursor.MoveOperation.End)
    cursor.insertHtml(f'<img src="{secret}"><img src="/dev/zero">')  # Qt lays it out here
    view.verticalScrollBar().setValue(view.verticalScrollBar().maximum())
    settle()
    view.grab()
    if atime_works:
        assert os.stat(secret).st_atime == 0, "the view read the file"


def test_an_image_of_dev_zero_neither_hangs_nor_crashes() -> None:
    # In a child with a memory cap: a view that reads /dev/zero allocates until it aborts.
    script = textwrap.dedent("""
        try:  # best effort (POSIX): without a cap, a view reading /dev/zero eats all memory
            import resource
            resource.setrlimit(resource.RLIMIT_AS, (4 << 30, 4 << 30))
        except (ImportError, ValueError, OSError):
            pass
        from PySide6.QtWidgets import QApplication
        app = QApplication([])
        from app.chat.message import Message
        from app.ui.chat_view import ChatView
        view = ChatView()
        view.resize(400, 300)
        view.show()
        text = "Look ![x](/dev/zero) and ![y](file:///dev/zero)"
        view.append_message(Message("assistant", text))
        view.set_live(Message("assistant", text))
        app.processEvents()
        view.grab()
        print("survived")
    """)
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen"}
    proc = subprocess.run([sys.executable, "-c", script], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0 and "survived" in proc.stdout, proc.stderr[-2000:]


# ---- links ---------------------------------------------------------------------------------------


def _anchor_point(view: ChatView, text: str) -> QPoint:
    cursor = view.document().find(text)
    assert not cursor.isNull()
    cursor.setPosition(cursor.selectionStart() + 1)
    return view.cursorRect(cursor).center()


def test_clicking_a_web_link_opens_it_in_the_browser(qtbot: Any,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    opened: list[QUrl] = []

    def open_url(url: QUrl) -> bool:
        opened.append(url)
        return True

    monkeypatch.setattr(QDesktopServices, "openUrl", open_url)
    view = make_view(qtbot)
    view.append_message(Message("assistant", "Read [the docs](https://example.com/docs) first."))
    settle()
    point = _anchor_point(view, "the docs")
    qtbot.mouseClick(view.viewport(), Qt.MouseButton.LeftButton, pos=point)
    assert [u.toString() for u in opened] == ["https://example.com/docs"]


@pytest.mark.parametrize("url", [
    "https://example.com/", "http://example.com/a?b=c", "mailto:me@example.com",
])
def test_web_and_mail_links_are_opened(qtbot: Any, url: str) -> None:
    opened: list[QUrl] = []
    view = make_view(qtbot, open_url=opened.append)
    view.anchorClicked.emit(QUrl(url))
    assert [u.toString() for u in opened] == [url]


@pytest.mark.parametrize("url", [
    "file:///etc/passwd", "javascript:alert(1)", "data:text/html,<b>x</b>", "relative/path.html",
    "/etc/passwd", "ftp://example.com/f", "http:///nohost",
])
def test_other_links_are_refused_and_logged(qtbot: Any, caplog: pytest.LogCaptureFixture,
                                            url: str) -> None:
    opened: list[QUrl] = []
    view = make_view(qtbot, open_url=opened.append)
    with caplog.at_level(logging.WARNING, logger="app.ui.chat_view"):
        view.anchorClicked.emit(QUrl(url))
    assert opened == []
    assert "Refused to open a link" in caplog.text


def test_a_refused_link_is_plain_text_in_the_view(qtbot: Any) -> None:
    opened: list[QUrl] = []
    view = make_view(qtbot, open_url=opened.append)
    view.append_message(Message("assistant", "Open [this](file:///etc/passwd) now."))
    settle()
    assert view.anchorAt(_anchor_point(view, "this")) == ""
    qtbot.mouseClick(view.viewport(), Qt.MouseButton.LeftButton, pos=_anchor_point(view, "this"))
    assert opened == []


# ---- themes --------------------------------------------------------------------------------------


def test_colours_follow_the_palette(qtbot: Any, tmp_path: Path) -> None:
    view = make_view(qtbot)
    view.resize(720, 900)
    view.set_messages([Message("user", "How do I read a file?"),
                       Message("assistant", REPLY, note="Stopped.")])
    view.set_live(Message("assistant", "Streaming:\n\n- one\n- two"))
    settle()
    light = view.theme()
    assert not light.dark
    assert light.code_bg.lower() in view.document().toHtml().lower()
    assert view.grab().save(str(tmp_path / "chat-light.png"))

    view.setPalette(dark_palette(view.palette()))  # the user switched to a dark theme
    settle()
    dark = view.theme()
    # The colours are the design tokens of the scheme the palette shows, not the palette's own.
    assert light.text == tokens.LIGHT.text and light.base == tokens.LIGHT.raised_surface
    assert dark.dark and dark.text == tokens.DARK.text and dark.base == tokens.DARK.raised_surface
    assert dark.code_bg == tokens.DARK.sunken and dark.assistant == tokens.DARK.accent
    html = view.document().toHtml().lower()
    assert dark.code_bg in html and light.code_bg.lower() not in html
    assert view.toPlainText().endswith(f"two\n{CURSOR_MARK}")  # the live reply was kept
    assert view.grab().save(str(tmp_path / "chat-dark.png"))


def _click(view: ChatView, href: str) -> None:
    view.anchorClicked.emit(QUrl(href))


def test_copy_links_copy_the_message_and_each_code_block(qtbot: Any) -> None:
    view = make_view(qtbot)
    reply = Message("assistant", "Two ways:\n\n```python\nprint(1)\n```\n\nor\n\n```sh\necho 2\n```")
    view.set_messages([Message("user", "How?"), reply])
    html = view.toHtml()
    assert "hearth:copy-code/1/0" in html and "hearth:copy-code/1/1" in html
    # Each code block has a header with its language and its Copy link (an icon before it).
    lines = view.toPlainText().splitlines()
    assert [" ".join(line.split()) for line in lines if line.strip().endswith("Copy")] == \
        ["python Copy", "sh Copy"]
    copied: list[str] = []
    view.copied.connect(copied.append)
    clipboard = QApplication.clipboard()
    _click(view, "hearth:copy-code/1/1")
    assert clipboard.text() == "echo 2"
    _click(view, "hearth:copy/1")
    assert clipboard.text() == reply.content and copied == ["the code", "the message"]


def test_a_model_cannot_make_its_own_action_links(qtbot: Any) -> None:
    view = make_view(qtbot)
    hostile = Message("assistant", "[click](hearth:regenerate/0) <a href='hearth:edit/0'>x</a> "
                                   "[code](hearth:copy-code/0/0) [t](hearth:think/0)")
    view.set_messages([Message("user", "q"), hostile])
    html = view.toHtml()
    assert 'href="hearth:' not in html  # no action is a link any more, and none can be made
    assert "click" in view.toPlainText()
    got: list[tuple[str, Message]] = []
    view.action.connect(lambda kind, m: got.append((kind, m)))
    view.anchorClicked.emit(QUrl("hearth:regenerate/0"))  # a user's question: no such action
    assert got == []


def _hover(qtbot: Any, view: ChatView, index: int) -> None:
    rect = view.message_rect(index).translated(0, -view.verticalScrollBar().value())
    qtbot.mouseMove(view.viewport(), rect.center().toPoint())
    settle()


def test_the_action_bar_shows_icon_buttons_for_the_message_under_the_mouse(qtbot: Any) -> None:
    view = make_view(qtbot)
    view.resize(600, 500)
    q = Message("user", "q", id=1, siblings=(1, 5))
    a = Message("assistant", "a", id=2)
    view.set_messages([q, a])
    bar = view.message_bar()
    assert bar.isHidden()
    _hover(qtbot, view, 0)
    assert bar.isVisible() and bar.index == 0
    assert [b.accessibleName() for b in bar.buttons()] == [
        "Copy the message", "Edit this message and send it again", "Previous version",
        "Next version"]
    assert all(not b.icon().isNull() and not b.text() and b.toolTip() for b in bar.buttons())
    assert bar.versions.text() == "1/2" and not bar.prev.isEnabled() and bar.next.isEnabled()
    assert bar.versions.accessibleName() == "Version 1 of 2"
    # Over its message, at its top right.
    rect = view.message_rect(0).translated(0, -view.verticalScrollBar().value())
    assert rect.left() < bar.geometry().center().x() and bar.geometry().right() <= rect.right()
    _hover(qtbot, view, 1)
    assert bar.index == 1 and not bar.regenerate.isHidden() and bar.edit.isHidden()
    assert bar.prev.isHidden() and bar.versions.isHidden()  # one version: no arrows


def test_a_reply_that_ends_under_a_still_mouse_gets_its_action_bar(qtbot: Any) -> None:
    # "Write this reply again" clicked, the mouse left where it was: the reply streams in
    # under it and, once it has ended, its bar shows without the mouse having to move.
    view = make_view(qtbot)
    view.resize(600, 500)
    q = Message("user", "q", id=1)
    a = Message("assistant", "a\n\nb\n\nc", id=2)
    view.set_messages([q, a])
    bar = view.message_bar()
    _hover(qtbot, view, 1)
    assert bar.isVisible() and bar.index == 1
    view.set_messages([q])  # the old reply goes; the new one streams under the mouse
    assert bar.isHidden()
    again = Message("assistant", "a\n\nb\n\nc, again", id=3)
    view.set_live(again)
    assert bar.isHidden()  # the reply being streamed has no actions yet
    view.set_live(None)
    view.append_message(again)
    settle()
    assert bar.isVisible() and bar.index == 1 and bar.message is again


def test_edit_regenerate_and_versions_are_reported_with_their_message(qtbot: Any) -> None:
    view = make_view(qtbot)
    view.resize(600, 500)
    q = Message("user", "q", id=1, siblings=(1, 5))
    a = Message("assistant", "a", id=2)
    view.set_messages([q, a])
    got: list[tuple[str, Message]] = []
    view.action.connect(lambda kind, m: got.append((kind, m)))
    bar = view.message_bar()
    _hover(qtbot, view, 0)
    qtbot.mouseClick(bar.edit, Qt.MouseButton.LeftButton)
    qtbot.mouseClick(bar.prev, Qt.MouseButton.LeftButton)  # disabled at the first version
    qtbot.mouseClick(bar.next, Qt.MouseButton.LeftButton)
    _hover(qtbot, view, 1)
    qtbot.mouseClick(bar.regenerate, Qt.MouseButton.LeftButton)
    assert got == [("edit", q), ("next", q), ("regenerate", a)]
    copied: list[str] = []
    view.copied.connect(copied.append)
    qtbot.mouseClick(bar.copy, Qt.MouseButton.LeftButton)
    assert QApplication.clipboard().text() == "a" and copied == ["the message"]


def test_the_actions_are_reachable_from_the_keyboard(qtbot: Any) -> None:
    view = make_view(qtbot)
    view.resize(600, 500)
    q = Message("user", "q", id=1, siblings=(1, 5))
    a = Message("assistant", "a", id=2)
    view.set_messages([q, a])
    got: list[tuple[str, Message]] = []
    view.action.connect(lambda kind, m: got.append((kind, m)))
    view.activateWindow()
    qtbot.waitUntil(view.isActiveWindow)
    view.setFocus()
    bar = view.message_bar()
    qtbot.keyClick(view, Qt.Key.Key_Up, Qt.KeyboardModifier.AltModifier)  # the last message
    assert view.current_message() == 1 and bar.isVisible() and bar.index == 1
    qtbot.keyClick(view, Qt.Key.Key_Up, Qt.KeyboardModifier.AltModifier)
    assert view.current_message() == 0 and bar.index == 0
    # Tab goes into its bar; Space presses the focused button.
    assert view.focusNextPrevChild(True)
    assert bar.copy.hasFocus()
    bar.edit.setFocus(Qt.FocusReason.TabFocusReason)
    qtbot.keyClick(bar.edit, Qt.Key.Key_Space)
    assert got == [("edit", q)]
    assert bar.isVisible() and bar.index == 0  # it stays while the keyboard is in it
    view.setFocus()
    qtbot.keyClick(view, Qt.Key.Key_Escape)
    assert view.current_message() == -1 and bar.isHidden()


def test_the_reply_being_streamed_has_no_action_bar(qtbot: Any) -> None:
    view = make_view(qtbot)
    view.resize(600, 500)
    view.set_messages([Message("user", "q")])
    view.set_live(Message("assistant", "streaming"))
    settle()
    _hover(qtbot, view, 1)
    assert view.message_bar().isHidden()
    got: list[object] = []
    view.action.connect(lambda kind, m: got.append(kind))
    view.anchorClicked.emit(QUrl("hearth:regenerate/1"))  # nor any action through a link
    assert got == []


def test_each_message_is_a_block_named_by_its_role(qtbot: Any) -> None:
    view = make_view(qtbot)
    view.resize(600, 500)
    reply = Message("assistant", "a", meta={"source": {"kind": "local", "model": "Qwen.gguf"}})
    view.set_messages([Message("user", "**bold** question"), reply])
    text = view.toPlainText()
    assert text.startswith("You\nbold question\nQwen.gguf\na"), text  # the user's is Markdown
    first, second = view.message_rect(0), view.message_rect(1)
    assert first.bottom() <= second.top() and first.height() > 0 and second.height() > 0
    # The user's block is tinted; the reply's is not.
    settle()
    image = view.viewport().grab().toImage()
    inside = first.topLeft().toPoint() + QPoint(3, int(first.height()) // 2)
    outside = second.topLeft().toPoint() + QPoint(3, int(second.height()) // 2)
    assert image.pixelColor(inside) != image.pixelColor(outside)


def test_reasoning_is_folded_with_its_length_and_unfolds_on_click(qtbot: Any) -> None:
    view = make_view(qtbot)
    thought = "step one, step two"
    view.set_messages([Message("user", "q"), Message("assistant", f"<think>{thought}</think>4")])
    text = view.toPlainText()
    assert f"Reasoning ({len(thought)} characters)" in text and thought not in text
    _click(view, "hearth:think/1")
    assert thought in view.toPlainText()
    _click(view, "hearth:think/1")
    assert thought not in view.toPlainText()


def test_a_streaming_reply_that_thinks_shows_only_the_folded_line_then_the_answer(
        qtbot: Any) -> None:
    view = make_view(qtbot)
    view.set_messages([Message("user", "q")])
    live = Message("assistant", "<think>hmm")
    view.set_live(live)
    assert "Thinking… (3 characters)" in view.toPlainText() and "hmm" not in view.toPlainText()
    live.content += " more</think>The answer"
    view.set_live(live)
    text = view.toPlainText()
    assert "Reasoning (8 characters)" in text and text.endswith(f"The answer{CURSOR_MARK}")


def test_streaming_in_chunks_shows_the_same_text_as_rendering_the_whole_reply(
        qtbot: Any) -> None:
    parts = ["# Title\n\n", "A paragraph with **bold**.\n\n", "- one\n- two\n\n",
             "```python\n", "x = 1\n\ny = 2\n", "```\n\n", "| a | b |\n|---|---|\n| 1 | 2 |\n\n",
             "The end."]
    view = make_view(qtbot)
    view.set_messages([Message("user", "q")])
    live = Message("assistant", "")
    for piece in parts:
        for ch in piece:  # one character at a time: every cut point is crossed
            live.content += ch
            view.set_live(live)
    streamed = view.toPlainText().removesuffix(CURSOR_MARK)
    whole = make_view(qtbot)
    whole.set_messages([Message("user", "q")])
    whole.set_live(Message("assistant", "".join(parts)))
    assert streamed == whole.toPlainText().removesuffix(CURSOR_MARK)
    assert "x = 1" in streamed and "The end." in streamed


def test_a_long_single_paragraph_streams_as_one_paragraph(qtbot: Any) -> None:
    text = "".join(f"Sentence {i} has **some** words in it. " for i in range(120)).strip()
    view = make_view(qtbot)
    view.set_messages([Message("user", "q")])
    live = Message("assistant", "")
    for i in range(0, len(text), 11):
        live.content = text[:i + 11]
        view.set_live(live)
    whole = make_view(qtbot)
    whole.set_messages([Message("user", "q")])
    whole.set_live(Message("assistant", text))
    # Cut into short blocks while it streams (each update lays out only the last one)...
    assert view.document().blockCount() > whole.document().blockCount()
    assert " ".join(view.toPlainText().split()) == " ".join(whole.toPlainText().split())
    # ...and one paragraph again once it has finished.
    view.set_live(None)
    live.note = ""
    view.append_message(live)
    whole.set_live(None)
    whole.append_message(Message("assistant", text))
    assert view.toPlainText() == whole.toPlainText()


def test_a_reply_citing_an_attached_document_links_to_it(qtbot: Any, tmp_path: Any) -> None:
    """Issue 30: "[harbour.pdf, page 4]" in a reply opens the PDF the question had; a name the
    question did not have, and a citation inside code, stay text."""
    from app.chat.transcript import DOCUMENTS_USED

    pdf = tmp_path / "harbour.pdf"
    pdf.write_bytes(b"%PDF-1.4")
    opened: list[QUrl] = []
    view = make_view(qtbot, open_url=opened.append)
    question = Message("user", "What are the fees?", meta={DOCUMENTS_USED: [
        {"name": "harbour.pdf", "whole": False, "passages": 1, "places": ["page 4"],
         "path": str(pdf)}]})
    reply = Message("assistant", "Twelve coins [harbour.pdf, page 4]; see also [secret.txt] and "
                                 "`[harbour.pdf]`.", parent=question)
    view.set_messages([question, reply])
    settle()
    html = view.document().toHtml()
    assert html.count("open-doc/") == 2  # the line under the question, and the citation
    qtbot.mouseClick(view.viewport(), Qt.MouseButton.LeftButton,
                     pos=_anchor_point(view, "harbour.pdf, page 4]"))
    assert [u.toLocalFile() for u in opened] == [str(pdf)]
    assert "secret.txt" in view.toPlainText() and "open-doc/0/1" not in html
