"""The model library as the window shows it: what each found model is, whether its bytes are
intact, and deleting Hearth's own downloads (no Qt).

Reading a header is cheap (a memory map touches only the header pages), but fifty models on a
spinning disk still take seconds, so :class:`HeaderInfoCache` remembers what each file held,
keyed by its resolved path, size and modification time: a file that changes gets a new key.

Integrity is checked against what the file's origin published: the Ollama digest, the Hugging
Face LFS sha256 that names a cache blob, or the sha256 Hearth's own downloader recorded after a
verified download (:func:`record_sha256`). Where nothing was published Hearth says so instead of
pretending to pass or fail.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import threading
from collections.abc import Callable
from dataclasses import dataclass
from enum import Enum
from pathlib import Path
from typing import Any

from app import paths as app_paths
from app.gguf import GGUFError, read_model
from app.i18n import T_, TextError
from app.jobs import CancelToken, ProgressFn
from app.library.scan import FoundModel
from app.storage.atomic import write_json_atomic

log = logging.getLogger(__name__)

BLOCK = 8 * 1024 * 1024  # read size when hashing: large enough to keep the disk streaming
_CACHE_VERSION = 1
_CACHE_LIMIT = 2000  # entries kept across sessions; a library is tens of models


class LibraryError(TextError):
    """Something about a library model the user must act on; ``str()`` says what (an
    :class:`app.i18n.Text` the window translates)."""


class NotOwnedError(LibraryError):
    """The model lies outside Hearth's own folder; another app owns it."""


class ModelFileError(LibraryError):
    """A model file cannot be read or removed."""


@dataclass(frozen=True)
class LibraryEntry:
    """One row of the library: the found files and what their header says."""

    found: FoundModel
    architecture: str | None
    parameters: int | None  # total tensor elements
    quantization: str | None
    context_length: int | None  # trained context
    n_layer: int | None
    error: str | None  # a sentence when the header cannot be read


# -- the header cache ---------------------------------------------------------------------------


