"""Find the GGUF models a person already has, to use them where they lie (no Qt).

Other apps keep their downloads in folders of their own; Hearth reads them in place and never
copies a byte. Each app lays its folder out differently:

- Hugging Face hub cache: ``models--<owner>--<name>/snapshots/<revision>/<file>`` are symlinks
  into ``../../blobs/<hash>``; an LFS file's blob is named by its sha256, which is what
  integrity can be checked against.
- LM Studio: ``<home>/models/<publisher>/<repo>/<file>.gguf``.
- Ollama: ``manifests/<host>/<namespace>/<model>/<tag>`` is JSON whose layer of media type
  ``application/vnd.ollama.image.model`` names ``sha256:<hex>``, stored as ``blobs/sha256-<hex>``
  (a file with no extension).
- Jan: ``<data folder>/llamacpp/models/<model id>/model.gguf`` (older releases: ``models/<id>/``).
- GPT4All: the ``.gguf`` files lie flat in its data folder.

Where each app keeps that folder on Linux, macOS and Windows is decided in
:func:`default_sources`, from a home folder, an environment and a platform that tests pass in.
A folder that cannot be read is skipped quietly: one bad folder never hides the others.
"""

from __future__ import annotations

import configparser
import json
import logging
import os
import re
import stat
import sys
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from enum import Enum
from pathlib import Path

from app.hub.names import file_kind
from app.hub.types import FileKind
from app.jobs import CancelToken
from runner.wire.splits import split_part

log = logging.getLogger(__name__)

GGUF_MAGIC = b"GGUF"
OLLAMA_MODEL_MEDIA_TYPE = "application/vnd.ollama.image.model"
OLLAMA_REGISTRY = "registry.ollama.ai"
HEARTH_JOURNAL_DIR = ".hearth-downloads"
_HEX64 = re.compile(r"^[0-9a-f]{64}$")
_MAX_MANIFEST = 1 << 20  # real manifests are a few hundred bytes
_MAX_SETTINGS = 1 << 20
# Deep enough for every layout above (Jan's llamacpp/models/<org>/<repo>/model.gguf is the
# deepest), shallow enough that pointing Hearth at a home folder does not walk the whole disk.
_MAX_DEPTH = 5

Namer = Callable[[Path], str]  # display name of a model file
ShaOf = Callable[[Path], "str | None"]  # the sha256 a file's layout promises


class SourceKind(Enum):
    """Which app's layout a folder has; it decides how files are named and checked."""

    HEARTH = "hearth"
    HF_CACHE = "hf_cache"
    LMSTUDIO = "lmstudio"
    OLLAMA = "ollama"
    JAN = "jan"
    GPT4ALL = "gpt4all"
    FOLDER = "folder"


_DISPLAY = {
    SourceKind.HEARTH: "Hearth",
    SourceKind.HF_CACHE: "Hugging Face cache",
    SourceKind.LMSTUDIO: "LM Studio",
    SourceKind.OLLAMA: "Ollama",
    SourceKind.JAN: "Jan",
    SourceKind.GPT4ALL: "GPT4All",
    SourceKind.FOLDER: "Folder",
}


@dataclass(frozen=True)
class ModelSource:
    """One folder to look in."""

    name: str  # for display: "Hearth", "Hugging Face cache", "LM Studio", ...
    kind: SourceKind
    root: Path
    own: bool = False  # Hearth's own models folder: the only one Hearth may delete from

    @classmethod
    def of(cls, kind: SourceKind, root: Path, *, own: bool = False) -> ModelSource:
        return cls(_DISPLAY[kind], kind, root, own)


@dataclass(frozen=True)
class FoundModel:
    """A model file (or all parts of a split one) found on disk."""

    path: Path  # the file to load: the first part of a split model
    paths: tuple[Path, ...]  # every part present, in order
    name: str  # "llama3.2:3b" (Ollama), "owner/repo/file.gguf" (HF cache), else the file name
    size: int  # bytes of all parts present
    source: str  # the source's display name
    own: bool  # inside Hearth's own models folder
    repo_id: str | None  # the Hugging Face repository it came from, when the layout says
    expected_sha256: str | None  # what the bytes should hash to (single-file models)
    complete: bool  # every part of a split model is present
    part_count: int = 1  # parts the file name announces (1 when not split)
    part_sha256: tuple[str | None, ...] = ()  # per part in ``paths``, for split models
    mmproj: Path | None = None  # a vision projector lying beside it


