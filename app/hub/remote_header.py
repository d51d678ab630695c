"""A remote model's header, read with Range requests: enough for the fit verdict (no Qt).

The planner needs only the GGUF header (metadata and the tensor directory), a few megabytes at
the start of a file of many gigabytes. :func:`remote_model` fetches it in growing chunks (never
asking twice for bytes it already has), reads every part's header for a split model, and keeps
the header bytes in a :class:`HeaderCache` so opening the same file again costs no request.
"""

from __future__ import annotations

import hashlib
import logging
import re
from pathlib import Path

from app.gguf import GGUFError, GGUFHeader, HeaderTruncatedError, ModelInfo, parse_header, read_model_bytes
from app.hub.client import HubClient
from app.hub.types import FileGroup, HubError, HubFile
from app.i18n import T_
from app.jobs import CancelledError, CancelToken
from app.storage.atomic import write_atomic

FIRST_CHUNK = 256 * 1024
MAX_HEADER = 64 * 1024 * 1024  # real headers are a few MB (a 256k vocabulary is ~6 MB)
_SHA_RE = re.compile(r"^[0-9a-f]{40}$")

_log = logging.getLogger(__name__)


class RemoteHeaderError(HubError):
    """The file's header cannot be read: damaged, not GGUF, or absurdly large."""


class HeaderCache:
    """Header bytes of remote files on disk, keyed by repository, commit, path and size.

    Only pinned commits are cached (a branch name can move). A file that does not parse is
    ignored, so a damaged cache costs one download, never a wrong answer.
    """

    def __init__(self, folder: Path) -> None:
        self.folder = folder

    def _path(self, repo_id: str, revision: str, path: str, size: int | None) -> Path:
        key = hashlib.sha256(f"{repo_id}\0{revision}\0{path}\0{size}".encode()).hexdigest()
        return self.folder / f"{key}.gguf-header"

    def get(self, repo_id: str, revision: str, path: str, size: int | None) -> bytes | None:
        if not _SHA_RE.match(revision):
            return None
        try:
            data = self._path(repo_id, revision, path, size).read_bytes()
            parse_header(data, source="the cached header", file_size=size)
        except (OSError, GGUFError):
            return None
        return data

    def put(self, repo_id: str, revision: str, path: str, size: int | None, header: bytes) -> None:
        if not _SHA_RE.match(revision):
            return
        try:
            write_atomic(self._path(repo_id, revision, path, size), header)
        except OSError as exc:  # a cache that cannot be written only costs a later download
            _log.warning("header cache write failed: %s", exc)


def remote_model(client: HubClient, repo_id: str, revision: str, group: FileGroup, *,
                 cache: HeaderCache | None = None, cancel: CancelToken | None = None) -> ModelInfo:
    """The model facts of ``group`` read from the headers of its files on the Hub."""
    name = group.name
    headers: list[bytes] = []
    first = _part_header(client, repo_id, revision, group.first, name, cache, cancel)
    headers.append(first[0])
    count = first[1].metadata.get("split.count")
    if isinstance(count, int) and count > 1 and count != len(group.files):
        raise RemoteHeaderError(T_("{name} says it is split into {count} parts, but the repository "
                                   "lists {listed}. It cannot be loaded as listed.", name=name, count=count,
                                   listed=len(group.files)))
    for i, part in enumerate(group.files[1:], start=2):
        headers.append(_part_header(client, repo_id, revision, part,
                                    T_("{name} (part {number})", name=name, number=i), cache, cancel)[0])
    try:
        return read_model_bytes(headers[0], name=name, file_size=group.first.size,
                                extra_parts=headers[1:])
    except HeaderTruncatedError as exc:  # cannot happen: each header parsed alone above
        raise RemoteHeaderError(T_("The header of {name} is incomplete ({error}).", name=name,
                                   error=str(exc))) from exc
    except GGUFError as exc:
        raise RemoteHeaderError(str(exc)) from exc


def _part_header(client: HubClient, repo_id: str, revision: str, file: HubFile, name: str,
                 cache: HeaderCache | None, cancel: CancelToken | None) -> tuple[bytes, GGUFHeader]:
    """The header bytes of one file (exactly the header, no tensor data) and its parse."""
    if cache is not None:
        cached = cache.get(repo_id, revision, file.path, file.size)
        if cached is not None:
            return cached, parse_header(cached, source=name, file_size=file.size)
    size = file.size
    buf = bytearray()
    want = FIRST_CHUNK if size is None else min(FIRST_CHUNK, size)
    while True:
        if cancel is not None and cancel.cancelled:
            raise CancelledError()
        if want > len(buf):
            start = len(buf)  # append-only: bytes already here are never asked for again
            got = client.read_range(repo_id, revision, file.path, start, want - 1, cancel=cancel)
            buf += got
            if len(got) < want - start:
                size = len(buf)  # the file ended early: it is shorter than the Hub said
        try:
            header = parse_header(buf, source=name, file_size=size)
        except HeaderTruncatedError as exc:
            if exc.needed > MAX_HEADER:
                raise _too_large(name, exc.needed) from exc
            if size is not None and len(buf) >= size:
                raise RemoteHeaderError(T_("{name} ends inside its own header: the file on Hugging "
                                           "Face is damaged or not a model.", name=name)) from exc
            nxt = min(max(exc.needed, 2 * len(buf)), MAX_HEADER)
            if size is not None:
                nxt = min(nxt, size)
            if nxt <= len(buf):
                raise _too_large(name, exc.needed) from exc
            want = nxt
            continue
        except GGUFError as exc:
            raise RemoteHeaderError(str(exc)) from exc
        data = bytes(buf[:min(len(buf), header.data_offset)])
        if cache is not None:
            cache.put(repo_id, revision, file.path, file.size, data)
        return data, header


def _too_large(name: str, needed: int) -> RemoteHeaderError:
    return RemoteHeaderError(T_("{name} claims a header of more than {needed:,.0f} MiB; real models "
                                "need a few. Hearth stops at {most} MiB: the file is damaged or not "
                                "a model.", name=name, needed=needed / 2**20, most=MAX_HEADER // 2**20))
