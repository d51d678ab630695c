"""One message of a conversation (no Qt)."""

from __future__ import annotations

import time
from dataclasses import dataclass, field


@dataclass
class Message:
    """A turn as the user sees it. ``note`` is shown, never sent to the model."""

    role: str  # "system" | "user" | "assistant"
    content: str
    note: str = ""  # e.g. "Stopped.", "The model runner stopped during this reply."
    id: int | None = None  # the store's row id once saved
    created: float = field(default_factory=time.time)