def default_sources(*, models_dir: Path, extra_folders: Sequence[Path] = (),
                    home: Path | None = None, env: Mapping[str, str] | None = None,
                    platform: str | None = None, system_root: Path = Path("/"),
                    ) -> list[ModelSource]:
    """The folders where Hearth and other apps keep models on this computer, own folder first.

    ``platform`` is a ``sys.platform`` value ("linux", "darwin", "win32"); ``system_root``
    moves system-wide paths (Ollama's Linux service) for tests. Only folders that exist are
    returned, each once.
    """
    home = home if home is not None else Path.home()
    env = env if env is not None else os.environ
    platform = platform if platform is not None else sys.platform
    places = _Places(home, env, platform, system_root)

    candidates: list[ModelSource] = [ModelSource.of(SourceKind.HEARTH, models_dir, own=True)]
    candidates += [ModelSource.of(SourceKind.HF_CACHE, p) for p in places.hf_cache()]
    candidates += [ModelSource.of(SourceKind.LMSTUDIO, p) for p in places.lmstudio()]
    candidates += [ModelSource.of(SourceKind.OLLAMA, p) for p in places.ollama()]
    candidates += [ModelSource.of(SourceKind.JAN, p) for p in places.jan()]
    candidates += [ModelSource.of(SourceKind.GPT4ALL, p) for p in places.gpt4all()]
    candidates += [ModelSource.of(SourceKind.FOLDER, p) for p in extra_folders]

    found: list[ModelSource] = []
    seen: set[str] = set()
    for source in candidates:
        try:
            if not source.root.is_dir():
                continue
            key = os.path.normcase(str(source.root.resolve()))
        except OSError:
            continue
        if key in seen:  # e.g. OLLAMA_MODELS naming the default folder
            continue
        seen.add(key)
        found.append(source)
    return found


