"""The library service on real folders: scan, verdicts, a new download folder, delete own only."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from PySide6.QtCore import QObject

from app.hardware import HardwareReport
from app.library.catalog import HeaderInfoCache
from app.library.folders import LibraryFolders, load_folders, save_folders
from app.library.scan import ModelSource, SourceKind
from app.services.local_models import LocalModelsService
from app.services.tasks import TaskRunner
from tests.fixtures.models import TINY, model_path

REPORT = Path(__file__).resolve().parents[1] / "fixtures" / "hardware" / "reports" / \
    "cpu_only_16gb.json"


def _copy(folder: Path, name: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_bytes(Path(model_path(TINY)).read_bytes())
    return path


def test_scan_plans_and_a_new_download_folder_keeps_the_old_models(
        tmp_path: Path, qtbot: Any) -> None:
    own = _copy(tmp_path / "models" / "acme" / "tiny", "tiny.gguf")
    other = _copy(tmp_path / "elsewhere", "theirs.gguf")
    settings = tmp_path / "library.json"
    report = HardwareReport.from_json(json.loads(REPORT.read_text()))

    def sources(f: LibraryFolders) -> list[ModelSource]:
        return [ModelSource.of(SourceKind.HEARTH, f.models_dir, own=True),
                *(ModelSource.of(SourceKind.FOLDER, e) for e in f.extra)]

    parent = QObject()
    svc = LocalModelsService(TaskRunner(parent), LibraryFolders(tmp_path / "models"),
                             lambda: report, HeaderInfoCache(tmp_path / "h.json"),
                             save=lambda f: save_folders(f, settings), sources=sources,
                             parent=parent)
    with qtbot.waitSignal(svc.changed, timeout=20_000):
        svc.rescan()
    (row,) = svc.rows()
    assert row.path == str(own) and row.own and row.verdict is not None and row.verdict.fits

    with qtbot.waitSignal(svc.changed, timeout=20_000):
        svc.add_folder(str(other.parent))
    assert {r.path for r in svc.rows()} == {str(own), str(other)}
    assert not next(r for r in svc.rows() if r.path == str(other)).own

    new = tmp_path / "new-models"
    new.mkdir()
    with qtbot.waitSignal(svc.changed, timeout=20_000):
        svc.set_models_dir(str(new))
    saved = load_folders(settings)
    assert saved.models_dir == new and tmp_path / "models" in saved.extra
    assert {r.path for r in svc.rows()} == {str(own), str(other)}  # nothing disappeared

    failures: list[str] = []
    svc.failed.connect(failures.append)
    svc.delete(str(other))  # not Hearth's: refused with a sentence, the file stays
    qtbot.waitUntil(lambda: bool(failures), timeout=10_000)
    assert other.exists() and "only deletes" in failures[0]
