"""JSON-lines logging on stderr, the shape the runner's log lines have (ts, level, logger, msg):
the app reads both the same way. Restated rather than imported: the host may not import the
runner (pyproject.toml's contracts)."""

from __future__ import annotations

import json
import logging
import sys
import time


class JsonFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        out: dict[str, object] = {
            "ts": round(time.time(), 3),
            "level": record.levelname.lower(),
            "logger": record.name,
            "msg": record.getMessage(),
        }
        if record.exc_info:
            out["exc"] = self.formatException(record.exc_info)
        return json.dumps(out, default=str, ensure_ascii=False)


def setup(verbose: bool = False) -> None:
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(JsonFormatter())
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(logging.DEBUG if verbose else logging.INFO)
    # The SDK's and httpx2's per-request chatter would bury the lines about servers.
    for name in ("mcp", "httpx2", "httpcore", "httpcore2"):
        logging.getLogger(name).setLevel(logging.DEBUG if verbose else logging.WARNING)
