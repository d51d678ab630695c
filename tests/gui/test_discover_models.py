"""The Discover tab's item models: search results (app/ui/search_results.py) and a repository's
files with their fit (app/ui/repo_files.py)."""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtGui import QPalette

from app.hub.types import FileKind
from app.hub.verdict import Fit, Verdict
from app.ui.common import fit_color
from app.ui.repo_files import (
    CHECKING,
    GROUP_ROLE,
    HEADERS,
    KIND_LABELS,
    NAME_ROLE,
    Column,
    RepoFilesModel,
    fit_reasons,
)
from app.ui.search_results import Role, SearchResultsModel
from tests.gui import model_fakes as mf

LLAMA = "bartowski/Meta-Llama-3.1-8B-Instruct-GGUF"
Q4 = "Meta-Llama-3.1-8B-Instruct-Q4_K_M.gguf"


def test_results_replace_then_append(qtmodeltester: Any) -> None:
    model = SearchResultsModel()
    # The tester stays connected: it also checks the inserts and the reset below.
    qtmodeltester.check(model, force_py=True)
    model.set_results([mf.summary(LLAMA, 1_234_567, 640), mf.summary("x/y-GGUF", 5, 1)])
    assert model.rowCount() == 2
    first = model.index(0, 0)
    assert first.data().startswith("Meta-Llama-3.1-8B-Instruct-GGUF\nbartowski · ↓ 1.2M · ♥ 640")
    assert first.data(Role.REPO_ID) == LLAMA and first.data(Qt.ItemDataRole.UserRole) == LLAMA
    assert first.data(Role.SUMMARY) == mf.summary(LLAMA, 1_234_567, 640)
    assert first.data(Qt.ItemDataRole.ToolTipRole).startswith(f"{LLAMA}\n1,234,567 downloads")
    # Load more: rows inserted below, not a new list (the selection and scroll stay).
    inserted: list[tuple[int, int]] = []
    resets: list[bool] = []
    model.rowsInserted.connect(lambda _p, a, b: inserted.append((a, b)))
    model.modelReset.connect(lambda: resets.append(True))
    model.append([mf.summary("z/w-GGUF"), mf.summary("q/r-GGUF")])
    assert inserted == [(2, 3)] and resets == []
    assert [model.index(i, 0).data(Role.REPO_ID) for i in range(4)] == \
        [LLAMA, "x/y-GGUF", "z/w-GGUF", "q/r-GGUF"]
    model.append([])
    assert inserted == [(2, 3)]
    model.set_results([mf.summary("q/r-GGUF")])  # a new search: the list starts over
    assert resets == [True] and model.rowCount() == 1


def files_model(verdicts: dict[tuple[str, str], Verdict | str]) -> RepoFilesModel:
    palette = QPalette()
    model = RepoFilesModel(lambda repo, name: verdicts.get((repo, name)), lambda: palette)
    model.set_details(mf.llama_details())
    return model


def row_of(model: RepoFilesModel, name: str) -> int:
    return next(r for r in range(model.rowCount())
                if model.index(r, Column.FILE).data(NAME_ROLE) == name)


def test_files_table_columns_and_cells(qtmodeltester: Any) -> None:
    d = mf.llama_details()
    model = files_model({})
    qtmodeltester.check(model, force_py=True)
    assert model.rowCount() == len(d.groups) and model.columnCount() == 4
    assert [model.headerData(c, Qt.Orientation.Horizontal) for c in range(4)] == list(HEADERS)
    for row, g in enumerate(d.groups):
        assert model.index(row, Column.ACTION).data(GROUP_ROLE) == g
        assert model.index(row, Column.ACTION).data() is None  # the button's cell has no text
    q4 = row_of(model, Q4)
    name = model.index(q4, Column.FILE)
    # A quant that names one file is shown alone, in bold; the full name is in the tooltip.
    assert name.data() == "Q4_K_M" and name.data(Qt.ItemDataRole.FontRole).bold()
    assert name.data(Qt.ItemDataRole.ToolTipRole) == Q4
    q8 = row_of(model, "Meta-Llama-3.1-8B-Instruct-Q8_0.gguf")
    assert model.index(q8, Column.SIZE).data() == "14.9 GB · 3 parts"
    assert model.index(q8, Column.SIZE).data(Qt.ItemDataRole.ToolTipRole).endswith(" bytes")
    assert model.index(q8, Column.FILE).data(Qt.ItemDataRole.ToolTipRole).count("\n") == 2
    mmproj = next(r for r, g in enumerate(d.groups) if g.kind is FileKind.MMPROJ)
    assert model.index(mmproj, Column.FILE).data() == d.groups[mmproj].name  # not a quant
    assert model.index(mmproj, Column.FILE).data(Qt.ItemDataRole.FontRole) is None
    assert model.index(mmproj, Column.FIT).data() == KIND_LABELS[FileKind.MMPROJ]
    assert model.row_of_quant("q4_k_m") == q4 and model.row_of_quant("Q9") is None


def test_a_verdict_changes_one_fit_cell() -> None:
    verdicts: dict[tuple[str, str], Verdict | str] = {}
    model = files_model(verdicts)
    q4 = row_of(model, Q4)
    fit = model.index(q4, Column.FIT)
    assert fit.data() == CHECKING
    changed: list[tuple[int, int, int, int]] = []
    model.dataChanged.connect(lambda a, b, *_r: changed.append((a.row(), a.column(),
                                                                 b.row(), b.column())))
    v = mf.verdict(Fit.PARTIAL, n_ctx=8192, gpu_layers=20)
    verdicts[(LLAMA, Q4)] = v
    model.verdict_changed(Q4)
    assert changed == [(q4, Column.FIT, q4, Column.FIT)]
    assert fit.data() == v.label() and fit.data(Qt.ItemDataRole.ToolTipRole) == v.tooltip()
    assert fit.data(Qt.ItemDataRole.ForegroundRole) == fit_color(QPalette(), Fit.PARTIAL)
    group = model.group(q4)
    assert group is not None and fit_reasons(group, v).startswith(f"{Q4}: {v.label()}\n")
    verdicts[(LLAMA, Q4)] = "The file's header could not be read."
    model.verdict_changed(Q4)
    assert fit.data() == "Could not check"
    assert fit.data(Qt.ItemDataRole.ToolTipRole) == "The file's header could not be read."
    model.verdict_changed("no-such-file.gguf")
    assert len(changed) == 2
    model.set_details(None)
    assert model.rowCount() == 0 and model.group(0) is None
