"""Images attached to chat messages, kept beside the database (no Qt).

A message keeps references, not pixels: ``{"sha256", "format", "width", "height", "name"}`` in
its meta (app/chat/transcript.py IMAGES). The bytes live once per content in
``<data>/images/ab/<sha256>.png|jpg``, written atomically, never changed, so a Regenerate, an edit
or a restart sends exactly what was attached, and a conversation kept in SQLite stays small.

A reference is data from the database, and a database can be edited or imported: it only ever
names a file inside the store (a hex digest and one of two suffixes), never a path.
"""

from __future__ import annotations

import base64
import hashlib
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from app.storage.atomic import write_atomic

FORMATS = {"png": ".png", "jpeg": ".jpg"}
MIME = {"png": "image/png", "jpeg": "image/jpeg"}
# What a message sends for an image before the bytes are read (on the streaming thread, not the
# window's): ``hearth-image:<sha256>.<suffix>``.
SCHEME = "hearth-image:"
_SHA = re.compile(r"[0-9a-f]{64}")


class ImageStore:
    def __init__(self, root: Path) -> None:
        self.root = root

    def put(self, data: bytes, fmt: str, *, width: int, height: int, name: str = ""
            ) -> dict[str, Any]:
        """Keep ``data`` (PNG or JPEG bytes) and return its reference."""
        if fmt not in FORMATS:
            raise ValueError(f"unknown image format {fmt!r}")
        sha = hashlib.sha256(data).hexdigest()
        path = self._path(sha, fmt)
        if not path.exists():
            path.parent.mkdir(parents=True, exist_ok=True)
            write_atomic(path, data)
        return {"sha256": sha, "format": fmt, "width": int(width), "height": int(height),
                "name": name[:200]}

    def path(self, ref: Mapping[str, Any]) -> Path | None:
        """The file of a reference; None for one that names nothing the store could hold."""
        sha, fmt = ref.get("sha256"), ref.get("format")
        if not isinstance(sha, str) or not _SHA.fullmatch(sha) or fmt not in FORMATS:
            return None
        return self._path(sha, str(fmt))

    def read(self, ref: Mapping[str, Any]) -> bytes | None:
        """The image's bytes; None when the reference is not valid or the file is gone (or was
        changed on disk: its content no longer has that digest)."""
        path = self.path(ref)
        if path is None:
            return None
        try:
            data = path.read_bytes()
        except OSError:
            return None
        return data if hashlib.sha256(data).hexdigest() == ref["sha256"] else None

    def data_url(self, ref: Mapping[str, Any]) -> str | None:
        data = self.read(ref)
        if data is None:
            return None
        return f"data:{MIME[str(ref['format'])]};base64,{base64.b64encode(data).decode()}"

    def _path(self, sha: str, fmt: str) -> Path:
        return self.root / sha[:2] / f"{sha}{FORMATS[fmt]}"


def image_url(ref: Mapping[str, Any]) -> str:
    """The stand-in URL a sent message carries until the streaming thread inlines it."""
    return f"{SCHEME}{ref.get('sha256', '')}.{ref.get('format', '')}"


def inline_images(messages: list[dict[str, Any]], store: ImageStore | None
                  ) -> list[dict[str, Any]]:
    """``messages`` with each stand-in URL replaced by the image's data URL. An image that is
    no longer in the store becomes a line of text saying so (the question still goes)."""
    out: list[dict[str, Any]] = []
    for m in messages:
        content = m.get("content")
        if not isinstance(content, list):
            out.append(m)
            continue
        parts: list[dict[str, Any]] = []
        for part in content:
            url = (part.get("image_url") or {}).get("url", "") if isinstance(part, dict) else ""
            if not (isinstance(url, str) and url.startswith(SCHEME)):
                parts.append(part)
                continue
            sha, _, fmt = url[len(SCHEME):].partition(".")
            data = store.data_url({"sha256": sha, "format": fmt}) if store else None
            parts.append({"type": "image_url", "image_url": {"url": data}} if data else
                         {"type": "text", "text": "(An image was attached here, but it is no "
                                                  "longer in Hearth's store.)"})
        out.append({**m, "content": parts})
    return out
