"""File names from the Hub: checked before they touch the disk, grouped for download (no Qt).

A repository's file list is untrusted input. :func:`safe_relative_path` is the one gate every
name passes before Hearth joins it to a folder; it refuses rather than "cleans", because a name
that needed cleaning is a name someone crafted.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable
from pathlib import Path, PurePosixPath

from app.hub.types import FileGroup, FileKind, HubFile, UnsafeNameError
from app.i18n import T_
from runner.wire.splits import split_part

# Longest names first, so "Q4_K_M" wins over "Q4_K" and "IQ2_XXS" over "IQ2_XS".
_QUANTS = sorted((
    "F32", "F16", "BF16", "Q8_0", "Q8_K", "Q6_K", "Q6_K_L", "Q5_0", "Q5_1", "Q5_K", "Q5_K_S",
    "Q5_K_M", "Q5_K_L", "Q4_0", "Q4_1", "Q4_K", "Q4_K_S", "Q4_K_M", "Q4_K_L", "Q4_0_4_4",
    "Q4_0_4_8", "Q4_0_8_8", "Q3_K", "Q3_K_S", "Q3_K_M", "Q3_K_L", "Q3_K_XL", "Q2_K", "Q2_K_S",
    "Q2_K_L", "IQ4_NL", "IQ4_XS", "IQ3_M", "IQ3_S", "IQ3_XS", "IQ3_XXS", "IQ2_M", "IQ2_S",
    "IQ2_XS", "IQ2_XXS", "IQ1_M", "IQ1_S", "TQ1_0", "TQ2_0", "MXFP4", "MXFP4_MOE", "NVFP4",
    "UD-Q4_K_XL", "UD-Q2_K_XL", "UD-Q3_K_XL", "UD-Q5_K_XL", "UD-Q6_K_XL", "UD-Q8_K_XL",
    "UD-IQ1_S", "UD-IQ1_M", "UD-IQ2_M", "UD-IQ2_XXS", "UD-IQ3_XXS",
), key=len, reverse=True)
_QUANT_RE = re.compile(
    r"(?:^|[-_.])(" + "|".join(re.escape(q) for q in _QUANTS) + r")(?=$|[-_.])", re.IGNORECASE)
_WINDOWS_RESERVED = {"CON", "PRN", "AUX", "NUL", *(f"COM{i}" for i in range(1, 10)),
                     *(f"LPT{i}" for i in range(1, 10))}
_MAX_NAME = 255  # bytes per path component on common file systems
_MAX_DEPTH = 8


def safe_relative_path(name: str) -> PurePosixPath:
    """``name`` as a relative path that stays inside any folder it is joined to.

    Refuses absolute paths, drive letters, ``..``, backslashes, control characters, Windows
    device names and over-long components, with a sentence that says which rule it broke.
    """
    def refuse(why: str) -> UnsafeNameError:
        shown = name.encode("unicode_escape").decode("ascii")[:120]
        return UnsafeNameError(T_("The Hub gave a file name Hearth will not write to disk ({shown!r}): "
                                  "{why}. Nothing was downloaded.", shown=shown, why=why))

    if not name or name != name.strip():
        raise refuse(T_("it is empty or starts or ends with spaces"))
    if any(unicodedata.category(ch)[0] == "C" for ch in name):
        raise refuse(T_("it contains control or invisible characters"))
    if "\\" in name:
        raise refuse(T_("it contains a backslash"))
    if name.startswith("/") or re.match(r"^[A-Za-z]:", name) or name.startswith("~"):
        raise refuse(T_("it is an absolute path"))
    if ":" in name:
        raise refuse(T_("it contains a colon (a drive letter or an alternate data stream on Windows)"))
    parts = name.split("/")
    if len(parts) > _MAX_DEPTH:
        raise refuse(T_("it is nested too deeply"))
    for part in parts:
        if part in ("", ".", ".."):
            raise refuse(T_("it has an empty, '.' or '..' component"))
        if len(part.encode("utf-8")) > _MAX_NAME:
            raise refuse(T_("a component is longer than file systems allow"))
        if part.rstrip(". ") != part:
            raise refuse(T_("a component ends with a dot or a space"))
        if part.split(".")[0].upper() in _WINDOWS_RESERVED:
            raise refuse(T_("it uses a reserved Windows device name"))
        if any(ch in part for ch in '<>"|?*'):
            raise refuse(T_("it contains a character Windows does not allow in file names"))
    return PurePosixPath(*parts)


def safe_join(folder: Path, name: str) -> Path:
    """``folder / name`` after :func:`safe_relative_path`, and checked to stay inside."""
    rel = safe_relative_path(name)
    target = folder.joinpath(*rel.parts)
    base = folder.resolve()
    # Symlinks already inside the folder could still lead out; resolve what exists.
    if not target.resolve().is_relative_to(base):
        raise UnsafeNameError(T_("The file name {name!r} would lead outside {folder}. Nothing was "
                                 "downloaded.", name=name, folder=folder))
    return target


def repo_folder(models_dir: Path, repo_id: str) -> Path:
    """Where a repository's downloads go: ``<models_dir>/<owner>/<name>`` (the id checked like
    any other name from the Hub)."""
    return models_dir.joinpath(*safe_relative_path(repo_id).parts)


def file_kind(name: str) -> FileKind:
    """Is this file a model to chat with, a vision projector, an imatrix, or not GGUF at all?"""
    base = PurePosixPath(name).name.lower()
    if "imatrix" in base:
        return FileKind.IMATRIX
    if not base.endswith(".gguf"):
        return FileKind.OTHER
    if base.startswith("mmproj") or "-mmproj" in base or "_mmproj" in base or ".mmproj" in base:
        return FileKind.MMPROJ
    return FileKind.MODEL


def quant_of(name: str) -> str | None:
    """The quantization a file name announces ("Q4_K_M"), upper-cased; None if it names none."""
    stem = PurePosixPath(name).name
    part = split_part(stem)
    stem = part[0] if part else re.sub(r"\.gguf$", "", stem, flags=re.IGNORECASE)
    found = None
    for found_m in _QUANT_RE.finditer(stem):
        found = found_m.group(1)  # the last one: "Llama-3-8B-Q8_0-Q4_K_M" is a Q4_K_M
    return found.upper() if found else None


def group_files(files: Iterable[HubFile]) -> tuple[FileGroup, ...]:
    """The .gguf files as download units: split parts joined (only when every part is listed),
    ordered models first, then by quantization name, then by name."""
    singles: list[FileGroup] = []
    splits: dict[tuple[str, int], dict[int, HubFile]] = {}
    for f in files:
        kind = file_kind(f.path)
        if kind in (FileKind.OTHER,):
            continue
        part = split_part(f.path)
        if part is not None and kind is FileKind.MODEL:
            stem, no, count = part
            splits.setdefault((stem, count), {})[no] = f
            continue
        singles.append(FileGroup(PurePosixPath(f.path).name, kind, quant_of(f.path), (f,)))
    for (stem, count), parts in splits.items():
        if sorted(parts) == list(range(1, count + 1)):
            ordered = tuple(parts[i] for i in range(1, count + 1))
            name = PurePosixPath(stem).name + ".gguf"
            singles.append(FileGroup(name, FileKind.MODEL, quant_of(stem + ".gguf"), ordered))
        else:
            # An incomplete set cannot be loaded; listing its parts alone would invite a
            # download that can never be used, so it is left out.
            continue
    order = {FileKind.MODEL: 0, FileKind.MMPROJ: 1, FileKind.IMATRIX: 2, FileKind.OTHER: 3}
    return tuple(sorted(singles, key=lambda g: (order[g.kind], g.quant or "~", g.name)))
