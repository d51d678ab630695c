"""Which models the server can serve, by the names requests use (no Qt, no server stack).

The same folders as the window's library (app/library: Hearth's own models folder, the folders
the person added, LM Studio's, Ollama's, the Hugging Face cache...), scanned again when the list
is older than a couple of seconds or a request names a model not in it, so files added or
removed while the server runs are seen without a window.

A request may name a model by its library id (``FoundModel.name``: the file name, ``owner/repo/
file.gguf`` from the Hugging Face cache, ``llama3.2:3b`` from Ollama), by its file name with or
without ``.gguf``, with Ollama's ``:latest`` tag, or by an alias from server.json.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from app.library.catalog import HeaderInfoCache, LibraryEntry, describe
from app.library.folders import load_folders
from app.library.scan import ModelSource, default_sources, scan
from server.config import ServerConfig

RESCAN_AFTER_S = 2.0
MISS_RESCAN_AFTER_S = 0.25


@dataclass(frozen=True)
class Entry:
    """One model the server can load."""

    id: str
    path: Path
    size: int  # bytes, every part
    modified: float  # unix time of the file
    source: str  # "Hearth", "LM Studio", ...
    sha256: str | None  # what the bytes should hash to, where the layout says
    # What its header says (the window's header cache: read once per file version).
    architecture: str | None = None
    parameters: int | None = None  # tensor elements
    quantization: str | None = None
    context: int | None = None  # trained context length


def library_sources() -> list[ModelSource]:
    """The window's library folders, read again each time (the window may have added one)."""
    folders = load_folders()
    return default_sources(models_dir=folders.models_dir, extra_folders=folders.extra)


class Catalog:
    """The models by name, scanned again when stale. Thread-safe (scans run off the loop)."""

    def __init__(self, config: Callable[[], ServerConfig],
                 sources: Callable[[], Sequence[ModelSource]] = library_sources,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self._config = config
        self._sources = sources
        self._clock = clock
        self._lock = threading.Lock()
        self._entries: dict[str, Entry] = {}
        self._scanned_at: float | None = None
        self._headers: HeaderInfoCache | None = None  # made on the first scan (it reads a file)

    def entries(self) -> list[Entry]:
        """Every model, scanned again if the list is stale."""
        with self._lock:
            if self._scanned_at is None or self._clock() - self._scanned_at > RESCAN_AFTER_S:
                self._scan()
            return list(self._entries.values())

    def resolve(self, name: str) -> Entry | None:
        """The model ``name`` means, or None; a miss scans once more (a file just added)."""
        with self._lock:
            if self._scanned_at is None or self._clock() - self._scanned_at > RESCAN_AFTER_S:
                self._scan()
            found = self._match(name)
            if found is None and self._clock() - (self._scanned_at or 0.0) > MISS_RESCAN_AFTER_S:
                self._scan()  # a file just added; not once per made-up name in a flood of them
                found = self._match(name)
            return found

    def _scan(self) -> None:
        if self._headers is None:
            self._headers = HeaderInfoCache.default()
        entries: dict[str, Entry] = {}
        for model in scan(self._sources()):
            if not model.complete:
                continue  # a split model missing parts would fail to load
            entry = _entry(describe(model, self._headers), entries)
            if entry is not None:
                entries[entry.id] = entry
        self._headers.save()
        self._entries = entries
        self._scanned_at = self._clock()

    def _match(self, name: str) -> Entry | None:
        target = self._config().alias(name) or name
        if target in self._entries:
            return self._entries[target]
        wanted = _plain(target)
        for entry in self._entries.values():  # the file name, without .gguf or :latest
            if wanted in (_plain(entry.id), _plain(entry.path.name)):
                return entry
        return None


def _plain(name: str) -> str:
    name = name.removesuffix(":latest")
    return name[:-5] if name.lower().endswith(".gguf") else name


def _entry(described: LibraryEntry, taken: dict[str, Entry]) -> Entry | None:
    """The entry for a model; a second file of the same name gets its source in brackets."""
    model = described.found
    try:
        modified = os.stat(model.path).st_mtime
    except OSError:
        return None  # gone since the scan listed it
    name = model.name
    if name in taken:
        name = f"{model.name} ({model.source})"
        if name in taken:
            return None
    return Entry(name, model.path, model.size, modified, model.source, model.expected_sha256,
                 described.architecture, described.parameters, described.quantization,
                 described.context_length)
