"""The MCP host's protocol with the app: JSON lines over the host's stdin and stdout.

Standard library only (a contract in pyproject.toml): the app imports this module, never the
rest of the package, which needs the MCP SDK, pydantic and starlette.

One UTF-8 JSON object per line each way; the host logs on stderr only. The host first prints
``{"event": "ready"}``. Every request carries an integer ``id`` and an ``op``; its answer carries
the same ``id`` and ``ok``, and when ``ok`` is false an ``error``: one English sentence saying
what is wrong and what to do. A line that is not such a request is answered with ``"id": null``.

- ``start`` (``server``, ``config``, optional ``timeout_s``): ``config`` is stdio
  (``command``, ``args``, ``env``, optional ``cwd``) or streamable HTTP (``url``, ``headers``).
  Answer: ``tools``, a list of ``{"name", "description", "input_schema"}``; or the error and,
  for stdio, ``stderr``, the tail of the server's error output. A running server of that name is
  restarted.
- ``call`` (``server``, ``tool``, ``arguments``, optional ``timeout_s``): ``text`` (the result
  as text, at most :data:`MAX_RESULT_BYTES`) and ``is_error`` (the tool's own failure); or the
  error and ``timed_out``. Calls run concurrently.
- ``cancel`` (``call``: the id of a call): the call is answered with the error
  :data:`CANCELLED`; the cancel itself with ``ok`` true.
- ``stop`` (``server``): answered once the server and its processes are gone.
- ``list``: ``servers``, name to ``{"state", "tools", "error"}`` (``tools`` a count,
  ``error`` empty unless the state is failed).

Events the host sends unasked: ``{"event": "exited", "server", "error", "stderr"}`` when a
running stdio server dies (on POSIX; an HTTP server's absence, and on Windows a stdio server's
death, shows in the call that finds it gone). When its stdin closes, or on SIGTERM, the host
stops every server, each with every process it started, and exits.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, Final, Literal, TypedDict

# Events.
EVENT_READY: Final = "ready"
EVENT_EXITED: Final = "exited"

# Operations.
OP_START: Final = "start"
OP_CALL: Final = "call"
OP_CANCEL: Final = "cancel"
OP_STOP: Final = "stop"
OP_LIST: Final = "list"
OPS: Final = (OP_START, OP_CALL, OP_CANCEL, OP_STOP, OP_LIST)

# A server's states in a ``list`` answer.
State = Literal["starting", "ready", "failed", "stopped"]
STATE_STARTING: Final = "starting"
STATE_READY: Final = "ready"
STATE_FAILED: Final = "failed"
STATE_STOPPED: Final = "stopped"

# The error of a call that a ``cancel`` ended.
CANCELLED: Final = "cancelled"

DEFAULT_START_TIMEOUT_S: Final = 30.0
DEFAULT_CALL_TIMEOUT_S: Final = 60.0
# A time-out the app may ask for: a day covers any tool; more is a mistake, not a wish.
MAX_TIMEOUT_S: Final = 86_400.0

# A result's text is cut to this many UTF-8 bytes, with a line saying so (the app applies its
# own smaller budget before a model sees it).
MAX_RESULT_BYTES: Final = 1024 * 1024
# How much of a stdio server's error output an answer or an event carries.
STDERR_TAIL_CHARS: Final = 2000
# The longest line either side writes: a request, or an answer listing many large tools. The
# reader on each side refuses a longer one rather than holding it.
MAX_LINE_BYTES: Final = 32 * 1024 * 1024


class WireError(ValueError):
    """A line that is not a JSON object; ``str()`` says why."""


class Tool(TypedDict):
    name: str
    description: str
    input_schema: dict[str, Any]


class ServerStatus(TypedDict):
    state: State
    tools: int
    error: str


def encode(message: Mapping[str, Any]) -> bytes:
    """One protocol line. Never raises on text: a lone surrogate (which a peer's JSON escapes
    can produce) becomes ``?`` rather than failing the whole line; a NaN raises ValueError."""
    text = json.dumps(message, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    return text.encode("utf-8", errors="replace") + b"\n"


def decode(line: bytes | str) -> dict[str, Any]:
    """The JSON object on one line, or :class:`WireError`."""
    try:
        value = json.loads(line)
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise WireError(f"the line is not JSON ({exc})") from None
    except RecursionError:
        raise WireError("the line nests too deeply") from None
    if not isinstance(value, dict):
        raise WireError(f"the line is a JSON {type(value).__name__}, not an object")
    return value


# Requests, as the app writes them (the host reads the same names).

def start(request_id: int, server: str, config: Mapping[str, Any],
          timeout_s: float | None = None) -> dict[str, Any]:
    message: dict[str, Any] = {"id": request_id, "op": OP_START, "server": server,
                               "config": dict(config)}
    if timeout_s is not None:
        message["timeout_s"] = timeout_s
    return message


def call(request_id: int, server: str, tool: str, arguments: Mapping[str, Any],
         timeout_s: float | None = None) -> dict[str, Any]:
    message: dict[str, Any] = {"id": request_id, "op": OP_CALL, "server": server, "tool": tool,
                               "arguments": dict(arguments)}
    if timeout_s is not None:
        message["timeout_s"] = timeout_s
    return message


def cancel(request_id: int, call_id: int) -> dict[str, Any]:
    return {"id": request_id, "op": OP_CANCEL, "call": call_id}


def stop(request_id: int, server: str) -> dict[str, Any]:
    return {"id": request_id, "op": OP_STOP, "server": server}


def list_servers(request_id: int) -> dict[str, Any]:
    return {"id": request_id, "op": OP_LIST}
