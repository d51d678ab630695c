"""The model picker: a button over app/ui/picker_model.py's item model that opens a searchable
popup (app/ui/picker_popup.py).

It lists the model loaded first, then every other model on this computer (the recent ones, then
the rest of the library), then the models of the servers the user added, then "Open GGUF file…".
Each local model's row says how it would run here (the library's verdict), or how it runs now
when it is the one loaded (the plan in force, after any fallback step). Files found gone or not a
model leave the list for the session (:meth:`ModelPicker.forget`) once another model is chosen.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import PurePath

from PySide6.QtCore import QObject, QTimer, Signal
from PySide6.QtWidgets import QWidget

from app.hub.verdict import Verdict, summarize
from app.library.models import telling_names
from app.remote.servers import RemoteModel
from app.services.active_model import ActiveModel
from app.services.protocols import LibraryLike, LocalModelsLike, LocalRow, RemoteLike
from app.ui.common import human_size
from app.ui.lang import tr, ui_text
from app.ui.picker_model import PickerEntry, PickerModel, Section
from app.ui.picker_popup import PickerCombo
from app.ui.style.components import tooltip_with_shortcut

# Where a file came from, when an app put it there ("from LM Studio"); other folders are shown.
_APPS = ("LM Studio", "Ollama", "Jan", "GPT4All", "Hugging Face cache")


def _short_folder(path: str) -> str:
    """The last two folders above ``path`` ("…/models/work"), or the folder when that short."""
    parts = PurePath(path).parent.parts
    return str(PurePath(path).parent) if len(parts) <= 3 else \
        f"…{os.sep}{PurePath(*parts[-2:])}"


class ModelPicker(QObject):
    # The list was filled again; True: a model was chosen now and the selection moved (its
    # description is due), False: the list changed under a selection that stays.
    refilled = Signal(bool)
    moved = Signal()  # the person moved the selection
    discover_requested = Signal()  # "Get more models": the window shows Discover

    def __init__(self, active: ActiveModel, library: LibraryLike, *,
                 local_models: LocalModelsLike | None, remote: RemoteLike | None,
                 ask_file: Callable[[], str], parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.active = active
        self.library = library
        self.local_models = local_models
        self.remote = remote
        self._ask_file = ask_file
        self.combo = PickerCombo(parent)
        self.combo.setMinimumWidth(260)
        self.combo.setAccessibleName(tr("Model"))
        self.combo.setToolTip(tooltip_with_shortcut(tr("Choose the model to chat with"), "Ctrl+L"))
        self.model = PickerModel(self.combo)
        self.combo.setModel(self.model)
        self.combo.activated.connect(self.pick_at)
        self.combo.open_file_requested.connect(self.pick_file)
        self.combo.discover_requested.connect(self.discover_requested)
        self.combo.currentIndexChanged.connect(lambda _i: self._on_selected())
        # Model files left out of the picker for this session: deleted from the library, or
        # found to be gone or not a model when loaded. Choosing one again brings it back.
        self._hidden: set[str] = set()
        # The library's paths at its last change: one missing from the next has left it.
        self._row_paths = {r.path for r in self._rows()}
        library.recent_changed.connect(self.fill)
        if local_models is not None:
            local_models.changed.connect(self._on_local_models)
        if remote is not None:
            remote.changed.connect(self.refresh)

    # ---- what is selected --------------------------------------------------------------------

    def selected_model(self) -> str | None:
        """The local model file selected (None: a remote model, or nothing)."""
        data = self.combo.currentData()
        return data if isinstance(data, str) and RemoteModel.from_key(data) is None else None

    def selected_remote(self) -> RemoteModel | None:
        """The remote model selected, if one is."""
        return RemoteModel.from_key(self.combo.currentData())

    def select(self, data: str) -> None:
        """Select the row of ``data`` (a path or a remote key), if listed."""
        at = self.combo.findData(data)
        if at >= 0:
            self.combo.setCurrentIndex(at)

    # ---- changing the list -------------------------------------------------------------------

    def choose(self, path: str) -> None:
        """Put ``path`` at the top of the list and select it."""
        self._hidden.discard(path)
        self.fill(self.library.use(path), select=path)

    def forget(self, path: str) -> None:
        """``path`` turned out to be gone or not a model: it leaves the list once another model
        is chosen; choosing it again (Open, or `hearth FILE`) brings it back."""
        self._hidden.add(path)

    def refresh(self) -> None:
        """Fill again with what is known now (the loaded mark, the servers' models)."""
        self.fill(self.library.recent())

    def fill(self, paths: list[str], select: str | None = None) -> None:
        before = self.combo.currentData()
        chosen = bool(select)  # a model chosen now (not a list that changed under the picker)
        if select is None:
            select = self.selected_model()  # "": none (the first item then)
        entries = self._local_entries(paths, select)
        entries += self._remote_entries(after=bool(entries))
        entries.append(PickerEntry(tr("Open GGUF file…"), None, section=Section.OPEN))
        self.combo.blockSignals(True)
        self.model.set_entries(entries)
        self.combo.setCurrentIndex(max(0, self.model.find(select)) if select is not None else 0)
        self.combo.blockSignals(False)
        self.refilled.emit(chosen and self.combo.currentData() != before)

    def _rows(self) -> list[LocalRow]:
        return self.local_models.rows() if self.local_models is not None else []

    def _local_entries(self, paths: list[str], select: str | None) -> list[PickerEntry]:
        rows = {r.path: r for r in self._rows() if not r.error}
        loaded = self.active.loaded_model
        # The loaded model's row says what it runs with (the plan after any fallback step),
        # not what the library's plan guessed before the user pinned or the ladder stepped.
        plan = self.active.plan
        running = summarize(plan) if loaded and plan is not None else None
        kept = [p for p in paths if p not in self._hidden or p in (select, loaded)]
        others = [r.path for r in rows.values() if r.path not in kept]
        local = [(p, os.path.basename(p)) for p in kept] + \
            [(p, f"{rows[p].name} ({rows[p].source})") for p in others]
        names = dict(zip((p for p, _ in local), telling_names(local), strict=True))
        wheres = self._wheres([(p, rows.get(p)) for p, _ in local])

        def entry(path: str) -> PickerEntry:
            row = rows.get(path)
            verdict: Verdict | None = running if path == loaded and running is not None else \
                row.verdict if row is not None else None
            name = row.name if row is not None else os.path.basename(path)
            label = tr("{name} (loaded)").format(name=names[path]) if path == loaded \
                else names[path]
            section = Section.LOADED if path == loaded else Section.LOCAL
            mark = tr("Loaded") if path == loaded else ""
            detail = self._detail(row, wheres[path])
            if verdict is None:
                return PickerEntry(label, path, path, name=name, detail=detail,
                                   section=section, mark=mark)
            reasons = "\n".join(ui_text(r) for r in verdict.reasons)
            return PickerEntry(
                tr("{model}  —  {verdict}").format(model=label, verdict=ui_text(verdict.label())),
                path, f"{path}\n\n{reasons}", name=name, detail=detail, fit=verdict.fit,
                section=section, mark=mark)

        # The loaded model, then the recent models, then every other model on this computer.
        order = [p for p in kept + others if p == loaded] + \
            [p for p in kept + others if p != loaded]
        entries = [entry(p) for p in order]
        if entries and entries[0].section == Section.LOADED and len(entries) > 1:
            entries.insert(1, PickerEntry.line())
        return entries

    @staticmethod
    def _wheres(listed: list[tuple[str, LocalRow | None]]) -> dict[str, str]:
        """Where each file is, in words: the app that put it there ("from LM Studio"), Hearth's
        own folder, or its folder shortened; namesakes these do not tell apart get as many of
        their folders as it takes (app.library.models.telling_names)."""
        def simple(path: str, row: LocalRow | None) -> str:
            if row is not None and row.source in _APPS:
                return tr("from {app}").format(app=row.source)
            if row is not None and row.own:
                return tr("in Hearth's models folder")
            return tr("in {folder}").format(folder=_short_folder(path))

        def name(path: str, row: LocalRow | None) -> str:
            return row.name if row is not None else os.path.basename(path)

        where = {p: simple(p, r) for p, r in listed}
        groups: dict[str, list[str]] = {}
        for p, r in listed:
            groups.setdefault(name(p, r), []).append(p)
        for plain, paths in groups.items():
            if len({where[p] for p in paths}) == len(set(paths)):
                continue  # their app or folder tells them apart already
            told = telling_names([(p, plain) for p in paths])
            for p, shown in zip(paths, told, strict=True):
                folder = shown[len(plain):].strip(" ()").removeprefix("in ")
                if folder:
                    where[p] = tr("in {folder}").format(folder=folder)
        return where

    @staticmethod
    def _detail(row: LocalRow | None, where: str) -> str:
        """A local row's second line: size, quantization and where the file is
        ("4.9 GB · Q4_K_M · from LM Studio")."""
        parts = [human_size(row.size)] if row is not None and row.size else []
        if row is not None and row.quantization:
            parts.append(row.quantization)
        parts.append(where)
        return " · ".join(parts)

    def _remote_entries(self, after: bool) -> list[PickerEntry]:
        """The models of the servers the user added, from their last check, marked remote
        (``after``: below other rows, so a line comes first)."""
        entries: list[PickerEntry] = []
        using = self.active.remote_model
        for server in self.remote.servers() if self.remote is not None else []:
            if not server.models:
                continue
            if after or entries:
                entries.append(PickerEntry.line())
            for model in server.models:
                key = RemoteModel(server.id, model).key
                in_use = using is not None and using.key == key
                label = tr("{model}  —  remote: {server} (in use)") if in_use \
                    else tr("{model}  —  remote: {server}")
                entries.append(PickerEntry(
                    label.format(model=model, server=server.name), key,
                    tr("{model} on {server} ({url}).\nReplies come from that server; nothing "
                       "runs on this computer for them.").format(
                        model=model, server=server.name, url=server.base_url),
                    name=model, detail=tr("on {server}").format(server=server.name),
                    section=Section.REMOTE, mark=tr("In use") if in_use else ""))
        return entries

    # ---- the person's choices ----------------------------------------------------------------

    def pick_file(self) -> bool:
        """"Open GGUF file…" chosen: ask for a file and select it; False when none was."""
        path = self._ask_file()
        if path:
            self.choose(path)
            return True
        return False

    def pick_at(self, index: int) -> None:
        """Row ``index`` was chosen: "Open…" asks for a file (none: back to the first row)."""
        if self.combo.itemData(index) is None and not self.pick_file():
            self.combo.setCurrentIndex(0)

    def _on_selected(self) -> None:
        """The selection moved: describe it, and let go of the files left out of the list
        that stayed only while selected (after this turn of the event loop: the combo box is
        still inside its own signal and is about to report the index it chose)."""
        self.moved.emit()
        current = self.combo.currentData()
        if any(self.model.find(p) >= 0
               for p in self._hidden - {current, self.active.loaded_model}):
            QTimer.singleShot(0, self, self.refresh)

    def _on_local_models(self, _rows: object) -> None:
        now = {r.path for r in self._rows()}
        # A model that left the library (deleted in the Models tab, or gone at a rescan) leaves
        # the recent models too, selected or not; one that comes back (downloaded again) is
        # listed again.
        gone = self._row_paths - now
        self._hidden = (self._hidden | gone) - now
        self._row_paths = now
        self.fill(self.library.recent(), select="" if self.selected_model() in gone else None)
