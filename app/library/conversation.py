"""A conversation: the messages, saved atomically after every change (no Qt).

Hearth promises never to lose a conversation: a partial reply that was stopped, or cut off by a
runner crash, is kept and saved like any other message.
"""

from __future__ import annotations

import json
import logging
import os
import time
import uuid
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from app import paths

log = logging.getLogger(__name__)


@dataclass
class Message:
    role: str  # "system" | "user" | "assistant"
    content: str
    note: str = ""  # e.g. "stopped", "runner stopped": shown, never sent to the model


@dataclass
class Conversation:
    id: str = field(default_factory=lambda: uuid.uuid4().hex[:12])
    created: float = field(default_factory=time.time)
    model: str = ""
    messages: list[Message] = field(default_factory=list)

    def api_messages(self) -> list[dict[str, Any]]:
        """What the model sees: empty assistant replies (failed turns) are left out."""
        return [{"role": m.role, "content": m.content} for m in self.messages
                if m.content or m.role != "assistant"]

    def path(self) -> Path:
        folder = paths.data_dir() / "conversations"
        folder.mkdir(parents=True, exist_ok=True)
        return folder / f"{self.id}.json"

    def save(self) -> None:
        target = self.path()
        tmp = target.with_suffix(".tmp")
        tmp.write_text(json.dumps(asdict(self), ensure_ascii=False, indent=1), "utf-8")
        os.replace(tmp, target)

    @classmethod
    def load(cls, path: Path) -> Conversation:
        data = json.loads(path.read_text("utf-8"))
        msgs = [Message(**{k: m.get(k, "") for k in ("role", "content", "note")})
                for m in data.get("messages", []) if isinstance(m, dict)]
        return cls(id=str(data.get("id") or uuid.uuid4().hex[:12]),
                   created=float(data.get("created", time.time())),
                   model=str(data.get("model", "")), messages=msgs)
