"""The folder tools, ``list_files`` and ``read_file``: one folder the person picked, read-only.

The path comes from a model and may be hostile (or be led by a hostile file it read). Rules:

* a path is relative to the chosen folder; an absolute path (``/etc``, ``C:\\``, ``\\\\server``)
  is refused, and a ``..`` that would climb above the folder is refused before anything is
  touched (``..`` inside it is resolved by name, which is exact because no link is followed);
* **every symbolic link on the way is refused**, one that points inside the folder too. Checking
  where a link leads and then opening it leaves a moment in which the link can be changed; refusing
  links lets the kernel enforce the rule instead: each component is opened relative to the one
  before it (``openat``) with ``O_NOFOLLOW``, so a link put in place after the check makes the open
  fail rather than lead outside. It also means an entry is judged by what it is, not by a target
  that may change later. A link in a listing is shown as ``link`` and not followed. (Where
  ``openat`` is missing, on Windows, each component is checked with ``lstat`` (symbolic links and
  junctions refused), the real path of the result must lie inside the folder, and the opened file
  must be the one checked.)
* only regular files are read: a device, pipe (FIFO) or socket is refused from its ``lstat``,
  before any open, and every open carries ``O_NONBLOCK`` and is checked again with ``fstat``, so a
  FIFO swapped in between can never block the call;
* a file over :data:`MAX_FILE_BYTES` is refused with its size, and at most that much is read even
  if it grows; a file with a zero byte in its first :data:`SNIFF_BYTES` is binary, and one that is
  not UTF-8 (BOM-marked UTF-16 is read too) is refused unless the bad sequences are few (at most
  one in a hundred characters, each shown as U+FFFD with a note).

A hard link cannot be told from the file it names: one inside the folder is read (whoever made it
could read the file already, and a file system keeps hard links on one volume).

Sentences never name the folder's own location (the person's home, their user name): only the
path the model gave, relative to the folder.
"""

from __future__ import annotations

import codecs
import errno
import os
import stat
from pathlib import Path, PureWindowsPath

from app.i18n import TextError, english

MAX_ENTRIES = 500  # entries a listing shows
MAX_SCAN = 100_000  # entries a listing reads at most (a folder of millions stays quick)
MAX_FILE_BYTES = 1024 * 1024  # 1 MiB
SNIFF_BYTES = 8192
MAX_PATH = 1024  # characters of a path argument
_BAD_SHARE = 100  # at most one replaced sequence per this many characters

_O_BASE = os.O_RDONLY | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0) \
    | getattr(os, "O_NOINHERIT", 0) | getattr(os, "O_NONBLOCK", 0)
_O_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_O_DIRECTORY = getattr(os, "O_DIRECTORY", 0)
# openat(2) with O_NOFOLLOW: the race-free walk (Linux, macOS, the BSDs). Tests turn it off to
# exercise the portable walk.
USE_DIR_FD = bool(_O_NOFOLLOW) and os.open in os.supports_dir_fd and os.stat in os.supports_dir_fd
# Windows: a symbolic link or a junction (a cloud placeholder is a reparse point too, but a file).
_LINK_TAGS = {getattr(stat, "IO_REPARSE_TAG_SYMLINK", -1),
              getattr(stat, "IO_REPARSE_TAG_MOUNT_POINT", -2)}


class FileToolError(TextError, ValueError):
    """A path or file the folder tools refuse; the message tells the model why."""


def show(text: str) -> str:
    """``text`` with control characters and undecodable bytes escaped: a file name cannot break
    a listing's lines or carry bytes that are not text."""
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() or c == " " else c.encode("unicode_escape",
                                                                   "backslashreplace").decode("ascii")
                   for c in text)


def _parts(path: str) -> list[str]:
    """``path``'s components inside the folder, ``..`` resolved by name; refused when absolute or
    when it climbs out."""
    if "\x00" in path:
        raise FileToolError(english("A path cannot contain a zero character."))
    if len(path) > MAX_PATH:
        raise FileToolError(english("That path is {length} characters long; paths in the chosen folder "
                               "are at most {limit}.", length=len(path), limit=MAX_PATH))
    if os.path.isabs(path) or PureWindowsPath(path).anchor:
        raise FileToolError(english("“{path}” is an absolute path; give a path relative to the chosen "
                               "folder, such as “notes/todo.txt”.", path=show(path)))
    pieces = path.replace("\\", "/").split("/") if os.name == "nt" else path.split("/")
    parts: list[str] = []
    for piece in pieces:
        if piece in ("", "."):
            continue
        if piece == "..":
            if not parts:
                raise FileToolError(english("“{path}” leads outside the chosen folder; Hearth reads only "
                                       "inside it.", path=show(path)))
            parts.pop()
            continue
        parts.append(piece)
    return parts