class _Places:
    """Each app's folders for one home, environment and platform."""

    def __init__(self, home: Path, env: Mapping[str, str], platform: str,
                 system_root: Path) -> None:
        self.home = home
        self.env = env
        self.platform = platform
        self.system_root = system_root

    @property
    def windows(self) -> bool:
        return self.platform.startswith("win")

    @property
    def mac(self) -> bool:
        return self.platform == "darwin"

    def path_env(self, name: str) -> Path | None:
        """An environment variable naming a folder ("~" is the given home), or None."""
        value = self.env.get(name, "").strip().strip("'\"")
        if not value:
            return None
        if value == "~" or value.startswith(("~/", "~\\")):
            return self.home / value[2:]
        return Path(value)

    def xdg(self, name: str, default: Path) -> Path:
        # The XDG spec says a relative value is invalid and must be ignored.
        value = self.path_env(name)
        return value if value is not None and value.is_absolute() else default

    def data_dir(self) -> Path:
        """Roaming app data: what Tauri's (and Rust's ``dirs``) ``data_dir`` gives."""
        if self.windows:
            return self.path_env("APPDATA") or self.home / "AppData" / "Roaming"
        if self.mac:
            return self.home / "Library" / "Application Support"
        return self.xdg("XDG_DATA_HOME", self.home / ".local" / "share")

    def local_data_dir(self) -> Path:
        """Qt's AppLocalDataLocation base (GPT4All)."""
        if self.windows:
            return self.path_env("LOCALAPPDATA") or self.home / "AppData" / "Local"
        return self.data_dir()

    def config_dir(self) -> Path:
        if self.windows:
            return self.data_dir()
        if self.mac:
            return self.home / "Library" / "Application Support"
        return self.xdg("XDG_CONFIG_HOME", self.home / ".config")

    def hf_cache(self) -> list[Path]:
        # huggingface_hub's constants: HF_HUB_CACHE, the older HUGGINGFACE_HUB_CACHE, then
        # HF_HOME/hub, then $XDG_CACHE_HOME/huggingface/hub, then ~/.cache/huggingface/hub (on
        # every platform, Windows and macOS included).
        explicit = self.path_env("HF_HUB_CACHE") or self.path_env("HUGGINGFACE_HUB_CACHE")
        if explicit is not None:
            return [explicit]
        hf_home = self.path_env("HF_HOME")
        if hf_home is None:
            cache = self.path_env("XDG_CACHE_HOME") or self.home / ".cache"
            hf_home = cache / "huggingface"
        return [hf_home / "hub"]

    def lmstudio(self) -> list[Path]:
        # lmstudio-js findLMStudioHome(): ~/.lmstudio-home-pointer names the home when present;
        # ~/.cache/lm-studio is the pre-0.3 home, ~/.lmstudio the current one (all platforms).
        homes: list[Path] = []
        pointer = _read_small(self.home / ".lmstudio-home-pointer")
        if pointer and pointer.strip():
            homes.append(Path(pointer.strip()))
        homes += [self.home / ".lmstudio", self.home / ".cache" / "lm-studio"]
        return [h / "models" for h in homes]

    def ollama(self) -> list[Path]:
        # envconfig.Models(): OLLAMA_MODELS, else ~/.ollama/models. The Linux install script runs
        # a system service as the "ollama" user, whose home is /usr/share/ollama; the user's
        # shell rarely sees the OLLAMA_MODELS the service was given, so both are looked at.
        roots: list[Path] = []
        explicit = self.path_env("OLLAMA_MODELS")
        if explicit is not None:
            roots.append(explicit)
        roots.append(self.home / ".ollama" / "models")
        if not self.windows and not self.mac:
            roots.append(self.system_root / "usr" / "share" / "ollama" / ".ollama" / "models")
        return roots

    def jan(self) -> list[Path]:
        # Jan >= 0.6 (Tauri): the data folder is <data_dir>/Jan/data unless settings.json (in
        # <data_dir>/jan.ai.app, or the legacy config folder) names another "data_folder";
        # models live in <data folder>/llamacpp/models/<id>/model.gguf. Jan 0.5 (Electron) kept
        # <userData>/data/models/<id>/ (Linux userData: ~/.config/Jan); Jan 0.4 used ~/jan.
        data = self.data_dir()
        folders: list[Path] = []
        for settings in (data / "jan.ai.app" / "settings.json",
                         self.config_dir() / "Jan" / "settings.json",
                         data / "Jan" / "settings.json"):
            custom = _json_str(settings, "data_folder")
            if custom:
                folders.append(Path(custom))
        folders += [data / "Jan" / "data", self.config_dir() / "Jan" / "data"]
        roots = [f / "llamacpp" / "models" for f in folders]
        roots += [f / "models" for f in folders]
        roots.append(self.home / "jan" / "models")
        return roots

    def gpt4all(self) -> list[Path]:
        # GPT4All: QStandardPaths::AppLocalDataLocation for organisation "nomic.ai", app
        # "GPT4All" (mysettings.cpp defaultLocalModelsPath), unless its settings name a
        # "modelPath" (read here from the Linux .ini; macOS and Windows keep it in a plist and
        # the registry).
        roots: list[Path] = []
        if not self.windows and not self.mac:
            custom = _ini_value(self.config_dir() / "nomic.ai" / "GPT4All.ini", "modelPath")
            if custom:
                roots.append(Path(custom))
        roots.append(self.local_data_dir() / "nomic.ai" / "GPT4All")
        return roots


def scan(sources: Sequence[ModelSource], cancel: CancelToken | None = None) -> list[FoundModel]:
    """Every model in ``sources``, in source order; the same file reached twice is listed once
    (the first source wins, so Hearth's own folder, listed first, keeps its own files).

    Raises :class:`~app.jobs.CancelledError` when ``cancel`` is set; never raises for a folder
    that cannot be read.
    """
    results: list[FoundModel] = []
    seen: set[tuple[int, int]] = set()
    for source in sources:
        if cancel is not None:
            cancel.check()
        try:
            models = list(_SCANNERS[source.kind](source, cancel))
        except OSError as exc:
            log.info("skipping %s (%s): %s", source.name, source.root, exc)
            continue
        for model in models:
            key = _identity(model.path)
            if key is None:
                continue  # vanished or broken since it was listed
            if key in seen:
                continue
            seen.add(key)
            results.append(model)
    return results


# -- walking ------------------------------------------------------------------------------------


