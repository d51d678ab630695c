"""Vision projectors chosen by hand (no Qt): a model whose projector is not beside it in its
folder (a download elsewhere, a projector shared by two quantizations) loads with the one the
person chose (Model → Vision projector…). Kept in ``projectors.json`` in Hearth's settings
folder as model path → projector path; where none is chosen, the one beside the model loads
(app/library/scan.py ``projector_beside``)."""

from __future__ import annotations

import json
import logging
import os
from pathlib import Path

from app.library.scan import projector_beside
from app.storage.atomic import write_atomic

log = logging.getLogger(__name__)

FILE = "projectors.json"


def default_path() -> Path:
    from app.paths import config_dir

    return config_dir() / FILE


class ProjectorChoices:
    """The choices, read once per object (make one per job: a library of a hundred models asks
    a hundred times)."""

    def __init__(self, path: Path | None = None) -> None:
        self.path = path or default_path()
        self._data: dict[str, str] | None = None

    def _read(self) -> dict[str, str]:
        if self._data is None:
            self._data = self._load()
        return self._data

    def _load(self) -> dict[str, str]:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return {}
        except (OSError, ValueError) as exc:
            log.warning("the chosen vision projectors cannot be read (%s); none apply", exc)
            return {}
        if not isinstance(data, dict):
            return {}
        return {k: v for k, v in data.items() if isinstance(k, str) and isinstance(v, str)}

    def chosen(self, model: str | os.PathLike[str]) -> Path | None:
        """The projector chosen for ``model`` (None: none chosen)."""
        found = self._read().get(os.fspath(model))
        return Path(found) if found else None

    def choose(self, model: str | os.PathLike[str], projector: str | os.PathLike[str] | None
               ) -> None:
        """Load ``projector`` with ``model`` from its next load (None: the one beside it)."""
        data = dict(self._load())  # as it is on disk now
        if projector is None:
            data.pop(os.fspath(model), None)
        else:
            data[os.fspath(model)] = os.fspath(projector)
        write_atomic(self.path, json.dumps(data, indent=2, sort_keys=True) + "\n")
        self._data = data

    def chosen_file(self, model: str | os.PathLike[str]) -> Path | None:
        """The projector chosen for ``model`` while its file is there."""
        chosen = self.chosen(model)
        return chosen if chosen is not None and chosen.is_file() else None

    def for_model(self, model: str | os.PathLike[str]) -> Path | None:
        """The projector that loads with ``model``: the chosen one, else the one beside it."""
        return self.chosen_file(model) or projector_beside(model)
