"""A conversation as a Markdown or JSON file the user can keep or share (no Qt).

Both show the branch on screen (the versions the user chose), the system prompt and the settings;
the JSON also carries each reply's details (model, speed) and is meant to be read back by tools.
"""

from __future__ import annotations

import json
import re
import time
from typing import Any

from app.library.conversations import Conversation

FORMAT = "hearth-conversation"
VERSION = 1
_NAMES = {"user": "You", "assistant": "Assistant", "system": "System"}
_UNSAFE = re.compile(r'[\x00-\x1f<>:"/\\|?*]+')


def to_markdown(conv: Conversation) -> str:
    """The conversation as Markdown: a title, then each message under its speaker's name."""
    lines = [f"# {conv.title or 'Conversation'}", ""]
    when = time.strftime("%Y-%m-%d %H:%M", time.localtime(conv.created))
    lines += [f"*{when}" + (f" · {conv.model.replace(chr(92), '/').rsplit('/', 1)[-1]}*"
                            if conv.model else "*"), ""]
    system = str(conv.settings.get("system_prompt") or "")
    if system:
        lines += ["## System prompt", "", system, ""]
    for m in conv.messages:
        lines += [f"## {_NAMES.get(m.role, m.role)}", "", m.content, ""]
        if m.note:
            lines += [f"*{m.note}*", ""]
    return "\n".join(lines).rstrip() + "\n"


def to_json(conv: Conversation) -> str:
    """The conversation as JSON (UTF-8 text, indented)."""
    data: dict[str, Any] = {
        "format": FORMAT, "version": VERSION,
        "title": conv.title, "model": conv.model,
        "created": conv.created, "updated": conv.updated,
        "settings": conv.settings,
        "messages": [{"role": m.role, "content": m.content, "note": m.note,
                      "created": m.created, "meta": m.meta} for m in conv.messages],
    }
    return json.dumps(data, ensure_ascii=False, indent=2) + "\n"


def file_name(title: str, suffix: str) -> str:
    """A file name from a conversation's title, safe on every system (``suffix``: ".md")."""
    stem = " ".join(_UNSAFE.sub(" ", title).split()).strip(" .") or "conversation"
    return stem[:80].rstrip(" .") + suffix