def no_folder() -> FileToolError:
    """The refusal of a file tool when the person has chosen no folder."""
    return FileToolError(english("The person has not chosen a folder for the file tools, so there are "
                            "no files to list or read. They can choose one in Hearth's settings."))


def _root(folder: Path | None) -> Path:
    if folder is None:
        raise no_folder()
    try:
        root = Path(folder).resolve(strict=True)
    except (OSError, RuntimeError):
        root = None
    if root is None or not root.is_dir():
        raise FileToolError(english("The folder the person chose for the file tools is missing or is not "
                               "a folder."))
    return root


def _is_link(st: os.stat_result) -> bool:
    return stat.S_ISLNK(st.st_mode) or getattr(st, "st_reparse_tag", 0) in _LINK_TAGS


def _check(st: os.stat_result, shown: str, want: str) -> None:
    """Refuse ``st`` (of the path ``shown``) unless it is what the walk wants here: a folder on the
    way or to list, a regular file of bounded size to read."""
    if _is_link(st):
        raise FileToolError(english("“{path}” is a symbolic link; Hearth does not follow links in the "
                               "chosen folder.", path=shown))
    if want == "folder" and not stat.S_ISDIR(st.st_mode):
        raise FileToolError(english("“{path}” is not a folder.", path=shown))
    if want == "file":
        if stat.S_ISDIR(st.st_mode):
            raise FileToolError(english("“{path}” is a folder: list it with list_files.", path=shown))
        if not stat.S_ISREG(st.st_mode):
            raise FileToolError(english("“{path}” is not a regular file (it is a device, pipe or socket); "
                                   "Hearth reads only regular files.", path=shown))
        if st.st_size > MAX_FILE_BYTES:
            raise _too_large(shown, st.st_size)


def _too_large(shown: str, size: int) -> FileToolError:
    return FileToolError(english("“{path}” is {size:,} bytes; Hearth reads files of at most {limit:,} "
                            "bytes (1 MiB).", path=shown, size=size, limit=MAX_FILE_BYTES))


def _open_at(root: Path, parts: list[str], want: str) -> int:
    """A descriptor of ``root/parts`` opened component by component, never through a link."""
    fd = os.open(root, _O_BASE | _O_DIRECTORY)
    try:
        for i, part in enumerate(parts):
            shown = show("/".join(parts[:i + 1]))
            last = i == len(parts) - 1
            st = os.stat(part, dir_fd=fd, follow_symlinks=False)
            _check(st, shown, want if last else "folder")
            flags = _O_BASE | _O_NOFOLLOW | (_O_DIRECTORY if stat.S_ISDIR(st.st_mode) else 0)
            try:
                new = os.open(part, flags, dir_fd=fd)
            except OSError as exc:  # a link swapped in after the check
                if exc.errno in (errno.ELOOP, errno.EMLINK):
                    raise FileToolError(english("“{path}” is a symbolic link; Hearth does not follow "
                                           "links in the chosen folder.", path=shown)) from exc
                raise
            os.close(fd)
            fd = new
            if not os.path.samestat(st, os.fstat(fd)):
                raise FileToolError(english("“{path}” changed while Hearth opened it; try again.",
                                       path=shown))
        return fd
    except BaseException:
        os.close(fd)
        raise


def _open_plain(root: Path, parts: list[str], want: str) -> tuple[Path, int | None]:
    """The portable walk: ``lstat`` each component, check the real path, open a file and check it
    is the one looked at. Gives the path and, for a file, its descriptor."""
    path = root
    st = os.stat(root)
    for i, part in enumerate(parts):
        path = path / part
        st = os.lstat(path)
        _check(st, show("/".join(parts[:i + 1])), want if i == len(parts) - 1 else "folder")
    shown = show("/".join(parts)) or "."
    real = Path(os.path.realpath(path))
    if real != root and not real.is_relative_to(root):
        raise FileToolError(english("“{path}” leads outside the chosen folder; Hearth reads only "
                               "inside it.", path=shown))
    if want == "folder":
        return path, None
    fd = os.open(path, _O_BASE | _O_NOFOLLOW)
    if not os.path.samestat(st, os.fstat(fd)):
        os.close(fd)
        raise FileToolError(english("“{path}” changed while Hearth opened it; try again.", path=shown))
    return path, fd


def _oserror(exc: OSError, shown: str) -> FileToolError:
    if isinstance(exc, FileNotFoundError | NotADirectoryError):
        return FileToolError(english("There is no “{path}” in the chosen folder.", path=shown))
    if isinstance(exc, PermissionError):
        return FileToolError(english("Hearth may not read “{path}” (permission denied).", path=shown))
    return FileToolError(english("“{path}” cannot be read: {error}.", path=shown,
                            error=exc.strerror or type(exc).__name__))


