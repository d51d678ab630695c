"""A conversation as a Markdown or JSON file the user can keep or share (no Qt).

Both show the branch on screen (the versions the user chose), the system prompt and the settings;
the JSON also carries each reply's details (model, speed) and is meant to be read back by tools.
"""

from __future__ import annotations

import json
import re
import time
from typing import Any

from app.chat.message import Message
from app.chat.toolcalls import calls_of, rounds_of
from app.chat.transcript import images_of
from app.library.conversations import Conversation
from app.storage.images import ImageStore

FORMAT = "hearth-conversation"
VERSION = 1
_NAMES = {"user": "You", "assistant": "Assistant", "system": "System"}
_UNSAFE = re.compile(r'[\x00-\x1f<>:"/\\|?*]+')
_ALT = re.compile(r"[\[\]\n\r]+")  # what would end an image's Markdown alt text


def to_markdown(conv: Conversation, images: ImageStore | None = None) -> str:
    """The conversation as Markdown: a title, then each message under its speaker's name, a
    question's images first (from ``images``, inline as data URLs)."""
    lines = [f"# {conv.title or 'Conversation'}", ""]
    when = time.strftime("%Y-%m-%d %H:%M", time.localtime(conv.created))
    lines += [f"*{when}" + (f" · {conv.model.replace(chr(92), '/').rsplit('/', 1)[-1]}*"
                            if conv.model else "*"), ""]
    system = str(conv.settings.get("system_prompt") or "")
    if system:
        lines += ["## System prompt", "", system, ""]
    for m in conv.messages:
        lines += [f"## {_NAMES.get(m.role, m.role)}", ""]
        for ref in images_of(m):
            # Inline, so the one file keeps the pictures (a path would point into Hearth).
            url = images.data_url(ref) if images else None
            alt = _ALT.sub(" ", str(ref.get("name") or "image"))
            lines += [f"![{alt}]({url})" if url else f"*(image {alt}: not in Hearth's store)*", ""]
        lines += _tool_rounds(m)
        lines += [m.content, ""]
        if m.note:
            lines += [f"*{m.note}*", ""]
    return "\n".join(lines).rstrip() + "\n"


def _tool_rounds(m: Message) -> list[str]:
    """A reply's tool calls as Markdown: each round's text, then each call's tool, outcome,
    arguments and result in fenced blocks (fences longer than any run of backticks inside)."""
    lines: list[str] = []
    for round_ in rounds_of(m):
        if round_.get("text"):
            lines += [str(round_["text"]), ""]
        for call in calls_of(round_):
            ms = call.get("ms")
            took = f", {ms} ms" if isinstance(ms, int) and ms > 0 else ""
            lines += [f"**Tool call** `{str(call.get('name'))[:80]}` ({call.get('status')}{took})",
                      ""]
            for label, text in (("Arguments", call.get("arguments")),
                                ("Result", call.get("result"))):
                body = str(text or "")
                fence = "`" * max(3, max((len(r) for r in re.findall(r"`+", body)), default=0) + 1)
                lines += [f"{label}:", "", fence, body, fence, ""]
    return lines


def to_json(conv: Conversation, images: ImageStore | None = None) -> str:
    """The conversation as JSON (UTF-8 text, indented); a question's images as data URLs in its
    ``images`` (from ``images``; null for one no longer kept)."""
    def message(m: Message) -> dict[str, Any]:
        out = {"role": m.role, "content": m.content, "note": m.note, "created": m.created,
               "meta": m.meta}
        refs = images_of(m)
        if refs:
            out["images"] = [{**r, "data_url": images.data_url(r) if images else None}
                             for r in refs]
        return out

    data: dict[str, Any] = {
        "format": FORMAT, "version": VERSION,
        "title": conv.title, "model": conv.model,
        "created": conv.created, "updated": conv.updated,
        "settings": conv.settings,
        "messages": [message(m) for m in conv.messages],
    }
    return json.dumps(data, ensure_ascii=False, indent=2) + "\n"


def file_name(title: str, suffix: str) -> str:
    """A file name from a conversation's title, safe on every system (``suffix``: ".md")."""
    stem = " ".join(_UNSAFE.sub(" ", title).split()).strip(" .") or "conversation"
    return stem[:80].rstrip(" .") + suffix
