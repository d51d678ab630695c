"""The MCP host's parts without a process: the wire's lines, a server's configuration, a result
as text, the reading of a server's output."""

from __future__ import annotations

import base64
import json
import subprocess
import sys
from pathlib import Path

import anyio
import mcp_types as types
import pytest
from anyio.abc import ByteReceiveStream
from mcp.shared.message import SessionMessage

from mcphost import stdio, wire
from mcphost.config import ConfigError, HttpConfig, StdioConfig, parse, server_environment
from mcphost.results import cut, result_text
from mcphost.stdio import StdioServer

REPO = Path(__file__).resolve().parents[2]


def test_a_line_round_trips_and_survives_what_json_escapes_can_hold() -> None:
    message = wire.call(7, "files", "read", {"path": "ü/✓"}, timeout_s=5)
    assert wire.decode(wire.encode(message)) == message
    # A lone surrogate (a peer's "\ud800") cannot be UTF-8: it becomes "?", the line survives.
    assert wire.decode(wire.encode({"text": "a\ud800b"})) == {"text": "a?b"}
    with pytest.raises(ValueError):
        wire.encode({"x": float("nan")})
    for line, why in ((b"{", "not JSON"), (b"[]", "not an object"), (b"\xff", "not JSON"),
                      (b"[" * 100_000, "nests too deeply")):
        with pytest.raises(wire.WireError, match=why):
            wire.decode(line)


def test_the_request_builders_name_what_the_host_reads() -> None:
    assert wire.start(1, "s", {"command": "npx"}) == {"id": 1, "op": "start", "server": "s",
                                                      "config": {"command": "npx"}}
    assert wire.cancel(3, 2) == {"id": 3, "op": "cancel", "call": 2}
    assert wire.stop(4, "s") == {"id": 4, "op": "stop", "server": "s"}
    assert wire.list_servers(5) == {"id": 5, "op": "list"}
    assert set(wire.OPS) == {"start", "call", "cancel", "stop", "list"}


def test_configurations_are_checked_before_anything_runs() -> None:
    assert parse("s", {"command": "npx", "args": ["-y", "pkg"], "env": {"A": "1"}}) == \
        StdioConfig(command="npx", args=("-y", "pkg"), env={"A": "1"})
    assert parse("h", {"url": "https://example.com/mcp", "headers": {"Authorization": "Bearer k"}}) \
        == HttpConfig(url="https://example.com/mcp", headers={"Authorization": "Bearer k"})
    for raw, why in (
            ([], "not an object"), ({}, "neither a command nor a url"),
            ({"command": "a", "url": "http://x"}, "both"), ({"command": " "}, "empty"),
            ({"command": "a", "args": "b"}, "list of strings"), ({"command": "a", "env": {"A": 1}},
                                                                "map names to strings"),
            ({"command": "a\0b"}, "NUL"), ({"url": "file:///etc/passwd"}, "http://"),
            ({"url": "https://x", "headers": {"A": "b\r\nInjected: 1"}}, "line break")):
        with pytest.raises(ConfigError, match=why):
            parse("s", raw)


def test_a_servers_environment_never_carries_hearths_variables() -> None:
    env = server_environment({"PATH": "/bin", "HOME": "/h"},
                             {"HEARTH_API_KEY": "k", "hearth_home": "x", "TOKEN": "t"})
    assert env == {"PATH": "/bin", "HOME": "/h", "TOKEN": "t"}


