"""One message of a conversation (no Qt)."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any


@dataclass(eq=False)
class Message:
    """A turn as the user sees it. ``note`` is shown, never sent to the model.

    Messages are compared by identity: two replies with the same text are still two replies.
    """

    role: str  # "system" | "user" | "assistant"
    content: str
    note: str = ""  # e.g. "Stopped.", "The model runner stopped during this reply."
    id: int | None = None  # the store's row id once saved
    created: float = field(default_factory=time.time)
    # The message this one answers or follows (None: the first). A link, not an id: a new
    # message's parent may not have its row id yet when the message is saved.
    parent: Message | None = field(default=None, repr=False)
    # Per reply: "model", "tokens_per_s", "ttft_ms", "finish", "reasoning" (JSON values).
    meta: dict[str, Any] = field(default_factory=dict)
    # The stored alternatives at this point of the conversation (this one included), oldest
    # first: an edited question or a regenerated reply is a sibling of the one it replaced.
    siblings: tuple[int, ...] = ()

    @property
    def branch(self) -> tuple[int, int]:
        """(position, count) among its siblings, from 1; (1, 1) when there are none."""
        if self.id is None or len(self.siblings) < 2 or self.id not in self.siblings:
            return 1, 1
        return self.siblings.index(self.id) + 1, len(self.siblings)
