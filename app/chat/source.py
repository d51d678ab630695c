"""Where a reply came from: this computer's model or a server the user added (no Qt).

Each stored reply keeps it in its ``meta`` as ``source`` (a JSON object, so no schema change),
and the chat shows it in the small line under the reply.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class ReplySource:
    """``server`` empty: the local runner serving the file ``model``; else the server's name,
    its base URL and the model id the reply was asked of."""

    model: str
    server: str = ""
    url: str = ""

    @property
    def remote(self) -> bool:
        return bool(self.server)

    def to_meta(self) -> dict[str, Any]:
        if self.remote:
            return {"kind": "remote", "server": self.server, "url": self.url,
                    "model": self.model}
        return {"kind": "local", "model": os.path.basename(self.model)}

    @staticmethod
    def from_meta(meta: object) -> ReplySource | None:
        """The source a stored reply names, or None (older replies, damaged data)."""
        src = meta.get("source") if isinstance(meta, dict) else None
        if not isinstance(src, dict) or not isinstance(src.get("model"), str):
            return None
        if src.get("kind") == "remote" and isinstance(src.get("server"), str) and src["server"]:
            return ReplySource(src["model"], src["server"], str(src.get("url") or ""))
        return ReplySource(src["model"])

    def label(self) -> str:
        """The short words under a reply."""
        if self.remote:
            return f"{self.model} on {self.server}"
        return os.path.basename(self.model)
