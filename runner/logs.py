"""JSON-lines logging on stderr: the GUI reads one object per line and re-emits it as a signal."""

from __future__ import annotations

import json
import logging
import sys
import time

# Attributes every LogRecord has; anything else was passed with ``extra=`` and goes into the JSON.
_STANDARD = set(vars(logging.LogRecord("", 0, "", 0, "", None, None))) | {"message", "asctime"}


class JsonFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        out: dict[str, object] = {
            "ts": round(time.time(), 3),
            "level": record.levelname.lower(),
            "logger": record.name,
            "msg": record.getMessage(),
        }
        for key, value in vars(record).items():
            if key not in _STANDARD and not key.startswith("_"):
                out[key] = value
        if record.exc_info and record.levelno >= logging.ERROR:
            out["exc"] = self.formatException(record.exc_info)
        return json.dumps(out, default=str, ensure_ascii=False)


def setup(verbose: bool = False) -> None:
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(JsonFormatter())
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(logging.DEBUG if verbose else logging.INFO)
    # uvicorn's start/stop chatter would bury the line that matters (a load error must be last).
    for name in ("uvicorn", "uvicorn.error", "uvicorn.access"):
        logging.getLogger(name).setLevel(logging.WARNING)
    logging.getLogger("llama.cpp").setLevel(logging.DEBUG if verbose else logging.WARNING)


class Throttle:
    """At most one log line per event every ``every`` seconds, with a count of those held back:
    a flood of refused connections or requests must not become a flood of log lines (the app
    reads every one). For the event loop's thread only."""

    def __init__(self, every: float = 1.0) -> None:
        self.every = every
        self._next: dict[str, float] = {}
        self._held: dict[str, int] = {}

    def log(self, logger: logging.Logger, event: str, msg: str, *args: object,
            level: int = logging.INFO, **extra: object) -> None:
        now = time.monotonic()
        if now < self._next.get(event, 0.0):
            self._held[event] = self._held.get(event, 0) + 1
            return
        self._next[event] = now + self.every
        held = self._held.pop(event, 0)
        if held:
            msg += f" ({held} more like it since the last such line)"
        logger.log(level, msg, *args, extra={"event": event, **extra})