def _walk(root: Path, cancel: CancelToken | None, max_depth: int = _MAX_DEPTH,
          ) -> Iterator[tuple[Path, list[os.DirEntry[str]]]]:
    """(folder, its file entries) for ``root`` and the folders below it.

    Symlinked folders are followed (people link a model drive in) but every folder is entered
    once, by device and inode, so a link back up the tree cannot loop. Hidden folders, Hearth's
    download journals and unreadable folders are skipped.
    """
    visited: set[tuple[int, int]] = set()
    stack: list[tuple[Path, int]] = [(root, 0)]
    while stack:
        folder, depth = stack.pop()
        if cancel is not None:
            cancel.check()
        try:
            st = os.stat(folder)
        except OSError:
            continue
        ident = (st.st_dev, st.st_ino)
        if ident in visited:
            continue
        visited.add(ident)
        try:
            with os.scandir(folder) as it:
                entries = list(it)
        except OSError as exc:
            log.debug("cannot list %s: %s", folder, exc)
            continue
        files: list[os.DirEntry[str]] = []
        subdirs: list[Path] = []
        for entry in entries:
            try:
                is_dir = entry.is_dir()  # follows a symlink; a broken one is neither
                is_file = not is_dir and entry.is_file()
            except OSError:
                continue
            if is_dir:
                if not entry.name.startswith(".") and depth < max_depth:
                    subdirs.append(Path(entry.path))
            elif is_file:
                files.append(entry)
        yield folder, files
        # Reversed so that the stack visits folders in name order.
        stack.extend((d, depth + 1) for d in sorted(subdirs, reverse=True))


def _is_candidate(name: str) -> bool:
    """A finished .gguf file by name: downloads in progress carry another suffix (``.part``,
    ``.incomplete``, ``.tmp``) or GPT4All's ``incomplete-`` prefix."""
    lower = name.lower()
    return lower.endswith(".gguf") and not lower.startswith(("incomplete-", "."))


def _projector_among(names: Sequence[str]) -> str | None:
    """The vision projector of a folder's models: the first by name (a repo may offer it in
    several precisions; the library and the load pick the same one)."""
    return next((n for n in sorted(names) if file_kind(n) is FileKind.MMPROJ), None)


def projector_beside(model_path: str | os.PathLike[str]) -> Path | None:
    """The vision projector in the model's folder, loaded with it; None where there is none."""
    folder = Path(model_path).parent
    try:
        names = [e.name for e in os.scandir(folder) if e.is_file() and _is_candidate(e.name)]
    except OSError:
        return None
    found = _projector_among(names)
    return folder / found if found else None


def _models_in_folder(folder: Path, files: Sequence[os.DirEntry[str]], source: ModelSource,
                      *, name_of: Namer, repo_id: str | None,
                      sha_of: ShaOf | None = None) -> list[FoundModel]:
    """The models among one folder's files: split parts grouped, projectors attached."""
    names = sorted(e.name for e in files if _is_candidate(e.name))
    projector = _projector_among(names)
    mmproj = folder / projector if projector else None
    splits: dict[tuple[str, int], dict[int, str]] = {}
    out: list[FoundModel] = []
    for name in names:
        if file_kind(name) is not FileKind.MODEL:
            continue  # projectors and importance matrices are not models to chat with
        part = split_part(name)
        if part is not None and part[2] > 1:
            stem, no, count = part
            splits.setdefault((stem, count), {})[no] = name
            continue
        model = _found(source, [folder / name], name_of(folder / name), repo_id, 1, mmproj,
                       sha_of)
        if model is not None:
            out.append(model)
    for (stem, count), parts in splits.items():
        ordered = [folder / parts[i] for i in range(1, count + 1) if i in parts]
        display = name_of(folder / f"{Path(stem).name}.gguf")
        model = _found(source, ordered, display, repo_id, count, mmproj, sha_of)
        if model is not None:
            out.append(model)
    return out


def _found(source: ModelSource, paths: list[Path], name: str, repo_id: str | None,
           part_count: int, mmproj: Path | None, sha_of: ShaOf | None) -> FoundModel | None:
    present: list[Path] = []
    size = 0
    for p in paths:
        try:
            st = os.stat(p)
        except OSError:
            continue  # a broken symlink, or a file that vanished since it was listed
        if stat.S_ISREG(st.st_mode):
            present.append(p)
            size += st.st_size
    if not present:
        return None
    shas = tuple(sha_of(p) if sha_of else None for p in present)
    return FoundModel(
        path=present[0], paths=tuple(present), name=name, size=size, source=source.name,
        own=source.own, repo_id=repo_id,
        expected_sha256=shas[0] if part_count == 1 else None,
        complete=len(present) == part_count, part_count=part_count,
        part_sha256=shas if part_count > 1 else (), mmproj=mmproj)


