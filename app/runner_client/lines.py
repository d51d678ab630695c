"""Lines out of an untrusted byte stream, holding at most a fixed amount of any one line.

The runner's stderr and a server's event stream are read a line at a time. Read "up to the next
newline", one line with no newline in it is unbounded memory: llama.cpp once wrote a 1.8 GB
grammar to stderr as one line, and a remote server can send a reply of any size in one event.
:class:`LineBuffer` keeps the first ``max_bytes`` of a line, hands that on as soon as the line
is longer (marked ``cut``), and drops the rest of it up to its newline.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass

CUT_MARK = "…(cut)"


@dataclass(frozen=True)
class Line:
    data: bytes  # without its line ending; only the first max_bytes when cut
    cut: bool = False

    def text(self) -> str:
        """The line as text, with CUT_MARK after a line that was cut."""
        text = self.data.decode("utf-8", "replace")
        return text + CUT_MARK if self.cut else text


class LineBuffer:
    """Feed bytes, take complete lines. ``universal`` also ends lines at a lone CR (server-sent
    events allow CRLF, LF and CR); otherwise only LF ends one and a CR before it is dropped."""

    def __init__(self, max_bytes: int, universal: bool = False) -> None:
        self.max_bytes = max_bytes
        self.universal = universal
        self._buf = bytearray()
        self._skipping = False  # inside a line already handed on as cut
        self._after_cr = False  # the last byte seen ended a line with CR: an LF next belongs to it

    def feed(self, data: bytes) -> list[Line]:
        out: list[Line] = []
        at = 0
        if self._after_cr and data[:1] == b"\n":
            at = 1
        self._after_cr = False
        while at < len(data):
            end = self._line_end(data, at)
            if end < 0:
                self._take(data[at:], out)
                break
            self._take(data[at:end], out)
            if not self._skipping:
                out.append(Line(bytes(self._strip_cr(self._buf))))
            self._buf.clear()
            self._skipping = False
            at = end + 1
            if data[end:end + 1] == b"\r":
                if data[at:at + 1] == b"\n":
                    at += 1
                elif at == len(data):
                    self._after_cr = True
        return out

    def finish(self) -> list[Line]:
        """The last line when the stream ended without a newline."""
        if self._skipping or not self._buf:
            return []
        line = Line(bytes(self._strip_cr(self._buf)))
        self._buf.clear()
        return [line]

    def _line_end(self, data: bytes, at: int) -> int:
        lf = data.find(b"\n", at)
        if not self.universal:
            return lf
        cr = data.find(b"\r", at, lf if lf >= 0 else len(data))
        return cr if cr >= 0 else lf

    def _take(self, piece: bytes, out: list[Line]) -> None:
        if self._skipping:
            return
        room = self.max_bytes - len(self._buf)
        if len(piece) <= room:
            self._buf += piece
            return
        # Too long: hand on what fits now (a line may never end), drop the rest up to its end.
        self._buf += piece[:room]
        out.append(Line(bytes(self._buf), cut=True))
        self._buf.clear()
        self._skipping = True

    def _strip_cr(self, buf: bytearray) -> bytes:
        return bytes(buf[:-1]) if not self.universal and buf.endswith(b"\r") else bytes(buf)


class LineTooLong(ValueError):
    """A line over the reader's limit; callers say who sent it, in their own sentence."""

    def __init__(self, max_bytes: int) -> None:
        super().__init__(f"a line of more than {max_bytes // 2**20} MiB")
        self.max_bytes = max_bytes


def bounded_lines(chunks: Iterable[bytes], max_bytes: int) -> Iterator[str]:
    """The lines of an event stream, as text; a line over ``max_bytes`` raises LineTooLong
    as soon as it is that long, without waiting for its end."""
    buffer = LineBuffer(max_bytes, universal=True)
    for chunk in chunks:
        for line in buffer.feed(chunk):
            yield _checked(line, max_bytes)
    for line in buffer.finish():
        yield _checked(line, max_bytes)


def _checked(line: Line, max_bytes: int) -> str:
    if line.cut:
        raise LineTooLong(max_bytes)
    return line.data.decode("utf-8", "replace")
