"""What Hearth knows about Hugging Face repositories and files, as plain values (no Qt).

Everything here came from the Hub and is not trusted: names are checked by app/hub/names.py
before they touch the disk, sizes and hashes are checked against the bytes that arrive.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum

from app.i18n import TextError


class FileKind(Enum):
    """What a .gguf file in a repository is for; only MODEL files are offered for chat."""

    MODEL = "model"
    MMPROJ = "mmproj"  # a vision projector: loaded beside a model, never alone
    IMATRIX = "imatrix"  # importance matrix data for quantizing, not a model
    OTHER = "other"  # not a .gguf file at all


@dataclass(frozen=True)
class RepoSummary:
    """One search result."""

    repo_id: str  # "owner/name"
    author: str
    name: str
    downloads: int
    likes: int
    last_modified: float | None  # Unix time
    gated: bool = False
    trending_score: int | None = None


@dataclass(frozen=True)
class HubFile:
    """One file of a repository, as the Hub describes it."""

    path: str  # the name in the repository ("sub/dir/x.gguf"); checked before any use
    size: int | None  # bytes (the LFS size for large files)
    sha256: str | None  # lowercase hex from the LFS metadata; None for non-LFS files


@dataclass(frozen=True)
class FileGroup:
    """What a person downloads as one thing: a single .gguf file or all parts of a split one."""

    name: str  # display name: the file name, or the split stem + ".gguf"
    kind: FileKind
    quant: str | None  # "Q4_K_M", "IQ2_XXS", "F16", ... read from the name; None if unknown
    files: tuple[HubFile, ...]  # parts in order (one for an unsplit file)

    @property
    def size(self) -> int | None:
        """Total bytes, or None when any part has no size."""
        sizes = [f.size for f in self.files]
        return None if any(s is None for s in sizes) else sum(s or 0 for s in sizes)

    @property
    def first(self) -> HubFile:
        """The file llama.cpp is given (the first part of a split model)."""
        return self.files[0]

    @property
    def split(self) -> bool:
        return len(self.files) > 1


@dataclass(frozen=True)
class RepoDetails:
    """A repository page: card, facts, and its GGUF files grouped for download."""

    repo_id: str
    revision: str  # the commit sha the file list was read at (downloads pin it)
    card: str  # the README's Markdown ("" when there is none)
    license: str | None
    gated: bool  # False, or the Hub's gating mode ("auto"/"manual") seen as True
    architecture: str | None  # from the GGUF metadata summary the Hub keeps, if any
    parameters: int | None
    context_length: int | None
    downloads: int
    likes: int
    last_modified: float | None
    groups: tuple[FileGroup, ...] = ()
    files: tuple[HubFile, ...] = field(default=(), repr=False)  # every file, unfiltered


# -- errors: each str() is a sentence a person can act on ----------------------------------------


class HubError(TextError):
    """Anything that went wrong talking to the Hub.

    The sentence is an :class:`app.i18n.Text` (``T_``); ``str()`` returns it as it is (not the
    plain copy ``Exception.__str__`` makes), so the window translates ``ui_text(str(error))``."""


class HubUnreachableError(HubError):
    """No network, DNS failure, a refused connection, a timeout or a 5xx: try again later."""


class RepoNotFoundError(HubError):
    """The repository does not exist (or is private and the token cannot see it)."""


class EntryNotFoundError(HubError):
    """The file is not in the repository at that revision."""


class AuthError(HubError):
    """The token is missing, wrong, or the license has not been accepted.

    ``reason`` is "missing", "invalid" or "license"; ``url`` is the page to visit.
    """

    def __init__(self, message: str, reason: str, url: str | None = None) -> None:
        super().__init__(message)
        self.reason = reason
        self.url = url


class UnsafeNameError(HubError):
    """A file name from the Hub that could write outside the models folder."""


class DownloadError(HubError):
    """A download failed in a way that retrying alone will not fix (shown with the cause)."""


class DiskFullError(DownloadError):
    """Not enough free space: the download is paused and keeps what it has."""

    def __init__(self, message: str, needed: int, free: int) -> None:
        super().__init__(message)
        self.needed = needed
        self.free = free


class IntegrityError(DownloadError):
    """The bytes do not match the Hub's sha256 (after fetching them again)."""