def _file_name(path: Path) -> str:
    return path.name


def _folder_namer(root: Path) -> Namer:
    """Jan's files are all called model.gguf: the folder below the root is the model id."""
    def name_of(path: Path) -> str:
        return _relative(path.parent, root) or path.name
    return name_of


def _relative(path: Path, root: Path) -> str:
    try:
        return path.relative_to(root).as_posix()
    except ValueError:
        return ""


def _repo_from_layout(folder: Path, root: Path) -> str | None:
    """The "publisher/repo" of a ``root/<publisher>/<repo>`` folder (LM Studio, Hearth)."""
    rel = _relative(folder, root)
    parts = rel.split("/") if rel and rel != "." else []
    return "/".join(parts) if len(parts) == 2 else None


# -- one scanner per layout ---------------------------------------------------------------------


def _scan_plain(source: ModelSource, cancel: CancelToken | None) -> Iterator[FoundModel]:
    """Hearth's own folder, LM Studio, GPT4All and any folder the user added."""
    with_repo = source.kind in (SourceKind.HEARTH, SourceKind.LMSTUDIO)
    for folder, files in _walk(source.root, cancel):
        if folder.name == HEARTH_JOURNAL_DIR:
            continue
        repo = _repo_from_layout(folder, source.root) if with_repo else None
        yield from _models_in_folder(folder, files, source, name_of=_file_name,
                                     repo_id=repo)


def _scan_jan(source: ModelSource, cancel: CancelToken | None) -> Iterator[FoundModel]:
    namer = _folder_namer(source.root)
    for folder, files in _walk(source.root, cancel):
        # Jan's ids look like "<owner>/<repo>-<quant>": not a repository id, so none is claimed.
        yield from _models_in_folder(folder, files, source, name_of=namer, repo_id=None)


def _scan_hf_cache(source: ModelSource, cancel: CancelToken | None) -> Iterator[FoundModel]:
    try:
        with os.scandir(source.root) as it:
            repos = sorted(e.name for e in it if e.name.startswith("models--"))
    except OSError:
        return
    for repo_dir in repos:
        if cancel is not None:
            cancel.check()
        parts = repo_dir.split("--")
        # HF forbids "--" inside names, so the folder name splits cleanly.
        repo_id = "/".join(parts[1:]) if len(parts) >= 2 else None
        if not repo_id:
            continue
        snapshots = source.root / repo_dir / "snapshots"
        main = (_read_small(source.root / repo_dir / "refs" / "main") or "").strip()
        try:
            with os.scandir(snapshots) as it:
                revisions = [e.name for e in it if e.is_dir()]
        except OSError:
            continue
        # The revision "main" points to first, so that the name without "@rev" is the current
        # file and an older copy of it (a different blob) is marked as such.
        revisions.sort(key=lambda r: (r != main, r))
        for revision in revisions:
            snap = snapshots / revision
            suffix = "" if revision == main or len(revisions) == 1 else f" @{revision[:7]}"

            def name_of(path: Path, snap: Path = snap, suffix: str = suffix,
                        repo_id: str = repo_id) -> str:
                return f"{repo_id}/{_relative(path, snap)}{suffix}"

            for folder, files in _walk(snap, cancel):
                yield from _models_in_folder(folder, files, source, name_of=name_of,
                                             repo_id=repo_id, sha_of=_hf_blob_sha)


def _hf_blob_sha(path: Path) -> str | None:
    """The sha256 an LFS file must have: its blob's name. A git (non-LFS) blob is named by a
    40-hex sha1, and Windows without symlinks holds copies with no hash in their name."""
    try:
        if not path.is_symlink():
            return None
        target = Path(os.readlink(path))
    except OSError:
        return None
    name = target.name
    return name if _HEX64.match(name) and target.parent.name == "blobs" else None


