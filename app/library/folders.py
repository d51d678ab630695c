"""Which folders the library shows: Hearth's own models folder and the ones the user added
(no Qt). Kept as a small JSON file in the config folder (one atomic write)."""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass, field, replace
from pathlib import Path

from app import paths
from app.storage.atomic import write_json_atomic

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class LibraryFolders:
    models_dir: Path  # where downloads go; the only folder Hearth deletes from
    extra: tuple[Path, ...] = field(default=())  # folders the user added

    def with_extra(self, folder: Path) -> LibraryFolders:
        if folder in self.extra:
            return self
        return replace(self, extra=(*self.extra, folder))


def settings_path() -> Path:
    return paths.config_dir() / "library.json"


def load_folders(path: Path | None = None) -> LibraryFolders:
    """The saved folders; the default models folder when nothing (readable) is saved."""
    path = path or settings_path()
    default = paths.models_dir()
    try:
        data = json.loads(path.read_text("utf-8"))
    except FileNotFoundError:
        return LibraryFolders(default)
    except (OSError, ValueError) as exc:
        log.warning("library settings %s unreadable (%s); using the defaults", path, exc)
        return LibraryFolders(default)
    models = data.get("models_dir") if isinstance(data, dict) else None
    extra = data.get("extra") if isinstance(data, dict) else None
    return LibraryFolders(
        Path(models) if isinstance(models, str) and models else default,
        tuple(Path(e) for e in extra if isinstance(e, str) and e) if isinstance(extra, list)
        else ())


def save_folders(folders: LibraryFolders, path: Path | None = None) -> None:
    write_json_atomic(path or settings_path(), {
        "models_dir": str(folders.models_dir), "extra": [str(e) for e in folders.extra]})
