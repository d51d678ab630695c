"""The window's MCP host service against the real host process (``python -m mcphost``) and a
real MCP server made with the SDK (tests/fixtures/mcp_servers.py): started on first use, its
tools offered, a call answered, a server that fails said so, all of it stopped at close."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

from app.services.mcp_host import FAILED, READY, McpHostService
from app.tools.config import McpServer
from app.tools.spec import ToolResult

SERVERS = Path(__file__).resolve().parents[1] / "fixtures" / "mcp_servers.py"


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def test_a_server_starts_on_first_use_answers_a_call_and_stops_with_the_window(
        qtbot: Any, tmp_path: Path) -> None:
    pidfile = tmp_path / "server.pid"
    good = McpServer("tests", command=sys.executable,
                     args=(str(SERVERS), "stdio", "--pidfile", str(pidfile)))
    silent = McpServer("silent", command=sys.executable, args=(str(SERVERS), "garbage"))
    host = McpHostService([good, silent], start_timeout_s=10)
    ready: list[bool] = []
    done: list[tuple[str, ToolResult, bool]] = []
    host.call_done.connect(lambda uid, result, late: done.append((uid, result, late)))
    try:
        host.ensure(["tests", "silent"], lambda: ready.append(True))
        qtbot.waitUntil(lambda: bool(ready), timeout=90_000)
        assert host.view("tests").state == READY
        assert {t.name for t in host.tools()} >= {"echo", "fail", "hang", "huge"}
        assert all(t.source == "tests" for t in host.tools())
        assert host.view("silent").state == FAILED and host.view("silent").error
        host.call("u1", "tests", "echo", {"text": "hello"}, 30)
        host.call("u2", "tests", "fail", {}, 30)
        qtbot.waitUntil(lambda: len(done) == 2, timeout=60_000)
        results = {uid: r for uid, r, _ in done}
        assert results["u1"].text == "hello" and not results["u1"].is_error
        assert results["u2"].is_error
        pid = int(pidfile.read_text())
        assert _alive(pid)
    finally:
        host.close()
    qtbot.waitUntil(lambda: not _alive(pid), timeout=30_000)


def test_a_host_that_cannot_start_fails_its_servers_and_holds_no_message(qtbot: Any) -> None:
    host = McpHostService([McpServer("tests", command="x")], program=["/nonexistent/host"])
    ready: list[bool] = []
    host.ensure(["tests"], lambda: ready.append(True))
    qtbot.waitUntil(lambda: bool(ready), timeout=30_000)  # the message goes on without tools
    view = host.view("tests")
    assert view.state == FAILED and "could not be started" in view.error
    assert host.tools() == []


def test_a_second_test_of_a_starting_server_ends_ready(qtbot: Any) -> None:
    server = McpServer("tests", command=sys.executable, args=(str(SERVERS), "stdio"))
    host = McpHostService([server], start_timeout_s=30)
    try:
        host.start("tests")
        host.start("tests")  # pressed twice: the first start's answer must not count
        # Both starts answered (the first one "stopped before it finished", or ready): only
        # the second one's answer counts.
        qtbot.waitUntil(lambda: not host._pending, timeout=90_000)
        assert host.view("tests").state == READY and host.tools()
    finally:
        host.close()


def test_names_that_would_pose_as_the_built_in_tools_are_refused() -> None:
    from app.tools.mcp_json import valid_name

    assert valid_name("files") and not valid_name("builtin") and not valid_name("Builtin ")
