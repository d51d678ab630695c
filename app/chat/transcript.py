"""The transcript of one conversation as a state machine (no Qt).

A reply goes through: ``begin_reply`` (the user's message and an empty assistant message, the
*live* one) → ``append`` (streamed text) → ``finish`` with a typed :class:`ReplyEnd`. Whatever
ends a reply (the model's stop, the length limit, the user's Stop, the runner dying, the window
closing), the partial reply is kept and says why it ended: Hearth never loses a conversation.

What the model is sent is separate from what is stored: :meth:`Transcript.api_messages` leaves
out failed empty replies and, given a budget, drops the oldest turns (never the stored ones).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from enum import Enum
from typing import Any

from app.chat.message import Message
from app.chat.toolcalls import api_turns, rounds_of, rounds_text
from app.storage.images import image_url

# A user message's attached documents, kept in its meta so that a Regenerate, an edit or a
# restart sends the same: the block the model is sent before the message's text
# (app/documents/fit.py) and what of each document went in ({"name", "whole", "passages",
# "places"} each), which the chat shows under the message.
DOCUMENTS = "documents"
DOCUMENTS_USED = "documents_used"
# A user message's images: references into Hearth's image store (app/storage/images.py), sent to
# a model that sees images, shown as thumbnails, kept through Regenerate, edits and restarts.
IMAGES = "images"
# What an image costs in the context before the runner has counted it: Gemma 3's 256 tokens,
# Qwen's for a mid-size picture; the trim errs toward sending fewer old turns.
IMAGE_TOKENS = 768
ATTACHMENTS = (DOCUMENTS, DOCUMENTS_USED, IMAGES)
# A conversation's knowledge (in its settings): files and folders every question draws on.
KNOWLEDGE = "knowledge"


def images_of(m: Message) -> list[dict[str, Any]]:
    """The image references a user message carries (none for other roles or odd meta)."""
    refs = m.meta.get(IMAGES) if m.role == "user" else None
    return [r for r in refs if isinstance(r, dict)] if isinstance(refs, list) else []


def sent_text(m: Message) -> str:
    """What the model is sent of ``m``: a question with documents gets them first."""
    block = m.meta.get(DOCUMENTS) if m.role == "user" else None
    return f"{block}\n---\n\n{m.content}" if isinstance(block, str) and block else m.content


class ReplyEnd(Enum):
    """Why a reply ended."""

    FINISHED = "stop"  # the model ended it
    LENGTH = "length"  # max_tokens or the context ran out
    STOPPED = "stopped"  # the user pressed Stop
    RUNNER_DIED = "runner_died"  # the runner process went away during the reply
    FAILED = "failed"  # the runner answered with an error
    CLOSED = "closed"  # the window was closed during the reply


RUNNER_DIED_NOTE = ("The model runner stopped during this reply. Restart the model to continue; "
                    "the conversation is kept.")

_NOTES = {
    ReplyEnd.FINISHED: "",
    ReplyEnd.LENGTH: "The reply reached its length limit.",
    ReplyEnd.STOPPED: "Stopped.",
    ReplyEnd.RUNNER_DIED: RUNNER_DIED_NOTE,
    ReplyEnd.CLOSED: "The window was closed during this reply.",
}


def end_note(end: ReplyEnd, detail: str = "") -> str:
    """The note shown under a reply that ended this way (``detail``: the error's sentence)."""
    if end is ReplyEnd.FAILED:
        return detail or "The reply failed."
    return _NOTES[end]


class TranscriptError(Exception):
    """A transcript operation in the wrong state (a bug in the caller, not the user's doing)."""


@dataclass
class Transcript:
    """The messages of one conversation and the reply being streamed, if any."""

    messages: list[Message] = field(default_factory=list)  # the branch shown, oldest first
    live: Message | None = None
    conversation_id: int | None = None
    model: str = ""
    settings: dict[str, Any] = field(default_factory=dict)  # system prompt, sampling

    @property
    def replying(self) -> bool:
        return self.live is not None

    def begin_reply(self, text: str) -> tuple[Message, Message]:
        """Add the user's message and an empty live reply; returns both."""
        self._idle()
        user = Message("user", text, parent=self.messages[-1] if self.messages else None)
        self.messages.append(user)
        return user, self._live_after(user)

    def regenerate(self, reply: Message) -> Message:
        """A new reply in place of ``reply`` (the old one stays stored as a branch): the
        messages after it leave the view, and the new live reply answers the same message."""
        self._idle()
        i = self._index(reply, "assistant")
        del self.messages[i:]
        return self._live_after(self.messages[-1] if self.messages else None)

    def edit(self, question: Message, text: str) -> tuple[Message, Message]:
        """Ask ``text`` in place of the user's ``question`` (a branch: the old one is kept);
        returns the new question and the live reply to it."""
        self._idle()
        i = self._index(question, "user")
        del self.messages[i:]
        user = Message("user", text, parent=question.parent,
                       meta={k: question.meta[k] for k in ATTACHMENTS
                             if k in question.meta})  # the words change, not the attachments
        self.messages.append(user)
        return user, self._live_after(user)

    def continue_reply(self, reply: Message) -> Message:
        """Let the model go on with the last reply, which was cut (length limit, Stop)."""
        self._idle()
        if not self.messages or self.messages[-1] is not reply or reply.role != "assistant":
            raise TranscriptError("only the last reply can be continued")
        reply.note = ""
        self.live = reply
        return reply

    def _idle(self) -> None:
        if self.live is not None:
            raise TranscriptError("a reply is already streaming")

    def _index(self, message: Message, role: str) -> int:
        for i, m in enumerate(self.messages):
            if m is message and m.role == role:
                return i
        raise TranscriptError(f"that {role} message is not in the conversation shown")

    def _live_after(self, parent: Message | None) -> Message:
        live = Message("assistant", "", parent=parent)
        self.messages.append(live)
        self.live = live
        return live

    def append(self, text: str) -> Message | None:
        """Streamed text for the live reply; None when no reply is live (a late delta)."""
        if self.live is None:
            return None
        self.live.content += text
        return self.live

    def finish(self, end: ReplyEnd, detail: str = "") -> Message | None:
        """End the live reply; it keeps its text and says why it ended. None if none was live."""
        live = self.live
        if live is None:
            return None
        self.live = None
        note = end_note(end, detail)
        if note and not live.note:
            live.note = note
        return live

    def api_messages(self, system: str = "", budget: int | None = None,
                     count: Callable[[str], int] | None = None, *, continuing: bool = False,
                     images: bool = False) -> tuple[list[dict[str, Any]], int]:
        """What the model is sent, and how many of the oldest messages were left out.

        Failed empty replies are left out. With ``budget`` (tokens), the oldest turns are dropped
        until the rest fits; the newest user message is always sent. The stored conversation is
        never changed. The live reply is left out, unless ``continuing``: then its text is sent
        last, for the model to go on from. ``images``: the model sees images, so a question's
        go with it (as stand-in URLs the streaming thread inlines: app/storage/images.py);
        otherwise they are left out.
        """
        # The live reply's tool rounds are sent while it goes on after their results.
        chosen = [m for m in self.messages
                  if (m is not self.live or continuing or rounds_of(m))
                  and (m.content or m.role != "assistant" or rounds_of(m))]
        kept, dropped = trim_to_budget(chosen, budget, count or estimate_tokens, images)
        out: list[dict[str, Any]] = [{"role": "system", "content": system}] if system else []
        for m in kept:
            if rounds_of(m):
                out += api_turns(m, content=m is not self.live or continuing)
            else:
                out.append(_sent(m, images))
        return out, dropped


def _sent(m: Message, images: bool) -> dict[str, Any]:
    refs = images_of(m) if images else []
    if not refs:
        return {"role": m.role, "content": sent_text(m)}
    parts: list[dict[str, Any]] = [{"type": "image_url", "image_url": {"url": image_url(r)}}
                                   for r in refs]
    return {"role": m.role, "content": [*parts, {"type": "text", "text": sent_text(m)}]}


def estimate_tokens(text: str) -> int:
    """A cheap upper-side estimate (about 3.5 characters a token in English, plus the turn's
    own template tokens); the runner's real count replaces it where known."""
    return len(text) * 2 // 7 + 4


def trim_to_budget(messages: Sequence[Message], budget: int | None,
                   count: Callable[[str], int], images: bool = False
                   ) -> tuple[list[Message], int]:
    """Drop the oldest messages until the rest fits ``budget``; keeps at least the last one."""
    items = list(messages)
    if budget is None:
        return items, 0
    sizes = [count(sent_text(m)) + (IMAGE_TOKENS * len(images_of(m)) if images else 0)
             + (count(rounds_text(m)) if rounds_of(m) else 0) for m in items]
    total = sum(sizes)
    start = 0
    while total > budget and start < len(items) - 1:
        total -= sizes[start]
        start += 1
    # A reply is never sent without the question it answers: start on a user message.
    while start < len(items) - 1 and items[start].role == "assistant":
        start += 1
    return items[start:], start


_CUT = {ReplyEnd.LENGTH.value, ReplyEnd.STOPPED.value, ReplyEnd.CLOSED.value,
        ReplyEnd.RUNNER_DIED.value}


def can_continue(transcript: Transcript) -> bool:
    """Whether the last reply was cut (length limit, Stop, a closed window, the runner's end)
    and has text the model could go on from."""
    if transcript.live is not None or not transcript.messages:
        return False
    last = transcript.messages[-1]
    if last.role != "assistant" or not last.content:
        return False
    finish = last.meta.get("finish")
    if isinstance(finish, str):
        return finish in _CUT
    return last.note in {_NOTES[ReplyEnd(v)] for v in _CUT}