class HeaderInfoCache:
    """What each model file's header held, in a JSON file; safe to share between threads."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._lock = threading.Lock()
        self._entries: dict[str, dict[str, Any]] = {}
        self._dirty = False
        self._load()

    @classmethod
    def default(cls) -> HeaderInfoCache:
        return cls(app_paths.cache_dir() / "library" / "headers.json")

    def _load(self) -> None:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return
        except (OSError, ValueError) as exc:
            # A cache is rebuilt, never trusted when damaged.
            log.warning("ignoring the model header cache %s: %s", self.path, exc)
            return
        if isinstance(data, dict) and data.get("version") == _CACHE_VERSION:
            entries = data.get("entries")
            if isinstance(entries, dict):
                self._entries = {k: v for k, v in entries.items() if isinstance(v, dict)}

    def get(self, key: str) -> dict[str, Any] | None:
        with self._lock:
            value = self._entries.get(key)
            if value is not None:
                # Re-inserting marks it recently used, so trimming drops the oldest first.
                self._entries[key] = self._entries.pop(key)
            return value

    def put(self, key: str, value: dict[str, Any]) -> None:
        with self._lock:
            self._entries.pop(key, None)
            self._entries[key] = value
            self._dirty = True

    def save(self) -> None:
        """Write the cache if anything changed; a failure is logged, not raised (it is a cache)."""
        with self._lock:
            if not self._dirty:
                return
            keys = list(self._entries)[-_CACHE_LIMIT:]
            payload = {"version": _CACHE_VERSION,
                       "entries": {k: self._entries[k] for k in keys}}
            self._dirty = False
        try:
            write_json_atomic(self.path, payload, indent=None)
        except (OSError, ValueError, TypeError) as exc:
            log.warning("could not save the model header cache %s: %s", self.path, exc)


def _file_key(paths: tuple[Path, ...]) -> str | None:
    """Resolved path, size and mtime of every part: any change to a part is a new key."""
    parts = []
    for p in paths:
        try:
            st = os.stat(p)
            real = os.path.realpath(p)
        except OSError:
            return None
        parts.append(f"{real}|{st.st_size}|{st.st_mtime_ns}")
    return "\n".join(parts)


def describe(found: FoundModel, cache: HeaderInfoCache | None = None) -> LibraryEntry:
    """Read what ``found`` is from its header (cached); never raises for a bad file."""
    if not found.complete:
        missing = found.part_count - len(found.paths)
        return _entry(found, {"error": (
            f"{missing} of the {found.part_count} parts of {found.name} are missing. "
            "Download every part into the same folder.")})
    key = _file_key(found.paths)
    if cache is not None and key is not None:
        hit = cache.get(key)
        if hit is not None:
            return _entry(found, hit)
    info = _read_info(found)
    if cache is not None and key is not None:
        cache.put(key, info)
    return _entry(found, info)


def _read_info(found: FoundModel) -> dict[str, Any]:
    try:
        model = read_model(found.path)
    except GGUFError as exc:
        return {"error": str(exc)}
    except OSError as exc:
        return {"error": f"Cannot read {found.path}: {exc.strerror or exc}."}
    return {
        "architecture": model.architecture,
        "parameters": model.n_params or None,
        "quantization": model.quantization,
        "context_length": model.n_ctx_train or None,
        "n_layer": model.n_layer,
    }


def _entry(found: FoundModel, info: dict[str, Any]) -> LibraryEntry:
    def num(key: str) -> int | None:
        value = info.get(key)
        return value if isinstance(value, int) and not isinstance(value, bool) else None

    def text(key: str) -> str | None:
        value = info.get(key)
        return value if isinstance(value, str) else None

    return LibraryEntry(found=found, architecture=text("architecture"),
                        parameters=num("parameters"), quantization=text("quantization"),
                        context_length=num("context_length"), n_layer=num("n_layer"),
                        error=text("error"))


# -- checksums Hearth recorded ------------------------------------------------------------------

_records_lock = threading.Lock()


def default_records_path() -> Path:
    return app_paths.cache_dir() / "library" / "checksums.json"


def record_sha256(path: str | os.PathLike[str], sha256: str, *,
                  records: Path | None = None) -> None:
    """Remember that the file at ``path`` (as it is now) hashed to ``sha256``.

    Hearth's downloader calls this after a download whose hash matched the Hub's: later checks
    of that file then have something to compare with. The record holds the file's size and
    modification time; a file replaced since then has no record.
    """
    store = records or default_records_path()
    real = os.path.realpath(path)
    st = os.stat(real)
    with _records_lock:
        data = _read_records(store)
        data[real] = {"sha256": sha256.lower(), "size": st.st_size, "mtime_ns": st.st_mtime_ns}
        write_json_atomic(store, {"version": 1, "files": data})


def recorded_sha256(path: str | os.PathLike[str], *, records: Path | None = None) -> str | None:
    """The sha256 :func:`record_sha256` stored for this very file, or None."""
    store = records or default_records_path()
    real = os.path.realpath(path)
    with _records_lock:
        entry = _read_records(store).get(real)
    if not isinstance(entry, dict):
        return None
    try:
        st = os.stat(real)
    except OSError:
        return None
    if entry.get("size") != st.st_size or entry.get("mtime_ns") != st.st_mtime_ns:
        return None
    sha = entry.get("sha256")
    return sha if isinstance(sha, str) else None


def _forget_record(path: Path, store: Path) -> None:
    real = os.path.realpath(path)
    with _records_lock:
        data = _read_records(store)
        if data.pop(real, None) is not None:
            write_json_atomic(store, {"version": 1, "files": data})


def _read_records(store: Path) -> dict[str, Any]:
    try:
        data = json.loads(store.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    files = data.get("files") if isinstance(data, dict) else None
    return dict(files) if isinstance(files, dict) else {}


# -- verifying ----------------------------------------------------------------------------------


class VerifyOutcome(Enum):
    MATCH = "match"  # every part hashed to what was published
    MISMATCH = "mismatch"  # at least one part did not: the file is damaged
    UNCHECKED = "unchecked"  # nothing published to compare with


@dataclass(frozen=True)
class VerifyResult:
    """How a check ended; ``str()`` is the sentence to show."""

    outcome: VerifyOutcome
    actual: tuple[str, ...]  # sha256 of each part
    expected: tuple[str | None, ...]  # what each part should hash to, when known
    message: str

    @property
    def ok(self) -> bool:
        return self.outcome is VerifyOutcome.MATCH

    def __str__(self) -> str:
        return self.message


def verify(found: FoundModel, cancel: CancelToken | None = None,
           progress: ProgressFn | None = None, *, records: Path | None = None) -> VerifyResult:
    """Hash every part of ``found`` and compare with what its origin published.

    Raises :class:`~app.jobs.CancelledError` when cancelled and :class:`ModelFileError` when a
    part is missing or cannot be read.
    """
    if not found.complete:
        raise ModelFileError(T_("{name} is missing parts: download every part before checking it.",
                                name=found.name))
    expected = _expected(found, records)
    total = sum(_size(p) for p in found.paths) or 1
    done = 0
    actual: list[str] = []

    def step(n: int) -> None:
        nonlocal done
        done += n
        if progress is not None:
            progress(min(done / total, 1.0), f"Checking {found.name}…")

    for part in found.paths:
        actual.append(_sha256_file(part, cancel, step))

    mismatched = [i for i, (a, e) in enumerate(zip(actual, expected, strict=True))
                  if e is not None and a != e]
    checked = [e for e in expected if e is not None]
    if mismatched:
        names = ", ".join(found.paths[i].name for i in mismatched)
        message = (f"{found.name} is damaged: {names} does not match its published checksum. "
                   "Delete it and download it again.")
        return VerifyResult(VerifyOutcome.MISMATCH, tuple(actual), expected, message)
    if not checked:
        shown = actual[0] if len(actual) == 1 else ", ".join(actual)
        message = (f"{found.name} has no published checksum to compare with; "
                   f"its SHA-256 is {shown}.")
        return VerifyResult(VerifyOutcome.UNCHECKED, tuple(actual), expected, message)
    if len(checked) < len(expected):
        message = (f"{len(checked)} of the {len(expected)} parts of {found.name} match their "
                   "published checksums; the others have no published checksum to compare with.")
        return VerifyResult(VerifyOutcome.UNCHECKED, tuple(actual), expected, message)
    return VerifyResult(VerifyOutcome.MATCH, tuple(actual), expected,
                        f"{found.name} is intact: it matches its published checksum.")


def _expected(found: FoundModel, records: Path | None) -> tuple[str | None, ...]:
    published: tuple[str | None, ...]
    if len(found.part_sha256) == len(found.paths):
        published = found.part_sha256
    elif len(found.paths) == 1:
        published = (found.expected_sha256,)
    else:
        published = (None,) * len(found.paths)
    return tuple((sha.lower() if sha else None) or recorded_sha256(p, records=records)
                 for sha, p in zip(published, found.paths, strict=True))


def _sha256_file(path: Path, cancel: CancelToken | None, step: Callable[[int], None]) -> str:
    digest = hashlib.sha256()
    try:
        with path.open("rb") as f:
            while True:
                if cancel is not None:
                    cancel.check()
                block = f.read(BLOCK)
                if not block:
                    break
                digest.update(block)
                step(len(block))
    except OSError as exc:
        raise ModelFileError(T_("Cannot read {path}: {error}.", path=path,
                                error=exc.strerror or str(exc))) from exc
    return digest.hexdigest()


def _size(path: Path) -> int:
    try:
        return os.stat(path).st_size
    except OSError:
        return 0


# -- deleting -----------------------------------------------------------------------------------


def delete(found: FoundModel, models_dir: Path, *, records: Path | None = None) -> None:
    """Remove every part of ``found``, only if all of them lie in Hearth's own ``models_dir``.

    Models of other apps are theirs to delete: removing a blob behind Ollama's or the Hugging
    Face cache's back would leave that app with a broken entry. A part reached through a symlink
    that leads out of the folder is refused for the same reason.
    """
    root = Path(os.path.realpath(models_dir))
    for part in found.paths:
        link_home = Path(os.path.realpath(part.parent)) / part.name
        target = Path(os.path.realpath(part))
        if not (link_home.is_relative_to(root) and target.is_relative_to(root)) or target == root:
            owner = found.source if not found.own else "another folder"
            raise NotOwnedError(
                T_("Hearth only deletes models it downloaded into {models_dir}; {part} belongs to "
                   "{owner}. Remove it there.", models_dir=models_dir, part=part, owner=owner))
    folders: set[Path] = set()
    for part in found.paths:
        real = Path(os.path.realpath(part))  # before the unlink, while a link still leads there
        try:
            part.unlink()
        except FileNotFoundError:
            pass
        except OSError as exc:
            raise ModelFileError(T_("Cannot delete {part}: {error}. Close any program using it and "
                                    "try again.", part=part, error=exc.strerror or str(exc))) from exc
        folders.add(Path(os.path.realpath(part.parent)))
        try:
            _forget_record(real, records or default_records_path())
        except OSError as exc:
            log.info("could not forget the checksum of %s: %s", part, exc)
    # Empty <owner>/<repo> folders left behind are removed; the models folder itself stays.
    for folder in sorted(folders, key=lambda f: len(f.parts), reverse=True):
        while folder != root and folder.is_relative_to(root):
            try:
                folder.rmdir()
            except OSError:
                break
            folder = folder.parent
