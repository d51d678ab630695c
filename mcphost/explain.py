"""What went wrong with a server, as one English sentence that says what to do.

The SDK's exceptions name protocol details (an MCPError code, an httpx2 error, an exception
group from a task group); the person configuring a server needs the cause in their terms.
"""

from __future__ import annotations

from dataclasses import dataclass

import anyio
import httpx2
import mcp_types
import pydantic
from mcp.shared.exceptions import MCPError

from mcphost.config import ConfigError


@dataclass
class Clues:
    """What the host saw of a server besides the exception: its HTTP answers, or its process."""

    name: str
    url: str | None = None
    command: str | None = None
    http_status: int | None = None
    returncode: int | None = None
    garbage: str | None = None
    overlong: bool = False


def leaf(exc: BaseException) -> BaseException:
    """The exception that says what happened, out of the groups anyio's task groups wrap it in."""
    while isinstance(exc, BaseExceptionGroup):
        leaves = [e for e in exc.exceptions if not isinstance(e, anyio.get_cancelled_exc_class())]
        exc = (leaves or list(exc.exceptions))[0]
    return exc


def start_failure(exc: BaseException, clues: Clues) -> str:
    exc = leaf(exc)
    name = clues.name
    if isinstance(exc, ConfigError):
        return str(exc)
    if isinstance(exc, FileNotFoundError) and clues.command is not None:
        if exc.filename not in (None, clues.command):
            return (f"The folder {exc.filename} for MCP server “{name}” does not exist: "
                    "correct its cwd.")
        return (f"The command “{clues.command}” of MCP server “{name}” was not found: install "
                "it, or give its full path.")
    if isinstance(exc, PermissionError) and clues.command is not None:
        return (f"The command “{clues.command}” of MCP server “{name}” may not be run "
                "(permission denied): check the path and that the file is executable.")
    if ended := _ended(clues):
        return ended
    if clues.http_status is not None:
        return _http_refusal(clues, clues.http_status)
    if isinstance(exc, httpx2.ConnectError):
        return (f"MCP server “{name}” could not be reached at {clues.url}: check that it runs "
                "and that the address is right.")
    if isinstance(exc, httpx2.TimeoutException):
        return (f"MCP server “{name}” at {clues.url} did not answer in time: check that it "
                "runs and that the address is right.")
    if isinstance(exc, httpx2.HTTPError):
        return f"MCP server “{name}” at {clues.url} could not be reached ({exc}): check its address."
    if isinstance(exc, pydantic.ValidationError):
        return (f"MCP server “{name}” answered with something that is not valid MCP: it may be "
                "too old or not an MCP server; check its command or address.")
    if isinstance(exc, MCPError):
        return (f"MCP server “{name}” refused to start ({exc.message}): check its configuration "
                "and its error output.")
    if isinstance(exc, OSError):
        return (f"MCP server “{name}” could not be started ({exc.strerror or exc}): check its "
                "command.")
    return f"MCP server “{name}” failed to start ({type(exc).__name__}: {exc}): check its configuration."


def start_timeout(clues: Clues, timeout_s: float) -> str:
    name = clues.name
    if ended := _ended(clues):
        return ended
    if clues.garbage is not None:
        return (f"MCP server “{name}” wrote lines that are not MCP on its output (“{clues.garbage}”) "
                f"and did not complete the handshake within {timeout_s:g} s: check that its "
                "command starts an MCP server on stdio that logs to stderr, not stdout.")
    if clues.url is not None:
        return (f"MCP server “{name}” at {clues.url} did not complete the handshake within "
                f"{timeout_s:g} s: check the address, or give it a longer time-out.")
    return (f"MCP server “{name}” did not complete the handshake within {timeout_s:g} s: check "
            "that its command starts an MCP server on stdio, or give it a longer time-out.")


def exited(clues: Clues) -> str:
    return _ended(clues) or (f"MCP server “{clues.name}” closed its connection: start it again, "
                             "and see its error output if it keeps stopping.")


def _ended(clues: Clues) -> str | None:
    name = clues.name
    if clues.overlong:
        return (f"MCP server “{name}” sent a message larger than Hearth accepts and was "
                "stopped: a tool result that large cannot be used.")
    if clues.returncode is None:
        return None
    if clues.returncode < 0:
        how = f"was killed by signal {-clues.returncode}"
    else:
        how = f"exited with code {clues.returncode}"
    return (f"MCP server “{name}” {how}: see its error output, and check its command and "
            "arguments.")


def _http_refusal(clues: Clues, status: int) -> str:
    name = clues.name
    if status in (401, 403):
        return (f"MCP server “{name}” refused Hearth (HTTP {status}): check the key or token "
                "in its headers.")
    if status == 404:
        return (f"There is no MCP server at {clues.url} (HTTP 404): check the address and its "
                "path, often /mcp.")
    return (f"MCP server “{name}” answered HTTP {status}: check its address and the server's "
            "own log.")


def call_failure(exc: BaseException, clues: Clues, tool: str, timeout_s: float) -> tuple[str, bool]:
    """The sentence for a failed call, and whether it was a time-out."""
    exc = leaf(exc)
    name = clues.name
    if isinstance(exc, MCPError) and exc.code == mcp_types.REQUEST_TIMEOUT:
        return call_timeout(name, tool, timeout_s), True
    if isinstance(exc, TimeoutError):
        return call_timeout(name, tool, timeout_s), True
    if isinstance(exc, MCPError) and exc.code == mcp_types.CONNECTION_CLOSED:
        return (f"MCP server “{name}” stopped before the tool “{tool}” answered: "
                f"{_ended(clues) or 'start it again to use it.'}"), False
    if isinstance(exc, MCPError):
        if clues.http_status is not None and exc.code == mcp_types.INTERNAL_ERROR:
            return _http_refusal(clues, clues.http_status), False
        return (f"MCP server “{name}” refused the call to “{tool}” ({exc.message}): check the "
                "tool's name and arguments."), False
    if isinstance(exc, pydantic.ValidationError):
        return (f"MCP server “{name}” answered the call to “{tool}” with a result that is not "
                "valid MCP."), False
    if isinstance(exc, httpx2.HTTPError):
        return (f"MCP server “{name}” could not be reached for the call to “{tool}” ({exc}): "
                "check that it still runs."), False
    return (f"The call to “{tool}” on MCP server “{name}” failed ({type(exc).__name__}: {exc})."), False


def call_timeout(name: str, tool: str, timeout_s: float) -> str:
    return (f"The tool “{tool}” of MCP server “{name}” did not answer within {timeout_s:g} s "
            "and was cancelled: try again, or allow it more time.")
