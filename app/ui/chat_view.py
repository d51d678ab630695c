"""The chat transcript: messages rendered from Markdown into a QTextBrowser.

Model output is untrusted: Markdown is rendered with raw HTML disabled, so a reply can format
text but never inject markup or links that run anything.
"""

from __future__ import annotations

import html

from markdown_it import MarkdownIt
from PySide6.QtWidgets import QTextBrowser, QWidget

from app.library.conversation import Message

_md = MarkdownIt("commonmark", {"html": False, "linkify": False})

_CSS = """
body { font-size: 14px; }
.msg { margin: 6px 0 14px 0; }
.who { font-weight: 600; color: #6b4f2a; margin-bottom: 2px; }
.user .who { color: #2f5d8a; }
.note { color: #9a3b2b; font-style: italic; }
pre { background: #f4f1ec; padding: 6px; }
code { background: #f4f1ec; }
"""


def render_message(m: Message, streaming: bool = False) -> str:
    who = {"user": "You", "assistant": "Assistant", "system": "System"}.get(m.role, m.role)
    if m.role == "user":
        body = "<p>" + html.escape(m.content).replace("\n", "<br>") + "</p>"
    else:
        body = _md.render(m.content) if m.content else ""
        if streaming:
            body += "<p>▍</p>"
    note = f"<p class='note'>{html.escape(m.note)}</p>" if m.note else ""
    return f"<div class='msg {m.role}'><div class='who'>{who}</div>{body}{note}</div>"


class ChatView(QTextBrowser):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setOpenExternalLinks(False)
        self.setOpenLinks(False)
        self.document().setDefaultStyleSheet(_CSS)
        self._done_html: list[str] = []  # finished messages, rendered once
        self._live: Message | None = None
        self._placeholder = ""

    def set_placeholder(self, text: str) -> None:
        self._placeholder = text
        self._refresh()

    def set_messages(self, messages: list[Message]) -> None:
        self._done_html = [render_message(m) for m in messages]
        self._live = None
        self._refresh()

    def append_message(self, m: Message) -> None:
        self._done_html.append(render_message(m))
        self._refresh()

    def set_live(self, m: Message | None) -> None:
        """The reply being streamed (re-rendered on each coalesced update)."""
        self._live = m
        self._refresh()

    def _refresh(self) -> None:
        bar = self.verticalScrollBar()
        at_end = bar.value() >= bar.maximum() - 4
        parts = list(self._done_html)
        if self._live is not None:
            parts.append(render_message(self._live, streaming=True))
        if not parts and self._placeholder:
            parts.append(f"<p style='color:#888'>{html.escape(self._placeholder)}</p>")
        self.setHtml("".join(parts))
        if at_end:
            bar.setValue(bar.maximum())