def _scan_ollama(source: ModelSource, cancel: CancelToken | None) -> Iterator[FoundModel]:
    manifests = source.root / "manifests"
    entries: list[tuple[str, Path]] = []
    for folder, files in _walk(manifests, cancel, max_depth=4):
        rel = _relative(folder, manifests).split("/")
        if len(rel) != 3:  # manifests/<host>/<namespace>/<model>/<tag>
            continue
        host, namespace, model = rel
        for entry in files:
            tag = entry.name
            if tag.startswith("."):
                continue
            entries.append((_ollama_name(host, namespace, model, tag), Path(entry.path)))
    # "llama3.2:latest" and "llama3.2:3b" are usually one blob: list it under the telling tag.
    entries.sort(key=lambda e: (e[0].endswith(":latest"), e[0]))
    for name, manifest in entries:
        digest = _ollama_model_digest(manifest)
        if digest is None:
            continue
        blob = _ollama_blob(source.root, digest)
        if blob is None:
            continue
        host, namespace, model = _relative(manifest.parent, manifests).split("/")
        repo_id = f"{namespace}/{model}" if host in ("hf.co", "huggingface.co") else None
        found = _found(source, [blob], name, repo_id, 1, None, _constant(digest))
        if found is not None:
            yield found


def _constant(sha: str) -> ShaOf:
    def sha_of(_path: Path) -> str | None:
        return sha
    return sha_of


def _ollama_name(host: str, namespace: str, model: str, tag: str) -> str:
    """What ``ollama list`` shows: the default host and namespace are left out."""
    if host == OLLAMA_REGISTRY and namespace == "library":
        return f"{model}:{tag}"
    if host == OLLAMA_REGISTRY:
        return f"{namespace}/{model}:{tag}"
    return f"{host}/{namespace}/{model}:{tag}"


def _ollama_model_digest(manifest: Path) -> str | None:
    text = _read_small(manifest, _MAX_MANIFEST)
    if text is None:
        return None
    try:
        data = json.loads(text)
    except ValueError:
        log.debug("not a manifest: %s", manifest)
        return None
    layers = data.get("layers") if isinstance(data, dict) else None
    if not isinstance(layers, list):
        return None
    for layer in layers:
        if not isinstance(layer, dict) or layer.get("mediaType") != OLLAMA_MODEL_MEDIA_TYPE:
            continue
        digest = layer.get("digest")
        if isinstance(digest, str) and digest.startswith("sha256:"):
            hexpart = digest[len("sha256:"):].lower()
            # The digest becomes part of a path: only 64 hex digits are let through.
            if _HEX64.match(hexpart):
                return hexpart
    return None


def _ollama_blob(root: Path, hexdigest: str) -> Path | None:
    # "sha256-<hex>" since Ollama 0.1.x; the first releases wrote "sha256:<hex>".
    for name in (f"sha256-{hexdigest}", f"sha256:{hexdigest}"):
        blob = root / "blobs" / name
        try:
            with blob.open("rb") as f:
                if f.read(4) == GGUF_MAGIC:
                    return blob
                return None  # a safetensors or other non-GGUF model layer
        except OSError:
            continue
    return None


_SCANNERS: dict[SourceKind, Callable[[ModelSource, CancelToken | None], Iterator[FoundModel]]] = {
    SourceKind.HEARTH: _scan_plain,
    SourceKind.LMSTUDIO: _scan_plain,
    SourceKind.GPT4ALL: _scan_plain,
    SourceKind.FOLDER: _scan_plain,
    SourceKind.JAN: _scan_jan,
    SourceKind.HF_CACHE: _scan_hf_cache,
    SourceKind.OLLAMA: _scan_ollama,
}


# -- small helpers ------------------------------------------------------------------------------


def _identity(path: Path) -> tuple[int, int] | None:
    """The file behind ``path`` (symlinks followed), so two routes to it count once."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    return st.st_dev, st.st_ino


def _read_small(path: Path, limit: int = 4096) -> str | None:
    try:
        with path.open("rb") as f:
            raw = f.read(limit + 1)
    except OSError:
        return None
    if len(raw) > limit:
        return None
    return raw.decode("utf-8", errors="replace")


def _json_str(path: Path, key: str) -> str | None:
    text = _read_small(path, _MAX_SETTINGS)
    if not text:
        return None
    try:
        data = json.loads(text)
    except ValueError:
        return None
    value = data.get(key) if isinstance(data, dict) else None
    return value if isinstance(value, str) and value.strip() else None


def _ini_value(path: Path, key: str) -> str | None:
    text = _read_small(path, _MAX_SETTINGS)
    if not text:
        return None
    parser = configparser.ConfigParser(interpolation=None, strict=False)
    parser.optionxform = str  # type: ignore[assignment,method-assign]
    try:
        parser.read_string(text)
    except configparser.Error:
        return None
    for section in parser.sections():
        value = parser.get(section, key, fallback=None)
        if value:
            return value.strip().strip('"')
    return None
