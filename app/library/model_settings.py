"""Per-model settings: one JSON object per model key (no Qt).

What the key is (a file path, a repository and quantization, a content hash) is the caller's
choice; the store only keeps ``key -> object``. Values are JSON so that a setting added in a later
version needs no migration; reading tolerates a value that is not an object (it is logged and
treated as "no settings") rather than locking the user out of the model.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Callable, Mapping
from typing import Any

from app.i18n import T_
from app.storage.db import Database

log = logging.getLogger(__name__)


class ModelSettingsStore:
    """``get``/``put``/``delete`` a model's settings object by its key."""

    def __init__(self, db: Database, clock: Callable[[], float] = time.time) -> None:
        self._db = db
        self._clock = clock

    def get(self, key: str) -> dict[str, Any]:
        """The model's settings, or an empty dict when none were saved."""
        rows = self._db.query("SELECT settings FROM model_settings WHERE key = ?", (key,),
                              action=T_("read the model's settings"))
        if not rows:
            return {}
        try:
            value = json.loads(rows[0]["settings"])
        except ValueError as exc:
            log.warning("ignoring unreadable settings of %s: %s", key, exc)
            return {}
        if not isinstance(value, dict):
            log.warning("ignoring settings of %s: not a JSON object", key)
            return {}
        return value

    def put(self, key: str, settings: Mapping[str, Any]) -> None:
        """Replace the model's settings with ``settings`` (JSON-serializable values)."""
        # Serialized first: a value JSON cannot hold is a bug (TypeError), and nothing is written.
        text = json.dumps(dict(settings), ensure_ascii=False, sort_keys=True)
        self._db.execute(
            "INSERT INTO model_settings (key, settings, updated) VALUES (?, ?, ?)"
            " ON CONFLICT (key) DO UPDATE SET settings = excluded.settings,"
            " updated = excluded.updated",
            (key, text, self._clock()), action=T_("save the model's settings"))

    def delete(self, key: str) -> None:
        """Forget the model's settings (back to the defaults)."""
        self._db.execute("DELETE FROM model_settings WHERE key = ?", (key,),
                         action=T_("reset the model's settings"))
