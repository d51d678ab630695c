"""The app's readers of untrusted streams hold at most a bounded line (issue 24).

The runner's stderr was read "up to a newline" (llama.cpp once wrote a 1.8 GB grammar as one
line), and a remote server's event stream through httpx2's ``iter_lines``, which keeps a line
whole however long it grows. A line over the cap is now cut (stderr, marked "…(cut)") or an error
sentence (an event stream), never unbounded memory.
"""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import http.server
import queue
import sys
import threading
from collections.abc import Iterator
from typing import Any

import pytest

from app.runner_client.lines import CUT_MARK, LineBuffer, LineTooLong, bounded_lines

HUGE = 20 * 2**20  # over every cap, far under what would hurt the test machine


# ---- the line splitter ------------------------------------------------------------------------

def _lines(chunks: list[bytes], cap: int = 10, universal: bool = False) -> list[tuple[str, bool]]:
    buf = LineBuffer(cap, universal=universal)
    out = [line for chunk in chunks for line in buf.feed(chunk)] + buf.finish()
    return [(line.data.decode(), line.cut) for line in out]


@pytest.mark.timeout(10)
def test_lines_split_across_chunks() -> None:
    assert _lines([b"ab", b"c\nde", b"\n\nf"]) == [("abc", False), ("de", False), ("", False),
                                                  ("f", False)]


@pytest.mark.timeout(10)
def test_a_long_line_is_cut_at_once_and_the_rest_of_it_dropped() -> None:
    buf = LineBuffer(4)
    first = buf.feed(b"abcdefgh")  # no newline yet: the cut part is handed on already
    assert [(line.data, line.cut) for line in first] == [(b"abcd", True)]
    assert first[0].text() == "abcd" + CUT_MARK
    assert [(line.data, line.cut) for line in buf.feed(b"ijk\nok\n")] == [(b"ok", False)]


@pytest.mark.timeout(10)
def test_crlf_lf_and_cr_end_event_stream_lines_even_split_between_chunks() -> None:
    assert _lines([b"a\r", b"\nb\rc\n\r\n"], universal=True) == [
        ("a", False), ("b", False), ("c", False), ("", False)]
    # Without universal newlines a CR before the LF is dropped, a lone one kept.
    assert _lines([b"a\r", b"\nb\rc\n"]) == [("a", False), ("b\rc", False)]


@pytest.mark.timeout(10)
def test_event_stream_line_over_the_cap_raises_as_soon_as_it_is_over() -> None:
    def endless() -> Iterator[bytes]:
        yield b"data: ok\n\n"
        while True:  # one line that never ends: reading it whole would never return
            yield b"x" * 65536

    lines = bounded_lines(endless(), 2**20)
    assert next(lines) == "data: ok"
    assert next(lines) == ""
    with pytest.raises(LineTooLong):
        next(lines)


# ---- the runner's stderr, through RunnerProcess ------------------------------------------------

_NOISY_RUNNER = f"""
import sys
sys.stderr.write('x' * {HUGE})
sys.stderr.write('\\n')
sys.stderr.write('{{"level": "error", "msg": "the real reason"}}\\n')
sys.stderr.flush()
sys.exit(3)
"""


@pytest.mark.timeout(60)
def test_runner_stderr_line_is_cut_and_marked(qtbot: Any) -> None:
    """Today: the 20 MB line was kept whole and re-emitted as one log event."""
    from app.services.runner_process import MAX_OUTPUT_LINE_BYTES, RunnerProcess
    from app.services.tasks import TaskRunner

    tasks = TaskRunner()
    runner = RunnerProcess(tasks)
    events: list[dict[str, Any]] = []
    runner.log_event.connect(events.append)
    try:
        with qtbot.waitSignal(runner.failed, timeout=30_000) as failed:
            runner.start("model.gguf", program=[sys.executable, "-c", _NOISY_RUNNER])
    finally:
        runner.stop_and_wait()
        tasks.wait(5000)
    longest = max(len(str(e.get("msg", ""))) for e in events)
    assert longest <= MAX_OUTPUT_LINE_BYTES + len(CUT_MARK), longest
    assert any(str(e.get("msg", "")).endswith(CUT_MARK) for e in events)
    assert "the real reason" in str(failed.args[0])


# ---- event streams: the runner's and a remote server's -------------------------------------------

class _HugeEvent(http.server.BaseHTTPRequestHandler):
    """Answers any POST with an event stream whose second event is one 20 MB line."""

    def do_POST(self) -> None:  # http.server's name for it
        self.rfile.read(int(self.headers.get("Content-Length", 0)))
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.end_headers()
        try:
            self.wfile.write(b'data: {"choices": [{"delta": {"content": "hi"}}]}\n\n')
            self.wfile.write(b'data: {"choices": [{"delta": {"content": "')
            for _ in range(HUGE // 65536):
                self.wfile.write(b"y" * 65536)
            self.wfile.write(b'"}}]}\n\ndata: [DONE]\n\n')
        except OSError:
            pass  # the client stopped reading: what it should do

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def huge_event_server() -> Iterator[str]:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _HugeEvent)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