def _kind(entry: os.DirEntry[str]) -> str:
    try:
        if entry.is_symlink():
            return "link"
        if entry.is_dir(follow_symlinks=False):
            return "folder"
        return "file" if entry.is_file(follow_symlinks=False) else "other"
    except OSError:
        return "other"


def list_files(folder: Path | None, path: str = ".") -> str:
    """The entries of ``path`` under ``folder``, one a line: kind, name and a file's size."""
    root = _root(folder)
    parts = _parts(path)
    shown = show("/".join(parts)) or "."
    fd: int | None = None
    try:
        if USE_DIR_FD:
            fd = _open_at(root, parts, "folder")
            target: int | Path = fd
        else:
            target, _ = _open_plain(root, parts, "folder")
        entries: list[tuple[int, str, str, os.DirEntry[str]]] = []
        with os.scandir(target) as scan:
            for entry in scan:
                kind = _kind(entry)
                entries.append((kind != "folder", entry.name.casefold(), kind, entry))
                if len(entries) >= MAX_SCAN:
                    break
        lines = []
        for _, _, kind, entry in sorted(entries, key=lambda e: e[:2])[:MAX_ENTRIES]:
            line = f"{kind}\t{show(entry.name)}"
            if kind == "file":
                try:
                    line += f"\t{entry.stat(follow_symlinks=False).st_size}"
                except OSError:
                    continue  # gone since the listing
            lines.append(line)
    except OSError as exc:
        raise _oserror(exc, shown) from exc
    finally:
        if fd is not None:
            os.close(fd)
    if not entries:
        return english("The folder “{path}” is empty.", path=shown)
    head = english("The folder “{path}” holds {count} entries, one a line: kind (file, folder, link or "
              "other; links are not followed), name and, for a file, its size in bytes. Folders "
              "come first.", path=shown, count=len(entries))
    text = "\n".join([head, *lines])
    if len(entries) > MAX_ENTRIES:
        more = english("[{more} more entries are not shown: Hearth lists at most {limit}. List a "
                  "subfolder to see less at once.]", more=len(entries) - MAX_ENTRIES,
                  limit=MAX_ENTRIES)
        text += f"\n{more}"
    if len(entries) >= MAX_SCAN:
        text += "\n" + english("[Hearth stopped counting at {limit} entries.]", limit=MAX_SCAN)
    return text


def _decode(data: bytes, shown: str) -> str:
    if data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        try:
            return data.decode("utf-16")
        except UnicodeDecodeError:
            pass
    if b"\x00" in data[:SNIFF_BYTES] or data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        raise FileToolError(english("“{path}” is a binary file, not text; Hearth reads only text "
                               "files.", path=shown))
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError:
        pass
    text = data.decode("utf-8", errors="replace").removeprefix("\ufeff")
    bad = text.count("\ufffd")
    if bad * _BAD_SHARE > len(text):
        raise FileToolError(english("“{path}” is not UTF-8 text (%n sequence(s) cannot be read); it "
                               "may be binary or use another encoding.", None, bad, path=shown))
    note = english("[Hearth replaced %n sequence(s) that are not UTF-8 with “\ufffd”.]", None, bad)
    return f"{text}\n{note}"


def _read_upto(fd: int, limit: int) -> bytes:
    chunks: list[bytes] = []
    got = 0
    while got < limit:
        chunk = os.read(fd, min(1 << 16, limit - got))
        if not chunk:
            break
        chunks.append(chunk)
        got += len(chunk)
    return b"".join(chunks)


def read_file(folder: Path | None, path: str) -> str:
    """The text of the file ``path`` under ``folder``."""
    root = _root(folder)
    parts = _parts(path)
    if not parts:
        raise FileToolError(english("Give the path of a file in the chosen folder, such as "
                               "“notes/todo.txt”; list_files shows what is there."))
    shown = show("/".join(parts))
    fd: int | None = None
    try:
        fd = _open_at(root, parts, "file") if USE_DIR_FD else _open_plain(root, parts, "file")[1]
        assert fd is not None
        opened = os.fstat(fd)
        if not stat.S_ISREG(opened.st_mode):  # checked before the open; again on what was opened
            raise FileToolError(english("“{path}” is not a regular file (it is a device, pipe or socket); "
                                   "Hearth reads only regular files.", path=shown))
        data = _read_upto(fd, MAX_FILE_BYTES + 1)
    except OSError as exc:
        raise _oserror(exc, shown) from exc
    finally:
        if fd is not None:
            os.close(fd)
    if len(data) > MAX_FILE_BYTES:  # it grew after the check
        raise _too_large(shown, max(len(data), opened.st_size))
    text = _decode(data, shown)
    return text if text else english("The file “{path}” is empty.", path=shown)