def test_a_result_reads_as_text_with_one_line_for_each_other_part() -> None:
    png = base64.b64encode(b"\x89PNG" + b"\0" * 1230).decode()
    result = types.CallToolResult(content=[
        types.TextContent(type="text", text="first"),
        types.ImageContent(type="image", data=png, mime_type="image/png"),
        types.AudioContent(type="audio", data=base64.b64encode(b"abc").decode(),
                           mime_type="audio/wav"),
        types.ResourceLink(type="resource_link", uri="file:///a.txt", name="a",
                           mime_type="text/plain"),
        types.EmbeddedResource(type="resource", resource=types.TextResourceContents(
            uri="file:///b.md", text="hello", mime_type="text/markdown")),
        types.TextContent(type="text", text="last"),
    ])
    assert result_text(result).split("\n") == [
        "first", "[image: image/png, 1234 bytes]", "[audio: audio/wav, 3 bytes]",
        "[resource link: file:///a.txt, text/plain]",
        "[resource: file:///b.md, text/markdown, 5 characters]", "last"]
    structured = types.CallToolResult(content=[], structured_content={"n": 1})
    assert result_text(structured) == '{"n": 1}'


def test_a_cut_keeps_whole_characters_within_the_limit() -> None:
    assert cut("short", limit=1000) == "short"
    text = "é" * 1000  # two bytes each: a cut at an odd byte would split one
    for limit in (501, 600, 777):
        cut_text = cut(text, limit=limit)
        assert len(cut_text.encode()) <= limit
        kept, note = cut_text.split("\n", 1)
        assert set(kept) == {"é"} and "2,000 bytes" in note


class _Chunks(ByteReceiveStream):
    """A server's stdout, as the chunks given."""

    def __init__(self, chunks: list[bytes]) -> None:
        self._chunks = list(chunks)

    async def receive(self, max_bytes: int = 65536) -> bytes:
        if not self._chunks:
            raise anyio.EndOfStream
        return self._chunks.pop(0)

    async def aclose(self) -> None:
        self._chunks.clear()


def _read(chunks: list[bytes], monkeypatch: pytest.MonkeyPatch,
          limit: int = 1000) -> tuple[StdioServer, list[object], list[str]]:
    monkeypatch.setattr(stdio, "MAX_SERVER_LINE_BYTES", limit)
    ends: list[str] = []
    server = StdioServer("s", StdioConfig(command="x"), on_end=lambda: ends.append("end"))
    received: list[object] = []

    async def main() -> None:
        send, receive = anyio.create_memory_object_stream[SessionMessage | Exception](100)
        await server.read_stdout(_Chunks(chunks), send)
        async with receive:
            received.extend([item async for item in receive])

    anyio.run(main)
    return server, received, ends


def test_a_servers_output_is_read_line_by_line_and_garbage_is_skipped(
        monkeypatch: pytest.MonkeyPatch) -> None:
    ping = b'{"jsonrpc": "2.0", "id": 1, "method": "ping"}'
    server, received, ends = _read([b"Starting server...\n" + ping[:10], ping[10:] + b"\n\n",
                                    b"\xff\xfe\n", ping + b"\n"], monkeypatch)
    assert [m.message for m in received if isinstance(m, SessionMessage)] == [
        types.JSONRPCRequest(jsonrpc="2.0", id=1, method="ping")] * 2
    assert server.garbage == "Starting server..." and not server.overlong
    assert ends == ["end"]  # its output ended: the server's doing


def test_a_line_longer_than_the_limit_ends_the_connection(monkeypatch: pytest.MonkeyPatch) -> None:
    server, received, ends = _read([b"x" * 600, b"y" * 600, b'{"never": "read"}\n'], monkeypatch)
    assert server.overlong and received == [] and ends == ["end"]


def test_the_wire_module_loads_only_the_standard_library() -> None:
    """What the app's process pays for importing the protocol: nothing but the standard library
    (the import contract checks the source; this, what an import really loads)."""
    code = "import json, sys; import mcphost.wire; print(json.dumps(sorted(sys.modules)))"
    done = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True,
                          timeout=60, check=True)
    loaded = json.loads(done.stdout)
    foreign = {m.split(".")[0] for m in loaded} - set(sys.stdlib_module_names) - {"mcphost"}
    assert not {m for m in foreign if not m.startswith("_")}, foreign
    assert {m for m in loaded if m.startswith("mcphost")} == {"mcphost", "mcphost.wire"}