@pytest.mark.timeout(60)
def test_runner_event_stream_line_over_the_cap_is_an_error_sentence(
        huge_event_server: str) -> None:
    """Today: the 20 MB line was read whole and handed on as one piece of the reply."""
    from app.runner_client import RunnerClient, RunnerError

    with RunnerClient(huge_event_server, "k") as client:
        stream = client.stream_chat([{"role": "user", "content": "hi"}])
        pieces: list[str] = []
        with pytest.raises(RunnerError, match="more than 4 MiB") as caught:
            pieces.extend(stream)
    assert pieces == ["hi"]
    assert "Restart the model" in str(caught.value)


@pytest.mark.timeout(60)
def test_remote_event_stream_line_over_the_cap_is_an_error_sentence(
        huge_event_server: str) -> None:
    """Today: the same, from a server the person added."""
    from app.remote.client import RemoteClient, RemoteError

    with RemoteClient(huge_event_server + "/v1", None, name="Big Server") as client:
        stream = client.stream_chat([{"role": "user", "content": "hi"}], "m")
        pieces: list[str] = []
        with pytest.raises(RemoteError, match="more than 4 MiB") as caught:
            pieces.extend(stream)
    assert pieces == ["hi"]
    assert str(caught.value).startswith("Big Server ")


# ---- bodies read whole from a remote server ------------------------------------------------------

BIG_BODY = 40 * 2**20  # over each cap; the old code read it whole, then failed to parse it


class _EndlessJson(http.server.BaseHTTPRequestHandler):
    """Bodies that are read whole, each 40 MB with no declared length: the list of models, a
    reply that is not streamed, and (for a message containing ERR) a 500's explanation."""

    protocol_version = "HTTP/1.0"  # the body ends when the connection closes

    def do_GET(self) -> None:  # http.server's name for it
        self._endless(200, b'{"data": [', b'{"id": "m"}, ' * 4096)

    def do_POST(self) -> None:  # http.server's name for it
        body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
        if b"ERR" in body:
            self._endless(500, b'{"error": {"message": "', b"e" * 65536)
        else:
            self._endless(200, b'{"choices": [{"message": {"content": "', b"y" * 65536)

    def _endless(self, status: int, start: bytes, piece: bytes) -> None:
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.end_headers()
        sent = 0
        try:
            self.wfile.write(start)
            for _ in range(BIG_BODY // len(piece)):
                self.wfile.write(piece)
                sent += len(piece)
        except OSError:
            pass  # the client stopped reading: what it should do
        finally:
            self.server.sent.put(sent)  # type: ignore[attr-defined]

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def endless_json_server() -> Iterator[http.server.ThreadingHTTPServer]:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _EndlessJson)
    server.sent = queue.Queue()  # type: ignore[attr-defined]
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server
    server.shutdown()
    server.server_close()


def _url(server: http.server.ThreadingHTTPServer) -> str:
    return f"http://127.0.0.1:{server.server_address[1]}/v1"


def _sent(server: http.server.ThreadingHTTPServer) -> int:
    """What the server wrote before the client stopped reading (it tells when it is done)."""
    sent: int = server.sent.get(timeout=30)  # type: ignore[attr-defined]
    return sent


@pytest.mark.timeout(60)
def test_a_reply_that_is_not_streamed_is_read_up_to_a_cap(
        endless_json_server: http.server.ThreadingHTTPServer) -> None:
    """Today: 40 MB read whole into memory, then 'did not answer like an OpenAI API'."""
    from app.remote.client import RemoteClient, RemoteError

    with RemoteClient(_url(endless_json_server), None, name="Big Server") as client:
        stream = client.stream_chat([{"role": "user", "content": "hi"}], "m")
        with pytest.raises(RemoteError, match="more than 16 MiB as one reply"):
            list(stream)


@pytest.mark.timeout(60)
def test_the_list_of_models_is_read_up_to_a_cap(
        endless_json_server: http.server.ThreadingHTTPServer) -> None:
    from app.remote.client import RemoteClient, RemoteError

    with RemoteClient(_url(endless_json_server), None, name="Big Server") as client, \
            pytest.raises(RemoteError, match="more than 8 MiB as its list of models"):
        client.models()


@pytest.mark.timeout(60)
def test_an_error_is_explained_from_its_first_bytes_only(
        endless_json_server: http.server.ThreadingHTTPServer) -> None:
    """Today: the 40 MB explanation is read whole before the error is shown."""
    from app.remote.client import RemoteClient, ServerApiError

    with RemoteClient(_url(endless_json_server), None, name="Big Server") as client, \
            pytest.raises(ServerApiError, match="HTTP 500"):
        client.stream_chat([{"role": "user", "content": "ERR"}], "m")
    # Closed after its first bytes: what the sockets' buffers hold, far from all of it.
    assert _sent(endless_json_server) < BIG_BODY // 2
