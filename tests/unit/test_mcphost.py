"""The MCP host as the app runs it: ``python -m mcphost``, spoken to in JSON lines, hosting real
MCP servers made with the SDK's own server API (tests/fixtures/mcp_servers.py) and hostile ones.

Waits are bounded loops on an outcome, never a duration asserted: the host's time-outs are what
is tested, with small values where the test needs one to pass.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psutil
import pytest

from mcphost import wire
from tests.fixtures.mcp_servers import HUGE_CHARS, INJECTION

REPO = Path(__file__).resolve().parents[2]
SERVERS = str(REPO / "tests" / "fixtures" / "mcp_servers.py")
# How long a test waits for something that should happen within seconds; not a measurement.
PATIENCE_S = 60.0


class HostProcess:
    """A running ``python -m mcphost``: requests out, answers matched by id, events kept."""

    def __init__(self, env: dict[str, str] | None = None) -> None:
        self._stderr = tempfile.TemporaryFile()
        self.process = subprocess.Popen(
            [sys.executable, "-m", "mcphost"], cwd=REPO, stdin=subprocess.PIPE,
            stdout=subprocess.PIPE, stderr=self._stderr, env=env)
        self._answers: dict[int | None, list[dict[str, Any]]] = {}
        self.events: list[dict[str, Any]] = []
        self._changed = threading.Condition()
        self._next_id = 1
        self.closed = False
        threading.Thread(target=self._read, daemon=True).start()
        assert self.wait_for(lambda: any(e.get("event") == wire.EVENT_READY for e in self.events)), \
            self.stderr()

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            message = json.loads(line)  # the host never writes anything else on stdout
            with self._changed:
                if "event" in message:
                    self.events.append(message)
                else:
                    self._answers.setdefault(message["id"], []).append(message)
                self._changed.notify_all()
        with self._changed:
            self.closed = True
            self._changed.notify_all()

    def wait_for(self, predicate: Any, timeout: float = PATIENCE_S) -> bool:
        with self._changed:
            return self._changed.wait_for(predicate, timeout)

    def send(self, message: dict[str, Any] | bytes) -> None:
        assert self.process.stdin is not None
        data = message if isinstance(message, bytes) else json.dumps(message).encode() + b"\n"
        self.process.stdin.write(data)
        self.process.stdin.flush()

    def submit(self, op: str, **fields: Any) -> int:
        request_id, self._next_id = self._next_id, self._next_id + 1
        self.send({"id": request_id, "op": op, **fields})
        return request_id

    def answer(self, request_id: int | None) -> dict[str, Any]:
        assert self.wait_for(lambda: self._answers.get(request_id)), \
            f"no answer to request {request_id}\n{self.stderr()}"
        return self._answers[request_id].pop(0)

    def request(self, op: str, **fields: Any) -> dict[str, Any]:
        return self.answer(self.submit(op, **fields))

    def start_stdio(self, name: str, *args: str, **fields: Any) -> dict[str, Any]:
        config = {"command": sys.executable, "args": [SERVERS, *args], **fields.pop("config", {})}
        return self.request(wire.OP_START, server=name, config=config, **fields)

    def close(self) -> int:
        """Close the host's stdin, as the app does when it exits; the host's exit status."""
        if self.process.stdin is not None and not self.process.stdin.closed:
            self.process.stdin.close()
        return self.process.wait(PATIENCE_S)

    def stderr(self) -> str:
        self._stderr.seek(0)
        return self._stderr.read().decode(errors="replace")[-4000:]


@pytest.fixture(scope="module")
def host() -> Iterator[HostProcess]:
    """One host for the tests that do not end it, with the tool server "tools" started."""
    running = HostProcess()
    answer = running.start_stdio("tools", "stdio")
    assert answer["ok"], answer
    yield running
    assert running.close() == 0


@pytest.fixture
def own_host() -> Iterator[HostProcess]:
    running = HostProcess()
    yield running
    if running.process.poll() is None:
        running.process.kill()
        running.process.wait()


def _gone(pid: int) -> bool:
    """Whether process ``pid`` ends within the patience (a zombie has ended; its reaping is
    its parent's business, init's for an orphan)."""
    deadline = time.monotonic() + PATIENCE_S
    while time.monotonic() < deadline:
        try:
            if psutil.Process(pid).status() == psutil.STATUS_ZOMBIE:
                return True
        except psutil.NoSuchProcess:
            return True
        time.sleep(0.05)
    return False


def _alive(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


def _start_with_grandchild(host: HostProcess, name: str, tmp_path: Path) -> int:
    pidfile = tmp_path / f"{name}.pid"
    answer = host.start_stdio(name, "stdio", "--grandchild", str(pidfile))
    assert answer["ok"], answer
    grandchild = int(pidfile.read_text())
    assert _alive(grandchild)
    return grandchild


# Tools and results.

def test_start_lists_the_tools_with_their_schemas_and_a_call_answers(host: HostProcess) -> None:
    answer = host.request(wire.OP_LIST)
    assert answer["servers"]["tools"] == {"state": wire.STATE_READY, "tools": 5, "error": ""}
    again = host.start_stdio("tools-again", "stdio")
    tools = {tool["name"]: tool for tool in again["tools"]}
    assert set(tools) == {"echo", "fail", "hang", "huge", "env"}
    assert tools["echo"]["description"] == "Returns the text it is given."
    assert tools["echo"]["input_schema"]["properties"]["text"]["type"] == "string"
    assert host.request(wire.OP_STOP, server="tools-again")["ok"] is True

    echoed = host.request(wire.OP_CALL, server="tools", tool="echo",
                          arguments={"text": "grüß dich ✓"})
    assert echoed == {"id": echoed["id"], "ok": True, "text": "grüß dich ✓", "is_error": False}


def test_a_tool_that_raises_is_an_error_result_not_a_failed_call(host: HostProcess) -> None:
    answer = host.request(wire.OP_CALL, server="tools", tool="fail", arguments={})
    assert answer["ok"] is True and answer["is_error"] is True
    assert "the tool failed on purpose" in answer["text"]


def test_a_call_past_its_time_out_is_cancelled_and_the_host_answers_the_next(
        host: HostProcess) -> None:
    answer = host.request(wire.OP_CALL, server="tools", tool="hang", arguments={}, timeout_s=0.5)
    assert answer["ok"] is False and answer["timed_out"] is True
    assert "hang" in answer["error"] and "did not answer within 0.5 s" in answer["error"]
    after = host.request(wire.OP_CALL, server="tools", tool="echo", arguments={"text": "still"})
    assert after["ok"] and after["text"] == "still"


def test_calls_run_together_and_a_cancel_ends_one(host: HostProcess) -> None:
    hanging = host.submit(wire.OP_CALL, server="tools", tool="hang", arguments={})
    # Answered while the other call is still in flight: calls do not wait for each other.
    echoed = host.request(wire.OP_CALL, server="tools", tool="echo", arguments={"text": "beside"})
    assert echoed["text"] == "beside"
    assert host.request(wire.OP_CANCEL, call=hanging)["ok"] is True
    assert host.answer(hanging) == {"id": hanging, "ok": False, "error": wire.CANCELLED,
                                    "timed_out": False}
    # Cancelling a call that has already ended changes nothing.
    assert host.request(wire.OP_CANCEL, call=hanging)["ok"] is True


def test_a_huge_result_is_cut_and_says_so(host: HostProcess) -> None:
    answer = host.request(wire.OP_CALL, server="tools", tool="huge", arguments={})
    text = answer["text"]
    assert answer["ok"] and len(text.encode()) <= wire.MAX_RESULT_BYTES
    assert text.startswith("x" * 1000) and f"returned {HUGE_CHARS:,} bytes" in text


def test_a_call_to_an_unknown_tool_or_server_is_a_sentence(host: HostProcess) -> None:
    # The SDK's server answers an unknown tool with an error result (others with a JSON-RPC
    # error, which would be a failed call): either way the model reads why.
    unknown_tool = host.request(wire.OP_CALL, server="tools", tool="nope", arguments={})
    assert unknown_tool["ok"] is True and unknown_tool["is_error"] is True
    assert "nope" in unknown_tool["text"]
    unknown_server = host.request(wire.OP_CALL, server="nobody", tool="echo", arguments={})
    assert unknown_server["ok"] is False and "start it first" in unknown_server["error"]


def test_a_tool_description_that_gives_orders_is_passed_on_as_data(host: HostProcess) -> None:
    answer = host.start_stdio("hostile", "injection")
    assert answer["ok"], answer
    (tool,) = answer["tools"]
    assert tool["name"] == "weather" and tool["description"] == INJECTION
    called = host.request(wire.OP_CALL, server="hostile", tool="weather", arguments={"city": "Oslo"})
    assert called["text"] == "Sunny in Oslo."


def test_hearths_variables_never_reach_a_server(tmp_path: Path) -> None:
    env = {**os.environ, "HEARTH_SECRET_KEY": "from-the-host"}
    running = HostProcess(env=env)
    try:
        answer = running.start_stdio("env", "stdio", config={
            "env": {"HEARTH_API_KEY": "configured", "PLAIN": "passed"}})
        assert answer["ok"], answer
        for name, expected in (("HEARTH_SECRET_KEY", "<unset>"), ("HEARTH_API_KEY", "<unset>"),
                               ("PLAIN", "passed")):
            got = running.request(wire.OP_CALL, server="env", tool="env", arguments={"name": name})
            assert got["text"] == expected, name
    finally:
        assert running.close() == 0


# Servers that do not behave.

def test_a_server_that_never_answers_fails_its_start_within_its_time_out(
        host: HostProcess) -> None:
    answer = host.start_stdio("silent", "silent", timeout_s=1)
    assert answer["ok"] is False
    assert "did not complete the handshake within 1 s" in answer["error"]
    assert host.request(wire.OP_LIST)["servers"]["silent"]["state"] == wire.STATE_FAILED


def test_a_server_that_writes_garbage_fails_its_start_and_the_host_lives_on(
        host: HostProcess) -> None:
    # Seconds for the script to start and answer the first request with its noise (it needs no
    # SDK), which the failure quotes.
    answer = host.start_stdio("garbage", "garbage", timeout_s=3)
    assert answer["ok"] is False
    assert "not MCP" in answer["error"] and "Welcome to the server" in answer["error"]
    assert host.process.poll() is None
    after = host.request(wire.OP_CALL, server="tools", tool="echo", arguments={"text": "alive"})
    assert after["text"] == "alive"


def test_a_server_that_cannot_start_is_a_sentence_with_its_error_output(host: HostProcess) -> None:
    missing = host.request(wire.OP_START, server="missing",
                           config={"command": "hearth-no-such-command"})
    assert missing["ok"] is False and "was not found" in missing["error"]
    crashing = host.request(wire.OP_START, server="crashing", config={
        "command": sys.executable,
        "args": ["-c", "import sys; sys.stderr.write('no API key given\\n'); sys.exit(3)"]})
    assert crashing["ok"] is False and "exited with code 3" in crashing["error"]
    assert "no API key given" in crashing["stderr"]
    bad = host.request(wire.OP_START, server="bad", config={"url": "ftp://example.com"})
    assert bad["ok"] is False and "http://" in bad["error"] and bad["stderr"] == ""


def test_malformed_requests_are_answered_and_ignored(host: HostProcess) -> None:
    host.send(b"this is not json\n")
    assert "not JSON" in host.answer(None)["error"]
    host.send(b"[1, 2]\n")
    assert "not an object" in host.answer(None)["error"]
    host.send({"op": "list"})
    assert "integer id" in host.answer(None)["error"]
    wrong = host.request("explode")
    assert wrong["ok"] is False and "explode" in wrong["error"]
    bad_timeout = host.request(wire.OP_CALL, server="tools", tool="echo", timeout_s=-1)
    assert bad_timeout["ok"] is False and bad_timeout["timed_out"] is False
    assert host.request(wire.OP_LIST)["ok"] is True


def test_a_server_that_dies_is_reported(host: HostProcess, tmp_path: Path) -> None:
    pidfile = tmp_path / "doomed.pid"
    answer = host.start_stdio("doomed", "stdio", "--pidfile", str(pidfile))
    assert answer["ok"], answer
    os.kill(int(pidfile.read_text()), signal.SIGKILL)
    assert host.wait_for(lambda: any(e.get("server") == "doomed" for e in host.events))
    event = next(e for e in host.events if e.get("server") == "doomed")
    assert event["event"] == wire.EVENT_EXITED and "killed by signal 9" in event["error"]
    assert host.request(wire.OP_LIST)["servers"]["doomed"]["state"] == wire.STATE_FAILED
    call = host.request(wire.OP_CALL, server="doomed", tool="echo", arguments={"text": "x"})
    assert call["ok"] is False and "not running" in call["error"]


# Stopping: the server and every process it started.

def test_stop_ends_the_server_and_its_grandchild(host: HostProcess, tmp_path: Path) -> None:
    grandchild = _start_with_grandchild(host, "parent", tmp_path)
    assert host.request(wire.OP_STOP, server="parent")["ok"] is True
    assert _gone(grandchild)
    assert host.request(wire.OP_LIST)["servers"]["parent"]["state"] == wire.STATE_STOPPED


def test_starting_a_running_server_again_restarts_it(host: HostProcess, tmp_path: Path) -> None:
    first = _start_with_grandchild(host, "twice", tmp_path)
    (tmp_path / "twice.pid").unlink()
    second = _start_with_grandchild(host, "twice", tmp_path)
    assert first != second and _gone(first) and _alive(second)
    host.request(wire.OP_STOP, server="twice")
    assert _gone(second)


def test_closing_the_hosts_stdin_stops_every_server_and_its_children(
        own_host: HostProcess, tmp_path: Path) -> None:
    first = _start_with_grandchild(own_host, "one", tmp_path)
    second = _start_with_grandchild(own_host, "two", tmp_path)
    assert own_host.close() == 0
    assert _gone(first) and _gone(second)


def test_sigterm_stops_every_server_and_its_children(own_host: HostProcess, tmp_path: Path) -> None:
    grandchild = _start_with_grandchild(own_host, "one", tmp_path)
    own_host.process.send_signal(signal.SIGTERM)
    assert own_host.process.wait(PATIENCE_S) == 0
    assert _gone(grandchild)


# Streamable HTTP.

@pytest.fixture(scope="module")
def http_server() -> Iterator[str]:
    """The tool server over streamable HTTP, requiring ``Authorization: Bearer secret``."""
    process = subprocess.Popen([sys.executable, SERVERS, "http", "--token", "secret"],
                               stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    assert process.stdout is not None
    line = process.stdout.readline()  # printed once its socket listens (or EOF if it died)
    try:
        assert line, "the HTTP test server did not start"
        yield json.loads(line)["url"]
    finally:
        process.terminate()
        process.wait(PATIENCE_S)


def test_an_http_server_starts_and_answers_with_the_configured_header(
        host: HostProcess, http_server: str) -> None:
    answer = host.request(wire.OP_START, server="web", config={
        "url": http_server, "headers": {"Authorization": "Bearer secret"}})
    assert answer["ok"], answer
    assert "echo" in {tool["name"] for tool in answer["tools"]}
    echoed = host.request(wire.OP_CALL, server="web", tool="echo", arguments={"text": "over http"})
    assert echoed["text"] == "over http"
    assert host.request(wire.OP_STOP, server="web")["ok"] is True


def test_an_http_server_that_refuses_the_header_is_a_clear_failed_start(
        host: HostProcess, http_server: str) -> None:
    answer = host.request(wire.OP_START, server="web-refused", config={
        "url": http_server, "headers": {"Authorization": "Bearer wrong"}})
    assert answer["ok"] is False
    assert "HTTP 401" in answer["error"] and "token" in answer["error"]


def test_an_http_server_that_is_not_there_is_a_clear_failed_start(
        host: HostProcess, closed_url: str) -> None:
    answer = host.request(wire.OP_START, server="web-absent", config={"url": closed_url + "/mcp"})
    assert answer["ok"] is False and "could not be reached" in answer["error"]
